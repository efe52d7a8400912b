"""The built-in ERP back end: what `myna serve erp` pays before its first request.

    python bench/bench_erp_backend.py [--repeat 5]

Measures, best of `--repeat`, in one process:
- writing the corpus (`build_corpus`: the reference service runs every chapter);
- loading the shipped model (`builtin_model("erp")`, cold: YAML parse and validation);
- building an empty world store and the runtime (`SqlStore` + `Mock`);
- seeding 20 records per resource (what `myna serve` does by default) and starting the default
  world from that snapshot;
- loading the consistent reference world instead, as `myna serve erp --seed-dir` does (the shipped
  `reference_world/` seed files, each record checked against the model);
- load plus either seed: the start-up cost the issue bounds at two seconds.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORLD = ROOT / "myna" / "mocks" / "backends" / "erp" / "reference_world"
sys.path.insert(0, str(ROOT))

from myna.mocks import Mock  # noqa: E402
from myna.mocks.backends import BACKENDS  # noqa: E402
from myna.mocks.backends.erp.corpus import build_corpus  # noqa: E402
from myna.mocks.seed import seed, seed_from_files  # noqa: E402
from myna.mocks.sqlstore import SqlStore  # noqa: E402


def best_of(repeat: int, work: Callable[[], Any]) -> float:
    """Fastest of `repeat` runs, with the collector paused while timing (as timeit does)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
        gc.enable()
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    backend = BACKENDS["erp"]
    model = backend.load()
    sessions = build_corpus()
    exchanges = sum(len(session.exchanges) for session in sessions)

    def start() -> None:
        store = SqlStore(model, "sqlite://")
        snapshot = seed(model, store, seed=0, records=20)
        store.create_world("default", from_snapshot=snapshot)
        Mock(model, store)

    def start_consistent() -> None:
        store = SqlStore(model, "sqlite://")
        snapshot = seed_from_files(model, store, WORLD)
        store.create_world("default", from_snapshot=snapshot)
        Mock(model, store)

    results = {
        "build corpus": best_of(repeat, build_corpus),
        "load model.yaml": best_of(repeat, backend.load),
        "store + runtime": best_of(repeat, lambda: Mock(model, SqlStore(model, "sqlite://"))),
        "seed 20/resource + world": best_of(repeat, start),
        "reference world + runtime": best_of(repeat, start_consistent),
    }
    print(
        f"corpus: {len(sessions)} sessions, {exchanges} exchanges; model: "
        f"{len(model.resources)} resources, {len(model.operations)} operations"
    )
    for name, seconds in results.items():
        print(f"{name:28s} {seconds * 1000:9.1f} ms")
    for seeding in ("seed 20/resource + world", "reference world + runtime"):
        startup = results["load model.yaml"] + results[seeding]
        print(f"start-up (load + {seeding}) {startup * 1000:9.1f} ms (target < 2000 ms)")


if __name__ == "__main__":
    main()
