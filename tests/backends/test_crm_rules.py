"""The CRM back end's rules come from its model: picklist values and defaults, required fields and
what entering a state sets.

The reference org that writes the corpus reads them from the catalogue, the served org from the
model, so the shipped model must state what the catalogue states (else the corpus's org and the
served mock would differ); and an edited model must change what a client of the served mock sees,
through the runtime (`MockClient`), in Salesforce's own refusals.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from myna.backends import builtin_model
from myna.backends.crm.objects import OBJECTS
from myna.backends.crm.records import CASE_REASON_RULE, Violation
from myna.backends.crm.rules import CATALOGUE, Rules, model_rules
from myna.errors import ModelError
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.messages import MockResponse
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import EntryValues, ServiceModel
from myna.schemas.openapi import save

DATA = "/services/data/v59.0"
SESSION = "00D5g000004ExAmE!AQ0AQrules"

Edit = Callable[[ServiceModel], None]


def entry_tables(rules: Rules) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """object -> status field -> state -> values, numbers as floats (100 and 100.0 agree)."""
    return {
        name: {
            machine.field: {
                state: {
                    field: float(value)
                    if isinstance(value, int) and not isinstance(value, bool)
                    else value
                    for field, value in entry.values.items()
                }
                for state, entry in machine.sets_on_entry.items()
            }
            for machine in resource.state_machines
            if machine.sets_on_entry
        }
        for name, resource in rules.machines.items()
    }


# -- the shipped model states the catalogue's rules ---------------------------------------------


@pytest.fixture(scope="module")
def shipped_rules() -> Rules:
    return model_rules(builtin_model("crm"))


def test_every_picklist_takes_the_catalogue_s_values_in_its_order(shipped_rules: Rules) -> None:
    picklists = sorted(
        (name, spec.name)
        for name, obj in OBJECTS.items()
        for spec in obj.fields
        if spec.type == "picklist"
    )
    listed = sorted(
        (name, field) for name, fields in shipped_rules.picklists.items() for field in fields
    )
    assert listed == picklists
    for name, field in picklists:
        assert shipped_rules.allowed(name, field) == CATALOGUE.allowed(name, field), (name, field)


def test_picklist_defaults_and_required_fields_are_the_catalogue_s(shipped_rules: Rules) -> None:
    assert shipped_rules.defaults == CATALOGUE.defaults
    assert {name: shipped_rules.required.get(name, frozenset()) for name in OBJECTS} == dict(
        CATALOGUE.required
    )
    assert CATALOGUE.required["Opportunity"] == {"Name", "StageName", "CloseDate"}


def test_what_entering_a_state_sets_is_the_catalogue_s(shipped_rules: Rules) -> None:
    tables = entry_tables(shipped_rules)
    assert tables == entry_tables(CATALOGUE)
    assert tables["Opportunity"]["StageName"]["Closed Won"] == {
        "Probability": 100.0,
        "ForecastCategoryName": "Closed",
        "IsClosed": True,
        "IsWon": True,
    }
    assert tables["Case"]["Status"]["Escalated"]["IsEscalated"] is True
    assert tables["Task"]["Status"]["Completed"] == {"IsClosed": True}


def required_tables(rules: Rules) -> dict[str, dict[str, dict[str, list[str]]]]:
    """object -> status field -> state -> the fields entering it needs (enforced machines)."""
    return {
        name: {
            machine.field: dict(machine.required_on_entry)
            for machine in resource.state_machines
            if machine.enforce and machine.required_on_entry
        }
        for name, resource in rules.machines.items()
        if any(machine.enforce and machine.required_on_entry for machine in resource.state_machines)
    }


def test_what_entering_a_state_needs_is_the_catalogue_s(shipped_rules: Rules) -> None:
    assert required_tables(shipped_rules) == required_tables(CATALOGUE)
    assert required_tables(CATALOGUE) == {"Case": {"Status": {"Closed": ["Reason"]}}}


def case(status: str, reason: str | None = None) -> dict[str, Any]:
    return {"Status": status, "Reason": reason, "IsEscalated": None}


@pytest.mark.parametrize("rules", ["catalogue", "shipped"])
def test_closing_a_case_needs_a_reason_in_the_org_s_words(rules: str, shipped_rules: Rules) -> None:
    judge = (CATALOGUE if rules == "catalogue" else shipped_rules).entry_violation
    obj = OBJECTS["Case"]
    refused = Violation(400, "FIELD_CUSTOM_VALIDATION_EXCEPTION", CASE_REASON_RULE, ("Reason",))
    assert judge(obj, case("Working"), case("Closed"), {"Status": "Closed"}) == refused
    assert judge(obj, None, case("Closed"), {"Status": "Closed"}) == refused
    assert judge(obj, case("Working"), case("Closed", "Other"), {"Status": "Closed"}) is None
    # Edited again while closed, a case enters no state: nothing is checked.
    assert judge(obj, case("Closed"), case("Closed"), {"Subject": "Again"}) is None


def test_entry_values_for_a_field_the_object_lacks_name_where() -> None:
    model = builtin_model("crm")
    (machine,) = model.resources["Task"].state_machines
    machine.sets_on_entry["Completed"] = EntryValues(values={"IsClosed": True, "Done__c": True})
    with pytest.raises(ModelError, match=r"entering Status 'Completed' sets Done__c") as raised:
        model_rules(model)
    assert raised.value.context["path"] == "Task.state_machines.Status.sets_on_entry.Completed"


# -- an edited model changes what the served mock answers ---------------------------------------


def served(edit: Edit | None = None) -> MockClient:
    model = builtin_model("crm")
    if edit is not None:
        edit(model)
    mock = Mock(
        model, SqlStore(model, "sqlite://"), credentials=Credentials(tokens=frozenset({SESSION}))
    )
    return MockClient(mock, headers={"Authorization": f"Bearer {SESSION}"})


def decoded(response: MockResponse) -> Any:
    return json.loads(response.body)


def create(api: MockClient, name: str, **values: Any) -> MockResponse:
    return api.post(f"{DATA}/sobjects/{name}/", json=values)


def read(api: MockClient, name: str, record_id: str) -> dict[str, Any]:
    response = api.get(f"{DATA}/sobjects/{name}/{record_id}")
    assert response.status == 200, response.body
    found: dict[str, Any] = decoded(response)
    return found


def described(api: MockClient, name: str, field: str) -> dict[str, Any]:
    fields = decoded(api.get(f"{DATA}/sobjects/{name}/describe"))["fields"]
    found: dict[str, Any] = next(entry for entry in fields if entry["name"] == field)
    return found


def add_lead_status(model: ServiceModel) -> None:
    model.resources["Lead"].fields["Status"].schema_["enum"].append("Nurturing")


def test_a_lead_status_the_model_adds_is_accepted_and_described() -> None:
    api = served(add_lead_status)
    created = create(api, "Lead", LastName="Ng", Company="Acme", Status="Nurturing")
    assert created.status == 201, created.body
    assert read(api, "Lead", decoded(created)["id"])["Status"] == "Nurturing"
    values = [entry["value"] for entry in described(api, "Lead", "Status")["picklistValues"]]
    assert values[-1] == "Nurturing"


def test_the_shipped_model_refuses_that_status_in_salesforce_s_words() -> None:
    refused = create(served(), "Lead", LastName="Ng", Company="Acme", Status="Nurturing")
    assert refused.status == 400
    assert decoded(refused) == [
        {
            "message": "Status: bad value for restricted picklist field: Nurturing",
            "errorCode": "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
            "fields": ["Status"],
        }
    ]


def test_a_value_the_model_removes_from_a_picklist_is_refused_on_update() -> None:
    def drop_hot(model: ServiceModel) -> None:
        model.resources["Account"].fields["Rating"].schema_["enum"].remove("Hot")

    api = served(drop_hot)
    account = decoded(create(api, "Account", Name="Acme", Rating="Warm"))["id"]
    refused = api.patch(f"{DATA}/sobjects/Account/{account}", json={"Rating": "Hot"})
    assert refused.status == 400
    assert decoded(refused)[0]["errorCode"] == "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"


def win_at_ninety(model: ServiceModel) -> None:
    (machine,) = model.resources["Opportunity"].state_machines
    machine.sets_on_entry["Closed Won"].values["Probability"] = 90


def open_deal(api: MockClient) -> str:
    created = create(
        api, "Opportunity", Name="Deal", StageName="Prospecting", CloseDate="2026-06-30"
    )
    assert created.status == 201, created.body
    deal: str = decoded(created)["id"]
    return deal


@pytest.mark.parametrize(("edit", "probability"), [(None, 100.0), (win_at_ninety, 90.0)])
def test_the_model_s_entry_values_decide_what_winning_sets(
    edit: Edit | None, probability: float
) -> None:
    api = served(edit)
    deal = open_deal(api)
    assert read(api, "Opportunity", deal)["Probability"] == 10.0
    won_at = api.patch(f"{DATA}/sobjects/Opportunity/{deal}", json={"StageName": "Closed Won"})
    assert won_at.status == 204, won_at.body
    won = read(api, "Opportunity", deal)
    assert (won["Probability"], won["ForecastCategoryName"], won["IsClosed"], won["IsWon"]) == (
        probability,
        "Closed",
        True,
        True,
    )


def test_the_client_s_probability_still_wins_over_the_model_s() -> None:
    api = served(win_at_ninety)
    deal = open_deal(api)
    api.patch(
        f"{DATA}/sobjects/Opportunity/{deal}", json={"StageName": "Closed Won", "Probability": 95}
    )
    assert read(api, "Opportunity", deal)["Probability"] == 95.0


def test_a_model_whose_case_escalation_sets_nothing_leaves_the_flag_alone() -> None:
    def quiet_escalation(model: ServiceModel) -> None:
        (machine,) = model.resources["Case"].state_machines
        del machine.sets_on_entry["Escalated"].values["IsEscalated"]

    for edit, flagged in ((None, True), (quiet_escalation, False)):
        api = served(edit)
        case = decoded(create(api, "Case", Subject="Down"))["id"]
        api.patch(f"{DATA}/sobjects/Case/{case}", json={"Status": "Escalated"})
        assert read(api, "Case", case)["IsEscalated"] is flagged


def close_without_reason(model: ServiceModel) -> None:
    (machine,) = model.resources["Case"].state_machines
    machine.required_on_entry.clear()


@pytest.mark.parametrize(("edit", "status"), [(None, 400), (close_without_reason, 204)])
def test_the_model_s_required_on_entry_decides_whether_a_case_closes_without_reason(
    edit: Edit | None, status: int
) -> None:
    api = served(edit)
    case = decoded(create(api, "Case", Subject="Down"))["id"]
    closed = api.patch(f"{DATA}/sobjects/Case/{case}", json={"Status": "Closed"})
    assert closed.status == status, closed.body
    if status == 400:
        assert decoded(closed) == [
            {
                "message": CASE_REASON_RULE,
                "errorCode": "FIELD_CUSTOM_VALIDATION_EXCEPTION",
                "fields": ["Reason"],
            }
        ]
    else:
        assert read(api, "Case", case)["IsClosed"] is True


def require_email(model: ServiceModel) -> None:
    model.resources["Contact"].fields["Email"].required_on_create = True


def test_a_field_the_model_requires_is_refused_when_left_out() -> None:
    api = served(require_email)
    refused = create(api, "Contact", LastName="Ng")
    assert refused.status == 400
    assert decoded(refused) == [
        {
            "message": "Required fields are missing: [Email]",
            "errorCode": "REQUIRED_FIELD_MISSING",
            "fields": ["Email"],
        }
    ]
    assert create(api, "Contact", LastName="Ng", Email="ng@acme.example").status == 201
    assert described(api, "Contact", "Email")["nillable"] is False
    assert create(served(), "Contact", LastName="Ng").status == 201


def test_a_picklist_default_the_model_changes_fills_a_left_out_field() -> None:
    def start_working(model: ServiceModel) -> None:
        model.resources["Case"].fields["Status"].default = "Working"

    api = served(start_working)
    case = decoded(create(api, "Case", Subject="Down"))["id"]
    assert read(api, "Case", case)["Status"] == "Working"
    assert described(api, "Case", "Status")["picklistValues"][1]["defaultValue"] is True


def misspell_probability(model: ServiceModel) -> None:
    (machine,) = model.resources["Opportunity"].state_machines
    won = machine.sets_on_entry["Closed Won"].values
    won["Probabilty"] = won.pop("Probability")


def test_a_typo_in_an_edited_model_stops_the_mock_from_being_built() -> None:
    model = builtin_model("crm")
    misspell_probability(model)
    with pytest.raises(ModelError, match="sets Probabilty") as raised:
        Mock(model, SqlStore(model, "sqlite://"))
    assert raised.value.context["path"] == (
        "Opportunity.state_machines.StageName.sets_on_entry.Closed Won"
    )


def test_myna_serve_names_the_typo_and_exits_2(tmp_path: Path) -> None:
    model = builtin_model("crm")
    misspell_probability(model)
    model_file = tmp_path / "crm.yaml"
    save(model, model_file)
    # Refused before the server starts: without the check this would serve (until the timeout).
    done = subprocess.run(
        [sys.executable, "-c", "from myna.cli import main; main()", "serve", str(model_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "sets Probabilty" in done.stderr
    assert "Opportunity.state_machines.StageName.sets_on_entry.Closed Won" in done.stderr
