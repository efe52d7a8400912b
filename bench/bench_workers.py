"""`myna serve --workers N`: throughput of one worker and of two on one port, side by side.

    python bench/bench_workers.py [--duration 10] [--rounds 3] [--connections 32] [--db sqlite]

Needs wrk. Serves the ITSM back end (`myna serve itsm`, its reference world) twice at once: one
server with `--workers 1` and one with `--workers 2`, each on a database of its own of the same
kind (`--db sqlite`: a SQLite file in WAL; `postgresql`: a schema on MYNA_TEST_POSTGRES_URL).
Rounds alternate between them (a loaded machine slows both alike); each round runs wrk (one
thread) for `--duration` seconds of GET by sys_id of one incident, then of POST create of an
incident (with its SLA). Prints requests per second, the servers' CPU time per request, and the
ratio of two workers to one (target on a 2-core machine: >= 1.7x). wrk shares the two cores.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_http import AUTHORIZATION, CREATE_BODY, INCIDENTS, USER, Run, running, wrk

WORKERS = (1, 2)


def database(kind: str, scratch: Path, workers: int, stack: ExitStack) -> str:
    if kind == "sqlite":
        return f"sqlite:///{scratch / f'workers-{workers}.db'}"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.conftest import postgres_schema

    return stack.enter_context(postgres_schema())


def serve(db: str, workers: int, port: int, stack: ExitStack) -> int:
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", "itsm"]
    command += ["--db", db, "--port", str(port), "--workers", str(workers)]
    command += ["--credential", ":".join(USER)]
    ready = f"http://127.0.0.1:{port}{INCIDENTS}?sysparm_limit=1"
    return stack.enter_context(running(command, ready, {"Authorization": AUTHORIZATION}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args()
    samples: dict[tuple[int, str], list[Run]] = {}
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="myna-workers-")))
        post = scratch / "post.lua"
        post.write_text(
            'wrk.method = "POST"\n'
            f"wrk.body = {json.dumps(json.dumps(CREATE_BODY))}\n"
            'wrk.headers["Content-Type"] = "application/json"\n'
        )
        servers = {}
        for workers in WORKERS:
            port = 18700 + workers
            db = database(args.db, scratch, workers, stack)
            servers[workers] = (f"http://127.0.0.1:{port}", serve(db, workers, port, stack))
        first = httpx.get(
            f"{servers[1][0]}{INCIDENTS}?sysparm_limit=1",
            headers={"Authorization": AUTHORIZATION},
        ).json()["result"][0]["sys_id"]
        for _ in range(args.rounds):
            for workers, (base, group) in servers.items():
                for operation, url, script in (
                    ("GET by id", f"{base}{INCIDENTS}/{first}", None),
                    ("POST create", f"{base}{INCIDENTS}", post),
                ):
                    run = wrk(
                        url,
                        duration=args.duration,
                        connections=args.connections,
                        script=script,
                        group=group,
                    )
                    samples.setdefault((workers, operation), []).append(run)
    report(samples, args)


def report(samples: dict[tuple[int, str], list[Run]], args: argparse.Namespace) -> None:
    print(
        f"myna serve itsm on {args.db}, wrk -t1 -c{args.connections} -d{args.duration}s, "
        f"median of {args.rounds} alternating rounds\n"
    )
    print("| operation | 1 worker (req/s) | CPU us/req | 2 workers (req/s) | CPU us/req | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for operation in ("GET by id", "POST create"):
        rates, cpus = [], []
        for workers in WORKERS:
            runs = samples[(workers, operation)]
            assert all(run.non_2xx == 0 for run in runs), (workers, operation, runs)
            rates.append(statistics.median(run.requests_per_second for run in runs))
            cpus.append(statistics.median(run.cpu_us_per_request for run in runs))
        print(
            f"| {operation} | {rates[0]:.0f} | {cpus[0]:.0f} | {rates[1]:.0f} | {cpus[1]:.0f} "
            f"| {rates[1] / rates[0]:.2f}x |"
        )


if __name__ == "__main__":
    main()
