"""Realistic names for coded dataset labels (`myna.itsm.importers.names`)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.itsm.importers import IncidentHistory, import_history, realistic_names
from myna.itsm.importers.names import CODED, DOMAINS, _components, _pick, _symptoms
from tests.itsm.conftest import UCI_HEADER, uci_row

DELIMITERS = re.compile(r'[.,()"^=]')


def _names(history: IncidentHistory) -> dict[str, list[str]]:
    """Every name the renaming touches, by kind (a kind's names, one per entity)."""
    return {
        "group": [g.name for g in history.groups.values()],
        "location": [loc.name for loc in history.locations.values()],
        "item": [ci.name for ci in history.cis.values()],
        "person": [u.name for u in history.users.values()],
        "category": list(history.categories),
        "subcategory": sorted({i.subcategory for i in history.incidents if i.subcategory}),
        "symptom": sorted({i.symptom for i in history.incidents if i.symptom}),
    }


@pytest.fixture(scope="module")
def shipped() -> IncidentHistory:
    from myna.itsm.bench import default_data

    return import_history(default_data())[0]


def test_every_coded_kind_gets_names_that_read_as_a_service_desks(
    shipped: IncidentHistory,
) -> None:
    renamed = realistic_names(shipped, seed=0)
    before, after = _names(shipped), _names(renamed)
    for kind, names in after.items():
        assert all(CODED.fullmatch(name) for name in before[kind]), kind
        assert not any(CODED.fullmatch(name) for name in names), (kind, names[:3])
        # One name per entity: no two labels merge, no entity is lost.
        assert len(set(names)) == len(names) == len(before[kind]), kind
        assert not [name for name in names if DELIMITERS.search(name)], kind


def test_ids_and_links_stay_as_they_were(shipped: IncidentHistory) -> None:
    renamed = realistic_names(shipped, seed=0)
    assert renamed.groups.keys() == shipped.groups.keys()
    assert renamed.users.keys() == shipped.users.keys()
    assert renamed.memberships == shipped.memberships
    for old, new in zip(shipped.incidents, renamed.incidents, strict=True):
        assert (new.sys_id, new.assignment_group, new.caller) == (
            old.sys_id,
            old.assignment_group,
            old.caller,
        )


def test_the_same_seed_names_alike_and_another_seed_differently(
    shipped: IncidentHistory,
) -> None:
    first, again = realistic_names(shipped, seed=0), realistic_names(shipped, seed=0)
    other = realistic_names(shipped, seed=1)
    assert _names(first) == _names(again)
    assert _names(first)["group"] != _names(other)["group"]
    assert _names(first)["person"] != _names(other)["person"]


def test_symptoms_and_subcategories_follow_their_category(tmp_path: Path) -> None:
    """Labels filed under one category are named from that category's domain."""
    rows = []
    for n, (category, sub, symptom) in enumerate(
        [("Category 1", "Subcategory 1", "Symptom 1"), ("Category 2", "Subcategory 2", "Symptom 2")]
    ):
        row = uci_row(f"INC00000{n + 10}", "New", "01-03-2016 09:10", mod=0)
        rows.append(
            row.replace("Category 55", category)
            .replace("Subcategory 170", sub)
            .replace("Symptom 72", symptom)
        )
    path = tmp_path / "log.csv"
    path.write_text("\n".join([UCI_HEADER, *rows]) + "\n")
    history = realistic_names(import_history(path)[0], seed=3)
    for incident in history.incidents:
        assert incident.category is not None
        domain = next(d for d in DOMAINS if incident.category in d.categories)
        assert incident.subcategory in _components(domain)
        assert incident.symptom in _symptoms(domain)


def test_an_export_with_real_names_keeps_them(shipped: IncidentHistory) -> None:
    """One real name among the codes: the kind is an export's own naming, kept whole."""
    first = next(iter(shipped.groups))
    groups = {**shipped.groups, first: replace(shipped.groups[first], name="Service Desk")}
    mixed = replace(shipped, groups=groups)
    assert _names(realistic_names(mixed, seed=0))["group"] == _names(mixed)["group"]


def test_import_history_names_on_request(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(f"{UCI_HEADER}\n{uci_row('INC0000010', 'New', '01-03-2016 09:10', mod=0)}\n")
    plain, _ = import_history(path)
    named, _ = import_history(path, names_seed=0)
    assert [g.name for g in plain.groups.values()] == ["Group 1"]
    assert [g.name for g in named.groups.values()] != ["Group 1"]
    assert _names(named) == _names(realistic_names(plain, seed=0))


@given(
    labels=st.lists(st.integers(1, 400).map(lambda n: f"Group {n}"), max_size=40),
    size=st.integers(1, 12),
    seed=st.integers(0, 5),
)
def test_picking_never_gives_two_labels_one_name(labels: list[str], size: int, seed: int) -> None:
    """Injective whatever the vocabulary's size: past its end, names come again numbered."""
    vocabulary = [f"Team {chr(65 + k)}" for k in range(size)]
    picked = _pick(seed, "group", labels, vocabulary)
    assert picked.keys() == set(labels)
    assert len(set(picked.values())) == len(picked)
    in_vocabulary = [name for name in picked.values() if name in vocabulary]
    assert len(in_vocabulary) == min(len(set(labels)), size)
