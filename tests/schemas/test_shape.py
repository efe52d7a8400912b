"""JSON Schemas learned from samples, and merging finished schemas."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.schemas.shape import (
    Shape,
    closed_set,
    merge_schemas,
    sampled,
    schema_of,
    unwrap_pattern,
    wrap_pattern,
)


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        pytest.param(
            [1, 5, 3],
            {"type": "integer", "x-myna-observed": {"minimum": 1, "maximum": 5}},
            id="integer-range",
        ),
        pytest.param(
            [1, 2.5],
            {"type": "number", "x-myna-observed": {"minimum": 1, "maximum": 2.5}},
            id="int-and-float",
        ),
        pytest.param([True, False], {"type": "boolean"}, id="boolean"),
        pytest.param(["a b", None], {"type": ["string", "null"]}, id="nullable"),
        pytest.param([None], {"type": "null"}, id="only-null"),
        pytest.param(["", ""], {"type": "string", "maxLength": 0}, id="always-empty"),
        pytest.param(
            ["2016-12-12 15:19:57", "2024-04-16 17:16:27"],
            {
                "type": "string",
                "format": "date-time",
                "pattern": "^(?:[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})$",
            },
            id="servicenow-datetime",
        ),
        pytest.param(
            ["a@example.com", "b@example.org"], {"type": "string", "format": "email"}, id="email"
        ),
        pytest.param(
            ["3", "12", "0"],
            {"type": "string", "x-myna-type": "integer", "pattern": "^(?:-?[0-9]+)$"},
            id="integers-sent-as-strings",
        ),
        pytest.param(
            ["688868e1053926ed51b99e2c3257f0ba", "d253854a020b15350cfd5545c04549a7"],
            {"type": "string", "pattern": "^(?:[0-9a-f]{32})$"},
            id="sys_id-pattern",
        ),
        pytest.param(
            ["00E7814EEC00425E2A", "005FECBB8C2B44CYXS"],
            {"type": "string", "pattern": "^(?:[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?)$"},
            id="salesforce-id-pattern",
        ),
    ],
)
def test_scalar_schemas(samples: list[Any], expected: dict[str, Any]) -> None:
    assert schema_of(samples) == expected


def test_few_repeating_values_are_seeding_frequencies_but_no_enum() -> None:
    shape = Shape()
    for value in ["New", "New", "In Progress", "New", "Resolved", "In Progress"]:
        shape.add(value)

    # Six records, one value seen once: a seventh may well show a value not seen yet.
    assert shape.schema() == {"type": "string"}
    assert shape.frequencies() == {"In Progress": 2, "New": 3, "Resolved": 1}
    assert shape.enum() is None


def test_values_each_seen_often_close_into_an_enum() -> None:
    shape = Shape()
    for value in ["New"] * 5 + ["In Progress"] * 4 + ["Resolved"] * 3:
        shape.add(value)

    assert shape.schema() == {"type": "string", "enum": ["In Progress", "New", "Resolved"]}
    assert shape.enum() == {"In Progress": 4, "New": 5, "Resolved": 3}


@pytest.mark.parametrize(
    ("counts", "closed"),
    [
        pytest.param({"1": 27, "2": 4, "3": 12, "4": 5, "5": 19}, True, id="every-value-repeats"),
        pytest.param({"1": 16, "2": 9, "3": 3, "6": 5, "7": 1}, True, id="one-rare-value"),
        pytest.param({"": 40, "a": 6, "b": 5}, True, id="blanks-say-nothing"),
        pytest.param({"3": 19}, False, id="one-value-is-no-choice"),
        pytest.param({"": 19}, False, id="only-blank"),
        pytest.param(
            {"": 19, "Solution provided": 2, "Workaround provided": 2, "Resolved by problem": 1},
            False,
            id="close-codes-from-five-records",
        ),
        pytest.param(
            {"Standard": 3, "AutomatedProcess": 2, "CsnOnly": 1, "CloudIntegrationUser": 1},
            False,
            id="many-values-seen-once",
        ),
        pytest.param({"D": 3, "N": 4}, False, id="too-few-records"),
        pytest.param({"a": 3, "b": 3, "c": 3, "d": 3, "e": 2}, False, id="values-near-samples"),
        pytest.param({"1005g0000000001AAA": 9, "1005g0000000002AAA": 12}, False, id="record-ids"),
        pytest.param({"VEN-000001": 6, "VEN-000002": 9}, False, id="record-numbers"),
    ],
)
def test_a_set_of_values_is_closed_only_on_evidence(counts: dict[str, int], closed: bool) -> None:
    assert closed_set(counts) is closed


@pytest.mark.parametrize(
    "samples",
    [
        pytest.param(["a", "b", "c"], id="all-distinct"),
        pytest.param(["x", "x"], id="too-few-samples"),
        pytest.param([f"user{index}" for index in range(40)] * 2, id="too-many-values"),
        pytest.param(["2024-01-01", "2024-01-01", "2024-01-01"], id="dates-are-not-enums"),
        pytest.param(["10.0.0.1", "10.0.0.2"] * 6, id="addresses-are-not-enums"),
        pytest.param(
            ["", "", "", "", "Replaced the toner.", "Rebooted the print server."],
            id="texts-each-once-beside-blanks",
        ),
    ],
)
def test_values_that_are_no_enum(samples: list[str]) -> None:
    assert "enum" not in schema_of(samples)


def test_a_field_only_ever_blank_is_blank_and_no_enum() -> None:
    shape = Shape()
    for value in ["", "", ""]:
        shape.add(value)

    assert shape.schema() == {"type": "string", "maxLength": 0}
    assert shape.frequencies() == {"": 3}


def test_values_of_records_not_walked_count_towards_the_enum() -> None:
    shape = Shape("priority")
    for value in ["1", "2", "2", "1"]:
        shape.add(value)
    assert shape.enum() is None

    shape.unsampled = {"1": 6, "2": 3, "3": 4}

    assert shape.enum() == {"1": 8, "2": 5, "3": 4}
    assert shape.schema()["enum"] == ["1", "2", "3"]


_LOGINS = ["admin", "aisha.khan", "jonas.berg", "aisha.khan", "admin", "jonas.berg"]


@pytest.mark.parametrize(
    ("key", "values", "enum"),
    [
        pytest.param("user", _LOGINS, None, id="user-names-are-no-enum"),
        pytest.param("sys_updated_by", _LOGINS, None, id="who-changed-it-is-no-enum"),
        pytest.param("user_name", _LOGINS, None, id="logins-are-no-enum"),
        pytest.param("name", ["lnx-db-01", "lnx-web-01"] * 2, None, id="host-names-are-no-enum"),
        pytest.param(
            "sys_class_name",
            ["cmdb_ci", "cmdb_ci_server"] * 2,
            ["cmdb_ci", "cmdb_ci_server"],
            id="a-kind-of-record-stays-an-enum",
        ),
        pytest.param(
            "internal_integration_user",
            ["true", "false"] * 2,
            ["false", "true"],
            id="a-flag-stays-an-enum",
        ),
        pytest.param(
            "state", ["New", "Resolved"] * 2, ["New", "Resolved"], id="other-keys-stay-enums"
        ),
    ],
)
def test_identity_like_keys_do_not_close_their_values(
    key: str, values: list[str], enum: list[str] | None
) -> None:
    record = Shape()
    # Each value often enough that only the key decides.
    for value in values * 3:
        record.add({key: value})

    assert record.schema()["properties"][key].get("enum") == enum


def test_required_comes_from_presence_in_every_object() -> None:
    schema = schema_of([{"id": 1, "name": "a"}, {"id": 2}])

    assert schema["required"] == ["id"]
    assert set(schema["properties"]) == {"id", "name"}


def test_link_value_objects_are_marked_as_references() -> None:
    reference = {"link": "https://x.service-now.com/api/now/table/sys_user/1", "value": "1"}

    assert schema_of([reference])["x-myna-reference"] == "link_value"


def test_nested_arrays_of_objects_merge_their_items() -> None:
    schema = schema_of([{"tags": [{"k": "a"}]}, {"tags": [{"k": "b", "v": 1}]}])

    assert schema["properties"]["tags"]["items"]["required"] == ["k"]
    assert set(schema["properties"]["tags"]["items"]["properties"]) == {"k", "v"}


def test_conflicting_types_become_any_of_with_evidence() -> None:
    schema = schema_of(["", {"link": "https://x/1", "value": "1"}, ""])

    assert [branch["type"] for branch in schema["anyOf"]] == ["string", "object"]
    assert schema["x-myna-types"] == {"object": 1, "string": 2}


def test_long_arrays_are_sampled_evenly_including_both_ends() -> None:
    picked = sampled(list(range(100)), 5)

    assert picked == [0, 24, 49, 74, 99]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "a", "3", "true"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_json, min_size=1, max_size=6), st.randoms())
def test_learned_schema_does_not_depend_on_sample_order(samples: list[Any], random: Any) -> None:
    shuffled = list(samples)
    random.shuffle(shuffled)

    assert schema_of(shuffled) == schema_of(samples)


_schemas = st.lists(_json, min_size=1, max_size=4).map(schema_of)


@settings(max_examples=200, deadline=None)
@given(_schemas, _schemas)
def test_merge_is_commutative(left: dict[str, Any], right: dict[str, Any]) -> None:
    assert merge_schemas(left, right) == merge_schemas(right, left)


@settings(max_examples=200, deadline=None)
@given(_schemas)
def test_merge_is_idempotent(schema: dict[str, Any]) -> None:
    assert merge_schemas(schema, schema) == schema


@settings(max_examples=200, deadline=None)
@given(_schemas, _schemas)
def test_merging_again_changes_nothing(left: dict[str, Any], right: dict[str, Any]) -> None:
    merged = merge_schemas(left, right)

    assert merge_schemas(merged, merged) == merged
    assert merge_schemas(merged, right) == merge_schemas(merge_schemas(left, right), right)


def test_merge_widens_types_and_keeps_common_required() -> None:
    left = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    right = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a", "b"],
    }

    merged = merge_schemas(left, right)

    assert merged["required"] == ["a"]
    assert merged["properties"]["a"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert merged["properties"]["b"] == {"type": "string"}


def test_merge_unions_enums_and_widens_ranges() -> None:
    left = {"type": "integer", "minimum": 1, "maximum": 3, "enum": [1, 3]}
    right = {"type": ["integer", "null"], "minimum": 0, "maximum": 2, "enum": [2]}

    assert merge_schemas(left, right) == {
        "type": ["integer", "null"],
        "minimum": 0,
        "maximum": 3,
        "enum": [1, 2, 3],
    }


@pytest.mark.parametrize("optional", [False, True], ids=["required", "blank-allowed"])
@pytest.mark.parametrize("value_class", [r"[0-9a-f]{32}", r"-?[0-9]+(?:\.[0-9]+)?", r"true|false"])
def test_a_learned_pattern_gives_back_its_value_class(value_class: str, optional: bool) -> None:
    pattern = wrap_pattern(value_class, optional=optional)

    assert unwrap_pattern(pattern) == value_class
