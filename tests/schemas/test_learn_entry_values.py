"""What entering a state sets, learned end to end from Salesforce- and ServiceNow-shaped traffic,
and kept through the YAML file and `--update`."""

from __future__ import annotations

from typing import Any

from myna.schemas import learn
from myna.schemas.model import Evidence, ServiceModel
from myna.schemas.openapi import dumps, loads
from tests.schemas.traffic import HEX, SN, exchange, incident, session

# Salesforce's fields and its 204 to a PATCH, under a plain REST layout.
SF = "https://crm.example.com/api/v1/opportunities"
OPPORTUNITIES = ["0065g0000000001AAA", "0065g0000000002AAA", "0065g0000000003AAA"]


def _opportunity(index: int, stage: str, probability: float, **extra: Any) -> dict[str, Any]:
    record_id = OPPORTUNITIES[index]
    return {
        "Id": record_id,
        "Name": f"Deal {index}",
        "StageName": stage,
        "Probability": probability,
        "IsClosed": False,
        "IsWon": False,
        "ForecastCategoryName": "Pipeline",
        "OwnerId": "0055g0000000002AAA",
        "LastModifiedDate": f"2026-03-0{index + 1}T08:00:00.000+0000",
        **extra,
    }


def _won_deal(index: int) -> list[Any]:
    """Read an open deal, PATCH its stage (answered 204, without the record), read it again."""
    record_id = OPPORTUNITIES[index]
    won = _opportunity(
        index,
        "Closed Won",
        100.0,
        IsClosed=True,
        IsWon=True,
        ForecastCategoryName="Closed",
        LastModifiedDate=f"2026-03-0{index + 1}T09:30:00.000+0000",
    )
    return [
        exchange("GET", f"{SF}/{record_id}", 200, _opportunity(index, "Prospecting", 10.0)),
        exchange("PATCH", f"{SF}/{record_id}", 204, request={"StageName": "Closed Won"}),
        exchange("GET", f"{SF}/{record_id}", 200, won),
    ]


def _salesforce() -> ServiceModel:
    [model] = learn([session(*_won_deal(0)), session(*_won_deal(1), name="t")])
    return model


def test_winning_an_opportunity_sets_its_probability_flags_and_forecast() -> None:
    [machine] = _salesforce().resources["opportunity"].state_machines

    assert machine.field == "StageName"
    # Prospecting was only ever seen already entered: no entry to learn from.
    assert list(machine.sets_on_entry) == ["Closed Won"]
    won = machine.sets_on_entry["Closed Won"]
    # OwnerId (one user) and LastModifiedDate (a stamp) changed or held too, and say nothing.
    assert won.values == {
        "ForecastCategoryName": "Closed",
        "IsClosed": True,
        "IsWon": True,
        "Probability": 100.0,
    }
    assert (won.evidence.samples, won.evidence.sessions) == (2, 2)


def test_learned_values_survive_the_yaml_file_byte_for_byte() -> None:
    model = _salesforce()

    text = dumps(model)

    again = loads(text)
    assert again == model
    assert dumps(again) == text
    assert "IsClosed: true" in text


def _closing(index: int, **closed_extra: Any) -> list[Any]:
    item = f"{SN}/incident/{HEX[index]}"
    resolved = incident(index, "6", incident_state="6", closed_at="", closed_by="", u_kept="no")
    closed = incident(
        index,
        "7",
        **{
            "incident_state": "7",
            "active": "false",
            "closed_at": f"2024-04-1{index} 10:00:00",
            "closed_by": {"link": f"{SN}/sys_user/{HEX[30]}", "value": HEX[30]},
            "u_kept": "no",
            **closed_extra,
        },
    )
    return [
        exchange("GET", item, 200, {"result": resolved}),
        exchange("PATCH", item, 200, {"result": closed}, request={"state": "7"}),
    ]


def _servicenow(*indexes: int) -> ServiceModel:
    [model] = learn([session(*_closing(index), name=f"close-{index}") for index in indexes])
    return model


def test_closing_an_incident_deactivates_it_and_moves_its_incident_state() -> None:
    machines = {m.field: m for m in _servicenow(0, 1).resources["incident"].state_machines}

    # Who closed it and when are the recording's, not the state's.
    assert {state: entry.values for state, entry in machines["state"].sets_on_entry.items()} == {
        "7": {"active": "false", "incident_state": "7"}
    }


def _entering_closed(model: ServiceModel) -> dict[str, Any]:
    machine = next(m for m in model.resources["incident"].state_machines if m.field == "state")
    return machine.sets_on_entry["7"].values


def test_re_learning_joins_new_values_and_drops_contradicted_ones() -> None:
    reviewed = _servicenow(0, 1)
    more = [session(*_closing(2, u_kept="yes"), *_closing(3, u_kept="yes"), name="more")]

    [updated] = learn(more, update=reviewed)

    assert _entering_closed(updated) == {"active": "false", "incident_state": "7", "u_kept": "yes"}
    contradicting = [session(*_closing(4, active="0"), *_closing(5, active="0"), name="odd")]
    [again] = learn(contradicting, update=updated)
    assert _entering_closed(again) == {"incident_state": "7", "u_kept": "yes"}


def test_a_pinned_machine_keeps_the_values_a_person_wrote() -> None:
    pinned = _servicenow(0, 1)
    mine = next(m for m in pinned.resources["incident"].state_machines if m.field == "state")
    mine.sets_on_entry["7"].values = {"active": "false"}
    mine.evidence = Evidence(pinned=True)

    [again] = learn([session(*_closing(2), *_closing(3), name="more")], update=pinned)

    assert _entering_closed(again) == {"active": "false"}
    assert next(m for m in again.resources["incident"].state_machines if m.field == "state") == mine
