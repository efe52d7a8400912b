"""The `servicenow` extension (placeholder while the hooks land)."""

from __future__ import annotations

from myna.mocks.extensions import Extension, register_extension

register_extension(Extension(name="servicenow"))
