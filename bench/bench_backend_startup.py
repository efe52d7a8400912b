"""A built-in back end: what `myna serve NAME` pays before its first request.

    python bench/bench_backend_startup.py --backend itsm [--repeat 5]

Measures, best of `--repeat`, in one process:
- writing the corpus (`build_corpus`: the back end's reference service runs every workflow);
- loading the shipped model (`builtin_model(NAME)`, cold: YAML parse and validation);
- an empty store and the runtime;
- seeding 20 generated records per resource, the default world and the runtime;
- where the back end ships one, loading its consistent reference world instead, as
  `myna serve NAME --seed-dir .../reference_world` does;
- load plus seeding: the start-up cost the issue bounds at two seconds.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.backends import BACKENDS  # noqa: E402
from myna.mocks import Mock  # noqa: E402
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
    parser.add_argument("--backend", choices=sorted(BACKENDS), required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    backend = BACKENDS[args.backend]
    build_corpus = importlib.import_module(f"{backend.package}.corpus").build_corpus
    world = ROOT / Path(*backend.package.split(".")) / "reference_world"
    model = backend.load()
    sessions = build_corpus()
    exchanges = sum(len(session.exchanges) for session in sessions)

    def start(seeding: Callable[[SqlStore], str]) -> Callable[[], None]:
        def run() -> None:
            store = SqlStore(model, "sqlite://")
            store.create_world("default", from_snapshot=seeding(store))
            Mock(model, store)

        return run

    results = {
        "build corpus": best_of(args.repeat, build_corpus),
        "load model.yaml": best_of(args.repeat, backend.load),
        "store + runtime": best_of(args.repeat, lambda: Mock(model, SqlStore(model, "sqlite://"))),
        "seed 20/resource + world": best_of(
            args.repeat, start(lambda store: seed(model, store, seed=0, records=20))
        ),
    }
    if world.is_dir():
        results["reference world + runtime"] = best_of(
            args.repeat, start(lambda store: seed_from_files(model, store, world))
        )
    print(
        f"{args.backend} corpus: {len(sessions)} sessions, {exchanges} exchanges; model: "
        f"{len(model.resources)} resources, {len(model.operations)} operations"
    )
    for name, seconds in results.items():
        print(f"{name:28s} {seconds * 1000:9.1f} ms")
    for seeding in ("seed 20/resource + world", "reference world + runtime"):
        if seeding in results:
            startup = results["load model.yaml"] + results[seeding]
            print(f"start-up (load + {seeding}) {startup * 1000:9.1f} ms (target < 2000 ms)")


if __name__ == "__main__":
    main()
