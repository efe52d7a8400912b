"""Stage 3: serve a service model as a stateful mock with isolated worlds.

`Mock(model)` is the whole runtime; `MockClient(mock)` calls it in process, `create_app(mock)`
serves it over HTTP (see `myna serve`).
"""

from myna.mocks.client import MockClient
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.runtime import Mock

__all__ = ["Mock", "MockClient", "MockRequest", "MockResponse"]
