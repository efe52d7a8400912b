"""Worlds that share most of their records: one base loaded once, each episode's records over it.

A benchmark's worlds are large (hundreds of incidents, users, groups, items) and mostly alike:
every episode of a source holds the same background and differs in the few records its task is
about. An `Environment` built with `Environment.layered` still holds its whole initial world (what
its file saves and what every check reads), and also knows it as a `SharedWorld` plus the
episode's own records, so what is done per episode costs the episode's own records, not the
world's size: the mock loads the shared world once as a root snapshot and lays each episode's
records over it (`myna.replay.mock_world`), the verifier and the audit index and judge the shared
part once (`Layers.index`, `myna.replay.audit.world_problems`).

Own records replace shared records of the same id and add new ones; an episode never removes a
shared record, so the shared world's references resolve in every world built on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

T = TypeVar("T")
Record = dict[str, Any]
Tables = dict[str, dict[str, Record]]
"""resource -> record id (as `myna.replay.verify.index_world` keys it) -> record."""


class SharedWorld:
    """Records many episodes hold unchanged, by resource and id, named by their content."""

    __slots__ = ("_derived", "name", "tables")

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        content = orjson.dumps(tables, option=orjson.OPT_SORT_KEYS)
        self.name = hashlib.sha256(content).hexdigest()[:32]
        self._derived: dict[str, Any] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SharedWorld) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def derived(self, key: str, compute: Callable[[Tables], T]) -> T:
        """`compute(tables)`, computed once per shared world and `key` (what the audit reads
        of every record: values, problems), the records never changing once shared."""
        if key not in self._derived:
            self._derived[key] = compute(self.tables)
        value: T = self._derived[key]
        return value


@dataclass(frozen=True, slots=True)
class Layers:
    """An initial world as a shared world and an episode's own records laid over it."""

    shared: SharedWorld
    own: Tables
    _index: dict[str, dict[str, Record]] = field(default_factory=dict, compare=False, repr=False)

    def world(self) -> dict[str, list[Record]]:
        """The whole initial world: each shared resource's records in their order (an own
        record in the place of the shared one it replaces), then the own ones that are new."""
        out: dict[str, list[Record]] = {}
        places = self.shared.derived("places", _places)
        for resource in sorted({*self.shared.tables, *self.own}):
            records = list(self.shared.tables.get(resource, {}).values())
            at = places.get(resource, {})
            for key, record in self.own.get(resource, {}).items():
                if key in at:
                    records[at[key]] = record
                else:
                    records.append(record)
            out[resource] = records
        return out

    def index(self) -> dict[str, dict[str, Record]]:
        """The world by resource and id, built once (the shared part is copied, not walked)."""
        if not self._index:
            for resource in sorted({*self.shared.tables, *self.own}):
                merged = dict(self.shared.tables.get(resource, {}))
                merged.update(self.own.get(resource, {}))
                self._index[resource] = merged
        return self._index


def _places(tables: Tables) -> dict[str, dict[str, int]]:
    return {resource: {key: at for at, key in enumerate(t)} for resource, t in tables.items()}


def strings(layers: Layers) -> frozenset[str]:
    """Every text value of the layered world (the shared world's found once)."""
    return layers.shared.derived("strings", _strings) | _strings(layers.own)


def _strings(tables: Tables) -> frozenset[str]:
    return frozenset(
        value
        for table in tables.values()
        for record in table.values()
        for value in record.values()
        if isinstance(value, str)
    )
