"""Benchmark: world fork/reset time, memory per idle world, and get-by-id on the store.

Targets (design brief): fork and reset <= 1 ms whatever the seed size (10k+ records); an idle
world costs <= 100 KB beyond its own writes; >= 10,000 live worlds per machine.

    python bench/bench_worlds.py                       # SQLite in memory and PostgreSQL
    python bench/bench_worlds.py --backend sqlite --sizes 100,10000 --worlds 10,1000

PostgreSQL comes from MYNA_TEST_POSTGRES_URL (default postgresql+psycopg://postgres@127.0.0.1/test)
and works in a throwaway table prefix. Prints a Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from myna.mocks.query import Condition, Query, SortKey
from myna.mocks.seed import SeedData, generate
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import (
    Conventions,
    FieldSpec,
    IdFormat,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
)

POSTGRES = os.environ.get(
    "MYNA_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def incident_model() -> ServiceModel:
    """A ServiceNow-like incident table: 14 fields, a sequence number, a state machine."""

    def text(name: str, **schema: object) -> FieldSpec:
        return FieldSpec(name=name, schema={"type": "string", **schema})

    incident = Resource(
        name="incident",
        id_field="sys_id",
        id_format=IdFormat(kind="hex32"),
        unique=["number"],
        fields={
            "sys_id": text("sys_id"),
            "number": FieldSpec(
                name="number",
                generator=IdFormat(kind="sequence", prefix="INC", width=7, start=10001),
            ),
            "state": text("state", enum=["1", "2", "6", "7"]),
            "priority": text("priority", enum=["1", "2", "3", "4", "5"]),
            "short_description": text("short_description"),
            "description": text("description"),
            "caller_id": FieldSpec(
                name="caller_id", reference=Reference(resource="sys_user", style="link_value")
            ),
            "category": text("category", enum=["network", "software", "hardware"]),
            "opened_at": text("opened_at", format="date-time"),
            "resolved_at": text("resolved_at", format="date-time"),
            "close_code": text("close_code"),
            "sys_created_on": text("sys_created_on", format="date-time"),
            "sys_updated_on": text("sys_updated_on", format="date-time"),
            "sys_mod_count": FieldSpec(name="sys_mod_count", schema={"type": "integer"}),
        },
        state_machines=[
            StateMachine(
                field="state",
                states=["1", "2", "6", "7"],
                required_on_entry={"6": ["resolved_at", "close_code"]},
            )
        ],
    )
    user = Resource(
        name="sys_user",
        id_field="sys_id",
        id_format=IdFormat(kind="hex32"),
        fields={"sys_id": text("sys_id"), "name": text("name"), "email": text("email")},
    )
    return ServiceModel(
        name="bench",
        conventions=Conventions(values_as_strings=True, datetime_format="%Y-%m-%d %H:%M:%S"),
        resources={"incident": incident, "sys_user": user},
    )


@dataclass
class Timing:
    median_us: float
    p99_us: float


def timed(action: Callable[[int], None], repeat: int) -> Timing:
    samples = []
    for i in range(repeat):
        start = time.perf_counter()
        action(i)
        samples.append(time.perf_counter() - start)
    samples.sort()
    return Timing(
        statistics.median(samples) * 1e6,
        samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e6,
    )


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def open_store(backend: str, model: ServiceModel) -> SqlStore:
    prefix = f"bench_{uuid.uuid4().hex[:8]}_"
    return SqlStore(model, "sqlite://" if backend == "sqlite" else POSTGRES, prefix=prefix)


@dataclass
class SizeResult:
    backend: str
    records: int
    get: Timing
    fork: Timing
    reset: Timing
    fork_written: Timing
    list_page: Timing
    list_filtered: Timing
    list_sorted: Timing


def bench_size(backend: str, model: ServiceModel, size: int, repeat: int) -> SizeResult:
    """Get-by-id, lists, fork and reset against a base of `size` incidents."""
    store = open_store(backend, model)
    try:
        data = generate(model, seed=1, records={"sys_user": max(1, size // 20), "incident": size})
        store.load_base(data.records, "base", sequences=data.sequences)
        store.create_world("main", from_snapshot="base")
        ids = [record_id for name, record_id, _ in data.records if name == "incident"]
        rng = random.Random(0)
        picks = [rng.choice(ids) for _ in range(repeat)]

        def get(i: int) -> None:
            with store.transaction("main") as tx:
                tx.get("incident", picks[i])

        get_timing = timed(get, repeat)

        def listing(query: Query) -> Callable[[int], None]:
            def run(_: int) -> None:
                with store.transaction("main") as tx:
                    tx.list("incident", query)

            return run

        lists = [
            timed(listing(query), max(5, repeat // 20))
            for query in (
                Query(limit=10),
                Query(where=Condition("priority", "=", "1"), limit=10),
                Query(order_by=(SortKey("sys_updated_on", descending=True),), limit=10),
            )
        ]
        fork = timed(lambda i: store.fork_world("main", f"fork-{i}"), repeat)

        def write(i: int) -> None:
            with store.transaction(f"fork-{i}") as tx:
                for record_id in picks[i : i + 5]:
                    record = tx.get("incident", record_id)
                    assert record is not None
                    tx.update("incident", record_id, {**record, "state": "2"})

        for i in range(repeat):
            write(i)
        reset = timed(lambda i: store.reset_world(f"fork-{i}"), repeat)
        for i in range(repeat):
            write(i)
        fork_written = timed(lambda i: store.fork_world(f"fork-{i}", f"child-{i}"), repeat)
        return SizeResult(backend, len(data.records), get_timing, fork, reset, fork_written, *lists)
    finally:
        store.drop()


def main_world(store: SqlStore, model: ServiceModel) -> SeedData:
    """World `main` on a base of 1,000 incidents and 50 users; the records generated."""
    data = generate(model, seed=1, records={"sys_user": 50, "incident": 1000})
    store.load_base(data.records, "base", sequences=data.sequences)
    store.create_world("main", from_snapshot="base")
    return data


def bench_idle_worlds(
    backend: str, model: ServiceModel, counts: list[int]
) -> list[dict[str, object]]:
    """RSS and database growth per idle world, forked from a seeded world."""
    store = open_store(backend, model)
    rows = []
    try:
        data = main_world(store, model)
        # Load the shared base into the process first: it is paid once, not per world.
        with store.transaction("main") as tx:
            tx.get("incident", data.records[-1][1])
        made = 0
        for count in counts:
            rss_before, db_before = rss_bytes(), store.database_bytes()
            for i in range(made, made + count):
                store.fork_world("main", f"idle-{count}-{i}")
                # Each world serves one read, as an agent's first request would.
                with store.transaction(f"idle-{count}-{i}") as tx:
                    tx.get("incident", data.records[-1][1])
            made += count
            rows.append(
                {
                    "backend": backend,
                    "worlds": count,
                    "rss_per_world": (rss_bytes() - rss_before) / count,
                    "db_per_world": (store.database_bytes() - db_before) / count,
                    "live": len(store.worlds()),
                }
            )
        return rows
    finally:
        store.drop()


def bench_fork_chain(
    backend: str, model: ServiceModel, pairs: int, checkpoints: list[int]
) -> list[dict[str, object]]:
    """A world on a 1,050-record base writes one record, then is forked, `pairs` times (a
    training loop checkpointing an episode): the fork's time around each checkpoint (median of
    the 10 pairs before it) and the database's growth since the start."""
    store = open_store(backend, model)
    rows = []
    try:
        data = main_world(store, model)
        ids = [record_id for name, record_id, _ in data.records if name == "incident"]
        start_bytes = store.database_bytes()
        samples: list[float] = []
        for n in range(1, pairs + 1):
            with store.transaction("main") as tx:
                record_id = ids[n % len(ids)]
                record = tx.get("incident", record_id)
                assert record is not None
                tx.update("incident", record_id, {**record, "description": f"pair {n}"})
            began = time.perf_counter()
            store.fork_world("main", f"fork-{n}")
            samples.append(time.perf_counter() - began)
            if n in checkpoints:
                rows.append(
                    {
                        "backend": backend,
                        "pairs": n,
                        "fork_us": statistics.median(samples[-10:]) * 1e6,
                        "growth": store.database_bytes() - start_bytes,
                    }
                )
        return rows
    finally:
        store.drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--sizes", default="100,10000,50000")
    parser.add_argument("--worlds", default="10,1000,10000")
    parser.add_argument("--repeat", type=int, default=500)
    parser.add_argument("--pairs", default="10,100,500,2000", help="write+fork checkpoints")
    parser.add_argument("--only-pairs", action="store_true", help="only the write+fork table")
    args = parser.parse_args()
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    model = incident_model()
    checkpoints = [int(n) for n in args.pairs.split(",")]
    print("| backend | write+fork pairs | fork (median of the last 10, us) | database growth |")
    print("|---|---:|---:|---:|")
    for backend in backends:
        for row in bench_fork_chain(backend, model, max(checkpoints), checkpoints):
            print(
                f"| {backend} | {row['pairs']:,} | {row['fork_us']:,.0f} "
                f"| {int(row['growth']) / 2**20:,.1f} MiB |",
                flush=True,
            )
    print()
    if args.only_pairs:
        return
    print(
        "| backend | base records | get by id (median / p99 us) | fork (median / p99 us) "
        "| reset after 5 writes | fork of a world with 5 writes |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    results = []
    for backend in backends:
        for size in (int(s) for s in args.sizes.split(",")):
            row = bench_size(backend, model, size, args.repeat)
            results.append(row)
            cells = [
                f"{t.median_us:.0f} / {t.p99_us:.0f}"
                for t in (row.get, row.fork, row.reset, row.fork_written)
            ]
            print(f"| {backend} | {row.records:,} | " + " | ".join(cells) + " |", flush=True)
    print()
    print(
        "| backend | base records | first page of 10 (median ms) | filtered page "
        "| page sorted by a timestamp |"
    )
    print("|---|---:|---:|---:|---:|")
    for row in results:
        cells = [
            f"{t.median_us / 1000:.2f}" for t in (row.list_page, row.list_filtered, row.list_sorted)
        ]
        print(f"| {row.backend} | {row.records:,} | " + " | ".join(cells) + " |", flush=True)
    print()
    print(
        "| backend | idle worlds added | RSS per world (bytes) | database per world (bytes) "
        "| live worlds |"
    )
    print("|---|---:|---:|---:|---:|")
    for backend in backends:
        for row in bench_idle_worlds(backend, model, [int(c) for c in args.worlds.split(",")]):
            print(
                f"| {backend} | {row['worlds']:,} | {row['rss_per_world']:,.0f} "
                f"| {row['db_per_world']:,.0f} | {row['live']:,} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
