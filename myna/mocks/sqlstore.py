"""SQL storage for mock worlds: immutable snapshots shared by every world, plus per-world overlays.

How it works (copy-on-write):

- A *snapshot* is an immutable layer of rows `(resource, id, record | tombstone)` with an optional
  parent. Roots come from `load_base` (a seed); every other snapshot is a layer of changes on its
  parent. A lookup probes the layers from the top, so chains are kept short (`_freeze`).
- A *world* is a row naming its base snapshot (what a reset returns to) and its head (the
  snapshot it reads from: its base until its writes are frozen), plus its own overlay rows
  (writes and tombstones) and sequence counters. An idle world is one row in `worlds`.
- fork = freeze the source's overlay and counters into a new snapshot on its head, which becomes
  the head of both worlds (nothing to freeze: the head as it is); reset = head back to the base,
  overlay and counters deleted. A fork costs what the source wrote since its last fork, a reset
  costs its writes; neither depends on the seed size or on the world's history.
- snapshot = the same freeze, under a given name.
- diff = the overlay and the head's layers against the base, or against another snapshot by
  comparing only the ids either side changed relative to their shared root (a full comparison
  across roots).

Snapshots never change, so every process caches them in memory (safe even with several processes
on one PostgreSQL database); overlays and world rows are always read from the database, so all
processes see the same worlds.

Hot statements go straight to the DB-API connection (SQLAlchemy provides the engine, pooling,
URL handling and DDL): the request path must stay within tens of microseconds.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import orjson
import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from myna.errors import MockError
from myna.mocks.evaluate import Context, compile_filter, equality_keys, evaluate, reference_id
from myna.mocks.query import Query
from myna.mocks.sqlquery import (
    ALWAYS,
    NEVER,
    Compiler,
    FieldStats,
    LayerRows,
    Pending,
    QueryFile,
    QueryTables,
    query_fields,
    table_name,
)
from myna.mocks.store import (
    ChangeKind,
    ConflictError,
    NotFoundError,
    Record,
    RecordChange,
    SnapshotInfo,
    StoreFullError,
    UndeclaredWriteError,
    WorldInfo,
    absent_name,
)
from myna.mocks.store_keys import (
    Equality,
    equalities,
    indexed_fields,
    only_equalities,
    record_keys,
)
from myna.schemas.model import ServiceModel

__all__ = ["SqlStore", "SqlTransaction"]

_PREFIX = re.compile(r"[a-z][a-z0-9_]{0,30}")
_TOMBSTONE = None
_BATCH = 2000
_MULTI_ROW = 100
# A filter's equalities narrow a scan when the base holds at most 1/_SELECTIVE of the records
# they could match: past that, sorting the candidates back into place costs more than a scan.
_SELECTIVE = 8
# Lists over fewer of the base's records than this run in Python: SQL's fixed costs and the first
# query's filling of the columns buy nothing there.
_SQL_FROM = 1000
# At most this many ids rewritten above a layer are named in a query; past it the list scans.
_SHADOWED = 2000
_LARGEST_LIMIT = 2**63 - 1
# A record's place in a world's list as one integer: the layer's depth, then its row's position.
_PLACE_BITS = 40
# At most this many parsed records of a mounted root's resource are kept (`_Mount`).
_PARSED_ON_DISK = 4096


@dataclass(slots=True)
class _Layer:
    """One immutable snapshot in process memory: its own rows and the chain beneath it."""

    id: str
    parent: _Layer | None
    # resource -> id -> JSON text, None for a tombstone (a mounted root's: `_StoredRows`)
    rows: Mapping[str, Mapping[str, str | None]]
    sequences: dict[str, int]
    created_at: float
    parsed: dict[str, dict[str, Record]] = field(default_factory=dict)
    # (resource, unique field) -> value -> ids, over this layer's own rows
    unique_index: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    # (resource, indexed field) -> equality key -> ids, over this layer's own rows
    key_index: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    visible: dict[str, list[tuple[str, Record]]] = field(default_factory=dict)
    visible_records: dict[str, list[Record]] = field(default_factory=dict)
    # resource -> id -> place among this layer's own rows
    places: dict[str, dict[str, int]] = field(default_factory=dict)
    owned: dict[str, list[tuple[str, _Layer]]] = field(default_factory=dict)
    size: int = 0  # rows of its own
    depth: int = 0  # layers beneath it

    def __post_init__(self) -> None:
        self.size = sum(len(rows) for rows in self.rows.values())
        self.depth = 0 if self.parent is None else self.parent.depth + 1

    @property
    def root(self) -> _Layer:
        return self if self.parent is None else self.parent.root

    def raw(self, resource: str, record_id: str) -> str | None:
        layer: _Layer | None = self
        while layer is not None:
            rows = layer.rows.get(resource)
            if rows is not None and record_id in rows:
                return rows[record_id]
            layer = layer.parent
        return None

    def has_row(self, resource: str, record_id: str) -> bool:
        rows = self.rows.get(resource)
        return rows is not None and record_id in rows

    def _parsed(self, resource: str, record_id: str) -> Record | None:
        cache = self.parsed.setdefault(resource, {})
        found = cache.get(record_id)
        if found is None:
            rows = self.rows[resource]
            text = rows[record_id]
            if text is None:
                return None
            if isinstance(rows, _StoredRows) and len(cache) >= _PARSED_ON_DISK:
                cache.clear()  # a mounted root's records stay on disk, not in memory
            found = cache[record_id] = _loads(text)
        return found

    def items(self, resource: str) -> list[tuple[str, Record]]:
        """Visible records in a stable order: the root's load order, then newer layers' rows.

        Built once per resource and kept: the layer never changes, and every list call in every
        world on it starts from this (shared objects: do not mutate).
        """
        found = self.visible.get(resource)
        if found is None:
            found = self.visible[resource] = list(self._walk_items(resource))
        return found

    def records(self, resource: str) -> list[Record]:
        """`items` without the ids, also built once."""
        found = self.visible_records.get(resource)
        if found is None:
            found = self.visible_records[resource] = [r for _, r in self.items(resource)]
        return found

    def _walk_items(self, resource: str) -> Iterator[tuple[str, Record]]:
        for record_id, owner in self.owners(resource):
            parsed = owner._parsed(resource, record_id)
            if parsed is not None:
                yield record_id, parsed

    def owners(self, resource: str) -> list[tuple[str, _Layer]]:
        """The visible records' ids in `items` order, each with the layer holding its newest
        row, found without parsing a record (built once per resource, as `items` is). From the
        root up: a record keeps the place where it first appeared and shows its newest row, as
        a world's own writes do over its base (`_merged`)."""
        found = self.owned.get(resource)
        if found is not None:
            return found
        chain: list[_Layer] = []
        layer: _Layer | None = self
        while layer is not None:
            chain.append(layer)
            layer = layer.parent
        newest: dict[str, _Layer] = {}
        for current in reversed(chain):
            newest.update(dict.fromkeys(current.rows.get(resource, ()), current))
        # A record is gone when its newest row is a tombstone. Per layer, not per record: a
        # mounted root of 50,000 ids has none, and a write layer holds few rows.
        gone = {
            record_id
            for current in chain
            for record_id in _tombstones(current.rows.get(resource, {}))
            if newest[record_id] is current
        }
        found = self.owned[resource] = [
            (record_id, owner) for record_id, owner in newest.items() if record_id not in gone
        ]
        return found

    def ids_with(
        self, resource: str, field_name: str, key: str, *, unique: bool = True
    ) -> AbstractSet[str]:
        """Ids of visible records whose unique field `field_name` has value `key` (`unique`),
        or whose indexed field holds equality key `key`: the parent's that this layer does not
        rewrite or delete, and this layer's own. Only a layer's own rows are indexed, so a
        snapshot of a few writes on a large root costs a few records."""
        indexes = self.unique_index if unique else self.key_index
        index = indexes.get((resource, field_name))
        if index is None:
            index = indexes[(resource, field_name)] = self._own_index(
                resource, field_name, unique=unique
            )
        own = index.get(key, _NO_IDS)
        if self.parent is None:
            return own
        inherited = {
            record_id
            for record_id in self.parent.ids_with(resource, field_name, key, unique=unique)
            if not self.has_row(resource, record_id)
        }
        return inherited | own if inherited else own

    def _own_index(self, resource: str, field_name: str, *, unique: bool) -> dict[str, set[str]]:
        keys_of = _unique_key_of if unique else equality_keys
        index: dict[str, set[str]] = {}
        for record_id, text in _texts(self.rows.get(resource, {})):
            if text is None:
                continue
            record = _loads(text)
            for key in keys_of(record.get(field_name)):
                index.setdefault(key, set()).add(record_id)
        return index

    def locate(self, resource: str, record_id: str) -> tuple[tuple[int, int], Record | None] | None:
        """Where `items` lists the record (the layer nearest the root with a row of it, and the
        row's place in that layer) and the record (None: deleted; a shared object, do not
        mutate); None when no layer has a row of it. One walk down the chain."""
        found: tuple[int, int] | None = None
        record: Record | None = None
        layer: _Layer | None = self
        while layer is not None:
            places = layer.places.get(resource)
            if places is None:
                places = layer.places[resource] = {
                    record_id: n for n, record_id in enumerate(layer.rows.get(resource, ()))
                }
            place = places.get(record_id)
            if place is not None:
                if found is None:
                    record = layer._parsed(resource, record_id)
                found = (layer.depth, place)
            layer = layer.parent
        return None if found is None else (found, record)


_NO_IDS: AbstractSet[str] = frozenset()


class _Mount:
    """A root snapshot read where it lies, in a SQLite file that never changes (a seed cache):
    the process keeps its ids, and reads a record's text when asked for it."""

    def __init__(self, path: Path, snapshot: str, queries: QueryFile | None) -> None:
        location = urllib.parse.quote(str(path.resolve()))
        # `immutable`: nothing writes the file while it exists (a new cache replaces it by a
        # rename), so SQLite takes no locks and checks for no journal.
        self._connection = sqlite3.connect(
            f"file:{location}?mode=ro&immutable=1", uri=True, check_same_thread=False
        )
        self._lock = threading.Lock()
        self.snapshot = snapshot
        self.queries = queries

    def rows(self, prefix: str) -> dict[str, _StoredRows]:
        """The snapshot's rows by resource, ids only, in load order."""
        ids: dict[str, dict[str, None]] = {}
        with self._lock:
            # A resource at a time, each read in order from the cache's index (`layer_order`):
            # no Python work per row but the dict of its ids.
            resources = self._connection.execute(
                f"SELECT resource FROM {prefix}layer WHERE snapshot = ? "
                "GROUP BY resource ORDER BY MIN(ord), resource",
                (self.snapshot,),
            ).fetchall()
            for (resource,) in resources:
                found = self._connection.execute(
                    f"SELECT record_id FROM {prefix}layer WHERE snapshot = ? AND resource = ? "
                    "ORDER BY ord, record_id",
                    (self.snapshot, resource),
                )
                ids[resource] = dict.fromkeys(itertools.chain.from_iterable(found))
        return {resource: _StoredRows(self, prefix, resource, own) for resource, own in ids.items()}

    def text(self, prefix: str, resource: str, record_id: str) -> str | None:
        with self._lock:
            row = self._connection.execute(
                f"SELECT data FROM {prefix}layer "
                "WHERE snapshot = ? AND resource = ? AND record_id = ?",
                (self.snapshot, resource, record_id),
            ).fetchone()
        return None if row is None else cast(str | None, row[0])

    def texts(self, prefix: str, resource: str) -> Iterator[tuple[str, str | None]]:
        """The resource's rows in load order, read a batch at a time."""
        with self._lock:
            cursor = self._connection.execute(
                f"SELECT record_id, data FROM {prefix}layer WHERE snapshot = ? AND resource = ? "
                "ORDER BY ord",
                (self.snapshot, resource),
            )
        while True:
            with self._lock:
                batch = cursor.fetchmany(_BATCH)
            if not batch:
                return
            yield from batch

    def is_root(self, prefix: str) -> bool:
        with self._lock:
            row = self._connection.execute(
                f"SELECT parent FROM {prefix}snapshots WHERE id = ?", (self.snapshot,)
            ).fetchone()
        return row is not None and row[0] is None

    def sequences(self, prefix: str) -> dict[str, int]:
        with self._lock:
            found = self._connection.execute(
                f"SELECT name, value FROM {prefix}snapshot_sequences WHERE snapshot = ?",
                (self.snapshot,),
            ).fetchall()
        return {str(name): int(value) for name, value in found}

    def close(self) -> None:
        with self._lock:
            self._connection.close()
        if self.queries is not None:
            self.queries.close()


