"""Generated seeds made once and reused across server starts (`myna serve --seed-cache DIR`).

Generating a demo-sized world costs tens of seconds (every value of every record is drawn), and
the same model, seed and counts always generate the same records. So the first start seeds a
SQLite file of its own under DIR, named by a hash of Myna's version, the model, the seed and the
counts, and every start reads the snapshot from it: the default in-memory database mounts the
file (`SqlStore.mount_snapshot`: records stay on disk, read when a request needs them, and the
query columns a filtered list needs are filled once into `<name>.queries` beside it, for every
later start), a shared database copies its stored rows (no record is generated or parsed either
way). Clear DIR when Myna's generation or query columns change without a new version (a
development tree).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

import orjson

from myna import __version__
from myna.mocks.seed import seed as seed_store
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import ServiceModel

# What a cache file holds beyond a store's tables (part of its key: a file of another layout is
# made anew): 2, an index of each resource's ids in load order.
_LAYOUT = 2


def cached_seed(
    model: ServiceModel,
    store: SqlStore,
    *,
    seed: int,
    records: int | Mapping[str, int],
    directory: Path,
) -> str:
    """The snapshot `seed(model, store, seed=seed, records=records)` makes, mounted in `store`
    from the cache file under `directory` (`SqlStore.mount_snapshot`), which is made first if
    no earlier start made it."""
    path = directory / f"{seed_key(model, seed, records)}.db"
    if not path.exists():
        _make(model, path, seed, records)
    # The query columns starts fill live beside it, made by the first start that filters.
    return store.mount_snapshot(path, f"seed-{seed}", queries=path.with_suffix(".queries"))


def seed_key(model: ServiceModel, seed: int, records: int | Mapping[str, int]) -> str:
    """What names a cached seed: Myna's version, the model, the seed and the counts."""
    made_of = {
        "myna": __version__,
        "layout": _LAYOUT,
        "model": model.model_dump(mode="json"),
        "seed": seed,
        "records": records,
    }
    # orjson: a third of the CPU of `json.dumps` for a model of 24,000 lines, on every start.
    return hashlib.sha256(orjson.dumps(made_of, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]


def _make(model: ServiceModel, path: Path, seed: int, records: int | Mapping[str, int]) -> None:
    """Seed a file of its own, then move it into place in one step: a start that finds the
    file finds it whole, and two starts making it at once each move a complete one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    cache = SqlStore(model, f"sqlite:///{partial}")
    try:
        seed_store(model, cache, seed=seed, records=records)
    finally:
        cache.close()
    with closing(sqlite3.connect(partial, isolation_level=None)) as connection:
        # A mount reads a resource's ids in load order from this index, not from the table.
        connection.execute(
            f"CREATE INDEX {cache.prefix}layer_order "
            f"ON {cache.prefix}layer (snapshot, resource, ord, record_id)"
        )
        # One self-contained file: a mount opens it read-only, as immutable, without a WAL.
        connection.execute("PRAGMA journal_mode=DELETE")
    partial.replace(path)
