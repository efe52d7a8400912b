"""What the `servicenow` extension costs per call, side by side with the same model without it.

    python bench/bench_extensions.py [--calls 2000]

One process, the shipped ITSM model served twice in process: as shipped (`extensions:
[servicenow]`) and with `extensions: []`. For each, the median of `--calls` calls of:
- GET by sys_id (what every agent read is), plain and with pysnc's parameters
  (`sysparm_display_value=all&sysparm_exclude_reference_link=true`), which only the extension
  honours;
- POST create of an incident (defaults, priority, data policies, membership run on it);
- PATCH of urgency (adds two sys_audit rows with the extension).
Ratios (with / without) are what to read; absolute microseconds depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.backends import builtin_model  # noqa: E402
from myna.mocks import Mock, MockClient  # noqa: E402
from myna.mocks.auth import Credentials  # noqa: E402
from myna.mocks.sqlstore import SqlStore  # noqa: E402

AGENT = ("itil.agent", "itil-password")
TABLE = "/api/now/table/incident"
PYSNC = {"sysparm_display_value": "all", "sysparm_exclude_reference_link": "true"}


def client(extensions: list[str]) -> MockClient:
    model = builtin_model("itsm")
    model.extensions = extensions
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([AGENT])))
    return MockClient(mock, auth=AGENT)


def median_us(calls: int, work: Callable[[], Any]) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def measure(api: MockClient, calls: int) -> dict[str, float]:
    sys_id = api.post(TABLE, json={"short_description": "bench"}).json()["result"]["sys_id"]
    item = f"{TABLE}/{sys_id}"
    urgencies = iter(["1", "2"] * calls)
    return {
        "GET by id": median_us(calls, lambda: api.get(item)),
        "GET by id, pysnc params": median_us(calls, lambda: api.get(item, params=PYSNC)),
        "POST create": median_us(calls, lambda: api.post(TABLE, json={"short_description": "b"})),
        "PATCH urgency": median_us(
            calls, lambda: api.patch(item, json={"urgency": next(urgencies)})
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with_it = measure(client(["servicenow"]), args.calls)
    without = measure(client([]), args.calls)
    print(f"{'call':<26}{'without (us)':>14}{'with (us)':>12}{'ratio':>8}")
    for name, plain in without.items():
        extended = with_it[name]
        print(f"{name:<26}{plain:>14.1f}{extended:>12.1f}{extended / plain:>8.2f}")


if __name__ == "__main__":
    main()