class _StoredRows(Mapping[str, str | None]):
    """A mounted root's rows of one resource (`_Mount`): a root holds no tombstones."""

    __slots__ = ("_ids", "_mount", "_prefix", "_resource")

    def __init__(self, mount: _Mount, prefix: str, resource: str, ids: dict[str, None]) -> None:
        self._mount = mount
        self._prefix = prefix
        self._resource = resource
        self._ids = ids

    def __getitem__(self, record_id: str) -> str | None:
        if record_id not in self._ids:
            raise KeyError(record_id)
        return self._mount.text(self._prefix, self._resource, record_id)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def texts(self) -> Iterator[tuple[str, str | None]]:
        return self._mount.texts(self._prefix, self._resource)


def _texts(rows: Mapping[str, str | None]) -> Iterator[tuple[str, str | None]]:
    """A layer's rows of a resource with their texts, in order, a mounted root's streamed."""
    if isinstance(rows, _StoredRows):
        return rows.texts()
    return iter(rows.items())


def _tombstones(rows: Mapping[str, str | None]) -> list[str]:
    """The ids a layer's rows of a resource delete (a mounted root holds none)."""
    if isinstance(rows, _StoredRows):
        return []
    return [record_id for record_id, text in rows.items() if text is None]


def _unique_keys(fields: tuple[str, ...], record: Record) -> list[tuple[str, str]]:
    """The record's values of unique fields, as `uniques` keys (empty values hold none)."""
    keys = []
    for name in fields:
        key = _unique_key(record.get(name))
        if key is not None:
            keys.append((name, key))
    return keys


def _unique_key_of(value: Any) -> tuple[str, ...]:
    key = _unique_key(value)
    return () if key is None else (key,)


def _unique_key(value: Any) -> str | None:
    target = reference_id(value) if isinstance(value, dict) else value
    if target is None or target == "":
        return None
    return target if isinstance(target, str) else json.dumps(target, sort_keys=True)


