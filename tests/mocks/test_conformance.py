"""Conformance: replaying recordings against the mock and explaining every difference."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from myna.errors import InputError
from myna.mocks.conformance import (
    _Run,
    body_schema,
    first_violation,
    recorded_records,
    run_conformance,
)
from myna.schemas import learn
from myna.schemas.model import (
    Auth,
    Conventions,
    FieldSpec,
    IdFormat,
    Operation,
    Reference,
    Rendering,
    Resource,
    ResponseSpec,
    ServiceModel,
    StateMachine,
    Transition,
)
from myna.traces.model import Body, Exchange, Session

HOST = "https://shop.example.com"
ITEM = Resource(
    name="item",
    id_field="id",
    id_format=IdFormat(kind="integer"),
    collection_path="/items",
    item_path="/items/{id}",
    fields={
        "id": FieldSpec(name="id", schema={"type": "string"}, server_generated=True),
        "name": FieldSpec(name="name", schema={"type": "string"}, required=True),
    },
)
SHOP = ServiceModel(
    name="shop",
    servers=[HOST],
    resources={"item": ITEM},
    operations=[
        Operation(
            id="listItems",
            method="GET",
            path="/items",
            kind="list",
            resource="item",
            responses=[ResponseSpec(status=200)],
        ),
        Operation(
            id="getItem",
            method="GET",
            path="/items/{id}",
            kind="get",
            resource="item",
            responses=[ResponseSpec(status=200), ResponseSpec(status=404)],
        ),
        Operation(
            id="createItem",
            method="POST",
            path="/items",
            kind="create",
            resource="item",
            responses=[ResponseSpec(status=201)],
        ),
        Operation(
            id="deleteItem",
            method="DELETE",
            path="/items/{id}",
            kind="delete",
            resource="item",
            responses=[ResponseSpec(status=204)],
        ),
    ],
    conventions=Conventions(auth=Auth(scheme="bearer")),
)


def exchange(
    number: int, method: str, path: str, status: int, response: Any = None, request: Any = None
) -> Exchange:
    return Exchange(
        id=f"x{number}",
        method=method,
        url=HOST + path if path.startswith("/") else path,
        status=status,
        request_headers=[("Authorization", "[REDACTED]")],
        request_body=Body("json", request) if request is not None else Body(),
        response_body=Body("json", response) if response is not None else Body(),
    )


def report_of(*exchanges: Exchange) -> Any:
    return run_conformance(SHOP, [Session(id="s", events=list(exchanges))])


def test_recorded_reads_replay_against_records_seeded_from_the_responses() -> None:
    report = report_of(
        exchange(0, "GET", "/items", 200, [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}]),
        exchange(1, "GET", "/items/2", 200, {"id": "2", "name": "b"}),
    )
    assert (report.matched, report.total, report.mismatches) == (2, 2, [])
    assert report.seeded == {"item": 2}


def test_a_created_record_keeps_its_identity_through_the_session() -> None:
    report = report_of(
        exchange(0, "GET", "/items/1", 200, {"id": "1", "name": "a"}),
        exchange(1, "POST", "/items", 201, {"id": "77", "name": "new"}, {"name": "new"}),
        # The mock numbers the new item 2; the replay asks for 2 where the recording said 77.
        exchange(2, "GET", "/items/77", 200, {"id": "77", "name": "new"}),
    )
    assert report.mismatches == []
    assert report.seeded == {"item": 1}  # the created one is made by the replay, not seeded


def test_a_create_answered_in_another_shape_still_maps_its_id() -> None:
    report = report_of(
        exchange(0, "POST", "/items", 201, {"id": "77", "name": 5}, {"name": "new"}),
        exchange(1, "GET", "/items/77", 200, {"id": "77", "name": "new"}),
    )
    # The create's body differs from the recording (name was a number there), but its record is
    # the one the later read asks for.
    assert [m.exchange for m in report.mismatches] == ["x0"]


def test_an_id_answered_as_a_display_value_pair_is_followed_too() -> None:
    pair = {"display_value": "77", "value": "77"}  # ServiceNow's sysparm_display_value=all
    report = report_of(
        exchange(0, "POST", "/items", 201, {"id": pair, "name": "new"}, {"name": "new"}),
        exchange(1, "GET", "/items/77", 200, {"id": "77", "name": "new"}),
    )
    # The mock answers bare values, so the create differs; the read finds the record it made.
    assert [m.exchange for m in report.mismatches] == ["x0"]


# Records whose id field is `Id`, created and upserted with Salesforce's receipts.
SOBJECT = Resource(
    name="item",
    id_field="Id",
    id_format=IdFormat(kind="integer"),
    collection_path="/items",
    item_path="/items/{Id}",
    fields={
        "Id": FieldSpec(name="Id", schema={"type": "string"}, server_generated=True),
        "name": FieldSpec(name="name", schema={"type": "string"}, required=True),
    },
)
RECEIPT_SHOP = SHOP.model_copy(
    update={
        "resources": {"item": SOBJECT},
        "operations": [
            *SHOP.operations,
            Operation(
                id="upsertItem",
                method="PATCH",
                path="/items/ext/{key}",
                kind="update",
                resource="item",
                responses=[ResponseSpec(status=200), ResponseSpec(status=201)],
            ),
        ],
    }
)


def receipt(record_id: str, **more: Any) -> dict[str, Any]:
    return {"id": record_id, "success": True, "errors": [], **more}


def test_a_create_answered_only_with_its_new_id_is_followed_and_not_seeded() -> None:
    # Salesforce answers a create with a receipt whose `id` is not the record's `Id` field: the
    # record is still the trace's own, made by the replay, and the later read follows it.
    session = Session(
        id="s",
        events=[
            exchange(0, "POST", "/items", 201, receipt("77"), {"name": "new"}),
            exchange(1, "GET", "/items/77", 200, {"Id": "77", "name": "new"}),
        ],
    )
    report = run_conformance(RECEIPT_SHOP, [session])
    assert report.seeded == {}
    # The mock answers the record itself, not a receipt; the read finds what it made.
    assert [m.exchange for m in report.mismatches] == ["x0"]


def test_an_upsert_receipt_is_no_record_and_one_that_created_its_record_is_not_seeded() -> None:
    session = Session(
        id="s",
        events=[
            exchange(
                0, "PATCH", "/items/ext/NW-1", 201, receipt("77", created=True), {"name": "a"}
            ),
            exchange(
                1, "PATCH", "/items/ext/GX-2", 200, receipt("78", created=False), {"name": "b"}
            ),
            exchange(2, "GET", "/items/77", 200, {"Id": "77", "name": "a"}),
            exchange(3, "GET", "/items/78", 200, {"Id": "78", "name": "b"}),
        ],
    )
    # Neither receipt is seeded as a record keyed by the external id in its path; the record
    # the first upsert created is the trace's own, the second one's the service held before.
    assert recorded_records(RECEIPT_SHOP, [session]) == {("item", "78"): {"Id": "78", "name": "b"}}


@pytest.mark.parametrize("one_world", [False, True], ids=["world-per-session", "one-world"])
def test_sessions_that_build_on_each_other_replay_in_either_mode(one_world: bool) -> None:
    # A world per session holds what other sessions made, but not what the session makes itself.
    created = exchange(0, "POST", "/items", 201, {"id": "77", "name": "new"}, {"name": "new"})
    read_back = exchange(1, "GET", "/items/77", 200, {"id": "77", "name": "new"})
    sessions = [Session(id="first", events=[created]), Session(id="second", events=[read_back])]

    report = run_conformance(SHOP, sessions, one_world=one_world)

    assert (report.matched, report.seeded) == (2, {})


def test_a_session_in_its_own_world_starts_where_earlier_sessions_left_a_record() -> None:
    sessions = [
        Session(id="one", events=[exchange(0, "GET", "/items/1", 200, {"id": "1", "name": "a"})]),
        # Another client changed it in between: the second recording reads it changed.
        Session(id="two", events=[exchange(1, "GET", "/items/1", 200, {"id": "1", "name": "b"})]),
        Session(id="three", events=[exchange(2, "GET", "/items/1", 200, {"id": "1", "name": "b"})]),
    ]
    run = _Run(SHOP, sessions, one_world=False, user="conformance")
    records = run.seed_records(None)

    assert records[("item", "1")]["name"] == "a"  # the base holds the first sighting
    assert run.sighted.at_start[2] == {("item", "1"): {"id": "1", "name": "b"}}


def dated(session_id: str, when: str, *exchanges: Exchange) -> Session:
    stamped = [replace(e, started_at=datetime.fromisoformat(when)) for e in exchanges]
    return Session(id=session_id, events=list(stamped))


def test_recordings_from_other_times_list_only_what_they_showed() -> None:
    # One integration test recorded in 2023, another in 2020 (file order is by name): each list
    # answered only that year's items, and the 2020 one had no name yet.
    late = dated(
        "a-late",
        "2023-03-01T10:00:00+00:00",
        exchange(0, "GET", "/items", 200, [{"id": "2", "name": "b"}, {"id": "3", "name": "c"}]),
    )
    early = dated(
        "b-early",
        "2020-05-01T10:00:00+00:00",
        exchange(1, "GET", "/items", 200, [{"id": "1", "name": None}]),
    )

    report = run_conformance(SHOP, [late, early])

    assert (report.matched, report.mismatches) == (2, [])


def test_a_session_starts_from_the_sessions_recorded_before_it_not_filed_before_it() -> None:
    sessions = [
        dated(
            "a",
            "2020-01-01T00:00:00+00:00",
            exchange(0, "GET", "/items/1", 200, {"id": "1", "name": "old"}),
        ),
        dated(
            "b",
            "2023-01-01T00:00:00+00:00",
            exchange(1, "GET", "/items/1", 200, {"id": "1", "name": "new"}),
        ),
        dated("c", "2021-01-01T00:00:00+00:00", exchange(2, "GET", "/items", 200, [{"id": "1"}])),
    ]
    run = _Run(SHOP, sessions, one_world=False, user="conformance")

    assert run.sighted.found_by(2) == {("item", "1"): {"id": "1", "name": "old"}}


def test_a_record_named_by_the_session_stays_in_its_world() -> None:
    # The later session lists without item 1 but then reads it by id: it was there, unlisted
    # (a filter, a page), so its world keeps it.
    first = Session(
        id="one", events=[exchange(0, "GET", "/items/1", 200, {"id": "1", "name": "a"})]
    )
    second = Session(
        id="two",
        events=[
            exchange(1, "GET", "/items", 200, [{"id": "2", "name": "b"}]),
            exchange(2, "GET", "/items/1", 200, {"id": "1", "name": "a"}),
        ],
    )

    report = run_conformance(SHOP, [first, second])

    assert (report.matched, report.mismatches) == (3, [])


def test_seed_files_add_what_the_service_held_but_never_answered_with(tmp_path: Path) -> None:
    # The recording deletes an item no response ever showed: the delete's 204 says it was
    # held; a seed file says what it held, and stays the one record of that id.
    sessions = [Session(id="s", events=[exchange(0, "DELETE", "/items/7", 204)])]
    (tmp_path / "item.jsonl").write_text('{"id": "7", "name": "Lamp"}\n', encoding="utf-8")

    unseeded = run_conformance(SHOP, sessions)
    seeded = run_conformance(SHOP, sessions, seed_dir=tmp_path)

    assert (unseeded.matched, unseeded.seeded) == (1, {"item": 1})
    assert (seeded.matched, seeded.seeded) == (1, {"item": 1})


def test_a_seed_file_that_does_not_fit_the_model_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "item.jsonl").write_text('{"id": "7", "name": 5}\n', encoding="utf-8")
    sessions = [Session(id="s", events=[exchange(0, "DELETE", "/items/7", 204)])]
    with pytest.raises(InputError, match=r"item\.jsonl, line 1, field name"):
        run_conformance(SHOP, sessions, seed_dir=tmp_path)


TOKEN_SHOP = SHOP.model_copy(
    update={
        "conventions": Conventions(auth=Auth(scheme="oauth2", token_path="/oauth/token")),
        "operations": [
            *SHOP.operations,
            Operation(id="token", method="POST", path="/oauth/token", kind="auth"),
        ],
    }
)


@pytest.mark.parametrize(
    "form",
    [
        pytest.param("[REDACTED]", id="whole-form-redacted"),
        pytest.param("grant_type=password&username=ops&password=[REDACTED]", id="password"),
        pytest.param(
            "grant_type=client_credentials&client_id=app&client_secret=[REDACTED]", id="client"
        ),
    ],
)
def test_a_token_request_with_redacted_credentials_carries_the_mocks_own(form: str) -> None:
    token = Exchange(
        id="t",
        method="POST",
        url=HOST + "/oauth/token",
        status=200,
        request_headers=[("Content-Type", "application/x-www-form-urlencoded")],
        request_body=Body("text", form, mime_type="application/x-www-form-urlencoded"),
        response_body=Body("json", {"access_token": "[REDACTED]", "token_type": "Bearer"}),
    )
    report = run_conformance(TOKEN_SHOP, [Session(id="s", events=[token])])
    assert (report.matched, report.mismatches) == (1, [])


def test_a_token_request_with_wrong_visible_credentials_is_still_refused() -> None:
    token = Exchange(
        id="t",
        method="POST",
        url=HOST + "/oauth/token",
        status=200,
        request_body=Body("text", "grant_type=password&username=ops&password=guess"),
        response_body=Body("json", {"access_token": "[REDACTED]"}),
    )
    report = run_conformance(TOKEN_SHOP, [Session(id="s", events=[token])])
    assert [m.status for m in report.mismatches] == [400]  # OAuth2: invalid_grant


def test_an_object_style_reference_is_seeded_as_the_object_it_is() -> None:
    # Jira-style: {"project": {"id": "10000"}}; only ServiceNow's {link, value} is stored by id.
    owned = ITEM.model_copy(
        update={
            "fields": {
                **ITEM.fields,
                "project": FieldSpec(
                    name="project",
                    schema={"type": "object", "properties": {"id": {"type": "string"}}},
                    reference=Reference(resource="project", style="object"),
                ),
            }
        }
    )
    model = SHOP.model_copy(update={"resources": {"item": owned}})
    listed = [{"id": "1", "name": "a", "project": {"id": "10000"}}]
    report = run_conformance(
        model, [Session(id="s", events=[exchange(0, "GET", "/items", 200, listed)])]
    )
    assert (report.matched, report.mismatches) == (1, [])


def _closing_shop() -> ServiceModel:
    """Items that stamp whoever closes them (`closed_by`), and the users they name."""
    user = Resource(
        name="user",
        id_field="id",
        id_format=IdFormat(kind="opaque"),
        collection_path="/users",
        item_path="/users/{id}",
        fields={
            "id": FieldSpec(name="id", schema={"type": "string"}, server_generated=True),
            "name": FieldSpec(name="name", schema={"type": "string"}),
        },
    )
    machine = StateMachine(
        field="state",
        states=["open", "closed"],
        transitions=[Transition(source="open", target="closed")],
        callers_on_entry={"closed": ["closed_by"]},
    )
    closing = ITEM.model_copy(
        update={
            "fields": {
                **ITEM.fields,
                "state": FieldSpec(name="state", schema={"type": "string"}),
                "closed_by": FieldSpec(
                    name="closed_by",
                    schema={"type": ["string", "null"]},
                    nullable=True,
                    server_generated=True,
                    reference=Reference(resource="user"),
                ),
            },
            "state_machines": [machine],
        }
    )
    update = Operation(
        id="updateItem",
        method="PATCH",
        path="/items/{id}",
        kind="update",
        resource="item",
        responses=[ResponseSpec(status=200)],
    )
    get_user = Operation(
        id="getUser",
        method="GET",
        path="/users/{id}",
        kind="get",
        resource="user",
        responses=[ResponseSpec(status=200)],
    )
    return SHOP.model_copy(
        update={
            "resources": {"item": closing, "user": user},
            "operations": [*SHOP.operations, update, get_user],
        }
    )


def test_a_session_without_creates_signs_in_as_whoever_its_writes_stamp() -> None:
    """No create names the session's caller, but closing the item stamped who closed it: the
    replay signs in as that user, whose record the world holds, and the stamp follows."""
    seen = exchange(0, "GET", "/users/u7", 200, {"id": "u7", "name": "Uma"})
    opened = {"id": "1", "name": "a", "state": "open", "closed_by": None}
    closed = {**opened, "state": "closed", "closed_by": "u7"}
    sessions = [
        Session(id="users", events=[seen]),
        Session(
            id="close",
            events=[
                exchange(1, "GET", "/items/1", 200, opened),
                exchange(2, "PATCH", "/items/1", 200, closed, {"state": "closed"}),
            ],
        ),
    ]

    report = run_conformance(_closing_shop(), sessions)

    assert (report.matched, report.mismatches) == (3, [])


def test_a_refused_credential_is_replayed_without_one() -> None:
    report = report_of(exchange(0, "GET", "/items", 401, {"error": {"message": "no"}}))
    assert report.matched == 1


def test_every_mismatch_names_its_reason() -> None:
    report = report_of(
        exchange(0, "GET", "/items", 200, [{"id": "1", "name": "a"}]),
        exchange(1, "GET", "/items/1", 404, {"error": {"message": "gone"}}),
        exchange(2, "GET", "/items/1", 200, {"id": "1", "name": 5}),
    )
    assert [(m.exchange, m.status, m.reason.split(":")[0]) for m in report.mismatches] == [
        ("x1", 200, "status 200, recorded 404"),
        ("x2", 200, "body at $['name']"),
    ]
    assert report.mismatches[1].reason == "body at $['name']: 'a' is not of type 'number'"
    assert report.share == pytest.approx(1 / 3)


def test_exchanges_with_other_hosts_are_skipped() -> None:
    report = report_of(exchange(0, "GET", "https://cdn.example.com/app.js", 200))
    assert (report.total, report.skipped) == (
        0,
        [("x0", "host cdn.example.com is not the service's")],
    )


def test_seeding_merges_sightings_and_skips_other_renderings() -> None:
    # The model learned that `?labels=yes` answers labels in place of values: such an answer
    # shows no record as stored, even when it comes first.
    labelled = exchange(1, "GET", "/items/1", 200, {"id": "1", "name": "LABEL"})
    labelled.query = [("labels", "Yes")]
    session = Session(
        id="s",
        events=[
            exchange(0, "GET", "/items", 200, [{"id": "1"}]),
            labelled,
            exchange(2, "GET", "/items/1", 200, {"id": "1", "name": "a"}),
            exchange(3, "GET", "/items/1", 500, {"id": "1", "name": "broken"}),
        ],
    )
    conventions = SHOP.conventions.model_copy(
        update={"renderings": [Rendering(params={"labels": "yes"})]}
    )
    model = SHOP.model_copy(update={"conventions": conventions})

    assert recorded_records(model, [session]) == {("item", "1"): {"id": "1", "name": "a"}}


@pytest.mark.parametrize(
    ("recorded", "replayed", "conforms"),
    [
        pytest.param({"a": 1}, {"a": 2.5, "b": "extra"}, True, id="values-free-extra-keys-fine"),
        pytest.param({"a": 1}, {"a": "1"}, False, id="number-became-string"),
        pytest.param({"a": None}, {"a": {"x": 1}}, True, id="recorded-null-says-nothing"),
        pytest.param({"a": 1}, {}, False, id="key-missing"),
        pytest.param([{"a": 1, "b": 1}, {"a": 2}], [{"a": 3}], True, id="list-shared-keys"),
        pytest.param([{"a": 1, "b": 1}, {"a": 2}], [{"b": 3}], False, id="list-item-lacks-key"),
        pytest.param([], [{"anything": True}], True, id="empty-list-allows-any-items"),
        pytest.param(
            [{"a": None}, {"a": "x"}], [{"a": None}, {"a": "y"}], True, id="null-sample-allows-null"
        ),
        pytest.param([{"a": None}, {"a": "x"}], [{"a": 1}], False, id="null-sample-keeps-type"),
        pytest.param([[{"a": None}], [{"a": "x"}]], [[{"a": None}]], True, id="nested-nullable"),
    ],
)
def test_body_schema_compares_structure_not_values(
    recorded: Any, replayed: Any, conforms: bool
) -> None:
    schema = body_schema(recorded)
    assert Draft202012Validator(schema).is_valid(replayed) is conforms
    # The fast checker the replay uses agrees with a general validator.
    assert (first_violation(schema, replayed) is None) is conforms


# --- the real recordings -----------------------------------------------------------------------

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SERVICENOW_HARS = sorted((CORPUS / "har" / "jupiterone_graph-servicenow").glob("*.har"))


@pytest.fixture(scope="module")
def servicenow() -> tuple[ServiceModel, list[Session]]:
    if not SERVICENOW_HARS:
        pytest.skip(f"the ServiceNow recordings are not in {CORPUS}")
    from myna.schemas.learn import learn
    from myna.traces import read_many

    sessions = list(read_many(SERVICENOW_HARS))
    return learn(sessions)[0], sessions


@pytest.mark.corpus
def test_the_servicenow_recordings_conform(
    servicenow: tuple[ServiceModel, list[Session]], store_url: str
) -> None:
    model, sessions = servicenow
    report = run_conformance(model, sessions, store_url=store_url)
    assert report.total == sum(len(s.exchanges) for s in sessions)
    assert [m.reason for m in report.mismatches] == []


@pytest.mark.corpus
def test_the_command_prints_a_json_report(
    servicenow: tuple[ServiceModel, list[Session]], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from myna.cli import app
    from myna.schemas.openapi import save

    model, _ = servicenow
    save(model, tmp_path / "model.yaml")
    traces = [str(path) for path in SERVICENOW_HARS[:2]]
    result = CliRunner().invoke(
        app, ["conformance", str(tmp_path / "model.yaml"), *traces, "--json"]
    )
    printed = json.loads(result.stdout)
    assert printed["total"] > 0
    assert result.exit_code == (0 if printed["mismatches"] == [] else 1)


def test_traces_of_another_service_are_refused_with_the_hosts_named(tmp_path: Path) -> None:
    from myna.traces import write_jsonl

    traces = tmp_path / "shop.jsonl"
    write_jsonl([Session(id="s", events=[exchange(0, "GET", "/items", 200, [])])], traces)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from myna.cli import main; main()",
            "conformance",
            "itsm",
            str(traces),
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 2
    assert "no exchange in the traces belongs to the model's service" in result.stderr
    assert "example.service-now.com" in result.stderr
    assert "--any-host" in result.stderr


def test_a_record_a_successful_write_addresses_was_held_although_no_answer_showed_it() -> None:
    # A delete answered 204 says the record existed; replayed in a world that never heard of
    # it, the mock would answer 404. Item 9 is never shown, only deleted.
    issues = [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]
    traffic = [
        Session(id="list", events=[exchange(0, "GET", "/issues", 200, issues)]),
        Session(
            id="write",
            events=[
                exchange(1, "PATCH", "/issues/7", 200, {"id": 7, "title": "c"}, {"title": "c"}),
                exchange(2, "DELETE", "/issues/9", 204),
                exchange(3, "DELETE", "/issues/9", 404, {"message": "Not Found"}),
            ],
        ),
    ]
    (model,) = learn(traffic)
    report = run_conformance(model, traffic)
    assert report.mismatches == []
    assert report.seeded == {"issue": 4}
