"""The HTTP protocol `myna serve` runs uvicorn with: uvicorn's httptools protocol, with two
guards a mock many agents reach needs.

- A request must arrive whole (request line, headers and body) within the request timeout
  (`REQUEST_TIMEOUT` unless `myna serve --request-timeout` says otherwise) of the connection
  opening or of its first byte; a connection that opens and sends nothing, or half
  a request, is closed then. uvicorn alone holds such connections forever (only an idle
  keep-alive connection times out), so a hundred of them held a hundred sockets.
- A request the HTTP parser refuses (a malformed request line, an unknown method, a request
  line too long) is answered with the service's own 400 body instead of uvicorn's plain text.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_TIMEOUT = 10.0
"""Seconds a request may take to arrive whole, by default."""


def guarded_protocol(
    error_body: bytes, content_type: str, *, timeout: float = REQUEST_TIMEOUT
) -> type[HttpToolsProtocol]:
    """The protocol class, answering a request it cannot parse with `error_body` and closing a
    connection whose request has not arrived whole `timeout` seconds after it began."""
    # Imported here so that the command line reads REQUEST_TIMEOUT without loading uvicorn.
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

    head = b"content-type: " + content_type.encode("latin-1") + b"\r\n"

    class Guarded(HttpToolsProtocol):
        _arrival: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._expect()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._expect()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._arrived()

        def connection_lost(self, exc: Exception | None) -> None:
            self._arrived()
            super().connection_lost(exc)

        def _expect(self) -> None:
            if self._arrival is None:
                self._arrival = self.loop.call_later(timeout, self._too_slow)

        def _arrived(self) -> None:
            if self._arrival is not None:
                self._arrival.cancel()
                self._arrival = None

        def _too_slow(self) -> None:
            self._arrival = None
            if not self.transport.is_closing():
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            content = [STATUS_LINE[400], head]
            content += [b"content-length: %d\r\n" % len(error_body), b"connection: close\r\n"]
            self.transport.write(b"".join([*content, b"\r\n", error_body]))
            self.transport.close()

    return Guarded
