"""Filtered and sorted lists at 50,000 records: as served (in SQL over the base's query tables, or
narrowed by its equality indexes), against the Python evaluator, and over HTTP against
json-server.

    python bench/bench_queries.py [--records 50000] [--rounds 5] [--calls 50] [--http]

The ServiceNow-like example model, `--records` generated incidents and 50 users (as
`bench_http.py` seeds them). In process (`MockClient`), each query's median over `--rounds`
alternating rounds of `--calls` calls, as served (a filter's `field = value` conjuncts narrow
the records read when the base holds few matches, other lists run in SQL) and by the Python
evaluator alone (every record evaluated, as before). A first call per query fills the query
tables before timing. With `--http` (needs wrk, node and `bench/out/node_modules`, see
`bench_http.py`), Myna's server and json-server 0.17.4 serve the same records and wrk (one
thread, 4 connections, 5 s) runs each query on each, alternating; requests per second and the
ratio. Target (issue 16): median <= 2 ms and >= 10x json-server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_http import AUTHORIZATION, INCIDENTS, OUT, USER, running, wrk

from myna.mocks import Mock, MockClient, sqlstore
from myna.mocks.auth import Credentials
from myna.mocks.example import servicenow_example
from myna.mocks.seed import seed
from myna.mocks.sqlstore import SqlStore

# name -> (ServiceNow encoded query, json-server parameters); a user id fills in CALLER.
CALLER = "{caller}"
QUERIES = {
    "active=true^priority=1": ("active=true^priority=1", {"active": "true", "priority": "1"}),
    "caller_id=X (1/50)": (f"caller_id={CALLER}", {"caller_id": CALLER}),
    "state=2^ORDERBYnumber (1/4)": ("state=2^ORDERBYnumber", {"state": "2", "_sort": "number"}),
    "active=true^ORDERBYDESCsys_created_on (1/2)": (
        "active=true^ORDERBYDESCsys_created_on",
        {"active": "true", "_sort": "sys_created_on", "_order": "desc"},
    ),
}
LIMIT = 10
NEVER = 10**12  # `_SELECTIVE` and `_SQL_FROM` so large that every list is evaluated in Python


def seeded_client(records: int) -> MockClient:
    model = servicenow_example()
    store = SqlStore(model, "sqlite://")
    snapshot = seed(model, store, seed=1, records={"sys_user": 50, "incident": records})
    store.create_world("default", from_snapshot=snapshot)
    return MockClient(
        Mock(model, store, credentials=Credentials.parse([":".join(USER)])), auth=USER
    )


def in_process(api: MockClient, caller: str, rounds: int, calls: int) -> None:
    samples: dict[tuple[str, bool], list[float]] = {}
    served = (sqlstore._SELECTIVE, sqlstore._SQL_FROM)
    for encoded, _ in QUERIES.values():  # fill the query tables once
        query = {"sysparm_query": encoded.replace(CALLER, caller), "sysparm_limit": "10"}
        api.get(INCIDENTS, params=query)
    for _ in range(rounds):
        for fast in (True, False):
            sqlstore._SELECTIVE, sqlstore._SQL_FROM = served if fast else (NEVER, NEVER)
            for name, (encoded, _) in QUERIES.items():
                params = {"sysparm_query": encoded.replace(CALLER, caller), "sysparm_limit": "10"}
                for _ in range(calls):
                    started = time.perf_counter()
                    answer = api.get(INCIDENTS, params=params)
                    samples.setdefault((name, fast), []).append(time.perf_counter() - started)
                    assert answer.status == 200, answer.json()
    sqlstore._SELECTIVE, sqlstore._SQL_FROM = served
    print("| query (share of incidents matching) | served (ms) | evaluator (ms) | ratio |")
    print("|---|---:|---:|---:|")
    for name in QUERIES:
        fast, slow = (statistics.median(samples[(name, n)]) * 1e3 for n in (True, False))
        print(f"| `{name}` | {fast:.2f} | {slow:.2f} | {slow / fast:.1f}x |")


def over_http(api: MockClient, caller: str, records: int, rounds: int) -> None:
    incidents = api.get(INCIDENTS, params={"sysparm_limit": str(records)}).json()["result"]
    (OUT / "db.json").write_text(json.dumps({"incident": incidents}))
    me = [sys.executable, str(Path(__file__).resolve().parent / "bench_http.py")]
    commands = {
        "myna": [*me, "--records", str(records), "--port", "18811", "--serve", "myna"],
        "json-server": [
            str(OUT / "node_modules" / ".bin" / "json-server"),
            *("--quiet", "--port", "18812", "--id", "sys_id", "db.json"),
        ],
    }
    bases = {"myna": "http://127.0.0.1:18811", "json-server": "http://127.0.0.1:18812"}
    urls: dict[tuple[str, str], str] = {}
    for name, (encoded, parameters) in QUERIES.items():
        myna = {"sysparm_query": encoded.replace(CALLER, caller), "sysparm_limit": str(LIMIT)}
        other = {key: value.replace(CALLER, caller) for key, value in parameters.items()}
        urls[(name, "myna")] = f"{bases['myna']}{INCIDENTS}?{urlencode(myna)}"
        urls[(name, "json-server")] = f"{bases['json-server']}/incident?" + urlencode(
            {**other, "_limit": str(LIMIT)}
        )
    samples: dict[tuple[str, str], list[float]] = {}
    with contextlib.ExitStack() as stack:
        groups = {
            server: stack.enter_context(
                running(command, f"{bases[server]}/", {"Authorization": AUTHORIZATION})
            )
            for server, command in commands.items()
        }
        for url in urls.values():  # Myna fills its query tables on a query's first call
            httpx.get(url, headers={"Authorization": AUTHORIZATION}, timeout=300)
        for _ in range(rounds):
            for (name, server), url in urls.items():
                run = wrk(url, duration=5, connections=4, script=None, group=groups[server])
                assert run.non_2xx == 0, (name, server)
                samples.setdefault((name, server), []).append(run.requests_per_second)
    print("\n| query | Myna (req/s) | json-server (req/s) | Myna / json-server |")
    print("|---|---:|---:|---:|")
    for name in QUERIES:
        mine, theirs = (statistics.median(samples[(name, s)]) for s in ("myna", "json-server"))
        print(f"| `{name}` | {mine:.0f} | {theirs:.0f} | {mine / theirs:.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args()
    api = seeded_client(args.records)
    users = api.get("/api/now/table/sys_user", params={"sysparm_limit": "1"}).json()["result"]
    caller = str(users[0]["sys_id"])
    print(f"{args.records} incidents, {LIMIT} per page, median of {args.rounds} rounds\n")
    in_process(api, caller, args.rounds, args.calls)
    if args.http:
        over_http(api, caller, args.records, min(args.rounds, 3))


if __name__ == "__main__":
    main()
