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
from dataclasses import dataclass
from pathlib import Path

import ray

from myna.itsm import bench
from myna.itsm.importers import import_history
from myna.itsm.scenarios import generate
from myna.replay.distributed import RayPool, connect


def _ready() -> Callable[[int], int]:
    import myna.itsm.bench  # noqa: F401  (what the real setups import, so the warm-up pays it)

    return lambda item: os.getpid()


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) a local process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Round:
    """One timed round: its pool's size, wall and CPU seconds, and its results JSON."""

    actors: int
    wall: float
    driver_cpu: float
    actor_cpu: tuple[float, ...]
    output: str


def one_round(actors: int, data: Path | None, scenarios: int, agent: str) -> Round:
    started = time.perf_counter()
    with RayPool("auto", actors=actors) as pool:
        pids = sorted(set(pool.map(_ready, list(range(actors * 4)))))
        if len(pids) != actors:
            raise SystemExit(f"the warm-up reached {len(pids)} of {actors} actors")
        warm = time.perf_counter() - started
        before, spent = _load(), [_cpu(pid) for pid in pids]
        clock, cpu = time.perf_counter(), time.process_time()
        prepared = bench.prepare(data, limit=scenarios, pool=pool)
        trials = bench.run(prepared, agent, pool=pool)
        wall, driver = time.perf_counter() - clock, time.process_time() - cpu
        used = tuple(_cpu(pid) - was for pid, was in zip(pids, spent, strict=True))
    result = bench.result(prepared, agent, trials, per_scenario=1, seed=0)
    print(
        f"{actors} actor(s): {wall:6.2f} s wall; CPU s: driver {driver:.2f}, actors "
        f"{' + '.join(f'{u:.2f}' for u in used)} (pool start {warm:4.1f} s; "
        f"{len(prepared.accepted)} accepted; load {before} -> {_load()})",
        flush=True,
    )
    return Round(actors, wall, driver, used, result.model_dump_json())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=None, help="default: the shipped data")
    parser.add_argument("--scenarios", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2, help="rounds per actor count")
    parser.add_argument("--agent", default="oracle")
    args = parser.parse_args()
    connect("auto")  # as `--ray auto` starts it, so that every round's pool finds it up
    clock, cpu = time.perf_counter(), time.process_time()
    history, _ = import_history(args.data or bench.default_data(), names_seed=0)
    generate(history, bench.itsm_model(), seed=0, limit=args.scenarios)
    print(
        f"driver alone (import + generate, part of every round): "
        f"{time.perf_counter() - clock:.2f} s wall, {time.process_time() - cpu:.2f} s CPU"
    )
    rounds: list[Round] = []
    order = [1, 2, 2, 1] * ((args.rounds + 1) // 2)
    for actors in order[: 2 * args.rounds]:
        rounds.append(one_round(actors, args.data, args.scenarios, args.agent))
    ray.shutdown()
    if len({r.output for r in rounds}) != 1:
        raise SystemExit("the rounds' results differ")
    report(rounds)


def report(rounds: list[Round]) -> None:
    """The wall-clock ratio, and the same ratio read from CPU time: the driver's CPU plus the
    busiest actor's, which is what the wall would be if each process had a core of its own."""
    by = {n: [r for r in rounds if r.actors == n] for n in (1, 2)}
    one = statistics.median(r.wall for r in by[1])
    two = statistics.median(r.wall for r in by[2])
    print(f"median wall: 1 actor {one:.2f} s, 2 actors {two:.2f} s: {one / two:.2f}x (>= 1.7x)")
    path = {n: statistics.median(r.driver_cpu + max(r.actor_cpu) for r in by[n]) for n in by}
    work = {n: statistics.median(r.driver_cpu + sum(r.actor_cpu) for r in by[n]) for n in by}
    print(
        f"CPU: driver + busiest actor {path[1]:.2f} s vs {path[2]:.2f} s: "
        f"{path[1] / path[2]:.2f}x; all CPU {work[1]:.2f} s vs {work[2]:.2f} s"
    )


if __name__ == "__main__":
    main()
