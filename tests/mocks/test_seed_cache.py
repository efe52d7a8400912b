"""Cached seeds (`myna serve --seed-cache`): a start copies the snapshot an earlier start
generated, holding exactly what seeding anew makes, and generates nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from myna.mocks import seed_cache
from myna.mocks.example import servicenow_example
from myna.mocks.seed import seed
from myna.mocks.seed_cache import cached_seed, seed_key
from myna.mocks.sqlstore import SqlStore

RECORDS = {"sys_user": 5, "incident": 12}


def world_of(store: SqlStore, snapshot: str) -> dict[str, Any]:
    """Every record and the next number of the world made from the snapshot."""
    store.create_world("w", from_snapshot=snapshot)
    with store.transaction("w") as tx:
        records = {name: list(tx.all(name)) for name in store.model.resources}
        records["next number"] = tx.next_sequence("incident.number", 1)
    return records


def test_a_cached_seed_holds_what_seeding_makes_and_is_generated_once(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = servicenow_example()
    seeds = tmp_path / "seeds"
    fresh = SqlStore(model, "sqlite://")
    expected = world_of(fresh, seed(model, fresh, seed=3, records=RECORDS))
    first = SqlStore(model, "sqlite://")
    assert (
        world_of(first, cached_seed(model, first, seed=3, records=RECORDS, directory=seeds))
        == expected
    )

    def generate_again(*_: Any, **__: Any) -> str:
        raise AssertionError("a cached seed was generated again")

    monkeypatch.setattr(seed_cache, "seed_store", generate_again)
    served = SqlStore(model, store_url)
    try:
        snapshot = cached_seed(model, served, seed=3, records=RECORDS, directory=seeds)
        assert world_of(served, snapshot) == expected
    finally:
        served.drop()
    assert [path.suffix for path in seeds.iterdir()] == [".db"]


def test_the_model_the_seed_and_the_counts_name_a_cached_seed() -> None:
    model = servicenow_example()
    other = model.model_copy(deep=True)
    other.resources["incident"].fields.pop("close_notes")
    keys = {
        seed_key(model, 3, RECORDS),
        seed_key(model, 4, RECORDS),
        seed_key(model, 3, {**RECORDS, "incident": 13}),
        seed_key(other, 3, RECORDS),
    }
    assert len(keys) == 4
    assert seed_key(model, 3, RECORDS) == seed_key(servicenow_example(), 3, dict(RECORDS))


def test_a_served_start_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    """`served_mock` builds without the cyclic collector, then collects once
    (`cli._StartUp`): the collector runs again afterwards, nothing is frozen (a process that
    builds many mocks collects them), and a collector a caller turned off stays off."""
    import gc

    from myna.mocks.cli import served_mock

    frozen = gc.get_freeze_count()
    mock = served_mock("erp", generated=True, records=2, seed_cache=tmp_path)
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
    mock.store.close()
    gc.disable()
    try:
        served_mock("erp", generated=True, records=2, seed_cache=tmp_path).store.close()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_serve_turns_on_the_collector_its_entry_point_turned_off() -> None:
    """`myna serve` turns the collector off before its first import (`myna.cli.main`); the
    server's start-up turns it on again, having collected and frozen what it built."""
    import gc

    from myna.mocks.cli import _StartUp

    gc.disable()
    try:
        with _StartUp(resume=True) as start_up:
            assert not gc.isenabled()
            start_up.done()
            assert gc.isenabled()
    finally:
        gc.enable()
