"""Benchmark: episode reset time and reference-solution episodes per second, in process.

Targets (issue 7): episode reset <= 1 ms; >= 1,000 reference-solution episodes per second in
process on one core.

    PYTHONPATH=. python bench/bench_replay.py                 # the shipped samples
    PYTHONPATH=. python bench/bench_replay.py --episodes 5000 --extra 1000
    PYTHONPATH=. python bench/bench_replay.py --model itsm    # on the built-in ITSM back end

The episodes are built from the shipped failure logs (`myna/replay/samples`), on the in-process
mock with in-memory SQLite, over the samples' incident-desk model or (`--model itsm`) the
built-in ITSM back end. `--extra N` adds N records to every episode's initial world, to show
that reset does not grow with the world. Measured:
- reset: `runner.start()` then closing the untouched world (fork from the episode's snapshot);
- `Env.reset`: the same through the Gymnasium API;
- episodes/s: a fresh world, the whole reference solution, verification, the world closed,
  cycling over all episodes and variants. Single-threaded: one core.
Prints a Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

from myna.backends import builtin_model
from myna.replay.build import Builder, build
from myna.replay.env import Env
from myna.replay.episode import Episode, ModelRef
from myna.replay.mock_world import MockWorlds, ToolboxTranslator, runner_for
from myna.replay.run import EpisodeRunner, run_steps
from myna.replay.sample_logs import failure_sessions, incident_model


def padded(episode: Episode, extra: int) -> Episode:
    """The episode with `extra` more incidents in its initial world (copies with new ids)."""
    if not extra:
        return episode
    incidents = episode.environment.initial_world["incident"]
    more = [
        {**incidents[0], "sys_id": f"{i:032x}", "number": f"BENCH{i:07d}"} for i in range(extra)
    ]
    world = {**episode.environment.initial_world, "incident": [*incidents, *more]}
    environment = episode.environment.model_copy(update={"initial_world": world})
    return episode.model_copy(update={"environment": environment})


def runners(extra: int, backend: str | None) -> list[EpisodeRunner]:
    model = builtin_model(backend) if backend else incident_model()
    worlds = MockWorlds(model)
    builder = Builder(
        model=model,
        factory=worlds,
        model_ref=ModelRef(name=backend) if backend else ModelRef(path="incident.model.yaml"),
        tools=tuple(ToolboxTranslator(model).names()),
    )
    episodes = build(failure_sessions(), builder, variants=3).episodes
    return [runner_for(padded(episode, extra), model, worlds) for episode in episodes]


def per_call_us(work: Callable[[], object], calls: int) -> float:
    for _ in range(min(calls // 10, 200)):
        work()
    gc.collect()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000, help="reference runs to time")
    parser.add_argument("--resets", type=int, default=3000, help="resets to time")
    parser.add_argument("--extra", type=int, default=0, help="extra records per world")
    parser.add_argument("--model", default=None, help="a built-in back end, e.g. itsm")
    args = parser.parse_args()

    prepared = runners(args.extra, args.model)
    for runner in prepared:  # load every episode's snapshot once, as a trainer's warm-up would
        runner.start().world.close()

    first = prepared[0]
    reset_us = per_call_us(lambda: first.start().world.close(), args.resets)
    env = Env(first.episode, first)
    env_reset_us = per_call_us(lambda: env.reset(seed=0), args.resets)
    env.close()

    passed = 0
    start = time.perf_counter()
    cpu = time.process_time()
    for index in range(args.episodes):
        runner = prepared[index % len(prepared)]
        passed += run_steps(runner, runner.episode.reference.steps).passed
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    if passed != args.episodes:
        raise SystemExit(f"only {passed} of {args.episodes} reference runs passed")

    model = args.model or "incident desk"
    print(f"{len(prepared)} episodes on {model}, {args.extra} extra records per world\n")
    print("| measure | result | target |")
    print("|---|---|---|")
    print(f"| episode reset (median) | {reset_us:.0f} us | <= 1,000 us |")
    print(f"| `Env.reset` (median) | {env_reset_us:.0f} us | <= 1,000 us |")
    print(f"| reference-solution episodes/s (wall) | {args.episodes / wall:,.0f} | >= 1,000 |")
    print(f"| reference-solution episodes/s (CPU) | {args.episodes / cpu:,.0f} | >= 1,000 |")


if __name__ == "__main__":
    main()
