"""Myna: learn SaaS back ends from recorded traces and serve them as stateful mocks for agents.

The pipeline is `traces -> schemas -> mocks -> replay -> itsm`; see ARCHITECTURE.md.
"""

from myna.errors import MynaError

__all__ = ["MynaError", "__version__"]

__version__ = "0.1.0"
