"""A small in-memory world speaking the ServiceNow Table API, for testing replay logic alone.

It implements the `myna.replay.world` protocols with dicts: enough REST (list with field
filters, get, create, update, delete) for episodes to be solved and broken. The integration tests
run the same episodes on the real mock.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from myna.mocks.store import Record, RecordChange
from myna.replay.episode import Environment
from myna.schemas.model import IdFormat, Operation, Resource, ServiceModel

PREFIX = "/api/now/table/"


def incident_model() -> ServiceModel:
    """incident and sys_user, with list/get/create/update/delete on each."""
    resources: dict[str, Resource] = {}
    operations: list[Operation] = []
    for name in ("incident", "sys_user"):
        collection, item = f"{PREFIX}{name}", f"{PREFIX}{name}/{{sys_id}}"
        resources[name] = Resource(
            name=name,
            collection_path=collection,
            item_path=item,
            id_field="sys_id",
            id_format=IdFormat(kind="hex32"),
        )
        for kind, method, path in (
            ("list", "GET", collection),
            ("create", "POST", collection),
            ("get", "GET", item),
            ("update", "PATCH", item),
            ("delete", "DELETE", item),
        ):
            operations.append(
                Operation(id=f"{kind}_{name}", method=method, path=path, kind=kind, resource=name)
            )
    return ServiceModel(name="fake-itsm", resources=resources, operations=operations)


@dataclass(frozen=True, slots=True)
class FakeResponse:
    status: int
    body: Any

    def json(self) -> Any:
        return self.body


class FakeClient:
    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> FakeResponse:
        if self.world.explode:
            raise RuntimeError("the fake world exploded")
        if method in self.world.explode_on:
            raise RuntimeError("disk full")
        if not path.startswith(PREFIX):
            return FakeResponse(404, {"error": {"message": f"no route {path}"}})
        parts = path[len(PREFIX) :].strip("/").split("/")
        table = self.world.records.get(parts[0])
        if table is None:
            return FakeResponse(404, {"error": {"message": f"no table {parts[0]}"}})
        if len(parts) == 1:
            if method == "GET":
                wanted = dict(params or {})
                rows = [
                    r for r in table.values() if all(str(r.get(k)) == v for k, v in wanted.items())
                ]
                return FakeResponse(200, {"result": rows})
            if method == "POST":
                record_id = f"{next(self.world.ids):032x}"
                table[record_id] = {**(json or {}), "sys_id": record_id}
                return FakeResponse(201, {"result": table[record_id]})
            return FakeResponse(405, {"error": {"message": "method not allowed"}})
        record = table.get(parts[1])
        if record is None:
            return FakeResponse(404, {"error": {"message": "no such record"}})
        if method == "GET":
            return FakeResponse(200, {"result": record})
        if method in ("PATCH", "PUT"):
            if (
                "state" in (json or {})
                and json["state"] == "6"
                and not (json or {}).get("close_code", record.get("close_code"))
            ):
                return FakeResponse(400, {"error": {"message": "close_code is required"}})
            table[parts[1]] = {**record, **(json or {})}
            return FakeResponse(200, {"result": table[parts[1]]})
        if method == "DELETE":
            del table[parts[1]]
            return FakeResponse(204, None)
        return FakeResponse(405, {"error": {"message": "method not allowed"}})


class FakeWorld:
    def __init__(self, initial: dict[str, dict[str, Record]]) -> None:
        self.initial = initial
        self.records = copy.deepcopy(initial)
        self.ids = itertools.count(0xF00)
        self.explode = False
        self.explode_on: frozenset[str] = frozenset()
        self.closed = False
        self.client = FakeClient(self)

    def changes(self) -> list[RecordChange]:
        found: list[RecordChange] = []
        for resource, rows in self.records.items():
            before_rows = self.initial.get(resource, {})
            for record_id, after in rows.items():
                before = before_rows.get(record_id)
                if before is None:
                    found.append(RecordChange(resource, record_id, "created", None, after))
                elif before != after:
                    found.append(RecordChange(resource, record_id, "updated", before, after))
            for record_id, before in before_rows.items():
                if record_id not in rows:
                    found.append(RecordChange(resource, record_id, "deleted", before, None))
        return found

    def dump(self) -> dict[str, list[Record]]:
        return {resource: list(rows.values()) for resource, rows in self.records.items()}

    def close(self) -> None:
        self.closed = True


class FakeFactory:
    def __init__(self) -> None:
        self.opened: list[FakeWorld] = []

    def open(self, environment: Environment) -> FakeWorld:
        initial = {
            resource: {str(r[environment.id_fields.get(resource, "id")]): r for r in records}
            for resource, records in environment.initial_world.items()
        }
        for resource in ("incident", "sys_user"):
            initial.setdefault(resource, {})
        world = FakeWorld(initial)
        self.opened.append(world)
        return world
