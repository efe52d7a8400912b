"""The shipped CRM model: what it pins, that learning reproduces it, and that it agrees with a
model learned from real Salesforce recordings on what those cover (the SOQL query endpoint, the
records envelope, 18-character ids, the error shape, OAuth and the User object's fields).

Agreement compares *kinds*, not whole schemas: a field holds text, a number, a boolean, a date or
a date-time. Fields a recording only ever shows null say nothing about their kind and are skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pytest

from myna.errors import MockError
from myna.mocks.backends import BACKENDS, builtin_model
from myna.mocks.backends.crm.instance import STAGES
from myna.mocks.backends.crm.objects import OBJECTS, PICKLISTS
from myna.mocks.conformance import Mismatch
from myna.schemas.model import FieldSpec, ServiceModel
from myna.schemas.openapi import dumps
from myna.traces.reading import read_many

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
HAR = CORPUS / "har" / "jupiterone_graph-salesforce"
SHIPPED = files("myna.mocks.backends.crm").joinpath("model.yaml")
DATA = "/services/data/v59.0"


@pytest.fixture(scope="module")
def shipped() -> ServiceModel:
    return builtin_model("crm")


# -- the registry -----------------------------------------------------------------------------


def test_builtin_model_gives_a_fresh_copy_each_time() -> None:
    first = builtin_model("crm")
    first.resources.clear()
    assert "Opportunity" in builtin_model("crm").resources


def test_an_unknown_back_end_names_every_known_one() -> None:
    with pytest.raises(MockError, match=r"no built-in back end 'hrm'; there are: crm, erp, itsm"):
        builtin_model("hrm")
    assert BACKENDS["crm"].title == "CRM (Salesforce REST API)"


# -- the shipped model --------------------------------------------------------------------------


def test_learning_the_corpus_into_the_overlay_reproduces_the_shipped_model() -> None:
    assert dumps(BACKENDS["crm"].learn()) == SHIPPED.read_text(encoding="utf-8"), (
        "regenerate: myna learn myna/mocks/backends/crm/corpus.jsonl --service crm "
        "--update myna/mocks/backends/crm/overlay.yaml -o myna/mocks/backends/crm/model.yaml"
    )


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_every_object_is_a_resource_with_its_crud_operations(
    shipped: ServiceModel, name: str
) -> None:
    resource = shipped.resources[name]
    prefix = OBJECTS[name].key_prefix
    assert resource.collection_path == f"{DATA}/sobjects/{name}"
    assert (resource.id_field, resource.id_format.kind, resource.id_format.prefix) == (
        "Id",
        "salesforce",
        prefix,
    )
    assert re.fullmatch(str(resource.id_format.pattern), f"{prefix}5g0000000001AAA")
    kinds = {
        (op.method, op.kind, op.responses[0].status)
        for op in shipped.operations
        if op.resource == name
        and op.evidence.pinned
        and op.path.startswith(f"{DATA}/sobjects/{name}")
        and "External_Id__c" not in op.path
    }
    deleted = set() if name == "User" else {("DELETE", "delete", 204)}
    assert kinds == {
        ("POST", "create", 201),
        ("GET", "get", 200),
        ("PATCH", "update", 204),
        *deleted,
    }


@pytest.mark.parametrize(
    ("name", "required"),
    [(name, [f.name for f in obj.fields if f.required]) for name, obj in OBJECTS.items()],
    ids=list(OBJECTS),
)
def test_required_fields_are_pinned_as_required_on_create(
    shipped: ServiceModel, name: str, required: list[str]
) -> None:
    fields = shipped.resources[name].fields
    assert sorted(n for n, spec in fields.items() if spec.required_on_create) == sorted(required)


def test_restricted_picklists_are_pinned_as_enums(shipped: ServiceModel) -> None:
    stage = shipped.resources["Opportunity"].fields["StageName"]
    assert stage.evidence.pinned
    assert stage.schema_["enum"] == list(PICKLISTS["StageName"])
    status = shipped.resources["Case"].fields["Status"]
    assert (status.schema_["enum"], status.default) == (list(PICKLISTS["CaseStatus"]), "New")


@pytest.mark.parametrize(
    ("name", "field"),
    [("Opportunity", "IsWon"), ("Opportunity", "IsClosed"), ("Lead", "IsConverted")],
)
def test_computed_fields_are_pinned_read_only_and_refused(
    shipped: ServiceModel, name: str, field: str
) -> None:
    spec = shipped.resources[name].fields[field]
    assert (spec.read_only, spec.write_policy) == (True, "refuse")


def test_the_stage_machine_carries_each_stage_s_probability(shipped: ServiceModel) -> None:
    (machine,) = shipped.resources["Opportunity"].state_machines
    assert machine.evidence.pinned
    assert not machine.enforce
    assert {stage: int(label) for stage, label in machine.labels.items()} == {
        stage: probability for stage, (probability, _) in STAGES.items()
    }
    assert machine.changes_on_entry["Closed Won"] == [
        "Probability",
        "ForecastCategoryName",
        "IsClosed",
        "IsWon",
    ]


def test_the_case_machine_allows_every_move_and_needs_a_reason_to_close(
    shipped: ServiceModel,
) -> None:
    (machine,) = shipped.resources["Case"].state_machines
    assert machine.enforce
    assert len(machine.transitions) == 12
    assert machine.required_on_entry == {"Closed": ["Reason"]}
    assert machine.changes_on_entry["Escalated"] == ["IsEscalated"]


def test_the_conventions_are_salesforce_s(shipped: ServiceModel) -> None:
    conventions = shipped.conventions
    envelope = conventions.envelope
    assert (envelope.list_key, envelope.total_key, envelope.done_key, envelope.next_key) == (
        "records",
        "totalSize",
        "done",
        "nextRecordsUrl",
    )
    assert envelope.record_attributes
    assert (conventions.pagination.style, conventions.pagination.default_limit) == (
        "next_url",
        2000,
    )
    assert conventions.query_language == "soql"
    assert (conventions.auth.scheme, conventions.auth.token_path) == (
        "oauth2",
        "/services/oauth2/token",
    )
    refused = shipped.error_shape(400)
    assert refused is not None
    assert refused.template == [
        {"message": "{message}", "errorCode": "{code}", "fields": "{fields}"}
    ]
    query = shipped.operation("query")
    assert (query.kind, [p.name for p in query.parameters]) == ("query", ["q"])


# -- agreement with the real recordings ---------------------------------------------------------


def field_kind(spec: FieldSpec) -> str:
    """What a field holds: a reference id counts as text, null is no evidence."""
    schema = spec.schema_
    types = schema.get("type", [])
    kinds = {types} if isinstance(types, str) else set(types)
    kinds -= {"null"}
    if not kinds:
        return "empty"
    fmt = schema.get("format")
    return "/".join(sorted(kinds)) + (f":{fmt}" if fmt else "")


@pytest.fixture(scope="module")
def recorded() -> ServiceModel:
    from myna.schemas.learn import learn

    if not HAR.is_dir():
        pytest.skip(f"the real Salesforce recordings are not at {HAR}")
    (model,) = learn(read_many(sorted(HAR.glob("*.har"))), service="salesforce")
    return model


@pytest.mark.corpus
def test_the_recordings_cover_the_query_endpoint_and_the_user_object(
    recorded: ServiceModel,
) -> None:
    assert "User" in recorded.resources
    (query,) = [op for op in recorded.operations if op.kind == "query"]
    assert [p.name for p in query.parameters] == ["q"]


@pytest.mark.corpus
def test_every_recorded_user_field_the_back_end_has_is_shipped_with_the_same_kind(
    recorded: ServiceModel, shipped: ServiceModel
) -> None:
    theirs, mine = recorded.resources["User"], shipped.resources["User"]
    common = sorted(set(theirs.fields) & set(mine.fields) - {"attributes"})
    assert len(common) >= 15
    disagreements = [
        f"User.{name}: recorded {field_kind(theirs.fields[name])}, "
        f"shipped {field_kind(mine.fields[name])}"
        for name in common
        if "empty" not in (field_kind(theirs.fields[name]), field_kind(mine.fields[name]))
        and field_kind(theirs.fields[name]) != field_kind(mine.fields[name])
    ]
    assert disagreements == []


@pytest.mark.corpus
def test_the_recorded_conventions_are_the_shipped_ones(
    recorded: ServiceModel, shipped: ServiceModel
) -> None:
    real, mine = recorded.conventions, shipped.conventions
    for part in ("style", "list_key", "total_key", "done_key", "record_attributes"):
        assert getattr(real.envelope, part) == getattr(mine.envelope, part), part
    assert (real.query_language, real.datetime_format) == (
        mine.query_language,
        mine.datetime_format,
    )
    assert (real.auth.scheme, real.auth.token_path) == (mine.auth.scheme, mine.auth.token_path)
    assert real.auth.unauthorized_headers == mine.auth.unauthorized_headers
    assert real.auth.unauthorized_body == mine.auth.unauthorized_body
    recorded_401, shipped_401 = recorded.error_shape(401), shipped.error_shape(401)
    assert recorded_401 is not None
    assert shipped_401 is not None
    assert recorded_401.template == shipped_401.template
    real_user, shipped_user = recorded.resources["User"], shipped.resources["User"]
    assert real_user.id_format == shipped_user.id_format


# The recordings' clients read objects the CRM back end does not ship (UserRole, Profile, Group,
# GroupMember, PermissionSet, PermissionSetAssignment) and User fields it does not ship; their
# token calls carry redacted forms that no mock can authenticate. The User describe answers every
# recorded key, but a key that is null on some recorded fields and text on others (Id's
# relationshipName) is read by the conformance checker as always text. Every mismatch must be one
# of these.
OUTSIDE = {
    "UserRole",
    "Profile",
    "Group",
    "GroupMember",
    "PermissionSet",
    "PermissionSetAssignment",
}


def explain(mismatch: Mismatch, soql: dict[str, str]) -> str:
    if mismatch.path == "/services/oauth2/token":
        return "token call with a redacted form"
    target = (
        mismatch.path.split("/")[-2]
        if mismatch.path.endswith("/describe")
        else soql.get(mismatch.exchange, "")
    )
    if target in OUTSIDE:
        return "object outside the back end"
    if target == "User" and mismatch.path.endswith("/query"):
        return "User fields outside the back end"
    if target == "User" and "null is not of type 'string'" in mismatch.reason:
        return "describe key recorded both null and text"
    return f"unexplained: {mismatch.reason}"


@pytest.fixture(scope="module")
def conformance() -> tuple[int, float, Counter[str]]:
    from myna.mocks.conformance import run_conformance

    if not HAR.is_dir():
        pytest.skip(f"the real Salesforce recordings are not at {HAR}")
    sessions = list(read_many(sorted(HAR.glob("*.har"))))
    soql = {}
    for session in sessions:
        for exchange in session.exchanges:
            found = re.search(r"\bFROM (\w+)", dict(exchange.query).get("q", ""))
            if found:
                soql[exchange.id] = found.group(1)
    model = builtin_model("crm")
    # The recordings come from another org's host: the instance host is left open.
    model.servers = []
    report = run_conformance(model, sessions)
    reasons = Counter(explain(mismatch, soql) for mismatch in report.mismatches)
    return report.total, report.share, reasons


@pytest.mark.corpus
def test_every_conformance_mismatch_on_the_real_recordings_is_explained(
    conformance: tuple[int, float, Counter[str]],
) -> None:
    total, _, reasons = conformance
    assert total == 86
    assert reasons == {
        "object outside the back end": 36,
        "token call with a redacted form": 21,
        "User fields outside the back end": 3,
        "describe key recorded both null and text": 3,
    }


@pytest.mark.corpus
@pytest.mark.xfail(
    strict=True,
    reason="60 of 86 recorded exchanges cannot match (26 do, 30%): 36 read objects the CRM "
    "back end does not ship, 3 query User fields it does not ship, 21 are token calls whose "
    "redacted forms no mock authenticates (myna/mocks/conformance.py needs a credential "
    "stand-in for redacted token forms), and 3 User describes fail only because "
    "myna/mocks/conformance.py _common drops recorded nulls when it merges a list's items, so a "
    "key null on some items and text on others must always be text",
)
def test_the_shipped_back_end_answers_95_percent_of_the_real_recordings(
    conformance: tuple[int, float, Counter[str]],
) -> None:
    assert conformance[1] >= 0.95
