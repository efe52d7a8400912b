"""Benchmark: the mock over HTTP with wrk on loopback, side by side with json-server, Prism and a
bare FastAPI handler under the same uvicorn settings.

Targets (design brief), with validation and behaviour on: GET by id >= 2.5x json-server's
throughput, POST create >= 5x json-server's, and >= 70% of a bare FastAPI handler returning a dict.

    python bench/bench_http.py                   # needs wrk, node and bench/out/node_modules
    python bench/bench_http.py --duration 10 --connections 32 --records 1000

Setup (once):
    apt-get install -y wrk
    (cd bench/out && npm init -y && npm i json-server@0.17.4 @stoplight/prism-cli)

Every server runs in its own process with one worker; wrk runs one thread; the servers run side by
side and are measured in interleaved rounds. Each server gets the
same 1,000 incidents (json-server from a db.json of the mock's own records), the same request
(GET one incident by id; POST a four-field incident) and the same wrk settings. Prints a Markdown
table for BENCHMARKS.md; results are ratios because machines are noisy.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from fastapi import Request

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
ROOT = BENCH.parent
TABLE = "/api/now/table"
INCIDENTS = f"{TABLE}/incident"
USER = ("bench", "bench")
AUTHORIZATION = "Basic " + base64.b64encode(":".join(USER).encode()).decode()
CREATE_BODY = {
    "short_description": "Email is down",
    "description": "Nobody can send mail since 9:00",
    "priority": 2,
    "active": True,
}


# -- the servers (this script re-runs itself with --serve KIND to host each Python one) ---------


def serve_myna(port: int, records: int) -> None:
    """The mock as `myna serve` runs it (`server_for`: the bare ASGI callable under uvicorn)."""
    from myna.mocks import Mock
    from myna.mocks.auth import Credentials
    from myna.mocks.example import servicenow_example
    from myna.mocks.seed import seed
    from myna.mocks.serve import server_for
    from myna.mocks.sqlstore import SqlStore

    model = servicenow_example()
    store = SqlStore(model, "sqlite://")
    snapshot = seed(model, store, seed=1, records={"sys_user": 50, "incident": records})
    store.create_world("default", from_snapshot=snapshot)
    mock = Mock(model, store, credentials=Credentials.parse([":".join(USER)]), seed=1)
    server_for(mock, port=port).run()


def serve_bare(port: int, records: int) -> None:
    """A FastAPI handler returning the record as a dict, under `myna serve`'s uvicorn settings."""
    import uvicorn
    from fastapi import FastAPI

    from myna.mocks.serve import uvicorn_config

    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    record = json.loads((OUT / "record.json").read_text())

    @app.get(INCIDENTS + "/{sys_id}")
    async def get_incident(sys_id: str) -> dict[str, object]:
        return {"result": record}

    @app.post(INCIDENTS, status_code=201)
    async def create_incident(request: Request) -> dict[str, object]:
        return {"result": {**record, **(await request.json())}}

    uvicorn.Server(uvicorn_config(app, port=port)).run()


# -- the driver ----------------------------------------------------------------------------------


SERVERS = ("myna", "bare FastAPI", "json-server", "prism")


@dataclass(frozen=True, slots=True)
class Run:
    requests_per_second: float
    cpu_us_per_request: float  # the server's own CPU time (all its processes) per request
    non_2xx: int


@dataclass(frozen=True, slots=True)
class Result:
    server: str
    operation: str
    requests_per_second: float
    cpu_us_per_request: float
    non_2xx: int