# Values orjson would write differently from `json` (dates, dataclasses, subclasses of str and
# int) go to `json` instead, so what a record may hold stays what `json` accepts.
_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _dumps(record: Record) -> str:
    """A record's stored text. orjson writes it (several times faster than `json`) behind one
    leading space, which marks the text as one orjson reads back exactly; what orjson refuses
    (integers past 64 bits, which it would read back as floats) `json` writes without it."""
    try:
        return " " + orjson.dumps(record, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _loads(text: str) -> Any:
    return orjson.loads(text) if text.startswith(" ") else json.loads(text)


class _Statements:
    """The SQL of the hot path, written once with `?` and rendered in the driver's paramstyle."""

    def __init__(self, prefix: str, paramstyle: str, *, postgres: bool) -> None:
        p = prefix
        mark = "%s" if paramstyle in ("format", "pyformat") else "?"

        def sql(text: str) -> str:
            return text.replace("?", mark)

        self.world = sql(f"SELECT base_snapshot, created_at FROM {p}worlds WHERE id = ?")
        self.worlds = sql(f"SELECT id, base_snapshot, created_at FROM {p}worlds ORDER BY id")
        # A world reads from its head, the snapshot its overlay lies on: its base until a fork
        # or snapshot of it freezes its writes into a new head.
        self.insert_world = sql(
            f"INSERT INTO {p}worlds (id, base_snapshot, head, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        self.delete_world = sql(f"DELETE FROM {p}worlds WHERE id = ?")
        self.key_generation = sql(f"SELECT generation FROM {p}world_keys WHERE world = ?")
        self.next_key = sql(
            f"INSERT INTO {p}world_keys (world, generation) VALUES (?, 1) ON CONFLICT (world) "
            f"DO UPDATE SET generation = {p}world_keys.generation + 1 RETURNING generation"
        )
        self.overlay_get = sql(
            f"SELECT data FROM {p}overlay WHERE world = ? AND resource = ? AND record_id = ?"
        )
        self.world_state = sql(f"SELECT head FROM {p}worlds WHERE id = ?")
        self.world_get = sql(
            f"SELECT w.head, o.record_id, o.data "
            f"FROM {p}worlds w "
            f"LEFT JOIN {p}overlay o "
            "ON o.world = w.id AND o.resource = ? AND o.record_id = ? WHERE w.id = ?"
        )
        self.overlay_list = sql(
            f"SELECT record_id, data FROM {p}overlay WHERE world = ? AND resource = ? "
            "ORDER BY ord, record_id"
        )
        self.overlay_all = sql(
            f"SELECT resource, record_id, data FROM {p}overlay WHERE world = ? "
            "ORDER BY resource, ord, record_id"
        )
        self.written = sql(
            f"SELECT EXISTS (SELECT 1 FROM {p}overlay WHERE world = ?) "
            f"OR EXISTS (SELECT 1 FROM {p}world_sequences WHERE world = ?)"
        )
        # A writing transaction, a fork or a snapshot on PostgreSQL starts here: the world row's
        # lock makes it the world's only writer until it commits. SQLite's transactions are
        # the database's only writer already.
        self.lock_world = sql(
            f"SELECT head FROM {p}worlds WHERE id = ?" + (" FOR UPDATE" if postgres else "")
        )
        self.set_head = sql(f"UPDATE {p}worlds SET head = ? WHERE id = ?")
        self.world_heads = sql(f"SELECT base_snapshot, head FROM {p}worlds WHERE id = ?")
        # PostgreSQL runs a reset as one statement (data-modifying CTEs always run to
        # completion); SQLite, which lacks them, runs the three deletes, at no network cost.
        self.reset_in_one = (
            sql(
                f"WITH w AS (SELECT id FROM {p}worlds WHERE id = ?), "
                f"o AS (DELETE FROM {p}overlay WHERE world IN (SELECT id FROM w)), "
                f"u AS (DELETE FROM {p}uniques WHERE world IN (SELECT id FROM w)), "
                f"k AS (DELETE FROM {p}keys WHERE world IN (SELECT id FROM w)), "
                f"s AS (DELETE FROM {p}world_sequences WHERE world IN (SELECT id FROM w)), "
                f"h AS (UPDATE {p}worlds SET head = base_snapshot WHERE id IN (SELECT id FROM w)) "
                "SELECT count(*) FROM w"
            )
            if postgres
            else None
        )
        self.head_to_base = sql(f"UPDATE {p}worlds SET head = base_snapshot WHERE id = ?")
        self.overlay_put = sql(
            f"INSERT INTO {p}overlay (world, resource, record_id, ord, data) "
            "VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (world, resource, record_id) DO UPDATE SET data = excluded.data"
        )
        # An insert: written over no row or a tombstone only (`rowcount` 0: the id is taken).
        self.overlay_insert = sql(
            f"INSERT INTO {p}overlay (world, resource, record_id, ord, data) "
            "VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (world, resource, record_id) DO UPDATE SET data = excluded.data "
            f"WHERE {p}overlay.data IS NULL"
        )
        self.overlay_clear = sql(f"DELETE FROM {p}overlay WHERE world = ?")
        self.unique_holder = sql(
            f"SELECT record_id FROM {p}uniques "
            "WHERE world = ? AND resource = ? AND field = ? AND value = ?"
        )
        self.unique_drop = sql(
            f"DELETE FROM {p}uniques "
            "WHERE world = ? AND resource = ? AND field = ? AND value = ? AND record_id = ?"
        )
        # Checked through `rowcount`: RETURNING costs SQLite a second pass over the row.
        self.unique_claim = sql(
            f"INSERT INTO {p}uniques (world, resource, field, value, record_id) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
        )
        self.unique_clear = sql(f"DELETE FROM {p}uniques WHERE world = ?")
        self.keys_add = f"INSERT INTO {p}keys (world, resource, field, value, record_id) VALUES "
        self.keys_drop = sql(
            f"DELETE FROM {p}keys "
            "WHERE world = ? AND resource = ? AND field = ? AND value = ? AND record_id = ?"
        )
        self.keys_clear = sql(f"DELETE FROM {p}keys WHERE world = ?")
        # The world's rows holding a key: a value has one or two (`equality_keys`).
        self.keyed_rows = sql(
            f"SELECT DISTINCT o.record_id, o.ord, o.data FROM {p}keys k JOIN {p}overlay o "
            "ON o.world = k.world AND o.resource = k.resource AND o.record_id = k.record_id "
            "WHERE k.world = ? AND k.resource = ? AND k.field = ? AND k.value IN (?, ?)"
        )
        self.overlay_rows = sql(
            f"SELECT record_id, ord, data FROM {p}overlay WHERE world = ? AND resource = ?"
        )
        self.overlay_rows_capped = sql(
            f"SELECT record_id, ord, data FROM {p}overlay WHERE world = ? AND resource = ? "
            f"LIMIT {_SHADOWED + 1}"
        )
        self.overlay_rows_of = sql(
            f"SELECT record_id, ord, data FROM {p}overlay "
            "WHERE world = ? AND resource = ? AND record_id IN "
        )
        self.claim_index = sql(
            f"INSERT INTO {p}indexes (resource, field) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING RETURNING resource"
        )
        self.overlay_of_resource = sql(
            f"SELECT world, record_id, data FROM {p}overlay WHERE resource = ? AND data IS NOT NULL"
        )
        self.sequence_next = sql(
            f"INSERT INTO {p}world_sequences (world, name, value) VALUES (?, ?, ?) "
            f"ON CONFLICT (world, name) DO UPDATE SET value = {p}world_sequences.value + 1 "
            "RETURNING value"
        )
        self.sequence_get = sql(
            f"SELECT value FROM {p}world_sequences WHERE world = ? AND name = ?"
        )
        self.world_sequence_get = sql(
            f"SELECT w.head, s.value FROM {p}worlds w "
            f"LEFT JOIN {p}world_sequences s ON s.world = w.id AND s.name = ? WHERE w.id = ?"
        )
        self.sequence_set = sql(
            f"INSERT INTO {p}world_sequences (world, name, value) VALUES (?, ?, ?) "
            "ON CONFLICT (world, name) DO UPDATE SET value = excluded.value"
        )
        self.sequences_of_world = sql(f"SELECT name, value FROM {p}world_sequences WHERE world = ?")
        self.sequences_clear = sql(f"DELETE FROM {p}world_sequences WHERE world = ?")
        self.snapshot = sql(f"SELECT parent, created_at FROM {p}snapshots WHERE id = ?")
        self.snapshots = sql(f"SELECT id, parent, created_at FROM {p}snapshots ORDER BY id")
        self.snapshot_users = sql(
            f"SELECT id FROM {p}worlds WHERE base_snapshot = ? OR head = ? "
            f"UNION SELECT id FROM {p}snapshots WHERE parent = ? ORDER BY 1 LIMIT 6"
        )
        self.snapshot_drop = [
            sql(f"DELETE FROM {p}layer WHERE snapshot = ?"),
            sql(f"DELETE FROM {p}snapshot_sequences WHERE snapshot = ?"),
            sql(f"DELETE FROM {p}snapshots WHERE id = ?"),
        ]
        self.insert_snapshot = sql(
            f"INSERT INTO {p}snapshots (id, parent, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT (id) DO NOTHING RETURNING id"
        )
        self.layer_rows = sql(
            f"SELECT resource, record_id, data FROM {p}layer WHERE snapshot = ? "
            "ORDER BY ord, resource, record_id"
        )
        self.mark = mark
        self.layer_add = f"INSERT INTO {p}layer (snapshot, resource, record_id, ord, data) VALUES "
        self.snapshot_sequences = sql(
            f"SELECT name, value FROM {p}snapshot_sequences WHERE snapshot = ?"
        )
        self.snapshot_sequence_add = (
            f"INSERT INTO {p}snapshot_sequences (snapshot, name, value) VALUES "
        )

    def insert_all(self, cursor: Any, head: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert rows in the fewest round trips: a few rows as one multi-row INSERT (the
        driver's executemany costs PostgreSQL a pipeline sync), many through executemany
        (which streams bulk loads faster than huge statements)."""
        if not rows:
            return
        group = "(" + ", ".join([self.mark] * len(rows[0])) + ")"
        if len(rows) <= _MULTI_ROW:
            values = [value for row in rows for value in row]
            cursor.execute(head + ", ".join([group] * len(rows)), values)
        else:
            cursor.executemany(head + group, rows)


def _tables(metadata: sa.MetaData, prefix: str) -> None:
    key = sa.String(255)
    sa.Table(
        f"{prefix}snapshots",
        metadata,
        sa.Column("id", key, primary_key=True),
        sa.Column("parent", key, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    sa.Table(
        f"{prefix}layer",
        metadata,
        sa.Column("snapshot", key, primary_key=True),
        sa.Column("resource", key, primary_key=True),
        sa.Column("record_id", key, primary_key=True),
        sa.Column("ord", sa.BigInteger, nullable=False),
        sa.Column("data", sa.Text, nullable=True),
    )
    sa.Table(
        f"{prefix}snapshot_sequences",
        metadata,
        sa.Column("snapshot", key, primary_key=True),
        sa.Column("name", key, primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    sa.Table(
        f"{prefix}worlds",
        metadata,
        sa.Column("id", key, primary_key=True),
        sa.Column("base_snapshot", key, nullable=True),
        sa.Column("head", key, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    # How often each world's credential was replaced (`rotate_key`); a world never rotated has
    # no row. Rows outlive their worlds, so a world created again under a deleted one's id
    # does not take the old world's credentials back.
    sa.Table(
        f"{prefix}world_keys",
        metadata,
        sa.Column("world", key, primary_key=True),
        sa.Column("generation", sa.BigInteger, nullable=False),
    )
    sa.Table(
        f"{prefix}overlay",
        metadata,
        sa.Column("world", key, primary_key=True),
        sa.Column("resource", key, primary_key=True),
        sa.Column("record_id", key, primary_key=True),
        sa.Column("ord", sa.BigInteger, nullable=False),
        sa.Column("data", sa.Text, nullable=True),
    )
    sa.Table(
        f"{prefix}world_sequences",
        metadata,
        sa.Column("world", key, primary_key=True),
        sa.Column("name", key, primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )
    # The overlay's live values of unique fields; the primary key makes two concurrent writers of
    # one value in one world collide in the database even when both passed the check in Python.
    # A record's rows are dropped by their keys (the values its stored text holds), so there is
    # no index by record: it cost every claim a second B-tree insert.
    # The overlay's keys of indexed fields (`store_keys`): a world's records by field value.
    sa.Table(
        f"{prefix}keys",
        metadata,
        sa.Column("world", key, primary_key=True),
        sa.Column("resource", key, primary_key=True),
        sa.Column("field", key, primary_key=True),
        sa.Column("value", sa.Text, primary_key=True),
        sa.Column("record_id", key, primary_key=True),
    )
    # The indexed fields whose keys every overlay row has: one written by a process that did
    # not index the field yet gets its keys when a process first indexes it.
    sa.Table(
        f"{prefix}indexes",
        metadata,
        sa.Column("resource", key, primary_key=True),
        sa.Column("field", key, primary_key=True),
    )
    # Which resources and fields have query columns (`sqlquery`; field "": the resource's
    # table), and which snapshots' rows fill them, with what their values are like
    # (`sqlquery.FieldStats`).
    sa.Table(
        f"{prefix}qcols",
        metadata,
        sa.Column("resource", key, primary_key=True),
        sa.Column("field", key, primary_key=True),
    )
    sa.Table(
        f"{prefix}qfilled",
        metadata,
        sa.Column("snapshot", key, primary_key=True),
        sa.Column("resource", key, primary_key=True),
        sa.Column("field", key, primary_key=True),
        sa.Column("exact", sa.SmallInteger, nullable=False),
        sa.Column("ranks", sa.SmallInteger, nullable=False),
        sa.Column("plain", sa.SmallInteger, nullable=False),
    )
    sa.Table(
        f"{prefix}uniques",
        metadata,
        sa.Column("world", key, primary_key=True),
        sa.Column("resource", key, primary_key=True),
        sa.Column("field", key, primary_key=True),
        sa.Column("value", sa.Text, primary_key=True),
        sa.Column("record_id", key, nullable=False),
    )


_BaseRows = list[tuple[str, str, int]]
"""(snapshot, record id, place) of base records a query table matched."""
_Matches = list[tuple[tuple[int, ...], str, Record]]
"""(place, record id, record) of a world's own records a filter matched."""


class SqlTransaction:
    """One request's reads and writes in one world (see `Transaction`).

    Records it returns are the caller's own copies. Writes raise `NotFoundError` for a record
    that is not there and `ConflictError` for a taken id or unique value.
    """

    __slots__ = (
        "_base_layer",
        "_cursor",
        "_deferred",
        "_loaded",
        "_locks",
        "_pending",
        "_store",
        "_walked",
        "_world",
        "_written",
    )

    def __init__(self, store: SqlStore, cursor: Any, world: str, *, writes: bool = True) -> None:
        self._store = store
        self._cursor = cursor
        self._world = world
        # PostgreSQL runs transactions side by side (READ COMMITTED): a writing one locks the
        # world row with its first statement, so nothing it reads changes before it commits. On
        # SQLite every transaction is already the only one (one connection under the store's
        # lock; BEGIN IMMEDIATE for a file two processes share).
        self._locks = writes and not store._sqlite
        # A read-only transaction on a shared SQLite file holds no write lock to write under.
        self._deferred = not writes and store._sqlite and not store._private
        # The world row is read with the first statement that needs it (a get reads it in the
        # same query as the overlay row), saving a round trip on every request.
        self._loaded = False
        self._base_layer: _Layer | None = None
        self._written = False
        # Records reached by dot-walking during this transaction's list calls; cleared by every
        # write so a walk never sees a stale target.
        self._walked: dict[tuple[str, str], Record | None] = {}
        # What `_query_ready` learned or wrote of the query tables, cached on commit.
        self._pending: Pending | None = None

    @property
    def world(self) -> str:
        return self._world

    def get(self, resource: str, record_id: str) -> Record | None:
        text = self._visible(resource, record_id)[0]
        return None if text is None else _loads(text)

    def exists(self, resource: str, record_id: str) -> bool:
        return self._visible(resource, record_id)[0] is not None

    def list(self, resource: str, query: Query) -> tuple[list[Record], int]:
        context = Context(model=self._store.model, resource=resource, resolve=self._walk)
        records, total = self._listed(resource, query, context)
        return [_clone(record) for record in records], total

    def _listed(
        self, resource: str, query: Query, context: Context
    ) -> tuple[Sequence[Record], int]:
        """`list`'s page (shared objects) and count: a plain page reads only its records, a
        query over a large base runs in SQL (`_sql_listed`), else a filter with selective
        equalities reads only the records holding their keys, else a scan."""
        if query.where is None and not query.order_by:
            paged = self._page(resource, query)
            if paged is not None:
                page, total = paged
                return evaluate(page, replace(query, limit=None, offset=0), context)[0], total
        answered = self._sql_listed(resource, query, context)
        if answered is not None:
            return answered
        if query.where is not None:
            equal = equalities(query.where)
            narrowed = self._narrowed(resource, equal)
            if narrowed is not None:
                # The base's candidates hold a key of every equality: they match them (equal
                # keys are equal values), so a filter of equalities alone need not test them.
                test = compile_filter(query.where, context)
                alone = only_equalities(query.where, equal)
                kept = [record for record, based in narrowed if (based and alone) or test(record)]
                return evaluate(kept, replace(query, where=None), context)
        return evaluate(self._records(resource), query, context)

    def _sql_listed(
        self, resource: str, query: Query, context: Context
    ) -> tuple[Sequence[Record], int] | None:
        """The base's matches, count and order from SQL over its layers' query tables
        (`sqlquery`), the world's own rows evaluated here and merged in by their places;
        None when SQL cannot answer exactly (the caller scans)."""
        base = self._base()
        fields = query_fields(query)
        if base is None or fields is None or len(base.root.rows.get(resource, ())) < _SQL_FROM:
            return None
        chain = _chain(base)
        own = dict(self._own_rows(resource, self._store._sql.overlay_rows_capped, ()))
        if len(own) > _SHADOWED:
            return None  # the world wrote much: its keys narrow, or a scan answers
        scoped = _scopes(chain, resource, own.keys(), self._store._sql.mark)
        kept = self._store._query_file(chain, resource)
        stats = None if scoped is None else self._query_ready(resource, fields, chain, kept)
        if scoped is None or stats is None or not all(s.exact for s in stats.values()):
            return None
        store = self._store
        compiler = Compiler(stats, mark=store._sql.mark, postgres=not store._sqlite)
        where = ALWAYS if query.where is None else compiler.filter(query.where)
        if where is None:
            return None
        pair = sorted(set(compiler.lookups))[:2]
        if len(pair) == 2:
            self._pair(resource, pair, kept)
        run = self._rows if kept is None else kept.rows
        base_rows, total = self._sql_page(resource, query, scoped, where, compiler, run)
        layers = {layer.id: layer for layer in chain}
        found: _Matches = []
        for snapshot, record_id, place in base_rows:
            record = layers[snapshot]._parsed(resource, record_id)
            if record is not None:  # a query table holds no tombstone
                found.append((_place(place), record_id, record))
        mine = self._own_matches(base, resource, query, own, context)
        if not mine:
            ordered = [record for _, _, record in found]
            return evaluate(ordered, replace(query, where=None, order_by=()), context)[0], total
        merged = sorted([*found, *mine], key=lambda item: (item[0], item[1]))
        page = evaluate([r for _, _, r in merged], replace(query, where=None), context)[0]
        return page, total + len(mine)

    def _sql_page(
        self,
        resource: str,
        query: Query,
        scoped: tuple[str, Sequence[Any]],
        where: str,
        compiler: Compiler,
        run: Callable[[str, Sequence[Any]], Sequence[tuple[Any, ...]]],
    ) -> tuple[_BaseRows, int]:
        """The base's first matches up to the page's end, in order, and their count (asked
        only when the page is full), from the query tables `run` reads."""
        table = table_name(self._store.prefix, resource)
        condition = f"({scoped[0]}) AND {where}"
        params = [*scoped[1], *compiler.params]
        end = None if query.limit is None else query.offset + max(query.limit, 0)
        rows: _BaseRows = []
        if end != 0:
            # A page end past what a 64-bit LIMIT holds asks for every match.
            limit = "" if end is None or end > _LARGEST_LIMIT else f" LIMIT {int(end)}"
            found = run(
                f"SELECT q.snapshot, q.record_id, q.place FROM {table} q WHERE {condition} "
                f"ORDER BY {compiler.order(query.order_by)}{limit}",
                params,
            )
            rows = [(str(a), str(b), int(c)) for a, b, c in found]
        if end is not None and len(rows) < end:
            return rows, len(rows)
        return rows, int(run(f"SELECT count(*) FROM {table} q WHERE {condition}", params)[0][0])

    def _rows(self, statement: str, params: Sequence[Any]) -> Sequence[tuple[Any, ...]]:
        """A query's rows from this transaction's database."""
        self._cursor.execute(statement, params)
        found: Sequence[tuple[Any, ...]] = self._cursor.fetchall()
        return found

    def _pair(self, resource: str, stems: Sequence[str], kept: QueryFile | None) -> None:
        """Index two fields a filter compares by equality together (`QueryTables.pair`)."""
        if kept is not None:
            kept.pair(resource, stems)
            return
        tables = self._store._query_tables
        if tables.paired(resource, stems) is None and self._may_fill():
            tables.pair(self._cursor, resource, stems, self._pending_facts())

    def _own_matches(
        self,
        base: _Layer,
        resource: str,
        query: Query,
        own: Mapping[str, tuple[int, str | None]],
        context: Context,
    ) -> _Matches:
        """The world's own records the filter matches, with their places in its list."""
        test = None if query.where is None else compile_filter(query.where, context)
        found: _Matches = []
        for record_id, row in own.items():
            record, place = self._placed(base, resource, record_id, row)
            if record is not None and (test is None or test(record)):
                found.append((place, record_id, record))
        return found

    def _query_ready(
        self,
        resource: str,
        fields: Sequence[str],
        chain: Sequence[_Layer],
        kept: QueryFile | None,
    ) -> dict[str, FieldStats] | None:
        """The fields' stats over the layers' query tables, filling them (in this
        transaction, or in the mounted root's query file `kept`) where they do not hold the
        fields yet; None when it cannot write."""
        if kept is not None:
            root = chain[0]
            return kept.ready(resource, fields, LayerRows(root.id, _layer_records(root, resource)))
        tables = self._store._query_tables
        holding = [layer for layer in chain if layer.rows.get(resource)]
        known = tables.known(resource, fields, [layer.id for layer in holding])
        if known is not None:
            return known
        if not self._may_fill():
            return None
        rows = [LayerRows(layer.id, _layer_records(layer, resource)) for layer in holding]
        return tables.ensure(self._cursor, resource, fields, rows, self._pending_facts())

    def _may_fill(self) -> bool:
        """Whether this transaction may write the query tables (beginning it on the private
        in-memory database, whose reads run outside a transaction)."""
        store = self._store
        if store._sqlite:
            if self._deferred:
                return False  # a read on a shared file holds no write lock to fill under
            if store._private and not store._sqlite_driver.in_transaction:
                self._cursor.execute("BEGIN IMMEDIATE")
        return True

    def _pending_facts(self) -> Pending:
        if self._pending is None:
            self._pending = Pending(set(), {}, set())
        return self._pending

    def committed(self) -> None:
        """After the transaction committed: what it learned of the query tables holds."""
        if self._pending is not None:
            self._store._query_tables.publish(self._pending)
            self._pending = None

    def all(self, resource: str) -> Sequence[tuple[str, Record]]:
        """Every visible record of a resource with its id (shared objects: do not mutate)."""
        overlay = self._overlay_rows(resource)
        base = self._base()
        base_items = base.items(resource) if base is not None else []
        if not overlay:
            return base_items
        return list(_merged(base_items, overlay))

    def _records(self, resource: str) -> Sequence[Record]:
        overlay = self._overlay_rows(resource)
        base = self._base()
        if not overlay:
            return base.records(resource) if base is not None else []
        base_items = base.items(resource) if base is not None else []
        return [record for _, record in _merged(base_items, overlay)]

    def _page(self, resource: str, query: Query) -> tuple[Sequence[Record], int] | None:
        """An unfiltered, unsorted page of a world with no rows of its own in the resource,
        parsing only the page's records: the base's visible ids are known without parsing.
        None in any other case."""
        base = self._base()
        if query.order_by or base is None or self._overlay_rows(resource):
            return None
        owners = base.owners(resource)
        end = None if query.limit is None else query.offset + max(query.limit, 0)
        page = [owner._parsed(resource, i) for i, owner in owners[query.offset : end]]
        return [record for record in page if record is not None], len(owners)

    def _narrowed(
        self, resource: str, equal: Sequence[Equality]
    ) -> Sequence[tuple[Record, bool]] | None:
        """The visible records a filter with these `field = value` conjuncts can match (maybe
        a few more), in `_records` order, each with whether it is the base's own (it holds a
        key of every equality); None when a scan is cheaper. The base's come from its
        layers' equality indexes (built on first use, for any field). The world's own come
        from its keys when a conjunct's field is one an extension looks up (the world may have
        written many), else they are all read: an episode's world writes a few."""
        if not equal:
            return None
        base = self._base()
        based = set() if base is None else _matching_ids(base, resource, equal)
        indexed = self._store._indexed.get(resource, ())
        keyed = next(((name, keys) for name, keys in equal if name in indexed), None)
        if keyed is None:
            if base is not None and len(based) * _SELECTIVE > len(base.root.rows.get(resource, ())):
                return None
            own = dict(self._own_rows(resource, self._store._sql.overlay_rows, ()))
        else:
            name, keys = keyed
            statement = self._store._sql.keyed_rows  # a value has one or two keys
            own = dict(self._own_rows(resource, statement, (name, keys[0], keys[-1])))
            own.update(self._overlay_of(resource, sorted(based - own.keys())))
        return self._in_order(base, resource, based | own.keys(), own)

    def _own_rows(
        self, resource: str, statement: str, more: Sequence[str]
    ) -> Iterator[tuple[str, tuple[int, str | None]]]:
        """The world's rows a statement selects, as (id, (order, text or None))."""
        cursor = self._cursor
        cursor.execute(statement, (self._world, resource, *more))
        for record_id, order, data in cursor.fetchall():
            yield str(record_id), (order, data)

    def _in_order(
        self,
        base: _Layer | None,
        resource: str,
        record_ids: AbstractSet[str],
        own: Mapping[str, tuple[int, str | None]],
    ) -> Sequence[tuple[Record, bool]]:
        """The records of `record_ids` as the world sees them (`own`: its rows of them), in
        `_records` order (the base's in its order, then the world's own), each with whether
        it is the base's (the world has no row of it)."""
        placed: list[tuple[tuple[int, ...], str, Record, bool]] = []
        for record_id in record_ids:
            row = own.get(record_id)
            record, place = self._placed(base, resource, record_id, row)
            if record is not None:
                placed.append((place, record_id, record, row is None))
        placed.sort(key=lambda item: (item[0], item[1]))
        return [(record, based) for _, _, record, based in placed]

    def _placed(
        self,
        base: _Layer | None,
        resource: str,
        record_id: str,
        row: tuple[int, str | None] | None,
    ) -> tuple[Record | None, tuple[int, ...]]:
        """A record as the world sees it (None: deleted) and its place in `_records` order: a
        record of the base keeps the base's place, one new to the world follows in write order.
        `row` is the world's own row, (order, text or None), if it has one."""
        located = None if base is None else base.locate(resource, record_id)
        if located is not None and located[1] is not None:
            place: tuple[int, ...] = (0, *located[0])
            if row is None:
                return located[1], place
        elif row is None:
            return None, ()
        else:
            place = (1, row[0])
        return (None if row[1] is None else _loads(row[1])), place

    def _overlay_of(
        self, resource: str, record_ids: Sequence[str]
    ) -> Iterator[tuple[str, tuple[int, str | None]]]:
        """The world's own rows of some records, as (id, (order, text or None))."""
        sql = self._store._sql
        for start in range(0, len(record_ids), _BATCH):
            chunk = tuple(record_ids[start : start + _BATCH])
            marks = "(" + ", ".join([sql.mark] * len(chunk)) + ")"
            yield from self._own_rows(resource, sql.overlay_rows_of + marks, chunk)

    def _overlay_rows(self, resource: str) -> dict[str, str | None]:
        cursor = self._cursor
        cursor.execute(self._store._sql.overlay_list, (self._world, resource))
        return dict(cursor.fetchall())

    def insert(self, resource: str, record_id: str, record: Record) -> None:
        if "\x00" in record_id:
            raise ConflictError("a record id cannot hold a NUL character", resource=resource)
        base = self._base()
        if base is not None and base.raw(resource, record_id) is not None:
            # The base holds the id: only this world's tombstone frees it.
            if self._visible(resource, record_id)[0] is not None:
                raise self._taken(resource, record_id)
            self._put(resource, record_id, record)
        else:
            self._put(resource, record_id, record, fresh=True)
        self._claim_unique(resource, record_id, record, None)
        self._rekey(resource, record_id, None, record)

    def update(self, resource: str, record_id: str, record: Record) -> None:
        text, overlaid = self._require(resource, record_id)
        self._mark_written()
        self._claim_unique(resource, record_id, record, text if overlaid else None)
        self._put(resource, record_id, record)
        self._rekey(resource, record_id, text if overlaid else None, record)

    def delete(self, resource: str, record_id: str) -> None:
        text, overlaid = self._require(resource, record_id)
        self._mark_written()
        fields = self._store._unique_fields(resource)
        if overlaid and fields:
            # Only the world's own writes hold rows in `uniques`.
            self._drop_unique(resource, record_id, _unique_keys(fields, _loads(text)))
        self._put(resource, record_id, None)
        self._rekey(resource, record_id, text if overlaid else None, None)

    def next_sequence(self, name: str, start: int) -> int:
        store = self._store
        sql = store._sql
        cursor = self._cursor
        if not store._sqlite:
            base = self._base()
            self._mark_written()
            first = _first_value(base, name, start)
            cursor.execute(sql.sequence_next, (self._world, name, first))
            return int(cursor.fetchone()[0])
        # SQLite: this transaction is the database's only writer (BEGIN IMMEDIATE), so the
        # counter is read, then written, in two plain statements; RETURNING would cost more than
        # the read. The first counter of a transaction is read with the world row.
        if self._loaded:
            cursor.execute(sql.sequence_get, (self._world, name))
            row = cursor.fetchone()
            current = None if row is None else row[0]
        else:
            cursor.execute(sql.world_sequence_get, (name, self._world))
            row = cursor.fetchone()
            if row is None:
                raise NotFoundError("no such world", world=self._world)
            head, current = row
            self._load(head)
        self._mark_written()
        value = _first_value(self._base_layer, name, start) if current is None else current + 1
        cursor.execute(sql.sequence_set, (self._world, name, value))
        return int(value)

    def _require(self, resource: str, record_id: str) -> tuple[str, bool]:
        text, overlaid = self._visible(resource, record_id)
        if text is None:
            raise NotFoundError(
                f"no record with id {record_id!r}",
                world=self._world,
                resource=resource,
                record_id=record_id,
            )
        return text, overlaid

    def _taken(self, resource: str, record_id: str) -> ConflictError:
        return ConflictError(
            f"a record with id {record_id!r} already exists",
            world=self._world,
            resource=resource,
            record_id=record_id,
        )

    def _mark_written(self) -> None:
        """Before the first write: on the private in-memory database, begin the transaction
        (reads ran without one); on PostgreSQL, refuse unless the transaction locked the world
        with its first statement (`_lock_world`), or what it read may have changed; on a shared
        SQLite file, refuse in a transaction that began without the write lock."""
        if self._written:
            return
        store = self._store
        if not store._sqlite or self._deferred:
            raise UndeclaredWriteError(
                "a transaction opened with writes=False tried to write", world=self._world
            )
        self._written = True
        if store._private and not store._sqlite_driver.in_transaction:
            self._cursor.execute("BEGIN IMMEDIATE")

    def _lock_world(self) -> None:
        """A writing transaction's first statement on PostgreSQL: lock the world row (waiting
        for the world's current writer, fork or snapshot to commit) and read its head."""
        self._base_layer = self._store._locked_head(self._cursor, self._world)
        self._loaded = True
        self._written = True

    def _load(self, head: str | None) -> None:
        self._base_layer = None if head is None else self._store._layer(self._cursor, head)
        self._loaded = True

    def base_snapshot(self) -> str | None:
        base = self._base()
        return None if base is None else base.id

    def _base(self) -> _Layer | None:
        if not self._loaded:
            if self._locks:
                self._lock_world()
                return self._base_layer
            cursor = self._cursor
            cursor.execute(self._store._sql.world_state, (self._world,))
            row = cursor.fetchone()
            if row is None:
                raise NotFoundError("no such world", world=self._world)
            self._load(row[0])
        return self._base_layer

    def _visible(self, resource: str, record_id: str) -> tuple[str | None, bool]:
        """The record's JSON as this world sees it: its own row if it has one (None for a
        tombstone), else the base snapshot's; and whether the row is the world's own."""
        if "\x00" in record_id:
            return None, False  # no record has such an id (`absent_name`)
        cursor = self._cursor
        sql = self._store._sql
        if not self._loaded and self._locks:
            self._lock_world()
        if self._loaded:
            cursor.execute(sql.overlay_get, (self._world, resource, record_id))
            row = cursor.fetchone()
            if row is not None:
                return (None if row[0] is None else str(row[0])), True
        else:
            cursor.execute(sql.world_get, (resource, record_id, self._world))
            row = cursor.fetchone()
            if row is None:
                raise NotFoundError("no such world", world=self._world)
            head, overlaid, data = row
            self._load(head)
            if overlaid is not None:
                return (None if data is None else str(data)), True
        base = self._base_layer
        return (None if base is None else base.raw(resource, record_id)), False

    def _overridden(self, resource: str, record_id: str) -> bool:
        cursor = self._cursor
        cursor.execute(self._store._sql.overlay_get, (self._world, resource, record_id))
        return cursor.fetchone() is not None

    def _claim_unique(
        self, resource: str, record_id: str, record: Record, previous: str | None
    ) -> None:
        """Refuse a value of a unique field another visible record holds, and hold the record's
        values in `uniques`. `previous` is the record's text when it is the world's own row
        (its values already hold rows there)."""
        fields = self._store._unique_fields(resource)
        if not fields:
            return
        keys = _unique_keys(fields, record)
        sql = self._store._sql
        cursor = self._cursor
        if previous is not None:
            held = _unique_keys(fields, _loads(previous))
            if keys == held:
                return  # the same values: its rows stand, and no one else can hold them
            self._drop_unique(resource, record_id, held)
        for name, key in keys:
            clash = self._base_clash(resource, name, key, record_id)
            if clash is None:
                # The primary key refuses a value another record of the world holds, also one
                # a concurrent writer holds; only then is the holder looked up, to name it.
                cursor.execute(sql.unique_claim, (self._world, resource, name, key, record_id))
                if cursor.rowcount == 0:
                    cursor.execute(sql.unique_holder, (self._world, resource, name, key))
                    holder = cursor.fetchone()
                    if holder is None:  # a concurrent writer held it, and let go since
                        raise _collision(f"value {key!r} of {name} in {resource}")
                    clash = str(holder[0])
            if clash is not None:
                raise ConflictError(
                    f"value {key!r} is already used by record {clash!r}",
                    world=self._world,
                    resource=resource,
                    record_id=record_id,
                    field=name,
                )

    def _drop_unique(self, resource: str, record_id: str, held: Sequence[tuple[str, str]]) -> None:
        for name, key in held:
            self._cursor.execute(
                self._store._sql.unique_drop, (self._world, resource, name, key, record_id)
            )

    def _rekey(
        self, resource: str, record_id: str, previous: str | None, record: Record | None
    ) -> None:
        """Keep the world's keys of the record's indexed fields: `previous` is the text of its
        row the world held (None: the base's row, whose keys its layers index, or none)."""
        fields = self._store._indexed.get(resource)
        if not fields:
            return
        held = record_keys(None if previous is None else _loads(previous), fields)
        keys = record_keys(record, fields)
        sql = self._store._sql
        for name, key in held - keys:
            self._cursor.execute(sql.keys_drop, (self._world, resource, name, key, record_id))
        added = [(self._world, resource, name, key, record_id) for name, key in keys - held]
        sql.insert_all(self._cursor, sql.keys_add, added)

    def _base_clash(self, resource: str, name: str, key: str, record_id: str) -> str | None:
        """A record of the base holding `key` that this world has not rewritten or deleted."""
        base = self._base()
        if base is None:
            return None
        taken = base.ids_with(resource, name, key)
        if not taken or (len(taken) == 1 and record_id in taken):
            return None
        return next(
            (
                other
                for other in sorted(taken - {record_id})
                if not self._overridden(resource, other)
            ),
            None,
        )

    def _walk(self, resource: str, record_id: str) -> Record | None:
        key = (resource, record_id)
        if key not in self._walked:
            self._walked[key] = self.get(resource, record_id)
        return self._walked[key]

    def _put(
        self, resource: str, record_id: str, record: Record | None, *, fresh: bool = False
    ) -> None:
        """Write the world's row of a record (None: a tombstone). `fresh`: only over no row or
        a tombstone, else `ConflictError` (an insert's id check in the same statement)."""
        self._walked.clear()
        self._mark_written()
        data = None if record is None else _dumps(record)
        store = self._store
        sql = store._sql
        cursor = self._cursor
        if data is not None:
            store._grown += len(data)
        cursor.execute(
            sql.overlay_insert if fresh else sql.overlay_put,
            (self._world, resource, record_id, time.time_ns(), data),
        )
        if fresh and cursor.rowcount == 0:
            raise self._taken(resource, record_id)


def _require_names(**names: str | None) -> None:
    """Refuse world and snapshot names the database could not hold (`absent_name`)."""
    for what, value in names.items():
        missing = absent_name(value, what)
        if missing is not None:
            raise missing


def _matching_ids(base: _Layer, resource: str, equal: Sequence[Equality]) -> set[str]:
    """Ids of the base's records holding a key of every equality's value in its field."""
    found: set[str] | None = None
    for name, keys in equal:
        ids: set[str] = set()
        for key in keys:
            ids |= base.ids_with(resource, name, key, unique=False)
        found = ids if found is None else found & ids
        if not found:
            break
    return found or set()


def _chain(head: _Layer) -> list[_Layer]:
    """A head's layers from the root up."""
    chain: list[_Layer] = []
    layer: _Layer | None = head
    while layer is not None:
        chain.append(layer)
        layer = layer.parent
    return chain[::-1]


def _scopes(
    chain: Sequence[_Layer], resource: str, own: AbstractSet[str], mark: str
) -> tuple[str, list[Any]] | None:
    """Which rows of the layers' query tables the world sees: each layer's, less the ids a
    layer above it or the world itself rewrote or deleted; None when those are too many to
    name in a query."""
    above: set[str] = set(own)
    parts: list[str] = []
    params: list[Any] = []
    for layer in reversed(chain):
        rows = layer.rows.get(resource)
        if not rows:
            continue
        if len(above) > _SHADOWED:
            return None
        part = f"q.snapshot = {mark}"
        if above:
            part += " AND q.record_id NOT IN (" + ", ".join([mark] * len(above)) + ")"
        parts.append(f"({part})")
        params += [layer.id, *sorted(above)]
        if layer.parent is not None:
            above.update(rows)
    return (" OR ".join(parts) or NEVER), params


def _layer_records(layer: _Layer, resource: str) -> Iterator[tuple[str, int, Record]]:
    """A layer's own records of a resource with their places in a world's list."""
    if layer.parent is None:  # a root's records keep their places in it
        for position, (record_id, text) in enumerate(_texts(layer.rows.get(resource, {}))):
            if text is not None:
                yield record_id, position, _loads(text)
        return
    for record_id, text in layer.rows.get(resource, {}).items():
        located = layer.locate(resource, record_id)
        if text is not None and located is not None and located[1] is not None:
            depth, position = located[0]
            yield record_id, (depth << _PLACE_BITS) | position, located[1]


def _place(place: int) -> tuple[int, ...]:
    """A query table's place as `SqlTransaction._placed` gives it: a record of the base."""
    return (0, place >> _PLACE_BITS, place & ((1 << _PLACE_BITS) - 1))


def _first_value(base: _Layer | None, name: str, start: int) -> int:
    """A counter's first value in a world: `start`, or past the value its base snapshot left."""
    inherited = base.sequences.get(name) if base is not None else None
    return start if inherited is None else max(start, inherited + 1)


def _merged(
    base_items: list[tuple[str, Record]], overlay: dict[str, str | None]
) -> Iterator[tuple[str, Record]]:
    """A world's records: a changed base record keeps its place, records new to the world
    follow in the order they were written, tombstones hide."""
    pending = dict(overlay)
    for record_id, record in base_items:
        if record_id not in pending:
            yield record_id, record
            continue
        text = pending.pop(record_id)
        if text is not None:
            yield record_id, _loads(text)
    for record_id, text in pending.items():
        if text is not None:
            yield record_id, _loads(text)


def _clone(value: Any) -> Any:
    """A deep copy of a JSON value, several times faster than `copy.deepcopy`."""
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clone(item) for item in value]
    return value


class SqlStore:
    """Worlds and records in SQLite (default: in memory) or PostgreSQL, copy-on-write.

    `url` is a SQLAlchemy URL: `sqlite://` (in memory: private to the store, gone when it
    closes), `sqlite:///path.db`, or `postgresql+psycopg://user@host/db`. `prefix` namespaces
    the tables so several stores (or test runs) can share one database. Thread-safe; one
    `transaction` per request.
    """

    def __init__(self, model: ServiceModel, url: str = "sqlite://", *, prefix: str = "myna_"):
        if not _PREFIX.fullmatch(prefix):
            raise MockError(
                "a table prefix is 1-31 lowercase letters, digits or underscores, "
                "starting with a letter",
                prefix=prefix,
            )
        self.model = model
        self.url = url
        self.prefix = prefix
        sa_url = sa.make_url(url)
        self._sqlite = sa_url.get_backend_name() == "sqlite"
        in_memory = self._sqlite and sa_url.database in (None, "", ":memory:")
        # Bytes of records written since the in-memory database's size was last looked at.
        self._grown = 0
        self._memdb = in_memory
        # The database has one connection, this store's (in memory, or the temporary database
        # it moves to); `_open` while a transaction on it is open.
        self._private = in_memory
        self._open = False
        if in_memory:
            # Not SQLite's `:memory:`: it keeps every page on the dirty list it walks at each
            # commit, so a commit costs time in proportion to the database (a create took 25%
            # longer after 150,000 creates, and kept growing). The memdb VFS keeps the pages in
            # one buffer and commits at the same cost at any size, but holds at most 1 GiB:
            # past `_MEMDB_SPILL_BYTES` the store moves to a private temporary database, which
            # SQLite keeps in its page cache and spills to an unlinked temporary file (a few
            # microseconds more a write, no limit). Both keep the rollback journal in memory.
            self._engine = _single_connection_engine(_memdb_connection())
        elif self._sqlite:
            # One connection, serialised by a lock: SQLite has one writer anyway.
            self._engine = sa.create_engine(
                sa_url,
                poolclass=StaticPool,
                connect_args={"check_same_thread": False, "isolation_level": None},
            )
        else:
            self._engine = sa.create_engine(sa_url, pool_size=10, max_overflow=20)
            sa.event.listen(self._engine, "connect", _relax_durability)
        self._metadata = sa.MetaData()
        _tables(self._metadata, prefix)
        self._metadata.create_all(self._engine)
        if self._sqlite:
            self._sqlite_connection = self._engine.raw_connection()
            self._sqlite_driver = cast(
                sqlite3.Connection, self._sqlite_connection.driver_connection
            )
            cursor = self._sqlite_connection.cursor()
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.close()
        self._lock = threading.RLock()
        self._layers: dict[str, _Layer] = {}
        self._mounts: dict[str, _Mount] = {}
        # Unique indexes `load_base` built for roots this process has not loaded as layers yet.
        self._root_indexes: dict[str, dict[tuple[str, str], dict[str, set[str]]]] = {}
        self._layers_lock = threading.Lock()
        paramstyle = self._engine.dialect.paramstyle
        self._sql = _Statements(prefix, paramstyle, postgres=not self._sqlite)
        self._integrity_errors: tuple[type[BaseException], ...] = (
            self._engine.dialect.loaded_dbapi.IntegrityError,
        )
        self._uniques = {name: tuple(resource.unique) for name, resource in model.resources.items()}
        self._indexed = indexed_fields(model)
        self._query_tables = QueryTables(prefix, mark=self._sql.mark, postgres=not self._sqlite)
        self._index_overlays()

    def _index_overlays(self) -> None:
        """Give every overlay row its keys of an indexed field no process indexed before (a
        database written by an older Myna, or by a model whose extensions looked up less)."""
        with self._translated_cursor() as cursor:
            for resource, fields in self._indexed.items():
                for field_name in fields:
                    cursor.execute(self._sql.claim_index, (resource, field_name))
                    if cursor.fetchone() is None:
                        continue
                    cursor.execute(self._sql.overlay_of_resource, (resource,))
                    rows = [
                        (world, resource, name, key, record_id)
                        for world, record_id, data in cursor.fetchall()
                        for name, key in record_keys(_loads(data), (field_name,))
                    ]
                    self._sql.insert_all(cursor, self._sql.keys_add, rows)

    # -- connections ---------------------------------------------------------------------------

    def _cursor(self) -> _Scope:
        """A cursor inside one database transaction: committed on success, rolled back on error."""
        return _Scope(self, translate=False)

    def _translated_cursor(self) -> _Scope:
        """`_cursor`, with database constraint violations raised as `ConflictError` (a race
        another writer won)."""
        return _Scope(self, translate=True)

    def _outgrow_memory(self) -> None:
        """Move an in-memory database that nears the memdb limit to a private temporary one
        (under the lock, between transactions)."""
        self._grown = 0
        if not self._memdb:
            return
        pages = self._sqlite_driver.execute("PRAGMA page_count").fetchone()[0]
        page_size = self._sqlite_driver.execute("PRAGMA page_size").fetchone()[0]
        if pages * page_size < _MEMDB_SPILL_BYTES:
            return
        target = _private_temporary_database()
        self._sqlite_driver.backup(target)
        in_memory = self._engine
        self._engine = _single_connection_engine(target)
        self._sqlite_connection = self._engine.raw_connection()
        self._sqlite_driver = target
        self._memdb = False
        in_memory.dispose()

    def close(self) -> None:
        """Release the database connections."""
        for mount in self._mounts.values():
            mount.close()
        if self._sqlite:
            self._sqlite_connection.close()
        self._engine.dispose()

    def drop(self) -> None:
        """Drop this store's tables (tests and throwaway databases)."""
        with self._cursor() as cursor:
            for table in self._query_tables.tables(cursor):
                cursor.execute(f"DROP TABLE IF EXISTS {table}")
        if self._sqlite:
            self._sqlite_connection.close()
        self._metadata.drop_all(self._engine)
        self._engine.dispose()

    def database_bytes(self) -> int:
        """Bytes the store's data occupies: the whole SQLite database, or this store's tables
        (with their indexes) in PostgreSQL."""
        with self._cursor() as cursor:
            if self._sqlite:
                cursor.execute("PRAGMA page_count")
                pages = int(cursor.fetchone()[0])
                cursor.execute("PRAGMA page_size")
                return pages * int(cursor.fetchone()[0])
            total = 0
            for table in self._metadata.tables:
                cursor.execute("SELECT pg_total_relation_size(%s::regclass)", (table,))
                total += int(cursor.fetchone()[0])
            return total

    # -- transactions --------------------------------------------------------------------------

    def transaction(self, world: str, *, writes: bool = True) -> _TransactionScope:
        """All reads and writes of one request in `world`, committed together when the block
        ends, rolled back when it raises. The first read or write raises `NotFoundError` if the
        world does not exist. See `Store.transaction` for `writes`."""
        _require_names(world=world)
        return _TransactionScope(self, world, writes=writes)

    # -- worlds --------------------------------------------------------------------------------

    def create_world(
        self, world: str, *, from_snapshot: str | None = None, exist_ok: bool = False
    ) -> WorldInfo:
        """A new empty world, or one whose base is `from_snapshot`.

        With `exist_ok`, an existing world of that id is returned unchanged (several processes
        may each ensure the default world at start-up).
        """
        _require_names(world=world, snapshot=from_snapshot)
        with self._translated_cursor() as cursor:
            if from_snapshot is not None:
                # Asked of the database, not the cache: another process may have deleted it.
                cursor.execute(self._sql.snapshot, (from_snapshot,))
                if cursor.fetchone() is None:
                    raise NotFoundError("no such snapshot", snapshot=from_snapshot)
            created = time.time()
            cursor.execute(self._sql.insert_world, (world, from_snapshot, from_snapshot, created))
            if cursor.fetchone() is None:
                if not exist_ok:
                    raise ConflictError("a world with this id already exists", world=world)
                base, since = self._world_row(cursor, world)
                return WorldInfo(id=world, base_snapshot=base, created_at=since)
        return WorldInfo(id=world, base_snapshot=from_snapshot, created_at=created)

    def fork_world(self, source: str, new_world: str) -> WorldInfo:
        """A new world in the source's current state. The source's writes since it was created
        or last forked are frozen into a snapshot that becomes its head and the new world's
        base, so the two share everything and diverge from here, and a fork costs what was
        written since the last one, whatever came before."""
        _require_names(world=source, new_world=new_world)
        with self._translated_cursor() as cursor:
            base_id = self._frozen(cursor, source)
            created = time.time()
            cursor.execute(self._sql.insert_world, (new_world, base_id, base_id, created))
            if cursor.fetchone() is None:
                raise ConflictError("a world with this id already exists", world=new_world)
        return WorldInfo(id=new_world, base_snapshot=base_id, created_at=created)

    def reset_world(self, world: str) -> None:
        """Drop the world's own writes and counters: it is its base snapshot again."""
        _require_names(world=world)
        with self._cursor() as cursor:
            if self._sql.reset_in_one is not None:
                cursor.execute(self._sql.reset_in_one, (world,))
                if not cursor.fetchone()[0]:
                    raise NotFoundError("no such world", world=world)
                return
            self._world_row(cursor, world)
            self._clear(cursor, world)
            cursor.execute(self._sql.head_to_base, (world,))

    def delete_world(self, world: str) -> None:
        """Drop the world, and retire its credential (a world created again under its id
        gets a new one)."""
        _require_names(world=world)
        with self._cursor() as cursor:
            self._world_row(cursor, world)
            self._clear(cursor, world)
            cursor.execute(self._sql.delete_world, (world,))
            cursor.execute(self._sql.next_key, (world,))

    def key_generation(self, world: str) -> int:
        """How often the world's credential was replaced (0: never), as every process sharing
        the database sees it."""
        _require_names(world=world)
        if self._sqlite:
            with self._lock:  # reentrant: this thread may be inside its own transaction
                if self._open:
                    # An extension route authenticating inside the request's transaction (a
                    # token endpoint): the one connection reads the row as part of it.
                    found = self._sqlite_driver.execute(self._sql.key_generation, (world,))
                    row = found.fetchone()
                    return 0 if row is None else int(row[0])
        with self._cursor() as cursor:
            cursor.execute(self._sql.key_generation, (world,))
            row = cursor.fetchone()
        return 0 if row is None else int(row[0])

    def rotate_key(self, world: str) -> int:
        """Replace the world's credential: its generation goes up by one; `NotFoundError` for
        a world that does not exist."""
        _require_names(world=world)
        with self._cursor() as cursor:
            self._world_row(cursor, world)
            cursor.execute(self._sql.next_key, (world,))
            return int(cursor.fetchone()[0])

    def world(self, world: str) -> WorldInfo:
        """One world's description; `NotFoundError` if it does not exist."""
        _require_names(world=world)
        with self._cursor() as cursor:
            base, created = self._world_row(cursor, world)
        return WorldInfo(id=world, base_snapshot=base, created_at=created)

    def worlds(self) -> Sequence[WorldInfo]:
        with self._cursor() as cursor:
            cursor.execute(self._sql.worlds)
            rows = cursor.fetchall()
        return [WorldInfo(id=r[0], base_snapshot=r[1], created_at=float(r[2])) for r in rows]

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self, world: str, name: str | None = None) -> str:
        """Freeze the world's current state into an immutable snapshot and return its id (`name`
        when given). The world keeps its base, so a later reset still returns to the state it
        was created in; the snapshot becomes its head (see `fork_world`)."""
        _require_names(world=world, snapshot=name)
        snapshot_id = name or uuid.uuid4().hex
        with self._translated_cursor() as cursor:
            head = self._locked_head(cursor, world)
            return self._freeze(cursor, world, head, snapshot_id)

    def load_base(
        self,
        records: Iterable[tuple[str, str, Record]],
        name: str,
        *,
        sequences: Mapping[str, int] | None = None,
    ) -> str:
        """Bulk-load (resource, id, record) triples as a new root snapshot named `name`.

        `sequences` gives counters' last used values (`next_sequence` continues after them).
        Duplicate ids and duplicate values of a resource's unique fields raise `ConflictError`.
        """
        seen: dict[str, set[str]] = {}
        unique_seen: dict[tuple[str, str], dict[str, str]] = {}
        with self._translated_cursor() as cursor:
            self._claim_snapshot(cursor, name, None)
            batch: list[tuple[str, str, str, int, str]] = []
            for position, (resource, record_id, record) in enumerate(records):
                ids = seen.setdefault(resource, set())
                if record_id in ids:
                    raise ConflictError(
                        f"record id {record_id!r} appears twice",
                        snapshot=name,
                        resource=resource,
                        record_id=record_id,
                    )
                ids.add(record_id)
                for field_name in self._unique_fields(resource):
                    key = _unique_key(record.get(field_name))
                    if key is None:
                        continue
                    owners = unique_seen.setdefault((resource, field_name), {})
                    if key in owners:
                        raise ConflictError(
                            f"value {key!r} is used by records {owners[key]!r} and {record_id!r}",
                            snapshot=name,
                            resource=resource,
                            field=field_name,
                        )
                    owners[key] = record_id
                text = _dumps(record)
                self._grown += len(text)
                batch.append((name, resource, record_id, position, text))
                if len(batch) >= _BATCH:
                    self._sql.insert_all(cursor, self._sql.layer_add, batch)
                    batch.clear()
            self._sql.insert_all(cursor, self._sql.layer_add, batch)
            self._sql.insert_all(
                cursor,
                self._sql.snapshot_sequence_add,
                [(name, counter, int(value)) for counter, value in (sequences or {}).items()],
            )
        # The unique values were just checked: kept for the layer, the first write in a world
        # on it need not parse every record of the root to index them.
        indexes = {
            (resource, field_name): {
                key: {record_id}
                for key, record_id in unique_seen.get((resource, field_name), {}).items()
            }
            for resource in seen
            for field_name in self._unique_fields(resource)
        }
        with self._layers_lock:
            self._root_indexes[name] = indexes
        return name

    def copy_snapshot(self, source: SqlStore, snapshot: str) -> str:
        """Copy root snapshot `snapshot` of another store into this one, its rows as stored
        (no record is parsed), in its load order; return its id."""
        with source._cursor() as reading, self._translated_cursor() as cursor:
            reading.execute(source._sql.snapshot, (snapshot,))
            row = reading.fetchone()
            if row is None or row[0] is not None:
                raise NotFoundError("no such root snapshot", snapshot=snapshot, url=source.url)
            self._claim_snapshot(cursor, snapshot, None)
            reading.execute(source._sql.layer_rows, (snapshot,))
            position = 0
            while rows := reading.fetchmany(_BATCH):
                batch = [(snapshot, r, i, position + n, d) for n, (r, i, d) in enumerate(rows)]
                self._sql.insert_all(cursor, self._sql.layer_add, batch)
                self._grown += sum(len(data) for *_, data in batch if data is not None)
                position += len(rows)
            reading.execute(source._sql.snapshot_sequences, (snapshot,))
            sequences = [(snapshot, name, int(value)) for name, value in reading.fetchall()]
            self._sql.insert_all(cursor, self._sql.snapshot_sequence_add, sequences)
        return snapshot

    def mount_snapshot(self, path: Path, snapshot: str, *, queries: Path | None = None) -> str:
        """Root snapshot `snapshot` of the SQLite store file at `path` (which must never change
        while it exists, as a seed cache's does not), as a root snapshot of this store; return
        its id. This process's in-memory database reads the records from the file where they
        lie, on demand, keeping only their ids in memory; a database other processes share
        gets a copy of them (`copy_snapshot`), since they cannot read this process's mount.
        `queries` names a SQLite file that keeps the root's query tables (`QueryFile`) across
        mounts of it: a field's columns are filled once, not on every start."""
        if not self._private:
            source = SqlStore(self.model, f"sqlite:///{path}", prefix=self.prefix)
            try:
                return self.copy_snapshot(source, snapshot)
            finally:
                source.close()
        kept = None if queries is None else QueryFile(queries, self.prefix)
        mount = _Mount(path, snapshot, kept)
        try:
            if not mount.is_root(self.prefix):
                raise NotFoundError("no such root snapshot", snapshot=snapshot, path=str(path))
            with self._translated_cursor() as cursor:
                self._claim_snapshot(cursor, snapshot, None)
        except BaseException:
            mount.close()
            raise
        self._mounts[snapshot] = mount
        return snapshot

    def snapshot_exists(self, snapshot: str) -> bool:
        if absent_name(snapshot, "snapshot") is not None:
            return False
        with self._cursor() as cursor:
            cursor.execute(self._sql.snapshot, (snapshot,))
            return cursor.fetchone() is not None

    def snapshots(self) -> Sequence[SnapshotInfo]:
        with self._cursor() as cursor:
            cursor.execute(self._sql.snapshots)
            rows = cursor.fetchall()
        return [SnapshotInfo(id=r[0], parent=r[1], created_at=float(r[2])) for r in rows]

    def delete_snapshot(self, snapshot: str) -> None:
        """Drop a snapshot no world is based on or reads from and no snapshot layers on."""
        _require_names(snapshot=snapshot)
        with self._cursor() as cursor:
            cursor.execute(self._sql.snapshot, (snapshot,))
            if cursor.fetchone() is None:
                raise NotFoundError("no such snapshot", snapshot=snapshot)
            cursor.execute(self._sql.snapshot_users, (snapshot, snapshot, snapshot))
            users = [str(row[0]) for row in cursor.fetchall()]
            if users:
                shown = ", ".join(users[:5]) + (", ..." if len(users) > 5 else "")
                raise ConflictError(
                    f"worlds or snapshots still build on it: {shown}", snapshot=snapshot
                )
            for statement in self._sql.snapshot_drop:
                cursor.execute(statement, (snapshot,))
            self._query_tables.drop_snapshot(cursor, snapshot)
        self._query_tables.forget(snapshot)
        with self._layers_lock:
            self._layers.pop(snapshot, None)
            self._root_indexes.pop(snapshot, None)
            mount = self._mounts.pop(snapshot, None)
        if mount is not None:
            mount.close()

    # -- diff ----------------------------------------------------------------------------------

    def diff(self, world: str, against: str | None = None) -> list[RecordChange]:
        """Record-level changes from snapshot `against` (default: the world's base) to the
        world's current state, ordered by resource and id."""
        _require_names(world=world, snapshot=against)
        with self._cursor() as cursor:
            cursor.execute(self._sql.world_heads, (world,))
            row = cursor.fetchone()
            if row is None:
                raise NotFoundError("no such world", world=world)
            origin, head_id = against or row[0], row[1]
            head = None if head_id is None else self._layer(cursor, head_id)
            before = None if origin is None else self._layer(cursor, origin)
            cursor.execute(self._sql.overlay_all, (world,))
            overlay = {(r, i): d for r, i, d in cursor.fetchall()}
        candidates = set(overlay)
        if before is not head:
            candidates |= _changed_keys(before, head)

        def current(resource: str, record_id: str) -> str | None:
            if (resource, record_id) in overlay:
                text: str | None = overlay[(resource, record_id)]
                return text
            return None if head is None else head.raw(resource, record_id)

        changes = []
        for resource, record_id in sorted(candidates):
            old = None if before is None else before.raw(resource, record_id)
            new = current(resource, record_id)
            change = _change(resource, record_id, old, new)
            if change is not None:
                changes.append(change)
        return changes

    # -- internals -----------------------------------------------------------------------------

    def _unique_fields(self, resource: str) -> tuple[str, ...]:
        return self._uniques.get(resource, ())

    def _world_row(self, cursor: Any, world: str) -> tuple[str | None, float]:
        cursor.execute(self._sql.world, (world,))
        row = cursor.fetchone()
        if row is None:
            raise NotFoundError("no such world", world=world)
        return row[0], float(row[1])

    def _locked_head(self, cursor: Any, world: str) -> _Layer | None:
        """The world's head, with the world row locked (PostgreSQL) until the transaction ends:
        no writer, fork or snapshot of the world runs meanwhile."""
        cursor.execute(self._sql.lock_world, (world,))
        row = cursor.fetchone()
        if row is None:
            raise NotFoundError("no such world", world=world)
        return None if row[0] is None else self._layer(cursor, row[0])

    def _frozen(self, cursor: Any, world: str) -> str | None:
        """A snapshot of the world's current state: its head when it has not written since it
        was created or last frozen, else a new one (`_freeze`)."""
        head = self._locked_head(cursor, world)
        cursor.execute(self._sql.written, (world, world))
        if not cursor.fetchone()[0]:
            return None if head is None else head.id
        return self._freeze(cursor, world, head, uuid.uuid4().hex)

    def _clear(self, cursor: Any, world: str) -> None:
        cursor.execute(self._sql.overlay_clear, (world,))
        cursor.execute(self._sql.unique_clear, (world,))
        cursor.execute(self._sql.keys_clear, (world,))
        cursor.execute(self._sql.sequences_clear, (world,))

    def _claim_snapshot(self, cursor: Any, snapshot_id: str, parent: str | None) -> None:
        cursor.execute(self._sql.insert_snapshot, (snapshot_id, parent, time.time()))
        if cursor.fetchone() is None:
            raise ConflictError("a snapshot with this id already exists", snapshot=snapshot_id)

    def _freeze(self, cursor: Any, world: str, head: _Layer | None, snapshot_id: str) -> str:
        """Move the world's writes and counters into a new snapshot on its head, which becomes
        its head: the cost is what it wrote since it was last frozen.

        Heads would pile up one layer per freeze, and every read walks them, so the new layer
        takes in the layers beneath it while they are no larger than it (a binary counter):
        a chain stays O(log n) deep over n freezes and each row is copied O(log n) times,
        where flattening onto the root every time copied every earlier write again."""
        cursor.execute(self._sql.overlay_all, (world,))
        rows: dict[tuple[str, str], str | None] = {(r, i): d for r, i, d in cursor.fetchall()}
        parent = head
        while parent is not None and parent.parent is not None and parent.size <= len(rows):
            below = {(r, i): text for r, own in parent.rows.items() for i, text in own.items()}
            below.update(rows)  # a record keeps its place in the list order
            rows, parent = below, parent.parent
        # A tombstone only matters when a layer beneath holds the record it hides.
        kept = [
            (key, text)
            for key, text in rows.items()
            if text is not None or (parent is not None and parent.raw(*key) is not None)
        ]
        sequences = dict(head.sequences) if head is not None else {}
        cursor.execute(self._sql.sequences_of_world, (world,))
        sequences.update({name: int(value) for name, value in cursor.fetchall()})
        self._claim_snapshot(cursor, snapshot_id, None if parent is None else parent.id)
        self._grown += sum(len(text) for _, text in kept if text is not None)
        self._sql.insert_all(
            cursor,
            self._sql.layer_add,
            [(snapshot_id, r, i, n, text) for n, ((r, i), text) in enumerate(kept)],
        )
        self._sql.insert_all(
            cursor,
            self._sql.snapshot_sequence_add,
            [(snapshot_id, name, value) for name, value in sequences.items()],
        )
        self._clear(cursor, world)
        cursor.execute(self._sql.set_head, (snapshot_id, world))
        return snapshot_id

    def _query_file(self, chain: Sequence[_Layer], resource: str) -> QueryFile | None:
        """The query file of a mounted root that is the only layer of the chain (root first)
        holding rows of the resource; None otherwise (the store's own tables answer)."""
        mount = self._mounts.get(chain[0].id)
        if mount is None or any(layer.rows.get(resource) for layer in chain[1:]):
            return None
        return mount.queries

    def _stored_layer(
        self, cursor: Any, snapshot_id: str
    ) -> tuple[dict[str, dict[str, str | None]], dict[str, int]]:
        """A snapshot's rows by resource and its counters, as the database holds them."""
        cursor.execute(self._sql.layer_rows, (snapshot_id,))
        rows: dict[str, dict[str, str | None]] = {}
        for resource, record_id, data in cursor.fetchall():
            rows.setdefault(resource, {})[record_id] = data
        cursor.execute(self._sql.snapshot_sequences, (snapshot_id,))
        return rows, {name: int(value) for name, value in cursor.fetchall()}

    def _layer(self, cursor: Any, snapshot_id: str) -> _Layer:
        cached = self._layers.get(snapshot_id)
        if cached is not None:
            return cached
        cursor.execute(self._sql.snapshot, (snapshot_id,))
        row = cursor.fetchone()
        if row is None:
            raise NotFoundError("no such snapshot", snapshot=snapshot_id)
        parent_id, created = row
        parent = None if parent_id is None else self._layer(cursor, parent_id)
        mount = self._mounts.get(snapshot_id)
        if mount is not None:
            rows: Mapping[str, Mapping[str, str | None]] = mount.rows(self.prefix)
            sequences = mount.sequences(self.prefix)
        else:
            rows, sequences = self._stored_layer(cursor, snapshot_id)
        layer = _Layer(snapshot_id, parent, rows, sequences, float(created))
        with self._layers_lock:
            layer.unique_index.update(self._root_indexes.pop(snapshot_id, {}))
            return self._layers.setdefault(snapshot_id, layer)


class _Scope:
    """One database transaction on one cursor (`SqlStore._cursor`).

    A class rather than a generator-based context manager: every request opens one, and three
    nested `contextmanager`s cost more than the SQL of a read."""

    __slots__ = ("_begin", "_connection", "_cursor", "_store", "_translate")

    def __init__(
        self, store: SqlStore, *, translate: bool, begin: str | None = "BEGIN IMMEDIATE"
    ) -> None:
        self._store = store
        self._translate = translate
        # SQLite's BEGIN; None: the transaction begins with its first write
        # (`SqlTransaction._mark_written`).
        self._begin = begin
        self._connection: Any = None
        self._cursor: Any = None

    def __enter__(self) -> Any:
        store = self._store
        if store._sqlite:
            # One connection, serialised by the store's lock.
            store._lock.acquire()
            try:
                if store._open:
                    # Only this thread can hold the lock: a store call inside a transaction.
                    raise MockError(
                        "a store call was made inside an open transaction of the same thread; "
                        "finish the transaction first",
                        url=store.url,
                    )
                cursor = store._sqlite_driver.cursor()
                try:
                    if self._begin is not None:
                        cursor.execute(self._begin)
                except BaseException:
                    cursor.close()
                    raise
            except BaseException:
                store._lock.release()
                raise
            store._open = True
            self._cursor = cursor
            return cursor
        connection = store._engine.raw_connection()
        try:
            self._cursor = connection.cursor()
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return self._cursor

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _: Any
    ) -> None:
        store = self._store
        try:
            if store._sqlite:
                try:
                    try:
                        _end_sqlite(store._sqlite_driver, self._cursor, commit=kind is None)
                    finally:
                        self._cursor.close()
                        store._open = False
                    if kind is None and store._grown > _GROWTH_CHECK_BYTES:
                        store._outgrow_memory()
                finally:
                    store._lock.release()
            else:
                try:
                    if kind is None:
                        self._connection.commit()
                    else:
                        self._connection.rollback()
                finally:
                    self._cursor.close()
                    self._connection.close()
        except store._integrity_errors as failed:
            if kind is not None or not self._translate:
                raise
            raise _collision(failed) from failed
        except Exception as failed:
            full = _full(store, failed)
            if full is None:
                raise
            raise full from failed
        if error is None:
            return
        full = _full(store, error)
        if full is not None:
            raise full from error
        if self._translate and isinstance(error, store._integrity_errors):
            raise _collision(error) from error


class _TransactionScope(_Scope):
    """`SqlStore.transaction`: a translated `_Scope` handing out a `SqlTransaction`."""

    __slots__ = ("_transaction", "_world", "_writes")

    def __init__(self, store: SqlStore, world: str, *, writes: bool) -> None:
        # The private in-memory database has one connection, used under the store's lock: no
        # one can write between a read and the BEGIN before this transaction's first write, so
        # a request that only reads (a GET) runs without BEGIN and COMMIT.
        # On a SQLite file other processes share, a read-only transaction takes no write lock
        # (WAL readers run beside the writer); writing in it raises `UndeclaredWriteError`.
        begin = None if store._private else "BEGIN IMMEDIATE" if writes else "BEGIN"
        super().__init__(store, translate=True, begin=begin)
        self._world = world
        self._writes = writes
        self._transaction: SqlTransaction | None = None

    def __enter__(self) -> SqlTransaction:
        cursor = super().__enter__()
        self._transaction = SqlTransaction(self._store, cursor, self._world, writes=self._writes)
        return self._transaction

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: Any
    ) -> None:
        super().__exit__(kind, error, trace)
        if kind is None and self._transaction is not None:
            self._transaction.committed()


