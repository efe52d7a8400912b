"""Benchmark: ITSMBench end to end on the shared UCI sample (issue 8: under 60 s).

One run, wall-clock and CPU time per stage, in this single process:
  - import of the shared UCI sample (5,998 events, 890 incidents), its coded labels given
    realistic names (`names_seed`, as `bench.prepare` does),
  - loading the built-in ITSM model,
  - seeding adaptation and scenario generation, limited to --scenarios (1,000 by default),
  - the replay audit of every scenario (reference, no-op, probes, determinism, near-miss solvers),
  - an oracle run of every accepted scenario;
then, untimed, the solver ladder (noop, random, heuristic, rules) by tier on those scenarios and
on as many from the shipped data (`--ladder N`: on N of each instead; 0: no ladder).
Every world holds the source's shared background (up to `kinds.BACKGROUND` closed incidents with
every user, group and item of the history; `myna.replay.shared`) under the scenario's records.
The UCI sample is read from ../shared/corpus; the script says so and exits when it is absent.

Run: PYTHONPATH=. python bench/bench_itsmbench.py [--scenarios N] [--workers N] [--ladder N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from myna.itsm import bench
from myna.itsm.importers import import_history
from myna.itsm.scenarios import generate

UCI = (
    Path(__file__).resolve().parents[1].parent
    / "shared/corpus/datasets/uci_incident_event_log/incident_event_log_first5998.csv"
)
T = TypeVar("T")


def _timed(label: str, work: Callable[[], T], rows: list[tuple[str, float, float]]) -> T:
    wall, cpu = time.perf_counter(), time.process_time()
    out = work()
    rows.append((label, time.perf_counter() - wall, time.process_time() - cpu))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--ladder", type=int, default=None, help="scenarios per source for the ladder (all)"
    )
    args = parser.parse_args()
    if not UCI.exists():
        sys.exit(f"skipped: the UCI sample is not at {UCI}")
    rows: list[tuple[str, float, float]] = []
    history, _ = _timed("import UCI sample", lambda: import_history(UCI, names_seed=0), rows)
    model = _timed("load ITSM model", bench.itsm_model, rows)
    generation = _timed(
        "adapt + generate",
        lambda: generate(history, model, seed=0, limit=args.scenarios),
        rows,
    )

    def audited() -> bench.Prepared:
        return bench.prepare(UCI, limit=args.scenarios, workers=args.workers, model=model)

    # `prepare` imports and generates again; its audit time is its total minus those stages.
    prepared = _timed("import + generate + audit", audited, rows)
    trials = _timed(
        "oracle run",
        lambda: bench.run(prepared, "oracle", workers=args.workers),
        rows,
    )
    score = bench.score(trials)
    total_wall = rows[0][1] + rows[1][1] + rows[3][1] + rows[4][1]
    total_cpu = rows[0][2] + rows[1][2] + rows[3][2] + rows[4][2]
    print(f"scenarios generated: {len(generation.scenarios)} of {sum(generation.yielded.values())}")
    print(f"accepted by the audit: {len(prepared.accepted)}")
    print(f"oracle pass^1: {score.pass_hat.get(1, 0.0):.3f} over {score.scenarios} scenarios")
    for label, wall, cpu in rows:
        print(f"{label:28s} {wall:7.2f} s wall {cpu:7.2f} s cpu")
    print(f"{'pipeline total':28s} {total_wall:7.2f} s wall {total_cpu:7.2f} s cpu (target < 60 s)")
    if args.ladder == 0:
        return
    rungs = args.ladder or args.scenarios
    if rungs != args.scenarios:
        prepared = bench.prepare(UCI, limit=rungs, workers=args.workers, model=model)
    shipped = bench.prepare(limit=rungs, workers=args.workers, model=model)
    for label, audited in (("UCI sample", prepared), ("shipped data", shipped)):
        print(f"solver ladder, pass^1 by tier, {label} ({len(audited.accepted)} scenarios):")
        for rung in bench.ladder(audited, workers=args.workers):
            shown = "  ".join(f"tier {t}: {r:.3f}" for t, r in sorted(rung.by_tier.items()))
            print(f"  {rung.agent:10s} {shown}  {'falls' if rung.falls else 'does not fall'}")
            print("    " + "  ".join(f"{k} {p}/{n}" for k, (p, n) in rung.by_kind.items()))


if __name__ == "__main__":
    main()
