"""Benchmark: ITSMBench on a local Ray instance, 2 actors against 1 (issue 16: >= 1.7x).

Each round times what `myna bench itsm --ray auto --workers N` does after its pool is up:
`bench.prepare` (import and scenario generation in the driver, then the audit of every scenario
on the actors) and `bench.run` (the agent on every accepted scenario, on the actors). Pools of 1
and 2 actors alternate (1, 2, 2, 1, ...) so that load from other work falls on both alike; each
pool is started and warmed (its actors import Myna) before its round, and the start is reported
apart. The results of every round must be identical, or the script fails. The load average is
printed before and after each round: on a shared machine the ratio means little without it.

Run: PYTHONPATH=. python bench/bench_ray.py [--scenarios 400] [--rounds 2] [--agent oracle]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import ray

from myna.itsm import bench
from myna.itsm.importers import import_history
from myna.itsm.scenarios import generate
from myna.replay.distributed import RayPool


def _ready() -> Callable[[int], int]:
    import myna.itsm.bench  # noqa: F401  (what the real setups import, so the warm-up pays it)

    return lambda item: os.getpid()


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def one_round(actors: int, data: Path | None, scenarios: int, agent: str) -> tuple[float, str]:
    started = time.perf_counter()
    with RayPool("auto", actors=actors) as pool:
        pool.map(_ready, list(range(actors * 4)))
        warm = time.perf_counter() - started
        before = _load()
        clock = time.perf_counter()
        prepared = bench.prepare(data, limit=scenarios, pool=pool)
        trials = bench.run(prepared, agent, pool=pool)
        wall = time.perf_counter() - clock
    result = bench.result(prepared, agent, trials, per_scenario=1, seed=0)
    print(
        f"{actors} actor(s): {wall:6.2f} s (pool start {warm:4.1f} s; "
        f"{len(prepared.accepted)} accepted; load {before} -> {_load()})",
        flush=True,
    )
    return wall, result.model_dump_json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=None, help="default: the shipped data")
    parser.add_argument("--scenarios", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2, help="rounds per actor count")
    parser.add_argument("--agent", default="oracle")
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    clock = time.perf_counter()
    history, _ = import_history(args.data or bench.default_data())
    generate(history, bench.itsm_model(), seed=0, limit=args.scenarios)
    serial = time.perf_counter() - clock
    print(f"driver alone (import + generate, part of every round): {serial:.2f} s")
    times: dict[int, list[float]] = {1: [], 2: []}
    outputs = set()
    order = [1, 2, 2, 1] * ((args.rounds + 1) // 2)
    for actors in order[: 2 * args.rounds]:
        wall, output = one_round(actors, args.data, args.scenarios, args.agent)
        times[actors].append(wall)
        outputs.add(output)
    ray.shutdown()
    if len(outputs) != 1:
        raise SystemExit("the rounds' results differ")
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"median: 1 actor {one:.2f} s, 2 actors {two:.2f} s: {one / two:.2f}x (target >= 1.7x)")
    print(f"without the driver's serial part: {(one - serial) / (two - serial):.2f}x")


if __name__ == "__main__":
    main()
