"""The one exception a request handler raises to refuse a request.

A `Rejection` carries what the service's error template needs (status, message, detail, offending
fields). The dispatcher turns it into the service's own error response; raising it inside the
store transaction also rolls back every write the request made.
"""

from __future__ import annotations

from typing import Any

from myna.errors import MockError


class Rejection(MockError):
    """A client mistake or a refused action, answered with a 4xx in the service's shape."""

    kind = "rejected"

    def __init__(
        self,
        status: int,
        message: str,
        *,
        detail: str | None = None,
        fields: tuple[str, ...] = (),
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        body: Any = None,
        resource: str | None = None,
        check: str | None = None,
    ) -> None:
        self.status = status
        self.detail = detail if detail is not None else message
        self.fields = fields
        self.code = code if code is not None else _default_code(status)
        self.headers = headers
        # A body the service answers verbatim instead of its error template (an OAuth refusal).
        self.body = body
        # The resource whose operation was refused (the runtime fills it in), so a service's
        # words for the refusal can name it (ServiceNow names the table).
        self.resource = resource
        # The behaviour check that refused it (`transition`, `required_on_entry`...), if one did:
        # what the console shows as the rule's decision.
        self.check = check
        super().__init__(message, status=status, field=", ".join(fields) or None)


def _default_code(status: int) -> str:
    return {
        400: "invalid_request",
        401: "unauthorized",
        403: "forbidden",
        404: "not_found",
        405: "method_not_allowed",
        409: "conflict",
        413: "payload_too_large",
        415: "unsupported_media_type",
        422: "unprocessable",
        429: "rate_limited",
    }.get(status, "error")