def _end_sqlite(driver: sqlite3.Connection, cursor: Any, *, commit: bool) -> None:
    """Commit or roll back the connection's transaction, if one began (a lazy one may not
    have); a COMMIT that fails (a full disk) leaves it open, so it is rolled back."""
    if not driver.in_transaction:
        return
    if not commit:
        cursor.execute("ROLLBACK")
        return
    try:
        cursor.execute("COMMIT")
    except BaseException:
        if driver.in_transaction:
            cursor.execute("ROLLBACK")
        raise


def _full(store: SqlStore, error: BaseException) -> StoreFullError | None:
    """A database error that says the database has no room or resources left, as the one
    error the HTTP layer answers 503; None for any other error."""
    if isinstance(error, sqlite3.OperationalError) and "full" in str(error):
        if store._memdb:
            return StoreFullError(
                "the in-memory store is full (SQLite holds at most 1 GiB in memory and one "
                "transaction wrote past it): use a database file (sqlite:///path.db) or "
                "PostgreSQL",
                url=store.url,
            )
        return StoreFullError(f"the database is full: {error}", url=store.url)
    # PostgreSQL's class 53, insufficient resources: disk full, out of memory, too many
    # connections.
    sqlstate = getattr(error, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate.startswith("53"):
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        return StoreFullError(f"the database has no room left: {first}", url=store.url)
    return None


def _collision(error: BaseException | str) -> ConflictError:
    return ConflictError(f"the write collides with a concurrent one: {error}".splitlines()[0])


# The in-memory store moves off the memdb VFS (1 GiB at most) once it holds this much; its size
# is looked at after every transaction that brought the records written since to this much.
_MEMDB_SPILL_BYTES = 512 << 20
_GROWTH_CHECK_BYTES = 16 << 20


def _memdb_connection() -> sqlite3.Connection:
    """A database in memory, private to its connection (no leading slash in the name)."""
    connection = sqlite3.connect(
        "file:myna?vfs=memdb", uri=True, check_same_thread=False, isolation_level=None
    )
    connection.execute("PRAGMA journal_mode=MEMORY")
    return connection


def _private_temporary_database() -> sqlite3.Connection:
    connection = sqlite3.connect("", check_same_thread=False, isolation_level=None)
    connection.execute("PRAGMA journal_mode=MEMORY")
    return connection


def _single_connection_engine(connection: sqlite3.Connection) -> sa.Engine:
    return sa.create_engine("sqlite://", poolclass=StaticPool, creator=lambda: connection)


def _relax_durability(dbapi_connection: Any, _record: Any) -> None:
    """A mock's worlds are scratch state: commits need not wait for the disk flush, which
    costs milliseconds per request. A crash can lose the last moments of writes, never
    consistency (PostgreSQL's `synchronous_commit = off`)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("SET synchronous_commit TO off")
    cursor.close()
    dbapi_connection.commit()


def _changed_keys(first: _Layer | None, second: _Layer | None) -> set[tuple[str, str]]:
    """Keys whose value may differ between two snapshots: the rows above a shared root, or
    every key when the roots differ."""

    def keys_above_root(layer: _Layer | None, *, include_root: bool) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        while layer is not None and (include_root or layer.parent is not None):
            for resource, rows in layer.rows.items():
                found.update((resource, record_id) for record_id in rows)
            layer = layer.parent
        return found

    same_root = (first is not None and second is not None and first.root is second.root) or (
        first is None and second is None
    )
    return keys_above_root(first, include_root=not same_root) | keys_above_root(
        second, include_root=not same_root
    )


def _change(resource: str, record_id: str, old: str | None, new: str | None) -> RecordChange | None:
    if old is None and new is None:
        return None
    before = None if old is None else _loads(old)
    after = None if new is None else _loads(new)
    if before == after:
        return None
    kind: ChangeKind = "created" if before is None else "deleted" if after is None else "updated"
    return RecordChange(resource, record_id, kind, before, after)
