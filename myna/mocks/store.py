"""The storage contract of the mock: records per resource, in isolated, cheaply forked worlds.

A world is a copy-on-write view: an immutable base snapshot shared by every world forked from it,
plus the world's own overlay of writes. Forking and resetting touch only the overlay, so they cost
the same whatever the seed size. Implementations live beside this module; the HTTP layer and the
in-process client only talk to `Store`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from myna.errors import MockError
from myna.mocks.query import Query

Record = dict[str, Any]


class NotFoundError(MockError):
    """A world, snapshot or record that the call names does not exist (the HTTP layer: 404)."""

    kind = "not_found"


class ConflictError(MockError):
    """A write collides with existing state: a taken record id, a value of a unique field, or a
    world or snapshot id already in use (the HTTP layer: 409, or the service's own 4xx)."""

    kind = "conflict"


class StoreFullError(MockError):
    """The database has no room left (a full disk, SQLite's size limit) or no resources for
    another transaction; nothing of the failed transaction was written (the HTTP layer: 503)."""

    kind = "store_full"


class UndeclaredWriteError(MockError):
    """A transaction opened with `writes=False` tried to write. Nothing was written; the caller
    runs its work again in a transaction opened with `writes=True`."""

    kind = "undeclared_write"


def absent_name(value: str | None, what: str) -> NotFoundError | None:
    """The error for a world, snapshot or record id that can name nothing stored: one holding
    a NUL character, which PostgreSQL's text cannot store. Stores check before the database
    sees the value; None for any other value."""
    if value is None or "\x00" not in value:
        return None
    return NotFoundError(f"no such {what}: an id holds no NUL character", **{what: value})


ChangeKind = Literal["created", "updated", "deleted"]


@dataclass(frozen=True, slots=True)
class RecordChange:
    """One record-level difference between two states of a world."""

    resource: str
    record_id: str
    kind: ChangeKind
    before: Record | None
    after: Record | None


@dataclass(frozen=True, slots=True)
class WorldInfo:
    id: str
    base_snapshot: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """An immutable state worlds can be created from; `parent` is the snapshot it layers on."""

    id: str
    parent: str | None
    created_at: float


class Transaction(Protocol):
    """All reads and writes of one request; committed together or not at all."""

    def get(self, resource: str, record_id: str) -> Record | None: ...

    def list(self, resource: str, query: Query) -> tuple[list[Record], int]:
        """Matching records (after offset and limit) and the total count before paging."""
        ...

    def insert(self, resource: str, record_id: str, record: Record) -> None: ...

    def update(self, resource: str, record_id: str, record: Record) -> None: ...

    def delete(self, resource: str, record_id: str) -> None: ...

    def next_sequence(self, name: str, start: int) -> int:
        """The next value of a per-world counter (INC0010001 numbering, integer ids)."""
        ...

    def base_snapshot(self) -> str | None:
        """The id of the snapshot the world stands on (None: a world created empty)."""
        ...


class Store(Protocol):
    """Worlds and their records. Thread-safe; one `transaction` per request."""

    def transaction(
        self, world: str, *, writes: bool = True
    ) -> AbstractContextManager[Transaction]:
        """One request's reads and writes, committed together. `writes=True` makes the
        transaction the world's only writer from its first statement, so what it read is still
        true when it writes (no lost updates between concurrent servers); `writes=False` lets
        concurrent reads run side by side, and a write in it raises `UndeclaredWriteError`
        (before writing anything) where the store cannot otherwise guarantee that."""
        ...

    def create_world(
        self, world: str, *, from_snapshot: str | None = None, exist_ok: bool = False
    ) -> WorldInfo:
        """A new world (empty, or based on a snapshot). `exist_ok`: return an existing one
        unchanged instead of raising `ConflictError` (processes ensuring the default world)."""
        ...

    def world(self, world: str) -> WorldInfo:
        """One world's description; `NotFoundError` if it does not exist."""
        ...

    def fork_world(self, source: str, new_world: str) -> WorldInfo: ...

    def reset_world(self, world: str) -> None:
        """Drop the world's own writes: it is its base snapshot again."""
        ...

    def delete_world(self, world: str) -> None:
        """Drop the world and retire its credential (`key_generation` goes up)."""
        ...

    def key_generation(self, world: str) -> int:
        """How often the world's credential was replaced (0: never); the world's credential is
        derived from it, so a rotation in one process holds in every process."""
        ...

    def rotate_key(self, world: str) -> int:
        """Replace the world's credential; the new generation. `NotFoundError` if the world
        does not exist."""
        ...

    def snapshot(self, world: str, name: str | None = None) -> str:
        """Freeze the world's current state into an immutable snapshot; return its id."""
        ...

    def diff(self, world: str, against: str | None = None) -> list[RecordChange]:
        """Record changes from snapshot `against` (default: the world's base) to the world."""
        ...

    def worlds(self) -> Sequence[WorldInfo]: ...

    def snapshots(self) -> Sequence[SnapshotInfo]: ...

    def close(self) -> None:
        """Release the database connections (the worlds stay in a database that outlives it)."""
        ...

    def delete_snapshot(self, snapshot: str) -> None:
        """Drop a snapshot no world is based on and no snapshot layers on (`ConflictError`
        naming them otherwise)."""
        ...

    def load_base(
        self,
        records: Iterable[tuple[str, str, Record]],
        name: str,
        *,
        sequences: Mapping[str, int] | None = None,
    ) -> str:
        """Bulk-load (resource, id, record) triples as a new immutable snapshot; return its id.

        `sequences` gives counters' last used values, so `next_sequence` continues after them.
        """
        ...
