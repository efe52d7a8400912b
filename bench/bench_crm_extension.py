"""What a Salesforce call costs on the built-in CRM back end, served by the `salesforce` extension.

    python bench/bench_crm_extension.py [--calls 2000] [--accounts 300]

One process, the shipped CRM model in process on in-memory SQLite. Median of `--calls` calls of:
- POST create of an Account (field checks, id from the world's sequence, write-back);
- GET by id, PATCH of a picklist (204), the same PATCH on an Opportunity's stage (derived
  probability, forecast category and flags);
- SOQL over `--accounts` accounts: a filtered page (`WHERE ... LIMIT 10`) and every account with
  its owner's name (a relationship walk per row), median of `--calls / 20` calls;
then the start-up cost of the consistent reference world (`--seed-dir`): model load, seeding
from the shipped files, and the runtime.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from importlib.resources import as_file, files
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.backends import builtin_model  # noqa: E402
from myna.mocks import Mock, MockClient  # noqa: E402
from myna.mocks.auth import Credentials  # noqa: E402
from myna.mocks.seed import seed_from_files  # noqa: E402
from myna.mocks.sqlstore import SqlStore  # noqa: E402

DATA = "/services/data/v59.0"
SESSION = "bench-session"


def median_us(call: Callable[[], object], times: int) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1e6


def query(api: MockClient, soql: str) -> object:
    return api.get(f"{DATA}/query/", params={"q": soql})


def create(api: MockClient, name: str, values: dict[str, object]) -> object:
    return api.post(f"{DATA}/sobjects/{name}/", json=values)


def patch(api: MockClient, name: str, record_id: str, **values: object) -> object:
    return api.patch(f"{DATA}/sobjects/{name}/{record_id}", json=values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--accounts", type=int, default=300)
    arguments = parser.parse_args()
    model = builtin_model("crm")
    mock = Mock(
        model, SqlStore(model, "sqlite://"), credentials=Credentials(tokens=frozenset({SESSION}))
    )
    api = MockClient(mock, headers={"Authorization": f"Bearer {SESSION}"})
    for number in range(arguments.accounts):
        api.post(f"{DATA}/sobjects/Account/", json={"Name": f"Account {number:04d}"})
    account = api.post(f"{DATA}/sobjects/Account/", json={"Name": "Bench"}).json()["id"]
    deal = api.post(
        f"{DATA}/sobjects/Opportunity/",
        json={"Name": "Deal", "StageName": "Prospecting", "CloseDate": "2026-06-30"},
    ).json()["id"]
    stages = iter(["Closed Won", "Prospecting"] * arguments.calls)
    calls, queries = arguments.calls, max(arguments.calls // 20, 1)
    page = "SELECT Id FROM Account WHERE Name = 'Bench' LIMIT 10"
    walk = "SELECT Id, Name, Owner.Name FROM Account"
    # Queries first, while the world holds `--accounts` accounts (the creates below add more).
    rows = [
        ("SOQL WHERE Name = ... LIMIT 10", median_us(lambda: query(api, page), queries)),
        ("SOQL every account with Owner.Name", median_us(lambda: query(api, walk), queries)),
        ("POST create Account", median_us(lambda: create(api, "Account", {"Name": "N"}), calls)),
        ("GET by id", median_us(lambda: api.get(f"{DATA}/sobjects/Account/{account}"), calls)),
        ("PATCH Rating", median_us(lambda: patch(api, "Account", account, Rating="Hot"), calls)),
        (
            "PATCH StageName (derived fields)",
            median_us(lambda: patch(api, "Opportunity", deal, StageName=next(stages)), calls),
        ),
    ]
    print(f"{arguments.accounts + 1} accounts; median of {calls} calls, {queries} queries")
    for name, micros in rows:
        print(f"{name:40} {micros:10.1f} us")
    started = time.perf_counter()
    fresh = builtin_model("crm")
    store = SqlStore(fresh, "sqlite://")
    with as_file(files("myna.backends.crm").joinpath("reference_world")) as directory:
        snapshot = seed_from_files(fresh, store, directory)
    store.create_world("default", from_snapshot=snapshot)
    Mock(fresh, store)
    spent = (time.perf_counter() - started) * 1000
    print(f"{'reference world: load + seed + runtime':40} {spent:10.1f} ms")


if __name__ == "__main__":
    main()
