"""A built-in back end's first answer: from launching `myna serve NAME` to the first answered
query over HTTP, with the world it serves loaded.

    python bench/bench_first_answer.py [--repeat 5] [--only itsm] [--seed-cache DIR]

Each case starts a fresh server process (`myna serve NAME [--seed-dir DIR] --port P`), then asks
one query of its world every 10 ms until it answers 200, and reports the wall time from the
launch to that answer (interpreter start, imports, model load, seeding, the server's start and
the answer itself), median and worst of `--repeat`. The target: within 2 s (issue 14). Cases: the
CRM demo-sized world (`crm/demo_world`, hundreds of accounts, contacts, opportunities and
cases), the ITSM demo-sized world (`myna serve itsm`'s default: hundreds of incidents, changes,
requests, articles) and each back end's reference world (the default of CRM and ERP,
`--world reference` for ITSM).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

TOKEN = "myna-token"  # `myna serve`'s default credential
CASES: dict[str, tuple[str, list[str], str]] = {
    "crm, demo world": ("crm", [], "/services/data/v59.0/query?q=SELECT+COUNT()+FROM+Opportunity"),
    "crm, reference world": (
        "crm",
        ["--world", "reference"],
        "/services/data/v59.0/query?q=SELECT+Id+FROM+Account",
    ),
    "itsm, demo world": ("itsm", [], "/api/now/table/incident?sysparm_limit=1"),
    "itsm, reference world": (
        "itsm",
        ["--world", "reference"],
        "/api/now/table/incident?sysparm_limit=1",
    ),
    "erp, reference world": ("erp", [], "/api/erp/v1/purchase-orders"),
}
# With --seed-cache DIR (issue 16: 3 s from a cold cache, 1 s from a warm one): the first run
# generates into DIR (start from an empty DIR for a cold start), later runs mount it.
LARGE = "itsm, 50,000 incidents"
LARGE_WORLD = ["--generated", "--records", "20", "--records-of", "incident=50000"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def first_answer(
    name: str, extra: list[str], path: str, timeout: float = 30.0
) -> tuple[float, float]:
    """Seconds from launching the server to its first 200 answer to `path`, and the CPU time
    (user + system) the server process used in all (on a loaded machine, wall time waits for
    the CPU; a start-up without I/O waits takes its CPU time in wall time on an idle one)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    port = free_port()
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", name, *extra]
    started = time.perf_counter()
    server = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    try:
        while time.perf_counter() - started < timeout:
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    if answer.status == 200:
                        wall = time.perf_counter() - started
                        break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.01)
        else:
            raise SystemExit(f"{name}: no answer within {timeout} s")
    finally:
        server.terminate()
        server.wait(timeout=10)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", help="run only the cases whose name contains this (itsm)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait per run")
    parser.add_argument("--seed-cache", help=f"also run '{LARGE}' with this seed cache")
    args = parser.parse_args()
    cases = dict(CASES)
    if args.seed_cache:
        extra = [*LARGE_WORLD, "--seed-cache", args.seed_cache]
        cases[LARGE] = ("itsm", extra, "/api/now/table/incident?sysparm_limit=1")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'case':24s} {'wall median':>12s} {'wall worst':>11s} {'server CPU':>11s}")
    for case, (name, extra, path) in cases.items():
        if args.only and args.only not in case:
            continue
        runs = [first_answer(name, extra, path, args.timeout) for _ in range(args.repeat)]
        walls = [wall * 1000 for wall, _ in runs]
        cpu = statistics.median(cpu for _, cpu in runs) * 1000
        print(f"{case:24s} {statistics.median(walls):9.0f} ms {max(walls):8.0f} ms {cpu:8.0f} ms")


if __name__ == "__main__":
    main()
