"""World bookkeeping is O(1): admin get, fork and reset, and a read in a world, cost the same at
10,000 worlds as at one (target: within 10%).

    python bench/bench_admin.py [--worlds 10000] [--records 1000] [--rounds 7] [--calls 300]

Two mocks of the hand-written ServiceNow-like model in one process, each on in-memory SQLite
with the same seeded base (`--records` incidents): one holding a single world beside the
default, the other `--worlds`, each world having served one read before timing starts. Rounds
alternate between them (a loaded machine slows both alike); each round times `--calls` calls of
every operation in process:
- GET /_myna/admin/worlds/{id};
- fork: POST /_myna/admin/worlds {"fork_of": ...} of a world that wrote one record since its
  last fork (the write and deleting the fork afterwards are not timed, so the count holds);
- reset: POST /_myna/admin/worlds/{id}/reset of a world holding one write;
- GET of a record in a world by path (`/worlds/{id}/api/now/table/incident/{sys_id}`).
At 10,000 worlds the calls go to one world, then to a random world each call: the first shows
the bookkeeping (what grows with the count of worlds), the second adds the cost of touching
memory no recent call touched (another world's rows and objects, out of the CPU's caches).
Prints the median per operation and the ratios to one world; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.mocks import Mock, MockClient  # noqa: E402
from myna.mocks.auth import Credentials  # noqa: E402
from myna.mocks.example import servicenow_example  # noqa: E402
from myna.mocks.query import Query  # noqa: E402
from myna.mocks.seed import seed  # noqa: E402
from myna.mocks.sqlstore import SqlStore  # noqa: E402

ADMIN = "/_myna/admin/worlds"
TOKEN = "bench-admin-token"
USER = ("bench", "bench")
TABLE = "/api/now/table/incident"


class Bookkeeping:
    """One mock with `worlds` worlds on one seeded base, and the calls to time on it."""

    def __init__(self, worlds: int, records: int) -> None:
        model = servicenow_example()
        store = SqlStore(model, "sqlite://")
        snapshot = seed(model, store, seed=1, records={"sys_user": 20, "incident": records})
        for number in range(worlds):
            store.create_world(f"w{number}", from_snapshot=snapshot)
        credentials = Credentials.parse([":".join(USER)])
        mock = Mock(model, store, credentials=credentials, admin_token=TOKEN, seed=1)
        self.admin = MockClient(mock, headers={"Authorization": f"Bearer {TOKEN}"})
        self.api = MockClient(mock, auth=USER)
        self.worlds = [f"w{number}" for number in range(worlds)]
        self.record = store_first_incident(store)
        self.forks = 0
        self.scatter = False  # each call in a random world, else always in the first one
        for world in self.worlds:  # live worlds: each has served a request
            self.read_in(world)()

    def world(self) -> str:
        return random.choice(self.worlds) if self.scatter else self.worlds[0]

    def write(self, world: str) -> None:
        response = self.api.post(f"/worlds/{world}{TABLE}", json={"short_description": "x"})
        assert response.status == 201, response.json()

    def get(self) -> Callable[[], Any]:
        world = self.world()
        return lambda: self.admin.get(f"{ADMIN}/{world}")

    def fork(self) -> Callable[[], Any]:
        source = self.world()
        self.write(source)
        self.forks += 1
        body = {"fork_of": source, "id": f"fork{self.forks}"}
        return lambda: self.admin.post(ADMIN, json=body)

    def after_fork(self) -> None:
        self.admin.delete(f"{ADMIN}/fork{self.forks}")

    def reset(self) -> Callable[[], Any]:
        world = self.world()
        self.write(world)
        return lambda: self.admin.post(f"{ADMIN}/{world}/reset")

    def read(self) -> Callable[[], Any]:
        return self.read_in(self.world())

    def read_in(self, world: str) -> Callable[[], Any]:
        path = f"/worlds/{world}{TABLE}/{self.record}"
        return lambda: self.api.get(path)


def store_first_incident(store: SqlStore) -> str:
    with store.transaction("w0") as tx:
        found, _ = tx.list("incident", Query(limit=1))
    return str(found[0]["sys_id"])


OPERATIONS = ("get", "fork", "reset", "read")


def timed(books: Bookkeeping, operation: str, calls: int) -> list[float]:
    spent = []
    for _ in range(calls):
        call = getattr(books, operation)()
        started = time.perf_counter()
        response = call()
        spent.append(time.perf_counter() - started)
        assert response.status < 300, (operation, response.json())
        if operation == "fork":
            books.after_fork()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--worlds", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    random.seed(1)
    one, many = Bookkeeping(1, args.records), Bookkeeping(args.worlds, args.records)
    columns = ((one, False), (many, False), (many, True))
    samples: dict[tuple[int, str], list[float]] = {}
    for _ in range(args.rounds):
        for column, (books, scatter) in enumerate(columns):
            books.scatter = scatter
            for operation in OPERATIONS:
                samples.setdefault((column, operation), []).extend(
                    timed(books, operation, args.calls)
                )
    print(f"{args.records} seeded incidents, {args.rounds} alternating rounds of {args.calls}\n")
    print(
        f"| operation | 1 world (us) | {args.worlds} worlds, the same one (us) | ratio "
        "| a random one each call (us) | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for operation in OPERATIONS:
        first, same, scattered = (
            statistics.median(samples[(column, operation)]) * 1e6 for column in range(3)
        )
        print(
            f"| {operation} | {first:.0f} | {same:.0f} | {same / first:.2f}x "
            f"| {scattered:.0f} | {scattered / first:.2f}x |"
        )


if __name__ == "__main__":
    main()
