"""Literal traffic for the learning tests: exchanges and sessions written out by hand."""

from __future__ import annotations

import itertools
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from myna.traces.model import Body, Exchange, Session

_ids = itertools.count(1)


def exchange(
    method: str,
    url: str,
    status: int = 200,
    response: Any = None,
    *,
    request: Any = None,
    headers: dict[str, str] | None = None,
    response_headers: dict[str, str] | None = None,
    text: str | None = None,
) -> Exchange:
    """One exchange; JSON bodies from Python values, `text` for a plain-text response."""
    response_body = (
        Body("text", text, "text/plain")
        if text is not None
        else Body("json", response, "application/json")
        if response is not None
        else Body()
    )
    return Exchange(
        id=f"x{next(_ids):04d}",
        method=method,
        url=url,
        status=status,
        query=parse_qsl(urlsplit(url).query),
        request_headers=list((headers or {}).items()),
        request_body=Body("json", request, "application/json") if request is not None else Body(),
        response_headers=list((response_headers or {}).items()),
        response_body=response_body,
    )


def session(*exchanges: Exchange, name: str = "s") -> Session:
    return Session(id=name, events=list(exchanges))


SN = "https://dev1.service-now.com/api/now/table"
HEX = [f"{index:x}".rjust(32, "a") for index in range(1, 40)]
"""Distinct 32-hex sys_ids."""


def incident(index: int, state: str = "1", **extra: Any) -> dict[str, Any]:
    record = {
        "sys_id": HEX[index],
        "number": f"INC{10000 + index:07d}",
        "state": state,
        "short_description": f"Printer {index} jammed",
        "priority": "3",
        "active": "true",
        "sys_created_on": "2024-04-16 17:16:27",
        "sys_mod_count": "0",
        "caller_id": {"link": f"{SN}/sys_user/{HEX[30]}", "value": HEX[30]},
        "close_code": "",
        "resolved_at": "",
    }
    record.update(extra)
    return record


def servicenow_lifecycle() -> list[Session]:
    """Create, work on and resolve incidents; one refused close; a listing with paging headers."""
    sessions = []
    for index in range(3):
        created = incident(index)
        in_progress = incident(index, "2", sys_mod_count="1")
        resolved = incident(
            index,
            "6",
            sys_mod_count="2",
            close_code="Solved (Permanently)",
            resolved_at=f"2024-04-1{index} 10:00:00",
        )
        item = f"{SN}/incident/{HEX[index]}"
        sessions.append(
            session(
                exchange(
                    "POST",
                    f"{SN}/incident",
                    201,
                    {"result": created},
                    request={
                        "short_description": created["short_description"],
                        "caller_id": HEX[30],
                    },
                    headers={"Authorization": "Basic dXNlcjpwYXNz"},
                ),
                exchange("PATCH", item, 200, {"result": in_progress}, request={"state": "2"}),
                exchange(
                    "PATCH",
                    item,
                    403,
                    {
                        "error": {"message": "Invalid state transition", "detail": "2 to 7"},
                        "status": "failure",
                    },
                    request={"state": "7"},
                ),
                exchange(
                    "PATCH",
                    item,
                    200,
                    {"result": resolved},
                    request={"state": "6", "close_code": "Solved (Permanently)"},
                ),
                exchange("GET", item, 200, {"result": resolved}),
                name=f"incident-{index}",
            )
        )
    listing = [incident(index, state) for index, state in zip(range(10, 16), "112266", strict=True)]
    sessions.append(
        session(
            exchange(
                "GET",
                f"{SN}/incident?sysparm_limit=3&sysparm_offset=0&sysparm_query=active%3Dtrue",
                200,
                {"result": listing[:3]},
                response_headers={
                    "Link": f'<{SN}/incident?sysparm_offset=3>;rel="next"',
                    "X-Total-Count": "6",
                },
            ),
            exchange(
                "GET",
                f"{SN}/incident?sysparm_limit=3&sysparm_offset=3",
                200,
                {"result": listing[3:]},
                response_headers={"X-Total-Count": "6"},
            ),
            exchange(
                "GET",
                f"{SN}/sys_user?sysparm_limit=1",
                401,
                {
                    "error": {
                        "message": "User Not Authenticated",
                        "detail": "Required to provide Auth information",
                    },
                    "status": "failure",
                },
                response_headers={"WWW-Authenticate": 'Basic realm="Service-now"'},
            ),
            exchange(
                "GET",
                f"{SN}/sys_user",
                200,
                {"result": [{"sys_id": HEX[30], "user_name": "abel.tuter", "name": "Abel Tuter"}]},
            ),
            name="listing",
        )
    )
    return sessions


def schemas_naming(document: Any, key: str) -> list[str]:
    """Where in a document some schema lists `key` among its properties."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            if key in (node.get("properties") or {}):
                found.append(where)
            stack.extend((value, f"{where}/{name}") for name, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, f"{where}[{index}]") for index, value in enumerate(node))
    return found
