"""Scenarios generated from an imported history: grounded in it, deterministic, and audited."""

from __future__ import annotations

from collections import Counter

import pytest

from myna.itsm.bench import default_data, itsm_model
from myna.itsm.importers import IncidentHistory, import_history
from myna.itsm.scenarios import KINDS, TIERS, Generation, adapt, generate
from myna.replay.audit import audit
from myna.replay.episode import FieldEquals
from myna.replay.mock_world import runner_for
from myna.schemas.model import ServiceModel


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    return itsm_model()


@pytest.fixture(scope="module")
def history() -> IncidentHistory:
    return import_history(default_data())[0]


@pytest.fixture(scope="module")
def generation(history: IncidentHistory, model: ServiceModel) -> Generation:
    return generate(history, model, seed=7)


def test_every_kind_is_grounded_in_the_shipped_history(generation: Generation) -> None:
    made = Counter(s.kind for s in generation.scenarios)
    assert set(made) == set(KINDS)
    assert made == {kind: generation.yielded[kind] for kind in KINDS}
    assert {s.tier for s in generation.scenarios} == {1, 2, 3}
    assert all(s.tier == TIERS[s.kind] for s in generation.scenarios)


def test_the_same_seed_gives_the_same_scenarios(
    history: IncidentHistory, model: ServiceModel, generation: Generation
) -> None:
    again = generate(history, model, seed=7)
    assert [s.episode for s in again.scenarios] == [s.episode for s in generation.scenarios]
    other = generate(history, model, seed=8, limit=30)
    assert [s.episode.id for s in other.scenarios] != [
        s.episode.id for s in generation.scenarios[:30]
    ]


def test_a_limit_keeps_every_kind(history: IncidentHistory, model: ServiceModel) -> None:
    first = generate(history, model, seed=0, limit=len(KINDS)).scenarios
    assert sorted(s.kind for s in first) == sorted(KINDS)


def test_triage_hides_what_the_agent_must_decide(generation: Generation) -> None:
    scenario = next(s for s in generation.scenarios if s.kind == "triage")
    wanted = {
        c.field: c.value for c in scenario.episode.verifier.checks if isinstance(c, FieldEquals)
    }
    assert set(wanted) == {"category", "impact", "urgency", "assignment_group"}
    world = scenario.episode.environment.initial_world["incident"]
    number = scenario.episode.id.rsplit("-", 1)[-1]
    target = next(r for r in world if r["number"] == number)
    assert target["state"] == "1"
    assert target["category"] == target["assignment_group"] == target["impact"] == ""
    assert wanted["category"] not in target["short_description"]
    precedents = [r for r in world if r["number"] != number and r["category"] == wanted["category"]]
    assert len(precedents) >= 2


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_passes_the_replay_audit(
    kind: str, generation: Generation, model: ServiceModel
) -> None:
    scenario = next(s for s in generation.scenarios if s.kind == kind)
    report = audit(runner_for(scenario.episode, model), model, k=1)
    assert report.status == "accepted", report.reasons
    gates = {gate.name for gate in report.gates}
    assert {"reference_passes", "noop_fails", "world_valid", "deterministic"} <= gates
    assert any(name.startswith("probe:") for name in gates)


def test_a_verifier_that_checks_nothing_is_rejected(
    generation: Generation, model: ServiceModel
) -> None:
    scenario = next(s for s in generation.scenarios if s.kind == "hold")
    guards = [c for c in scenario.episode.verifier.checks if c.kind in ("no_collateral", "policy")]
    hollow = scenario.episode.model_copy(
        update={"verifier": scenario.episode.verifier.model_copy(update={"checks": guards})}
    )
    report = audit(runner_for(hollow, model), model, k=1)
    assert report.status == "rejected"
    assert {"reads_something", "noop_fails"} <= {g.name for g in report.gates if not g.ok}


def test_the_adapter_reports_what_the_model_cannot_hold(model: ServiceModel) -> None:
    records = {
        "sys_user_group": [
            {"sys_id": "a" * 32, "name": "Network", "sys_created_by": "myna.import"},
        ],
        "incident": [{"sys_id": "b" * 32, "number": "INC0000001", "state": "2", "u_symptom": "x"}],
        "cmn_location": [{"sys_id": "c" * 32, "name": "Site 1"}],
    }
    data = adapt(records, model)
    found = {(i.table, i.field, i.kind): i.count for i in data.issues}
    assert found[("cmn_location", "*", "table_missing")] == 1
    assert found[("incident", "u_symptom", "field_missing")] == 1
    assert found[("sys_user_group", "sys_created_by", "value_outside_schema")] == 1
    assert "cmn_location" not in data.tables
    assert data.tables["incident"]["b" * 32] == {
        "sys_id": "b" * 32,
        "number": "INC0000001",
        "state": "2",
    }
    assert data.tables["sys_user_group"]["a" * 32]["name"] == "Network"
