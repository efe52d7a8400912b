"""Single inference rules on literal input: id formats, sequences, error templates, auth."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from myna.schemas.conventions import ErrorSample, Gathered, error_template, infer_auth
from myna.schemas.evidence import Tally
from myna.schemas.fields import (
    NO_DEFAULT,
    create_default,
    id_format,
    link_target,
    sequence_format,
    written_blind,
)
from myna.schemas.merge import field_order
from myna.schemas.operations import OpStats, operation_kind, operation_resource
from myna.schemas.paths import PARAM
from myna.schemas.records import as_values, receipt_id, unwrap, view_of
from myna.schemas.shape import Shape


def _shape(values: list[str]) -> Shape:
    shape = Shape()
    for value in values:
        shape.add(value)
    return shape


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        pytest.param(
            {"688868e1053926ed51b99e2c3257f0ba", "d253854a020b15350cfd5545c04549a7"},
            {"kind": "hex32", "width": 32, "pattern": "^[0-9a-f]{32}$"},
            id="sys_id",
        ),
        pytest.param(
            {"7", "10", "12"}, {"kind": "integer", "start": 13, "pattern": "^[0-9]+$"}, id="integer"
        ),
        pytest.param(
            {"005FECBB8C2B44CYXS", "00550E02099786BABQ"},
            {"kind": "salesforce", "prefix": "005", "width": 18, "pattern": "^005[a-zA-Z0-9]{15}$"},
            id="salesforce",
        ),
        pytest.param(
            {"JJI-1", "JJI-5"},
            {"kind": "sequence", "prefix": "JJI-", "width": 1, "start": 6},
            id="key",
        ),
        pytest.param(
            {"cus_9s8d7f6g5h", "cus_1a2b3c4d5e"},
            {"kind": "prefixed", "prefix": "cus_", "width": 10},
            id="prefixed",
        ),
        pytest.param(
            {"customfield_10010", "summary"}, {"kind": "opaque", "width": 17}, id="opaque"
        ),
    ],
)
def test_id_format(ids: set[str], expected: dict[str, Any]) -> None:
    found = id_format(ids, Shape())

    assert found.model_dump(exclude_defaults=True) == expected


def test_sequence_generator_continues_after_the_highest_number() -> None:
    generator = sequence_format(_shape(["INC0000060", "INC0009002", "INC0000009"]))

    assert generator is not None
    assert (generator.prefix, generator.width, generator.start) == ("INC", 7, 9003)


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(["INC0000060", "PRB0000001"], id="two-prefixes"),
        pytest.param(["INC0000060", ""], id="sometimes-empty"),
        pytest.param(["INC0000060"], id="one-value"),
        pytest.param(["Printer", "Mouse"], id="words"),
    ],
)
def test_no_sequence_generator(values: list[str]) -> None:
    assert sequence_format(_shape(values)) is None


def test_link_target_is_the_table_before_the_id() -> None:
    links = ["https://x.service-now.com/api/now/table/sys_user/d5cef0a4436f226bb37fe72db7226a3d"]

    assert link_target(links) == "sys_user"


@pytest.mark.parametrize(
    ("creates", "expected"),
    [
        pytest.param([({"a": 1}, {"a": 1, "state": "1"})] * 2, "1", id="always-the-same"),
        pytest.param([({}, {"state": "1"}), ({}, {"state": "2"})], None, id="differs"),
        pytest.param([({"state": "2"}, {"state": "2"})], None, id="always-sent"),
    ],
)
def test_create_default(creates: list[tuple[Any, dict[str, Any]]], expected: str | None) -> None:
    found = create_default("state", creates)

    assert (None if found is NO_DEFAULT else found) == expected


@pytest.mark.parametrize(
    ("samples", "template"),
    [
        pytest.param(
            [
                {
                    "error": {"message": "No Record found", "detail": "Record doesn't exist"},
                    "status": "failure",
                }
            ],
            {"error": {"message": "{message}", "detail": "{detail}"}, "status": "failure"},
            id="servicenow",
        ),
        pytest.param(
            [
                [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}],
                [{"message": "Bad field", "errorCode": "INVALID_FIELD"}],
            ],
            [{"message": "{message}", "errorCode": "{code}"}],
            id="salesforce-codes-vary",
        ),
        pytest.param(
            [{"errorMessages": [], "errors": {"project": "Specify a valid project ID or key"}}],
            {"errorMessages": [], "errors": {"{field}": "{message}"}},
            id="jira-field-errors",
        ),
    ],
)
def test_error_template(samples: list[Any], template: Any) -> None:
    assert error_template(samples) == template


def _tally(count: int) -> Tally:
    tally = Tally()
    for index in range(count):
        tally.add(0, f"e{index}")
    return tally


@pytest.mark.parametrize(
    ("gathered", "scheme"),
    [
        pytest.param(Gathered(auth_headers={"basic": _tally(3)}), "basic", id="basic-header"),
        pytest.param(Gathered(auth_headers={"bearer": _tally(2)}), "bearer", id="bearer-header"),
        pytest.param(Gathered(api_key_headers={"X-Api-Key": _tally(2)}), "apikey", id="api-key"),
        pytest.param(
            Gathered(
                unauthorized=[ErrorSample(401, None, {"www-authenticate": 'Basic realm="x"'}, "e1")]
            ),
            "basic",
            id="redacted-header-challenge-tells",
        ),
        pytest.param(
            Gathered(auth_headers={"bearer": _tally(2)}, token_path="/oauth2/token"),
            "oauth2",
            id="token-endpoint",
        ),
        pytest.param(Gathered(), "none", id="nothing-seen"),
    ],
)
def test_auth_scheme(gathered: Gathered, scheme: str) -> None:
    assert infer_auth(gathered).scheme == scheme


def _op(
    method: str,
    template: tuple[str, ...],
    record_types: Counter[str] | None = None,
    **counts: int,
) -> OpStats:
    """An operation seen once with status 200 and the given counts (`many`, `one_with_id`),
    its records naming `record_types`."""
    op = OpStats(method, template, statuses={200: _tally(1)})
    for name, value in counts.items():
        setattr(op, name, value)
    op.record_types = record_types or Counter()
    return op


@pytest.mark.parametrize(
    ("op", "kind"),
    [
        pytest.param(_op("GET", ("incident",), many=2), "list", id="list"),
        pytest.param(_op("GET", ("incident", PARAM)), "get", id="get"),
        pytest.param(_op("PATCH", ("incident", PARAM)), "update", id="update"),
        pytest.param(_op("PUT", ("incident", PARAM)), "replace", id="replace"),
        pytest.param(_op("DELETE", ("incident", PARAM)), "delete", id="delete"),
        pytest.param(_op("POST", ("issue",), one_with_id=1), "create", id="create"),
        pytest.param(_op("POST", ("issue", PARAM, "transitions")), "action", id="action"),
        pytest.param(_op("POST", ("search",), many=1), "query", id="search"),
        pytest.param(_op("GET", ("serverInfo",)), "other", id="no-records"),
    ],
)
def test_operation_kind(op: OpStats, kind: str) -> None:
    assert operation_kind(op) == kind


@pytest.mark.parametrize(
    ("op", "resource"),
    [
        pytest.param(_op("GET", ("table", "incident"), many=1), "incident", id="table-name-kept"),
        pytest.param(_op("GET", ("users",), many=1), "user", id="singular"),
        pytest.param(_op("POST", ("issue", PARAM, "transitions")), "issue", id="action-owner"),
        pytest.param(
            _op("GET", ("sobjects", "User", "describe")), "User", id="describe-of-sobject"
        ),
        pytest.param(_op("GET", ("user", "search"), many=1), "user", id="search-below-resource"),
        pytest.param(
            _op("GET", ("sobjects", "Account", PARAM), record_types=Counter(Account=1)),
            "Account",
            id="record-of-the-type-the-path-names",
        ),
        pytest.param(
            _op("POST", ("sobjects", "Account"), one_with_id=1), "Account", id="create-of-sobject"
        ),
        pytest.param(
            _op("GET", ("query",), many=1, record_types=Counter(Account=2, Contact=1)),
            None,
            id="soql-answers-many-types",
        ),
        pytest.param(
            _op("GET", ("sobjects", "Account", "External_Id__c", PARAM)),
            None,
            id="found-by-another-field",
        ),
    ],
)
def test_operation_resource(op: OpStats, resource: str | None) -> None:
    assert operation_resource(op) == resource


SYS_ID = "a" * 32
PAIRS = {
    "sys_id": {"display_value": SYS_ID, "value": SYS_ID},
    "state": {"display_value": "Resolved", "value": "6"},
    "caller_id": {"display_value": "Abel Tuter", "link": "https://x/sys_user/b", "value": "b"},
    "knowledge": {"display_value": "false", "value": False},
    "short_description": "plain",
}


@pytest.mark.parametrize(
    ("query", "record", "view"),
    [
        pytest.param([("sysparm_display_value", "true")], {"state": "Resolved"}, "labels"),
        pytest.param([("sysparm_display_value", "ALL")], {"state": "6"}, "pairs", id="all"),
        pytest.param([("sysparm_display_value", "false")], {"state": "6"}, "values"),
        pytest.param([], PAIRS, "pairs", id="always-pairs"),
        pytest.param([], {"state": {"display_value": "x", "other": 1}}, "values", id="no-pair"),
        pytest.param([], {"caller_id": {"link": "https://x", "value": "b"}}, "values", id="ref"),
    ],
)
def test_view_of_an_answer(query: list[tuple[str, str]], record: dict[str, Any], view: str) -> None:
    assert view_of(query, [record]) == view


def test_pairs_give_values_references_and_labels() -> None:
    values, labels = as_values([PAIRS])

    assert values == [
        {
            "sys_id": SYS_ID,
            "state": "6",
            "caller_id": {"link": "https://x/sys_user/b", "value": "b"},
            "knowledge": False,
            "short_description": "plain",
        }
    ]
    assert labels == {"state": {"6": "Resolved"}, "caller_id": {"b": "Abel Tuter"}}


@pytest.mark.parametrize(
    ("body", "receipt"),
    [
        pytest.param(
            {"id": "0015g0000000001AAA", "success": True, "errors": []},
            ("id", "0015g0000000001AAA"),
            id="salesforce-create",
        ),
        pytest.param(
            {"id": "0015g0000000001AAA", "success": True, "errors": [], "created": False},
            ("id", "0015g0000000001AAA"),
            id="salesforce-upsert",
        ),
        pytest.param({"id": 7}, ("id", "7"), id="bare-id"),
        pytest.param({"id": "10010", "key": "JJJ-9", "self": "https://x"}, None, id="jira-stub"),
        pytest.param({"id": "5", "status": "open"}, None, id="a-record"),
        pytest.param({"success": True}, None, id="no-id"),
    ],
)
def test_a_write_answered_with_its_id_only(body: Any, receipt: tuple[str, str] | None) -> None:
    assert receipt_id(body) == receipt


@pytest.mark.parametrize(
    ("body", "key", "count"),
    [
        pytest.param({"id": "GR-1", "lines": [{"line": 1}], "receipt_date": "x"}, None, 1),
        pytest.param({"total": 1, "lines": [{"line": 1}]}, "lines", 1, id="wrapper"),
        pytest.param({"id": "1", "data": [{"id": "2"}]}, "data", 1, id="generic-key-wraps"),
        pytest.param({"id": "1", "success": True, "errors": []}, None, 1, id="create-answer"),
    ],
)
def test_a_list_in_a_record_with_an_id_is_a_field(
    body: dict[str, Any], key: str | None, count: int
) -> None:
    unwrapped = unwrap(body)

    assert (unwrapped.key, len(unwrapped.records)) == (key, count)


def _shape_of(*values: Any) -> Shape:
    shape = Shape()
    for value in values:
        shape.add(value)
    return shape


@pytest.mark.parametrize(
    ("answered", "sent", "blind"),
    [
        pytest.param(_shape_of("", ""), [_shape_of("Rebooted.")], True, id="journal-field"),
        pytest.param(_shape_of("", ""), [_shape_of("")], False, id="sent-blank"),
        pytest.param(_shape_of("", "x"), [_shape_of("y")], False, id="answered-text"),
        pytest.param(_shape_of("", ""), [], False, id="never-sent"),
    ],
)
def test_a_field_written_but_answered_blank(
    answered: Shape, sent: list[Shape], blind: bool
) -> None:
    assert written_blind(answered, sent) == blind


@pytest.mark.parametrize(
    ("old", "new", "pinned", "order"),
    [
        pytest.param(
            ["category", "close_code"],
            ["sys_id", "number", "category", "state", "close_code"],
            {"category", "close_code"},
            ["sys_id", "number", "category", "state", "close_code"],
            id="an-overlay-takes-the-traces-order",
        ),
        pytest.param(
            ["sys_id", "number", "state"],
            ["sys_id", "impact", "state", "closed_at"],
            set(),
            ["sys_id", "impact", "number", "state", "closed_at"],
            id="new-fields-after-the-field-before-them",
        ),
        pytest.param(
            ["number", "state"],
            ["opened_at", "state"],
            set(),
            ["number", "opened_at", "state"],
            id="new-first-field-before-the-field-after-it",
        ),
        pytest.param(
            ["sys_id", "priority", "state"],
            ["sys_id", "priority", "state", "impact"],
            {"priority"},
            ["sys_id", "priority", "state", "impact"],
            id="a-pinned-field-in-place-stays",
        ),
        pytest.param(
            ["legacy", "state"],
            ["sys_id", "state"],
            {"legacy"},
            ["legacy", "sys_id", "state"],
            id="a-pinned-field-the-traces-lack-stays",
        ),
    ],
)
def test_merged_field_order(
    old: list[str], new: list[str], pinned: set[str], order: list[str]
) -> None:
    assert field_order(old, new, pinned) == order
