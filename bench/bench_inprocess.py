"""Benchmark: the in-process client (no sockets), get by id and validated create.

Targets (design brief): get by id <= 50 us median; validated create <= 200 us median, with
request validation and behaviour enforcement on (strict response checking off, as served); and
the runtime's own cost of a live world (its entry, call log with one call) at 10, 1,000 and
10,000 worlds, against the <= 100 KB per idle world budget.

    python bench/bench_inprocess.py                  # 1,000 seeded incidents, 20,000 calls each
    python bench/bench_inprocess.py --records 10000 --calls 50000

Uses the ServiceNow-like example model (`myna.mocks.example`) on in-memory SQLite and prints a
Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.example import TABLE, servicenow_example
from myna.mocks.seed import seed
from myna.mocks.sqlstore import SqlStore

INCIDENTS = f"{TABLE}/incident"


def build(records: int) -> tuple[Mock, MockClient]:
    model = servicenow_example()
    store = SqlStore(model, "sqlite://")
    snapshot = seed(model, store, seed=1, records={"sys_user": 50, "incident": records})
    store.create_world("default", from_snapshot=snapshot)
    mock = Mock(model, store, credentials=Credentials.parse(["bench:bench"]), seed=1)
    return mock, MockClient(mock, auth=("bench", "bench"))


def timings(call: Callable[[], object], calls: int) -> list[float]:
    for _ in range(min(calls // 10, 1000)):
        call()  # warm caches and the allocator
    samples = []
    gc.disable()
    try:
        for _ in range(calls):
            started = time.perf_counter_ns()
            call()
            samples.append((time.perf_counter_ns() - started) / 1000.0)
    finally:
        gc.enable()
    return samples


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("VmRSS is not available (Linux only)")


def world_costs(mock: Mock, counts: list[int]) -> list[tuple[int, float, float]]:
    """Worlds forked from the seeded default world through the admin API, each answering one
    GET (so it has a call log): (worlds, RSS bytes per world, seconds per fork)."""
    admin = MockClient(mock, headers={"Authorization": f"Bearer {mock.admin_token}"})
    rows = []
    made = 0
    # One untimed world first: the first fork and call pay for lazy imports and caches.
    for count in [1, *counts]:
        gc.collect()
        before = rss_bytes()
        started = time.perf_counter()
        for _ in range(count):
            world = f"w{made}"
            made += 1
            response = admin.post("/_myna/admin/worlds", json={"id": world, "fork_of": "default"})
            assert response.status == 201, response.json()
            listed = MockClient(mock, auth=("bench", "bench"), world=world).get(
                INCIDENTS, params={"sysparm_limit": 1}
            )
            assert listed.status == 200
        elapsed = time.perf_counter() - started
        gc.collect()
        rows.append((count, (rss_bytes() - before) / count, elapsed / count))
    return rows[1:]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1000, help="seeded incidents")
    parser.add_argument("--calls", type=int, default=20_000, help="calls per operation")
    parser.add_argument(
        "--worlds", default="10,1000,10000", help="live worlds to add, comma-separated"
    )
    args = parser.parse_args()

    mock, client = build(args.records)
    listing = client.get(INCIDENTS, params={"sysparm_limit": 100}).json()["result"]
    ids = [record["sys_id"] for record in listing]
    user = client.get(f"{TABLE}/sys_user", params={"sysparm_limit": 1}).json()["result"][0]
    position = 0

    def get_by_id() -> object:
        nonlocal position
        position = (position + 1) % len(ids)
        response = client.get(f"{INCIDENTS}/{ids[position]}")
        assert response.status == 200
        return response.json()

    def create() -> object:
        response = client.post(
            INCIDENTS,
            json={
                "short_description": "Email is down",
                "description": "Nobody can send mail since 9:00",
                "priority": 2,
                "caller_id": user["sys_id"],
            },
        )
        assert response.status == 201, response.json()
        return response.json()

    def list_page() -> object:
        response = client.get(INCIDENTS, params={"sysparm_limit": 20, "active": "true"})
        assert response.status == 200
        return response.json()

    # Listing first, while the world holds only the seeded records: creates grow it.
    listed = timings(list_page, max(args.calls // 50, 100))
    rows = [
        ("get by id", timings(get_by_id, args.calls), 50.0),
        ("validated create", timings(create, args.calls), 200.0),
        (f"list 20 of {args.records} (filtered)", listed, None),
    ]
    print(f"in-process client, {args.records} seeded incidents, {args.calls} calls per operation\n")
    print("| operation | median (us) | p90 (us) | p99 (us) | target (median) |")
    print("|---|---:|---:|---:|---|")
    for name, samples, target in rows:
        deciles = statistics.quantiles(samples, n=100)
        median = statistics.median(samples)
        verdict = (
            "-"
            if target is None
            else f"<= {target:.0f} us: {'met' if median <= target else 'MISSED'}"
        )
        print(f"| {name} | {median:.1f} | {deciles[89]:.1f} | {deciles[98]:.1f} | {verdict} |")

    counts = [int(part) for part in args.worlds.split(",") if part]
    print("\n| worlds added | RSS per world (bytes) | fork + first GET per world (us) |")
    print("|---:|---:|---:|")
    for count, per_world, seconds in world_costs(mock, counts):
        print(f"| {count:,} | {per_world:,.0f} | {seconds * 1e6:,.0f} |")


if __name__ == "__main__":
    main()
