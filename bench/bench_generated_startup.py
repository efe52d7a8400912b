"""A generated world's start-up: `myna serve NAME --generated --records N` before it answers.

    python bench/bench_generated_startup.py [--backend itsm] [--records 5000] [--tree PATH]
        [--db sqlite:///world.db] [--seed-cache DIR] [--records-of incident=50000]

One process: `served_mock` as `myna serve` builds it (N generated records per resource, the
extension's derived rows, the base snapshot, the default world and the runtime), then the first
list call. Prints the wall time and the process's peak RSS. `--tree` imports Myna from another
checkout (an older commit's `myna` folder beside it) to compare, one run after the other.
With `--db` naming a file or PostgreSQL, a second run finds the world the first seeded (a warm
start: nothing is generated, the base is read back from the database). With `--seed-cache`, a
second run copies the snapshot the first generated into its own (in-memory) database.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

# The first list call per back end: path, query parameters, and whether it signs in with Basic.
FIRST_LIST: dict[str, tuple[str, dict[str, str], bool]] = {
    "itsm": ("/api/now/table/incident", {"sysparm_limit": "1"}, True),
    "crm": ("/services/data/v59.0/query/", {"q": "SELECT Id FROM Account LIMIT 1"}, False),
    "erp": ("/api/erp/v1/vendors", {"limit": "1"}, False),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=sorted(FIRST_LIST), default="itsm")
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--db", default="sqlite://")
    parser.add_argument("--seed-cache", type=Path)
    parser.add_argument("--records-of", action="append", default=[], metavar="RESOURCE=COUNT")
    args = parser.parse_args()
    sys.path.insert(0, str(args.tree))
    started = time.perf_counter()
    from myna.mocks import MockClient
    from myna.mocks.cli import served_mock

    extra: dict[str, Any] = {}
    if args.records_of:  # options an older checkout (--tree) may not have
        from myna.mocks.cli import record_counts

        extra["records_of"] = record_counts(args.records_of)
    if args.seed_cache is not None:
        extra["seed_cache"] = args.seed_cache
    mock = served_mock(args.backend, db=args.db, generated=True, records=args.records, **extra)
    path, params, basic = FIRST_LIST[args.backend]
    if basic:
        client = MockClient(mock, auth=("myna", "myna"))
    else:
        client = MockClient(mock, headers={"Authorization": "Bearer myna-token"})
    answer = client.get(path, params=params)
    assert answer.status == 200, answer.json()
    spent = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss / 1024
    # CPU up to the first answer, interpreter start included, exit not (on a loaded machine
    # the wall time is mostly waiting for a CPU).
    cpu = usage.ru_utime + usage.ru_stime
    counts = f"{args.records} records per resource {' '.join(args.records_of)}".strip()
    print(f"{args.backend}, {counts}, {args.tree}:")
    print(f"first answer after {spent:.1f} s ({cpu:.2f} s of CPU), peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
