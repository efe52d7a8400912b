"""Seeding: deterministic, consistent records generated from a model, or read from files."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from jsonschema import Draft202012Validator

from myna.backends import builtin_model
from myna.errors import InputError, MockError
from myna.mocks import Mock
from myna.mocks.checker import check_backend
from myna.mocks.client import MockClient
from myna.mocks.evaluate import reference_id
from myna.mocks.ids import salesforce_checksum
from myna.mocks.query import Query
from myna.mocks.seed import SeedData, generate, read_files, seed, seed_from_files, seeding_order
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import (
    Conventions,
    EntryValues,
    FieldSpec,
    IdFormat,
    Reference,
    Resource,
    ServiceModel,
    StateMachine,
)


def text(name: str, **schema: Any) -> FieldSpec:
    return FieldSpec(name=name, schema={"type": "string", **schema})


def timestamp(name: str) -> FieldSpec:
    return text(name, format="date-time")


INCIDENT = Resource(
    name="incident",
    id_field="sys_id",
    id_format=IdFormat(kind="hex32"),
    item_path="/api/now/table/incident/{sys_id}",
    unique=["number"],
    fields={
        "sys_id": text("sys_id"),
        "number": FieldSpec(
            name="number",
            schema={"type": "string"},
            generator=IdFormat(kind="sequence", prefix="INC", width=7, start=10001),
        ),
        "state": FieldSpec(
            name="state",
            schema={"type": "string"},
            enum_frequencies={"1": 60, "2": 30, "6": 10, "8": 0},
        ),
        "priority": text("priority", enum=["1", "2", "3", "4", "5"]),
        "short_description": text("short_description"),
        "caller_id": FieldSpec(
            name="caller_id", reference=Reference(resource="sys_user", style="link_value")
        ),
        "parent": FieldSpec(name="parent", reference=Reference(resource="incident")),
        "opened_at": timestamp("opened_at"),
        "resolved_at": timestamp("resolved_at"),
        "close_code": text("close_code"),
        "sys_created_on": timestamp("sys_created_on"),
        "sys_updated_on": timestamp("sys_updated_on"),
        "reassignment_count": FieldSpec(
            name="reassignment_count", schema={"type": "integer", "minimum": 0, "maximum": 9}
        ),
        "active": FieldSpec(name="active", schema={"type": "boolean"}),
    },
    state_machines=[
        StateMachine(
            field="state",
            states=["1", "2", "6", "8"],
            required_on_entry={"6": ["resolved_at", "close_code"]},
        )
    ],
)
USER = Resource(
    name="sys_user",
    id_field="sys_id",
    id_format=IdFormat(kind="hex32"),
    item_path="/api/now/table/sys_user/{sys_id}",
    unique=["email"],
    fields={
        "sys_id": text("sys_id"),
        "name": text("name"),
        "email": text("email", format="email"),
        "manager": FieldSpec(name="manager", reference=Reference(resource="sys_user")),
    },
)
SERVICENOW = ServiceModel(
    name="servicenow",
    servers=["https://dev.service-now.com"],
    conventions=Conventions(values_as_strings=True, datetime_format="%Y-%m-%d %H:%M:%S"),
    resources={"incident": INCIDENT, "sys_user": USER},
)
TYPED = SERVICENOW.model_copy(update={"conventions": Conventions()})


def dumped(data: SeedData) -> bytes:
    return json.dumps([data.records, data.sequences]).encode()


def records_of(data: SeedData, resource: str) -> list[dict[str, Any]]:
    return [record for name, _, record in data.records if name == resource]


def test_the_same_seed_gives_the_same_bytes() -> None:
    first = generate(SERVICENOW, seed=7, records=25)
    assert dumped(first) == dumped(generate(SERVICENOW, seed=7, records=25))
    assert dumped(first) != dumped(generate(SERVICENOW, seed=8, records=25))


def test_adding_a_resource_leaves_the_others_records_unchanged() -> None:
    alone = ServiceModel(name="servicenow", resources={"sys_user": USER})
    assert records_of(generate(alone, seed=3, records=5), "sys_user") == records_of(
        generate(TYPED, seed=3, records=5), "sys_user"
    )


@given(seed_value=st.integers(0, 2**32), users=st.integers(0, 6), incidents=st.integers(0, 12))
@settings(max_examples=25, deadline=None)
def test_references_only_point_at_records_that_exist(
    seed_value: int, users: int, incidents: int
) -> None:
    data = generate(SERVICENOW, seed=seed_value, records={"sys_user": users, "incident": incidents})
    ids = {
        name: {record_id for n, record_id, _ in data.records if n == name}
        for name in ("incident", "sys_user")
    }
    seen: dict[str, set[str]] = {"incident": set(), "sys_user": set()}
    for name, record_id, record in data.records:
        for field, target in (
            ("caller_id", "sys_user"),
            ("manager", "sys_user"),
            ("parent", "incident"),
        ):
            value = reference_id(record.get(field))
            if value is not None:
                assert value in ids[target]
                # Loaded before the record that points at it.
                assert value in seen[target]
        seen[name].add(record_id)
    assert len(ids["incident"]) == incidents


def test_a_link_value_reference_is_stored_as_its_id_and_served_with_the_targets_link() -> None:
    # The runtime stores what clients send as the bare id and renders {link, value} from it;
    # a seeded {link, value} object would be rendered inside another link.
    model = builtin_model("itsm")
    store = SqlStore(model)
    store.create_world("w", from_snapshot=seed(model, store, seed=1, records=4))
    with store.transaction("w") as tx:
        task_id, task = next((i, r) for i, r in tx.all("change_task") if r["change_request"])
    client = MockClient(Mock(model, store), auth=("myna", "myna"), world="w")
    served = client.get(f"/api/now/table/change_task/{task_id}").json()["result"]
    change_id = task["change_request"]
    assert served["change_request"] == {
        "link": f"http://localhost/api/now/table/change_request/{change_id}",
        "value": change_id,
    }
    store.close()


def test_states_follow_frequencies_and_carry_their_required_fields() -> None:
    incidents = records_of(generate(SERVICENOW, seed=2, records=400), "incident")
    states = [r["state"] for r in incidents]
    assert states.count("1") > states.count("2") > states.count("6") > 0
    assert "8" not in states  # never observed, never seeded
    for record in incidents:
        resolved = record["state"] == "6"
        assert bool(record["resolved_at"]) is resolved
        assert bool(record["close_code"]) is resolved


def test_timestamps_of_a_record_are_in_order() -> None:
    for record in records_of(generate(SERVICENOW, seed=4, records=60), "incident"):
        moments = [
            datetime.strptime(record[name], "%Y-%m-%d %H:%M:%S")
            for name in ("sys_created_on", "opened_at", "resolved_at", "sys_updated_on")
            if record[name]
        ]
        assert moments == sorted(moments)


def test_sequences_number_records_and_are_recorded() -> None:
    data = generate(SERVICENOW, seed=5, records=3)
    assert [r["number"] for r in records_of(data, "incident")] == [
        "INC0010001",
        "INC0010002",
        "INC0010003",
    ]
    assert data.sequences == {"incident.number": 10003}


def test_values_travel_as_strings_when_the_service_does_that() -> None:
    def scalars(value: Any) -> list[Any]:
        if isinstance(value, dict):
            return [s for item in value.values() for s in scalars(item)]
        return [value]

    for _, _, record in generate(SERVICENOW, seed=6, records=20).records:
        assert all(isinstance(value, str) for value in scalars(record))


def test_typed_values_fit_their_schemas_and_unique_fields_are_unique() -> None:
    data = generate(TYPED, seed=6, records=80)
    for name, _, record in data.records:
        for field, spec in TYPED.resources[name].fields.items():
            if field in record and record[field] is not None and spec.schema_:
                Draft202012Validator(spec.schema_).validate(record[field])
    emails = [r["email"] for r in records_of(data, "sys_user") if "email" in r]
    assert len(emails) == len(set(emails))


def email_is_valid(value: str) -> bool:
    return re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", value) is not None


def test_formats_and_names_pick_fitting_values() -> None:
    users = records_of(generate(TYPED, seed=9, records=20), "sys_user")
    assert all(email_is_valid(u["email"]) for u in users if "email" in u)
    assert any(" " in u.get("name", "") for u in users)  # a person's name, not one word


SALESFORCE_ID = re.compile(r"[a-zA-Z0-9]{18}")


@pytest.mark.parametrize(
    ("fmt", "schema", "check"),
    [
        pytest.param(IdFormat(kind="hex32"), {}, re.compile(r"[0-9a-f]{32}").fullmatch, id="hex32"),
        pytest.param(
            IdFormat(kind="uuid"),
            {},
            re.compile(
                r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
            ).fullmatch,
            id="uuid",
        ),
        pytest.param(
            IdFormat(kind="ulid"),
            {},
            re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}").fullmatch,
            id="ulid",
        ),
        pytest.param(
            IdFormat(kind="salesforce", prefix="500"),
            {},
            lambda v: v.startswith("500") and v[15:] == salesforce_checksum(v[:15]),
            id="salesforce",
        ),
        pytest.param(
            IdFormat(kind="prefixed", prefix="cus_", width=14),
            {},
            re.compile(r"cus_[a-z0-9]{14}").fullmatch,
            id="prefixed",
        ),
        pytest.param(IdFormat(kind="integer", start=1), {"type": "integer"}, None, id="integer"),
    ],
)
def test_ids_follow_the_resources_format(fmt: IdFormat, schema: dict[str, Any], check: Any) -> None:
    model = ServiceModel(
        name="m",
        resources={
            "thing": Resource(
                name="thing",
                id_field="id",
                id_format=fmt,
                fields={"id": FieldSpec(name="id", schema=schema)},
            )
        },
    )
    data = generate(model, seed=1, records=5)
    values = [record["id"] for record in records_of(data, "thing")]
    assert len(set(values)) == 5
    if check is None:
        assert values == [1, 2, 3, 4, 5]
        assert data.sequences == {"thing.id": 5}
    else:
        assert all(check(value) for value in values)


def test_a_reference_cycle_is_broken_by_leaving_the_back_reference_empty() -> None:
    def pointing(name: str, target: str) -> Resource:
        return Resource(
            name=name,
            id_field="id",
            id_format=IdFormat(kind="hex32"),
            fields={
                "other": FieldSpec(
                    name="other", required=True, reference=Reference(resource=target)
                )
            },
        )

    model = ServiceModel(name="m", resources={"a": pointing("a", "b"), "b": pointing("b", "a")})
    assert seeding_order(model) == ["a", "b"]
    data = generate(model, seed=1, records=5)
    assert all("other" not in record for record in records_of(data, "a"))
    assert all(record["other"] for record in records_of(data, "b"))


def test_in_a_cycle_a_reference_a_create_must_send_is_filled_before_an_optional_one() -> None:
    # A member must name its group; a group only optionally names a member (who created it).
    # By name alone the member would go first and every member would lack its group.
    member = Resource(
        name="a_member",
        id_field="id",
        id_format=IdFormat(kind="hex32"),
        fields={
            "id": text("id"),
            "group": FieldSpec(
                name="group", required_on_create=True, reference=Reference(resource="b_group")
            ),
        },
    )
    group = Resource(
        name="b_group",
        id_field="id",
        id_format=IdFormat(kind="hex32"),
        fields={
            "id": text("id"),
            "created_by": FieldSpec(name="created_by", reference=Reference(resource="a_member")),
        },
    )
    model = ServiceModel(name="m", resources={"a_member": member, "b_group": group})
    assert seeding_order(model) == ["b_group", "a_member"]
    data = generate(model, seed=1, records=5)
    assert all(record["group"] for record in records_of(data, "a_member"))
    assert check_backend(model) == []


def test_a_generated_record_in_a_state_holds_what_entering_it_sets() -> None:
    # An opportunity's stage sets its probability and flags; a mirrored status follows its
    # state instead of being drawn on its own.
    stages = StateMachine(
        field="stage",
        states=["open", "won"],
        sets_on_entry={
            "open": EntryValues(values={"probability": 10, "closed": False, "mirror": "open"}),
            "won": EntryValues(values={"probability": 100, "closed": True, "mirror": "won"}),
        },
    )
    mirror = StateMachine(field="mirror", states=["open", "won"])
    deal = Resource(
        name="deal",
        id_field="id",
        id_format=IdFormat(kind="hex32"),
        fields={
            "id": text("id"),
            "stage": text("stage", enum=["open", "won"]),
            "mirror": text("mirror", enum=["open", "won"]),
            "probability": FieldSpec(name="probability", schema={"type": "number"}),
            "closed": FieldSpec(name="closed", schema={"type": "boolean"}),
        },
        state_machines=[mirror, stages],
    )
    deals = records_of(
        generate(ServiceModel(name="m", resources={"deal": deal}), seed=3, records=30), "deal"
    )
    assert {deal["stage"] for deal in deals} == {"open", "won"}
    for record in deals:
        won = record["stage"] == "won"
        expected = (record["stage"], 100 if won else 10, won)
        assert (record["mirror"], record["probability"], record["closed"]) == expected


HEX32 = IdFormat(kind="hex32", pattern="^[0-9a-f]{32}$")
# How ServiceNow answers a reference: an empty string, or {link, value}.
LINKED = {
    "anyOf": [
        {"type": "string", "maxLength": 0},
        {
            "type": "object",
            "properties": {"link": {"type": "string"}, "value": {"type": "string"}},
            "required": ["link"],
        },
    ]
}
# The domain every record of an instance without domain separation is in: `global`, linked as a
# sys_user_group that no table holds.
DOMAIN = FieldSpec(
    name="sys_domain",
    required=True,
    schema={
        "type": "object",
        "properties": {"link": {"type": "string"}, "value": {"type": "string", "enum": ["global"]}},
    },
    reference=Reference(resource="group", style="link_value"),
)


def linked(name: str, target: str) -> FieldSpec:
    return FieldSpec(
        name=name, schema=LINKED, reference=Reference(resource=target, style="link_value")
    )


def test_a_generated_seed_gives_each_state_its_required_fields_and_passes_the_checker() -> None:
    # A request item refers to users and groups, which refer to each other: the cycle is broken
    # where the fewest references wait, so items still find an assignee. A closed item needs a
    # close code, which the corpus mostly saw blank.
    item = Resource(
        name="a_item",
        id_field="sys_id",
        id_format=HEX32,
        fields={
            "sys_id": text("sys_id"),
            "state": FieldSpec(
                name="state", schema={"type": "string"}, enum_frequencies={"1": 1, "3": 4}
            ),
            "close_code": FieldSpec(
                name="close_code",
                schema={"type": "string", "enum": ["", "done"]},
                enum_frequencies={"": 9, "done": 1},
            ),
            "assigned_to": linked("assigned_to", "user"),
            "sys_domain": DOMAIN,
        },
        state_machines=[
            StateMachine(
                field="state",
                states=["1", "3"],
                required_on_entry={"3": ["close_code", "assigned_to"]},
            )
        ],
    )
    user = Resource(
        name="user",
        id_field="sys_id",
        id_format=HEX32,
        fields={"sys_id": text("sys_id"), "group": linked("group", "group"), "sys_domain": DOMAIN},
    )
    group = Resource(
        name="group",
        id_field="sys_id",
        id_format=HEX32,
        fields={"sys_id": text("sys_id"), "manager": linked("manager", "user")},
    )
    model = ServiceModel(
        name="m",
        conventions=Conventions(values_as_strings=True),
        resources={"a_item": item, "user": user, "group": group},
    )
    assert seeding_order(model) == ["group", "user", "a_item"]
    assert check_backend(model) == []
    data = generate(model, seed=0, records=10)
    users = {record_id for name, record_id, _ in data.records if name == "user"}
    closed = [r for r in records_of(data, "a_item") if r["state"] == "3"]
    assert closed
    assert all(r["close_code"] == "done" and r["assigned_to"] in users for r in closed)
    assert {r["sys_domain"] for r in records_of(data, "user")} == {"global"}


def test_counts_may_name_some_resources_but_only_known_ones() -> None:
    data = generate(SERVICENOW, seed=1, records={"sys_user": 3})
    assert (data.count("sys_user"), data.count("incident")) == (3, 0)
    with pytest.raises(MockError, match="unknown resources \\['problem'\\]"):
        generate(SERVICENOW, seed=1, records={"problem": 3})


def test_a_seeded_world_continues_the_numbering() -> None:
    store = SqlStore(SERVICENOW)
    snapshot = seed(SERVICENOW, store, seed=1, records=4)
    assert snapshot == "seed-1"
    store.create_world("w", from_snapshot=snapshot)
    with store.transaction("w") as tx:
        assert tx.list("incident", Query())[1] == 4
        assert tx.next_sequence("incident.number", 10001) == 10005
    store.close()


# --- from files --------------------------------------------------------------------------------


def write(directory: Path, name: str, content: str) -> Path:
    path = directory / name
    path.write_text(content, encoding="utf-8")
    return path


USERS_JSONL = (
    '{"sys_id": "u1", "name": "Ann", "email": "ann@example.com"}\n'
    "\n"
    '{"sys_id": "u2", "name": "Bob", "manager": "u1"}\n'
)
INCIDENTS_CSV = (
    "sys_id,number,state,caller_id,reassignment_count,active\n"
    "i1,INC0010007,1,u1,2,true\n"
    "i2,INC0010042,2,u2,,false\n"
)


def test_files_load_as_a_base_with_counters_after_the_largest_number(tmp_path: Path) -> None:
    write(tmp_path, "sys_user.jsonl", USERS_JSONL)
    write(tmp_path, "incident.csv", INCIDENTS_CSV)
    data = read_files(TYPED, tmp_path)
    assert [(name, record_id) for name, record_id, _ in data.records] == [
        ("sys_user", "u1"),
        ("sys_user", "u2"),
        ("incident", "i1"),
        ("incident", "i2"),
    ]
    assert records_of(data, "incident")[0] == {
        "sys_id": "i1",
        "number": "INC0010007",
        "state": "1",
        "caller_id": "u1",
        "reassignment_count": 2,
        "active": True,
    }
    assert data.sequences == {"incident.number": 10042}
    store = SqlStore(TYPED)
    store.create_world("w", from_snapshot=seed_from_files(TYPED, store, tmp_path, name="files"))
    with store.transaction("w") as tx:
        assert tx.get("sys_user", "u2") == {"sys_id": "u2", "name": "Bob", "manager": "u1"}
    store.close()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        pytest.param(
            {"sys_user.jsonl": '{"sys_id": "u1"}\n{"sys_id": \n'},
            r"sys_user.jsonl, line 2: not JSON",
            id="bad-json",
        ),
        pytest.param(
            {"sys_user.jsonl": '["u1"]\n'},
            r"line 1: expected a JSON object, found list",
            id="not-an-object",
        ),
        pytest.param(
            {"sys_user.jsonl": '{"name": "Ann"}\n'},
            r"line 1, field sys_id: every record needs its id field",
            id="missing-id",
        ),
        pytest.param(
            {"incident.csv": "sys_id,reassignment_count\ni1,two\n"},
            r"incident.csv, line 2, field reassignment_count: expected integer, found 'two'",
            id="csv-wrong-type",
        ),
        pytest.param(
            {"sys_user.jsonl": '{"sys_id": "u1", "email": 5}\n'},
            r"line 1, field email: value 5 does not fit the field's schema",
            id="schema-mismatch",
        ),
        pytest.param(
            {"sys_user.jsonl": '{"sys_id": "u1", "manager": "u9"}\n'},
            r"line 1, field manager: references sys_user 'u9', which no file defines",
            id="dangling-reference",
        ),
        pytest.param(
            {"incident.jsonl": '{"sys_id": "i1", "caller_id": {"link": "/sys_user/u1"}}\n'},
            r"line 1, field caller_id: a reference written as an object needs its 'value'",
            id="link-without-value",
        ),
        pytest.param(
            {"sys_user.jsonl": '{"sys_id": "u1", "shoe_size": 9}\n'},
            r"field shoe_size: no field 'shoe_size' in resource 'sys_user'",
            id="unknown-field",
        ),
        pytest.param(
            {"problem.jsonl": "{}\n"},
            r"problem.jsonl: no resource 'problem' in the model",
            id="unknown-resource",
        ),
        pytest.param(
            {"sys_user.jsonl": '{"sys_id": "u1"}\n', "sys_user.csv": "sys_id\nu2\n"},
            r"sys_user.jsonl: a second file for resource 'sys_user'",
            id="two-files-one-resource",
        ),
    ],
)
def test_file_errors_name_the_file_line_and_field(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    for name, content in files.items():
        write(tmp_path, name, content)
    with pytest.raises(InputError, match=message):
        read_files(TYPED, tmp_path)


def test_a_link_value_reference_may_be_written_as_responses_render_it(tmp_path: Path) -> None:
    write(tmp_path, "sys_user.jsonl", USERS_JSONL)
    linked = {"link": "https://dev.service-now.com/api/now/table/sys_user/u2", "value": "u2"}
    write(tmp_path, "incident.jsonl", json.dumps({"sys_id": "i1", "caller_id": linked}) + "\n")
    assert records_of(read_files(TYPED, tmp_path), "incident") == [
        {"sys_id": "i1", "caller_id": "u2"}
    ]


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no <resource>\.jsonl or <resource>\.csv files"):
        read_files(TYPED, tmp_path)


def test_short_random_ids_do_not_repeat() -> None:
    fmt = IdFormat(kind="opaque", width=2)
    model = ServiceModel(
        name="m", resources={"tag": Resource(name="tag", id_field="id", id_format=fmt)}
    )
    data = generate(model, seed=1, records=300)
    assert len({record_id for _, record_id, _ in data.records}) == 300


# --- any model: values fit their schemas ------------------------------------------------------

LEAF_SCHEMAS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "format": "email"},
        {"type": "string", "format": "uri"},
        {"type": "string", "format": "date-time"},
        {"type": "string", "format": "date"},
        {"type": "string", "format": "uuid"},
        {"type": "string", "format": "ipv4"},
        {"type": "string", "minLength": 12, "maxLength": 16},
        {"type": "string", "enum": ["low", "high"]},
        {"type": "integer", "minimum": -3, "maximum": 3},
        {"type": "integer"},
        {"type": "number", "minimum": 0.5, "maximum": 0.75},
        {"type": "boolean"},
        {"type": ["string", "null"]},
    ]
)
SCHEMAS = st.recursive(
    LEAF_SCHEMAS,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items, "maxItems": 3}, inner),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, min_size=1).map(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)}
        ),
    ),
    max_leaves=4,
)
FIELD_NAMES = st.sampled_from(
    ["name", "email", "city", "title", "description", "phone", "count", "flag", "x", "due_date"]
)


@given(
    fields=st.dictionaries(FIELD_NAMES, SCHEMAS, min_size=1, max_size=6),
    seed_value=st.integers(0, 1000),
)
@settings(max_examples=40, deadline=None)
def test_generated_values_fit_any_fields_schema(
    fields: dict[str, dict[str, Any]], seed_value: int
) -> None:
    resource = Resource(
        name="thing",
        id_field="id",
        id_format=IdFormat(kind="uuid"),
        fields={name: FieldSpec(name=name, schema=schema) for name, schema in fields.items()},
    )
    model = ServiceModel(name="m", resources={"thing": resource})
    checker = Draft202012Validator.FORMAT_CHECKER
    for record in records_of(generate(model, seed=seed_value, records=5), "thing"):
        for name, schema in fields.items():
            if name in record:
                Draft202012Validator(schema, format_checker=checker).validate(record[name])


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"pattern": "^(?:-?[0-9]+)$", "x-myna-type": "integer"}, id="integer-text"),
        pytest.param({"pattern": "^(?:true|false)$", "x-myna-type": "boolean"}, id="boolean-text"),
        pytest.param(
            {"pattern": "^(?:-?[0-9]+(?:\\.[0-9]+)?)?$", "x-myna-type": "number"}, id="number-text"
        ),
        pytest.param({"pattern": "^(?:[0-9a-f]{32})?$"}, id="hex32-text"),
        pytest.param(
            {"pattern": "^(?:[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})$"},
            id="spaced-timestamp",
        ),
    ],
)
def test_strings_that_carry_numbers_flags_ids_or_times_fit_their_pattern(
    schema: dict[str, Any],
) -> None:
    # Named like a timestamp, so only what the schema says can keep a wrong value out.
    field = FieldSpec(name="opened_at", schema={"type": "string", **schema}, required=True)
    resource = Resource(
        name="thing", id_field="id", id_format=IdFormat(kind="hex32"), fields={"opened_at": field}
    )
    model = ServiceModel(name="m", resources={"thing": resource})
    validator = Draft202012Validator(field.schema_)

    for record in records_of(generate(model, seed=3, records=15), "thing"):
        validator.validate(record["opened_at"])


def test_a_field_only_ever_seen_blank_stays_blank_whatever_its_name() -> None:
    blank = FieldSpec(name="due_date", schema={"type": "string", "maxLength": 0})
    resource = Resource(
        name="thing", id_field="id", id_format=IdFormat(kind="hex32"), fields={"due_date": blank}
    )
    model = ServiceModel(name="m", resources={"thing": resource})

    assert {
        r.get("due_date", "") for r in records_of(generate(model, seed=3, records=15), "thing")
    } == {""}


def test_a_flag_only_the_service_writes_is_seeded_as_a_create_sets_it() -> None:
    # Salesforce's `IsDeleted`: false on create, true only after a delete, which a seed never
    # makes; a seeded record drawn deleted would be gone from every get and list.
    def flag(name: str, **facts: Any) -> FieldSpec:
        return FieldSpec(name=name, schema={"type": "boolean"}, **facts)

    born = {"server_generated": True, "has_default": True, "default": False}
    resource = Resource(
        name="thing",
        id_field="id",
        id_format=IdFormat(kind="hex32"),
        fields={
            "deleted": flag("deleted", **born),
            # The service writes it, but no create default is known: any value may be.
            "archived": flag("archived", server_generated=True),
            # A client writes it: the default is only what a create without it gets.
            "active": flag("active", has_default=True, default=False),
            # The corpus showed a mix of values: the seed draws from it.
            "tier": FieldSpec(
                name="tier",
                schema={"type": "string"},
                enum_frequencies={"gold": 1, "basic": 1},
                **{**born, "default": "basic"},
            ),
        },
    )
    things = records_of(
        generate(ServiceModel(name="m", resources={"thing": resource}), seed=3, records=30),
        "thing",
    )

    def values(name: str) -> set[Any]:
        return {thing.get(name) for thing in things}

    assert values("deleted") == {False}
    assert values("archived") >= {True, False}
    assert values("active") >= {True, False}
    assert values("tier") - {None} == {"gold", "basic"}


def test_a_seed_file_reference_need_only_name_a_record_not_one_the_corpus_showed(
    tmp_path: Path,
) -> None:
    # A learned enum of a reference lists the records the corpus happened to show: a seed file's
    # own records are what its references may name.
    learned = FieldSpec(
        name="manager",
        schema={"type": "string", "enum": ["u1"]},
        reference=Reference(resource="sys_user"),
    )
    users = USER.model_copy(
        update={
            "id_format": IdFormat(kind="opaque", pattern="^u[0-9]+$"),
            "fields": {**USER.fields, "manager": learned},
        }
    )
    model = TYPED.model_copy(update={"resources": {"sys_user": users}})
    write(tmp_path, "sys_user.jsonl", '{"sys_id": "u7"}\n{"sys_id": "u8", "manager": "u7"}\n')

    assert records_of(read_files(model, tmp_path), "sys_user")[1] == {
        "sys_id": "u8",
        "manager": "u7",
    }
    write(tmp_path, "sys_user.jsonl", '{"sys_id": "u8", "manager": "u9"}\n')
    with pytest.raises(InputError, match=r"field manager: references sys_user 'u9'"):
        read_files(model, tmp_path)
