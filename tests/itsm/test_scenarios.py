"""Scenarios generated from an imported history: grounded in it, deterministic, and audited."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from myna.itsm.importers import (
    Group,
    Incident,
    IncidentHistory,
    IncidentState,
    Reassignment,
    Reopening,
    stable_sys_id,
)
from myna.itsm.scenarios import KINDS, Generation, adapt, generate, tier_of
from myna.replay.audit import audit
from myna.replay.episode import FieldEquals, HttpStep
from myna.replay.mock_world import runner_for
from myna.replay.run import run_steps
from myna.schemas.model import FieldSpec, IdFormat, Resource, ServiceModel


@pytest.fixture(scope="module")
def generation(history: IncidentHistory, model: ServiceModel) -> Generation:
    return generate(history, model, seed=7)


def test_every_kind_is_grounded_in_the_shipped_history(generation: Generation) -> None:
    made = Counter(s.kind for s in generation.scenarios)
    assert set(made) == set(KINDS)
    assert made == {kind: generation.yielded[kind] for kind in KINDS}
    assert {s.tier for s in generation.scenarios} == {1, 2, 3}
    assert all(s.tier == tier_of(s.kind, s.decision) for s in generation.scenarios)


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


RECURRED = "The caller says the printer jams have recurred since this morning, as before the fix."


@pytest.mark.parametrize(
    ("note_on", "note", "passes"),
    [
        pytest.param("target", RECURRED, True, id="note-on-the-incident"),
        pytest.param(None, RECURRED, False, id="no-note"),
        pytest.param("other", RECURRED, False, id="note-on-another-incident"),
        pytest.param("target", "Done.", False, id="low-effort-note"),
        pytest.param("target", "Printer jams; replaced toner.", False, id="not-the-recurrence"),
    ],
)
def test_reopen_judges_the_work_note_by_the_journal(
    note_on: str | None, note: str, passes: bool, generation: Generation, model: ServiceModel
) -> None:
    # ServiceNow reads incident.work_notes back empty; the note lives in sys_journal_field.
    episode = next(s for s in generation.scenarios if s.kind == "reopen").episode
    (reference,) = episode.reference.steps
    assert isinstance(reference, HttpStep)
    assert isinstance(reference.body, dict)
    body = {k: v for k, v in reference.body.items() if k != "work_notes"}
    steps = [reference.model_copy(update={"body": body})]
    if note_on is not None:
        number = episode.id.rsplit("-", 1)[-1]
        incidents = episode.environment.initial_world["incident"]
        noted = next(r for r in incidents if (r["number"] == number) == (note_on == "target"))
        path = f"/api/now/table/incident/{noted['sys_id']}"
        steps.append(HttpStep(method="PATCH", path=path, body={"work_notes": note}))
    result = run_steps(runner_for(episode, model), steps)
    assert result.passed is passes, result.verification.as_dict()


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


def _spec(name: str, schema: dict[str, Any] | None = None, **facts: Any) -> FieldSpec:
    return FieldSpec.model_validate({"name": name, "schema": schema or {}, **facts})


def _narrow_model() -> ServiceModel:
    """A model learned from a small corpus: two tables, a closed set of creators."""

    def table(name: str, fields: list[FieldSpec]) -> Resource:
        specs = [_spec("sys_id", server_generated=True), *fields]
        return Resource(
            name=name,
            id_field="sys_id",
            id_format=IdFormat(kind="hex32"),
            fields={spec.name: spec for spec in specs},
        )

    creator = _spec(
        "sys_created_by", {"type": "string", "enum": ["admin", "system"]}, server_generated=True
    )
    incident = [
        _spec("number", {"type": "string"}),
        _spec("state", {"enum": ["1", "2", "3", "6", "7"]}),
        _spec("rfc", {"const": ""}),
        _spec("short_description", required=True),
    ]
    return ServiceModel(
        name="itsm",
        resources={
            "sys_user_group": table("sys_user_group", [_spec("name"), creator]),
            "incident": table("incident", incident),
        },
    )


def test_the_adapter_reports_what_the_model_cannot_hold() -> None:
    records = {
        "sys_user_group": [
            {"sys_id": "a" * 32, "name": "Network", "sys_created_by": "myna.import"},
        ],
        "incident": [
            {
                "sys_id": "b" * 32,
                "number": "INC0000001",
                "state": "2",
                "rfc": "CHG1",
                "u_symptom": "x",
            }
        ],
        "cmn_location": [{"sys_id": "c" * 32, "name": "Site 1"}],
    }
    data = adapt(records, _narrow_model())
    found = {(i.table, i.field, i.kind): i.count for i in data.issues}
    assert found == {
        ("cmn_location", "*", "table_missing"): 1,
        ("incident", "u_symptom", "field_missing"): 1,
        ("incident", "rfc", "value_outside_schema"): 1,
        ("incident", "short_description", "filled"): 1,
        ("sys_user_group", "sys_created_by", "value_outside_schema"): 1,
    }
    assert "cmn_location" not in data.tables
    assert data.tables["incident"]["b" * 32] == {
        "sys_id": "b" * 32,
        "number": "INC0000001",
        "state": "2",
        "rfc": "",
        "short_description": "",
    }
    assert data.tables["sys_user_group"]["a" * 32] == {"sys_id": "a" * 32, "name": "Network"}


def _incident(number: str, day: int, **fields: Any) -> Incident:
    state = fields.pop("state", IncidentState.CLOSED)
    return Incident(
        sys_id=stable_sys_id("incident", number),
        number=number,
        source_key=number,
        line=day,
        opened_at=datetime(2026, 1, day, 9, 0),
        state=state,
        **fields,
    )


def _history(*incidents: Incident) -> IncidentHistory:
    groups = {g.sys_id: g for g in (Group(stable_sys_id("g", n), n, n) for n in ("Desk", "Net"))}
    return IncidentHistory(
        source="literal",
        format="servicenow",
        incidents=incidents,
        users={},
        groups=groups,
        locations={},
        cis={},
        categories={},
        problems={},
        changes={},
        memberships=frozenset(),
    )


DESK, NET = stable_sys_id("g", "Desk"), stable_sys_id("g", "Net")


@pytest.mark.parametrize(
    ("precedents", "expected"),
    [
        ([("network", NET), ("network", NET)], 1),
        ([("network", NET), ("software", DESK)], 0),
        ([("network", NET)], 0),
        ([("software", DESK), ("software", DESK), ("network", NET)], 0),
    ],
    ids=["history-agrees", "history-split", "one-precedent", "history-disagrees"],
)
def test_triage_needs_history_that_handled_the_symptom_one_way(
    precedents: list[tuple[str, str]], expected: int, model: ServiceModel
) -> None:
    earlier = [
        _incident(f"INC000000{i}", i + 1, symptom="VPN down", category=c, assignment_group=g)
        for i, (c, g) in enumerate(precedents)
    ]
    target = _incident(
        "INC0000009",
        9,
        symptom="VPN down",
        category="network",
        assignment_group=NET,
        impact=2,
        urgency=1,
        state=IncidentState.IN_PROGRESS,
    )
    made = generate(_history(*earlier, target), model).scenarios
    triage = [s for s in made if s.kind == "triage" and s.episode.id.endswith("INC0000009")]
    assert len(triage) == expected


def test_reopen_routes_the_recurrence_only_where_history_moved_it(model: ServiceModel) -> None:
    reopened_at = datetime(2026, 1, 3, 12, 0)
    moved = (
        Reassignment(datetime(2026, 1, 1, 9, 0), None, DESK, None, None, None, 1),
        Reassignment(datetime(2026, 1, 4, 9, 0), DESK, NET, None, None, None, 2),
    )
    stayed = moved[:1]
    reopening = (
        Reopening(reopened_at, IncidentState.RESOLVED, IncidentState.IN_PROGRESS, None, 3),
    )
    history = _history(
        _incident("INC0000001", 1, reassignments=moved, reopenings=reopening, assignment_group=NET),
        _incident(
            "INC0000002", 2, reassignments=stayed, reopenings=reopening, assignment_group=DESK
        ),
    )
    made = {
        s.episode.id: s.episode for s in generate(history, model).scenarios if s.kind == "reopen"
    }
    first, second = made["itsm-reopen-INC0000001"], made["itsm-reopen-INC0000002"]
    assert first.environment.initial_world["incident"][0]["assignment_group"] == DESK
    assert "assign it to Net" in first.problem.instruction
    assert "assignment_group" in {c.name for c in first.verifier.checks}
    assert "stays with Desk" in second.problem.instruction
    assert "assignment_group" not in {c.name for c in second.verifier.checks}
