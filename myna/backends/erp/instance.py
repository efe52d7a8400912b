"""A reference procure-to-pay service in memory: the pen the ERP corpus author writes with.

It answers the REST API that PROTOCOL.md documents (`/api/erp/v1/{collection}`, `/{id}`, and
actions such as `/purchase-orders/{id}/approve`) and runs the business rules of `rules.py`:
approval limits by role, receipts within the ordered quantities, three-way matching with payment
blocked on a mismatch, and no posting into a closed accounting period. Deterministic: ids come
from per-collection counters and time from a clock the author advances.

This is not the mock. The mock is learned from the traffic written here; this file shares only
`rules.py` with the ERP extension, so the rules have one implementation.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Final
from urllib.parse import urlencode

from myna.backends import Reply as Reply
from myna.backends import json_reply as _json_reply
from myna.backends.erp import documents
from myna.backends.erp.documents import Collection
from myna.backends.erp.rules import Period, Refused
from myna.traces.model import Body, Pairs

Row = dict[str, Any]

BASE: Final = "/api/erp/v1"
JSON_TYPE: Final = "application/json"
STAMP: Final = "%Y-%m-%dT%H:%M:%SZ"
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
UNAUTHORIZED: Final[Row] = {
    "error": {
        "code": "unauthorized",
        "message": "a valid bearer token is required",
        "field": None,
    }
}
CHALLENGE: Final = 'Bearer realm="erp"'


@dataclass(slots=True)
class Request:
    method: str
    path: str
    params: Pairs = field(default_factory=list)
    body: Body = field(default_factory=Body)
    token: str | None = None


def json_reply(status: int, value: Any, headers: Pairs | None = None) -> Reply:
    """An answer holding a snapshot of `value`: later changes to a stored record must not
    reach an answer already given (and recorded)."""
    return _json_reply(status, copy.deepcopy(value), headers, JSON_TYPE)


def error_reply(refused: Refused) -> Reply:
    body = {
        "error": {"code": refused.code, "message": refused.message, "field": refused.field_name}
    }
    headers: Pairs = [("WWW-Authenticate", CHALLENGE)] if refused.status == 401 else []
    return json_reply(refused.status, body, headers)


class Erp:
    """The service: tokens it accepts, its records by collection, and a clock."""

    def __init__(self, now: datetime, tokens: frozenset[str]) -> None:
        self.now = now
        self.tokens = tokens
        self.records: dict[str, dict[str, Row]] = {name: {} for name in documents.COLLECTIONS}
        self.counters: dict[str, int] = dict.fromkeys(documents.COLLECTIONS, 0)

    def advance(self, step: timedelta) -> None:
        self.now += step

    def handle(self, request: Request) -> Reply:
        try:
            return self._route(request)
        except Refused as refused:
            return error_reply(refused)

    # -- routing ------------------------------------------------------------------------------

    def _route(self, request: Request) -> Reply:
        if request.token is None or request.token not in self.tokens:
            return json_reply(401, UNAUTHORIZED, [("WWW-Authenticate", CHALLENGE)])
        if not request.path.startswith(BASE + "/"):
            raise Refused(404, "not_found", f"no endpoint answers {request.path}")
        parts = request.path[len(BASE) + 1 :].split("/")
        collection = documents.COLLECTIONS.get(parts[0])
        if collection is None or len(parts) > 3:
            raise Refused(404, "not_found", f"no endpoint answers {request.path}")
        method = request.method
        if len(parts) == 1:
            if method == "GET":
                return self._list(collection, request)
            if method == "POST":
                return json_reply(201, self._create(collection, _object(request)))
        elif len(parts) == 2:
            row = self._get(collection, parts[1])
            if method == "GET":
                return json_reply(200, row)
            if method == "PATCH" and collection.writable:
                return json_reply(200, self._update(collection, row, _object(request)))
            if method == "DELETE" and collection.deletable:
                self._delete(collection, row)
                return Reply(204, Body())
        elif (
            method == "POST"
            and parts[0] in documents.ACTIONS
            and parts[2] in documents.ACTIONS[parts[0]][0]
        ):
            row = self._get(collection, parts[1])
            return json_reply(200, self._act(collection, row, parts[2], _object(request)))
        raise Refused(405, "method_not_allowed", f"{method} is not allowed on {request.path}")

    def _get(self, collection: Collection, record_id: str) -> Row:
        row = self.records[collection.name].get(record_id)
        if row is None:
            raise Refused(404, "not_found", f"{collection.name} has no record {record_id}", "id")
        return row

    def _list(self, collection: Collection, request: Request) -> Reply:
        params = dict(request.params)
        limit = min(_count(params.get("limit"), "limit", DEFAULT_LIMIT), MAX_LIMIT)
        offset = _count(params.get("offset"), "offset", 0)
        rows = list(self.records[collection.name].values())
        for name, value in request.params:
            if name in ("limit", "offset", "sort"):
                continue
            if rows and name not in rows[0]:
                raise Refused(
                    422, "unknown_field", f"{collection.name} has no field {name!r}", name
                )
            rows = [row for row in rows if _text(row.get(name)) == value]
        for key in reversed(params.get("sort", "").split(",") if params.get("sort") else []):
            name = key.lstrip("-")
            rows.sort(
                key=lambda row: (row.get(name) is None, _text(row.get(name))),
                reverse=key.startswith("-"),
            )
        page = rows[offset : offset + limit]
        body: Row = {"data": page, "total": len(rows)}
        if offset + len(page) < len(rows):
            moved = [(k, v) for k, v in request.params if k != "offset"]
            body["next"] = f"{request.path}?{urlencode([*moved, ('offset', str(offset + limit))])}"
        return json_reply(200, body)

    # -- writes -------------------------------------------------------------------------------

    def _mint(self, collection: Collection) -> str:
        self.counters[collection.name] += 1
        return f"{collection.prefix}-{self.counters[collection.name]:06d}"

    def _stamp(self) -> str:
        return self.now.strftime(STAMP)

    def _create(self, collection: Collection, sent: Row) -> Row:
        documents.required(collection.name, sent)
        row = documents.build(self, collection.name, sent)
        row = {
            "id": self._mint(collection),
            **row,
            "created_at": self._stamp(),
            "updated_at": self._stamp(),
        }
        self.records[collection.name][row["id"]] = row
        if collection.name == "goods-receipts":
            order = self.records["purchase-orders"][row["purchase_order"]]
            order.update(documents.received(order, row), updated_at=self._stamp())
        return row

    def _update(self, collection: Collection, row: Row, sent: Row) -> Row:
        documents.writable(collection.name, sent)
        documents.editable(collection.name, row, "change")
        merged = {**row, **sent}
        rebuilt = documents.build(self, collection.name, merged)
        row.update(rebuilt, updated_at=self._stamp())
        return row

    def _delete(self, collection: Collection, row: Row) -> None:
        documents.editable(collection.name, row, "be deleted")
        for other, fields in documents.REFERENCES.items():
            for name, target in fields.items():
                if target == collection.name and any(
                    r.get(name) == row["id"] for r in self.records[other].values()
                ):
                    raise Refused(409, "in_use", f"{row['id']} is referenced by {other}", "id")
        del self.records[collection.name][row["id"]]

    def _act(self, collection: Collection, row: Row, action: str, sent: Row) -> Row:
        row.update(documents.act(collection.name, action, row, sent, self._stamp()))
        return row

    # -- the view of the world that building records needs (documents.Lookup) ----------------

    def record(self, collection: str, record_id: str) -> Row | None:
        return self.records[collection].get(record_id)

    def periods(self) -> list[Period]:
        return [
            Period(row["code"], row["status"])
            for row in self.records["accounting-periods"].values()
        ]

    def today(self) -> date:
        return self.now.date()


def _object(request: Request) -> Row:
    if request.body.kind == "empty":
        return {}
    value = request.body.value
    if request.body.kind == "text":
        try:
            value = json.loads(str(value))
        except json.JSONDecodeError:
            raise Refused(400, "invalid_json", "the body is not JSON") from None
    if not isinstance(value, dict):
        raise Refused(400, "invalid_json", "the body is a JSON object")
    return value


def _count(value: str | None, name: str, default: int) -> int:
    if value is None:
        return default
    if not value.isdigit():
        raise Refused(422, "invalid", f"{name} is a whole number", name)
    return int(value)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