@contextlib.contextmanager
def running(command: list[str], ready_url: str, headers: dict[str, str]) -> Iterator[int]:
    """Start a server in its own process group; yield the group id once it answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        command,
        env=env,
        cwd=OUT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as process:
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(ready_url, headers=headers, timeout=2).status_code < 500:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                    raise SystemExit(f"{command[0]} did not start: {stderr[-2000:]}")
                time.sleep(0.2)
            yield process.pid
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)


def wrk(url: str, *, duration: int, connections: int, script: Path | None, group: int) -> Run:
    command = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{duration}s",
        "-H",
        f"Authorization: {AUTHORIZATION}",
    ]
    if script is not None:
        command += ["-s", str(script)]
    cpu_before = group_cpu_seconds(group)
    output = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout
    cpu = group_cpu_seconds(group) - cpu_before
    rate = float(_find(r"Requests/sec:\s+([\d.]+)", output))
    requests = int(_find(r"(\d+) requests in", output))
    failed = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return Run(rate, cpu * 1e6 / max(requests, 1), int(failed.group(1)) if failed else 0)


def _find(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise SystemExit(f"unexpected wrk output:\n{text}")
    return found.group(1)


def group_cpu_seconds(group: int) -> float:
    """User plus system CPU time of every live process in a process group (Linux /proc).

    Throughput on a shared machine swings with whatever else runs; CPU time per request does
    not, so the report gives both."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        if int(fields[2]) == group:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def prepare(records: int, scratch: Path) -> tuple[str, Path]:
    """Seed the mock's records once; write json-server's db.json, the bare handler's record and
    Prism's OpenAPI file from them. Returns an incident id every server knows."""
    from myna.mocks import Mock, MockClient
    from myna.mocks.auth import Credentials
    from myna.mocks.example import servicenow_example
    from myna.mocks.seed import seed
    from myna.mocks.sqlstore import SqlStore

    model = servicenow_example()
    store = SqlStore(model, "sqlite://")
    snapshot = seed(model, store, seed=1, records={"sys_user": 50, "incident": records})
    store.create_world("default", from_snapshot=snapshot)
    mock = Mock(model, store, credentials=Credentials.parse([":".join(USER)]), seed=1)
    client = MockClient(mock, auth=USER)
    incidents = client.get(INCIDENTS, params={"sysparm_limit": records}).json()["result"]
    (OUT / "db.json").write_text(json.dumps({"incident": incidents}))
    (OUT / "record.json").write_text(json.dumps(incidents[0]))
    (OUT / "openapi.json").write_bytes(client.get("/openapi.json").body)
    post = scratch / "post.lua"
    post.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps(CREATE_BODY))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
    )
    return str(incidents[0]["sys_id"]), post


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--serve", choices=["myna", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=8811, help="first of four ports")
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds; medians reported"
    )
    args = parser.parse_args()
    if args.serve == "myna":
        serve_myna(args.port, args.records)
        return
    if args.serve == "bare":
        serve_bare(args.port, args.records)
        return

    for tool in ("wrk", "node"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (see this script's docstring)")
    bin_dir = OUT / "node_modules" / ".bin"
    me = [sys.executable, str(Path(__file__).resolve()), "--records", str(args.records)]
    ports = {name: args.port + i for i, name in enumerate(SERVERS)}
    commands = {
        "myna": [*me, "--port", str(ports["myna"]), "--serve", "myna"],
        "bare FastAPI": [*me, "--port", str(ports["bare FastAPI"]), "--serve", "bare"],
        "json-server": [
            str(bin_dir / "json-server"),
            "--quiet",
            "--port",
            str(ports["json-server"]),
            "--id",
            "sys_id",
            "db.json",
        ],
        "prism": [str(bin_dir / "prism"), "mock", "-p", str(ports["prism"]), "openapi.json"],
    }
    samples: dict[tuple[str, str], list[Run]] = {}
    groups: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        incident_id, post = prepare(args.records, Path(scratch))
        urls = {}
        for name in SERVERS:
            base = f"http://127.0.0.1:{ports[name]}"
            # json-server names its collection after the db.json key, at the root.
            collection = "/incident" if name == "json-server" else INCIDENTS
            urls[name] = (f"{base}{collection}/{incident_id}", f"{base}{collection}")
            groups[name] = stack.enter_context(
                running(commands[name], urls[name][0], {"Authorization": AUTHORIZATION})
            )
        for name in SERVERS:
            wrk(
                urls[name][0],
                duration=2,
                connections=args.connections,
                script=None,
                group=groups[name],
            )
        # Interleaved rounds: a burst of load from elsewhere on the machine hits every server
        # about equally instead of spoiling one of them.
        load = {"duration": args.duration, "connections": args.connections}
        for _ in range(args.rounds):
            for name in SERVERS:
                get_url, post_url = urls[name]
                run = wrk(get_url, script=None, group=groups[name], **load)
                samples.setdefault((name, "GET by id"), []).append(run)
                if name != "prism":
                    run = wrk(post_url, script=post, group=groups[name], **load)
                    samples.setdefault((name, "POST create"), []).append(run)
    results = [
        Result(
            name,
            operation,
            statistics.median(run.requests_per_second for run in runs),
            statistics.median(run.cpu_us_per_request for run in runs),
            sum(run.non_2xx for run in runs),
        )
        for (name, operation), runs in samples.items()
    ]
    report(results, args)


def report(results: list[Result], args: argparse.Namespace) -> None:
    by = {(r.server, r.operation): r for r in results}
    print(
        f"wrk -t1 -c{args.connections} -d{args.duration}s on loopback, {args.records} incidents, "
        f"one process per server, median of {args.rounds} interleaved rounds, "
        f"uvicorn loop/http: {_uvicorn_impl()}\n"
    )
    print("| server | operation | requests/s | server CPU us/request | non-2xx |")
    print("|---|---|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.server} | {r.operation} | {r.requests_per_second:,.0f} | "
            f"{r.cpu_us_per_request:,.0f} | {r.non_2xx} |"
        )
    targets = [
        ("GET by id vs json-server", "GET by id", "json-server", 2.5),
        ("POST create vs json-server", "POST create", "json-server", 5.0),
        ("GET by id vs bare FastAPI", "GET by id", "bare FastAPI", 0.7),
        ("POST create vs bare FastAPI", "POST create", "bare FastAPI", 0.7),
        ("GET by id vs Prism", "GET by id", "prism", 1.0),
    ]
    print("\n| Myna vs | by requests/s | by CPU per request | goal | verdict (requests/s) |")
    print("|---|---:|---:|---:|---|")
    for label, operation, other, goal in targets:
        mine, theirs = by.get(("myna", operation)), by.get((other, operation))
        if mine is None or theirs is None:
            continue
        ratio = mine.requests_per_second / theirs.requests_per_second
        cpu_ratio = theirs.cpu_us_per_request / mine.cpu_us_per_request
        verdict = "met" if ratio >= goal else "MISSED"
        print(f"| {label} | {ratio:.2f}x | {cpu_ratio:.2f}x | {goal:.2f}x | {verdict} |")


def _uvicorn_impl() -> str:
    loop = "uvloop" if _importable("uvloop") else "asyncio"
    http = "httptools" if _importable("httptools") else "h11"
    return f"{loop}/{http}"


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
