"""The conformance checker: every built-in back end passes it, and each check catches the defect
it exists for when one is planted in a small literal model."""

from __future__ import annotations

from pathlib import Path

import pytest

from myna.backends import BACKENDS, builtin_model
from myna.mocks.checker import (
    CHECKS,
    BackendCheckError,
    Finding,
    assert_backend_ok,
    check_backend,
    check_references,
    check_required_on_create,
    check_required_on_entry,
    check_schemas,
)
from myna.schemas.model import (
    FieldSpec,
    IdFormat,
    Operation,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_built_in_back_end_passes_the_checker_on_the_world_it_serves(name: str) -> None:
    # Its reference world when it ships one (as `myna serve` does), else a generated seed.
    with BACKENDS[name].reference_world() as seed_dir:
        assert check_backend(builtin_model(name), seed_dir=seed_dir) == []


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_built_in_back_end_passes_the_checker_on_a_generated_seed(name: str) -> None:
    # What `myna serve <name> --generated` serves: every state's required fields filled,
    # ServiceNow's `global` domain seeded as the constant it is, references stored as ids, and
    # no Salesforce record born already deleted (a get of it would answer 404).
    assert check_backend(builtin_model(name)) == []


# --- a small literal model, and a defect planted for each check ---------------------------------


def text(name: str, **schema: object) -> FieldSpec:
    return FieldSpec(name=name, schema_={"type": "string", **schema})


USER = Resource(
    name="user",
    id_field="id",
    id_format=IdFormat(kind="integer"),
    fields={"id": text("id"), "name": text("name")},
)
TICKET = Resource(
    name="ticket",
    id_field="id",
    id_format=IdFormat(kind="integer"),
    fields={
        "id": text("id"),
        "priority": text("priority", enum=["low", "high"]),
        "state": text("state", enum=["open", "closed"]),
        "close_notes": text("close_notes"),
        "owner": FieldSpec(
            name="owner", schema_={"type": "string"}, reference=Reference(resource="user")
        ),
        "vendor": FieldSpec(
            name="vendor", schema_={"type": "string"}, reference=Reference(resource="vendor")
        ),
    },
    state_machines=[
        StateMachine(
            field="state",
            states=["open", "closed"],
            required_on_entry={"closed": ["close_notes"]},
        )
    ],
)
MODEL = ServiceModel(name="tickets", resources={"user": USER, "ticket": TICKET})

ALICE = ("user", "1", {"id": "1", "name": "Alice"})
GOOD = ("ticket", "10", {"id": "10", "priority": "low", "state": "open", "owner": "1"})


def test_consistent_records_have_no_findings() -> None:
    closed = ("ticket", "11", {"id": "11", "state": "closed", "close_notes": "done"})
    records = [ALICE, GOOD, closed]
    assert list(check_schemas(MODEL, records)) == []
    assert list(check_references(MODEL, records)) == []
    assert list(check_required_on_entry(MODEL, records)) == []


def test_a_value_outside_its_schema_is_a_finding() -> None:
    urgent = ("ticket", "12", {"id": "12", "priority": "urgent"})
    assert list(check_schemas(MODEL, [urgent])) == [
        Finding(
            "schemas",
            "ticket 12 field priority: 'urgent' does not fit the field's schema: "
            "'urgent' is not one of ['low', 'high']",
        )
    ]


def test_a_field_the_resource_does_not_have_is_a_finding() -> None:
    odd = ("ticket", "13", {"id": "13", "colour": "red"})
    assert list(check_schemas(MODEL, [odd])) == [
        Finding("schemas", "ticket 13: unknown field 'colour'")
    ]


@pytest.mark.parametrize(
    "owner",
    [pytest.param("2", id="plain id"), pytest.param({"value": "2", "link": "x"}, id="link")],
)
def test_a_dangling_reference_is_a_finding(owner: object) -> None:
    dangling = ("ticket", "14", {"id": "14", "owner": owner})
    assert list(check_references(MODEL, [ALICE, dangling])) == [
        Finding("references", "ticket 14 field owner: references user '2', which is not seeded")
    ]


def test_a_value_that_cannot_be_the_targets_id_is_a_constant_not_a_dangling_reference() -> None:
    # ServiceNow writes `global` in every record's sys_domain and links it as a group; no group
    # has that id, and none could: group ids are 32 hex digits.
    coded = USER.model_copy(update={"id_format": IdFormat(kind="hex32", pattern="^[0-9a-f]{32}$")})
    model = MODEL.model_copy(update={"resources": {"user": coded, "ticket": TICKET}})
    records = [("ticket", "18", {"id": "18", "owner": "global"})]
    assert list(check_references(model, records)) == []
    dangling = [("ticket", "19", {"id": "19", "owner": "0" * 32})]
    assert [finding.check for finding in check_references(model, dangling)] == ["references"]


def test_a_reference_is_not_held_to_the_ids_a_learned_enum_lists() -> None:
    # The corpus showed tickets owned by user 1 only; a seed's user 2 owns one just as well.
    learned = FieldSpec(
        name="owner",
        schema_={"type": "string", "enum": ["1"]},
        reference=Reference(resource="user"),
    )
    ticket = TICKET.model_copy(update={"fields": {**TICKET.fields, "owner": learned}})
    model = MODEL.model_copy(update={"resources": {"user": USER, "ticket": ticket}})
    bob = ("user", "2", {"id": "2", "name": "Bob"})
    owned = ("ticket", "23", {"id": "23", "owner": "2"})
    assert list(check_schemas(model, [ALICE, bob, owned])) == []
    assert list(check_references(model, [ALICE, bob, owned])) == []


def test_a_link_value_reference_is_checked_as_the_id_it_stores() -> None:
    linked = FieldSpec(
        name="owner",
        schema_={
            "type": "object",
            "properties": {"link": {"type": "string"}, "value": {"pattern": "^[0-9]+$"}},
        },
        reference=Reference(resource="user", style="link_value"),
    )
    ticket = TICKET.model_copy(update={"fields": {**TICKET.fields, "owner": linked}})
    model = MODEL.model_copy(update={"resources": {"user": USER, "ticket": ticket}})
    records: list[tuple[str, str, dict[str, object]]] = [
        ("ticket", "20", {"id": "20", "owner": "1"}),
        ("ticket", "21", {"id": "21", "owner": "x1"}),
        ("ticket", "22", {"id": "22", "owner": {"link": "/users/1", "value": "1"}}),
    ]
    assert list(check_schemas(model, records)) == [
        Finding(
            "schemas",
            "ticket 21 field owner: 'x1' does not fit the field's schema: "
            "'x1' does not match '^[0-9]+$'",
        ),
        Finding(
            "schemas",
            "ticket 22 field owner: holds {'link': '/users/1', 'value': '1'}; a reference is "
            "stored as its target's id, from which responses render the link",
        ),
    ]


def test_a_reference_to_a_resource_the_model_does_not_serve_is_skipped() -> None:
    elsewhere = ("ticket", "15", {"id": "15", "vendor": "V-1"})
    assert list(check_references(MODEL, [elsewhere])) == []


def test_a_record_without_a_field_a_create_must_send_is_a_finding() -> None:
    owned = TICKET.model_copy(
        update={
            "fields": {
                **TICKET.fields,
                "owner": TICKET.fields["owner"].model_copy(update={"required_on_create": True}),
            }
        }
    )
    model = MODEL.model_copy(update={"resources": {"user": USER, "ticket": owned}})
    orphan = ("ticket", "18", {"id": "18", "state": "open"})
    assert list(check_required_on_create(model, [ALICE, GOOD, orphan])) == [
        Finding("required_on_create", "ticket 18: owner is empty, but a create must send it")
    ]


def test_a_state_without_its_required_on_entry_field_is_a_finding() -> None:
    closed = ("ticket", "16", {"id": "16", "state": "closed", "close_notes": ""})
    assert list(check_required_on_entry(MODEL, [closed])) == [
        Finding(
            "required_on_entry",
            "ticket 16 is in state='closed' but close_notes is empty "
            "(required on entering that state)",
        )
    ]


def test_an_unenforced_state_machine_requires_nothing() -> None:
    machine = TICKET.state_machines[0].model_copy(update={"enforce": False})
    lax = TICKET.model_copy(update={"state_machines": [machine]})
    model = MODEL.model_copy(update={"resources": {"user": USER, "ticket": lax}})
    closed = ("ticket", "17", {"id": "17", "state": "closed"})
    assert list(check_required_on_entry(model, [closed])) == []


def test_a_generated_seed_of_a_consistent_model_passes_every_check() -> None:
    assert check_backend(MODEL) == []


def test_a_generated_value_outside_its_schema_also_breaks_strict_responses() -> None:
    # The generator draws names from Faker and does not honour a `pattern`: the checker reports
    # the stored values and the list answer that carries them.
    coded = USER.model_copy(
        update={"fields": {"id": text("id"), "name": text("name", pattern="^[A-Z]{3}$")}}
    )
    model = MODEL.model_copy(
        update={
            "resources": {"user": coded, "ticket": TICKET},
            "operations": [
                Operation(
                    id="list_users", method="GET", path="/users", kind="list", resource="user"
                )
            ],
        }
    )
    findings = check_backend(model)
    assert {finding.check for finding in findings} == {"schemas", "responses"}
    assert [finding.message for finding in findings if finding.check == "responses"] == [
        "list_users GET /users: method GET, path /users: response body at 7/name breaks the "
        "model: 'Laura Peters' does not match '^[A-Z]{3}$'"
    ]


def test_seed_files_with_a_planted_defect_are_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "user.jsonl").write_text('{"id": "1", "name": "Alice"}\n', encoding="utf-8")
    (tmp_path / "ticket.jsonl").write_text(
        '{"id": "10", "state": "closed", "owner": "1"}\n', encoding="utf-8"
    )
    assert check_backend(MODEL, seed_dir=tmp_path) == [
        Finding(
            "required_on_entry",
            "ticket 10 is in state='closed' but close_notes is empty "
            "(required on entering that state)",
        )
    ]


def test_seed_files_that_cannot_be_loaded_are_the_only_finding(tmp_path: Path) -> None:
    (tmp_path / "ticket.jsonl").write_text('{"priority": "low"}\n', encoding="utf-8")
    findings = check_backend(MODEL, seed_dir=tmp_path)
    assert [finding.check for finding in findings] == ["seeding"]
    assert "every record needs its id field" in findings[0].message


def test_assert_backend_ok_raises_naming_every_finding(tmp_path: Path) -> None:
    (tmp_path / "ticket.jsonl").write_text('{"priority": "low"}\n', encoding="utf-8")
    with pytest.raises(BackendCheckError, match=r"1 conformance finding\(s\): \[seeding\]"):
        assert_backend_ok(MODEL, seed_dir=tmp_path)


def test_the_checks_run_in_a_fixed_documented_order() -> None:
    assert list(CHECKS) == [
        "determinism",
        "schemas",
        "references",
        "required_on_entry",
        "required_on_create",
        "responses",
        "worlds",
    ]
