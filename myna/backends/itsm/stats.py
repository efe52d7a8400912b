"""ServiceNow's Aggregate API: `GET /api/now/stats/{table}` (PROTOCOL.md §7).

Counts, and the average, minimum, maximum and sum of columns, over the records an encoded query
selects, optionally grouped by columns:

    ?sysparm_count=true                       -> {"result": {"stats": {"count": "42"}}}
    ?sysparm_count=true&sysparm_group_by=priority
        -> {"result": [{"stats": {"count": "5"},
                        "groupby_fields": [{"field": "priority", "value": "1"}]}, ...]}
    ?sysparm_avg_fields=urgency -> {"result": {"stats": {"avg": {"urgency": "2.0000"}}}}

The records are read through the Table API (`GET /api/now/table/{table}`, served by the runtime
in the caller's world with the caller's credential), so the query dialect, the ACLs and an
unknown table's refusal are the Table API's own: nothing is evaluated twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from myna.mocks.messages import MockRequest, MockResponse

if TYPE_CHECKING:
    from myna.mocks.extensions import RouteCall

_JSON: Final = ("Content-Type", "application/json;charset=UTF-8")
PAGE: Final = 10_000
AGGREGATES: Final = ("avg", "min", "max", "sum")
# Parameters of the stats call that the Table API reads the same way.
_PASSED: Final[tuple[str, ...]] = ("sysparm_query", "sysparm_display_value")


def stats(call: RouteCall) -> MockResponse:
    params = dict(call.request.query)
    group_by = _names(params.get("sysparm_group_by", ""))
    fields = {kind: _names(params.get(f"sysparm_{kind}_fields", "")) for kind in AGGREGATES}
    count = params.get("sysparm_count", "").lower() == "true"
    wanted = [*group_by, *(name for names in fields.values() for name in names)]
    if not wanted:
        total = _total(call, params)
        if isinstance(total, MockResponse):
            return total
        return _reply({"stats": {"count": str(total)}} if count else {"stats": {}})
    rows = _rows(call, params, wanted)
    if isinstance(rows, MockResponse):
        return rows
    if not group_by:
        return _reply({"stats": _stats(rows, fields, count)})
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[name] for name in group_by), []).append(row)
    return _reply(
        [
            {
                "stats": _stats(members, fields, count),
                "groupby_fields": [
                    {"field": name, "value": value}
                    for name, value in zip(group_by, key, strict=True)
                ],
            }
            for key, members in sorted(groups.items())
        ]
    )


def unpack_stats(request: MockRequest) -> list[MockRequest]:
    """The Table API read a stats call stands for (the `Route.unpack` a verifier judges)."""
    table = request.path.rstrip("/").rsplit("/", 1)[-1]
    return [_list_request(request, table, dict(request.query), ["sys_id"], 0, 1)]


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _reply(result: Any) -> MockResponse:
    return MockResponse(200, [_JSON], payload={"result": result})


def _table(call: RouteCall) -> str:
    return call.params["table"]


def _list_request(
    request: MockRequest,
    table: str,
    params: dict[str, str],
    fields: Sequence[str],
    offset: int,
    limit: int,
) -> MockRequest:
    query: list[tuple[str, str]] = [(name, params[name]) for name in _PASSED if name in params]
    query += [
        ("sysparm_fields", ",".join(fields)),
        ("sysparm_exclude_reference_link", "true"),
        ("sysparm_limit", str(limit)),
        ("sysparm_offset", str(offset)),
    ]
    prefix = request.path[: request.path.index("/api/now/")]
    return MockRequest(
        "GET",
        f"{prefix}/api/now/table/{table}",
        query=query,
        headers={
            k: v for k, v in request.headers.items() if k in ("authorization", "x-myna-world")
        },
        base_url=request.base_url,
    )


def _total(call: RouteCall, params: dict[str, str]) -> int | MockResponse:
    """How many records the query selects: the Table API's total when it sends one."""
    first = call.serve(_list_request(call.request, _table(call), params, ["sys_id"], 0, 1))
    if first.status >= 400:
        return first
    total = first.header("X-Total-Count")
    if total is not None and total.isdigit():
        return int(total)
    rows = _rows(call, params, ["sys_id"])
    return rows if isinstance(rows, MockResponse) else len(rows)


def _rows(
    call: RouteCall, params: dict[str, str], fields: Sequence[str]
) -> list[dict[str, str]] | MockResponse:
    """Every selected record's `fields`, as text (a display value when one was asked for)."""
    rows: list[dict[str, str]] = []
    for page in _pages(call, params, fields):
        if isinstance(page, MockResponse):
            return page
        rows += [{name: _text(record.get(name)) for name in fields} for record in page]
    return rows


def _pages(
    call: RouteCall, params: dict[str, str], fields: Sequence[str]
) -> Iterator[list[dict[str, Any]] | MockResponse]:
    offset = 0
    while True:
        response = call.serve(
            _list_request(call.request, _table(call), params, fields, offset, PAGE)
        )
        if response.status >= 400:
            yield response
            return
        page = response.json()["result"]
        yield page
        if len(page) < PAGE:
            return
        offset += PAGE


def _text(value: Any) -> str:
    if isinstance(value, dict):  # sysparm_display_value=all: {display_value, value}
        return str(value.get("display_value", value.get("value", "")))
    return "" if value is None else str(value)


def _stats(rows: list[dict[str, str]], fields: dict[str, list[str]], count: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"count": str(len(rows))} if count else {}
    for kind, names in fields.items():
        if names:
            out[kind] = {name: _aggregate(kind, [row[name] for row in rows]) for name in names}
    return out


def _aggregate(kind: str, values: list[str]) -> str:
    """One column's aggregate as ServiceNow writes it: text, empty over no values; numbers
    compare as numbers, other text as text (min and max)."""
    numbers = [_number(value) for value in values if value != ""]
    if kind in ("min", "max") and (not numbers or None in numbers):
        present = [value for value in values if value != ""]
        return (min if kind == "min" else max)(present) if present else ""
    known = [number for number in numbers if number is not None]
    if not known:
        return ""
    if kind == "min":
        return _format(min(known))
    if kind == "max":
        return _format(max(known))
    if kind == "sum":
        return _format(sum(known))
    return f"{sum(known) / len(known):.4f}"


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _format(number: float) -> str:
    return str(int(number)) if number.is_integer() else str(number)
