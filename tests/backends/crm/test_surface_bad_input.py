"""Bad input to the composite, bulk and replication resources is refused in Salesforce's shape,
never a 500: random bodies (any JSON value, text, CSV) and parameters sent to every one of them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myna.backends import builtin_model
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.sqlstore import SqlStore

TOKEN = "crm-bad-input"
DATA = "/services/data/v59.0"
PATHS = (
    ("POST", f"{DATA}/composite"),
    ("POST", f"{DATA}/composite/batch"),
    ("POST", f"{DATA}/composite/tree/Account"),
    ("POST", f"{DATA}/composite/tree/Nope"),
    ("POST", f"{DATA}/composite/sobjects"),
    ("PATCH", f"{DATA}/composite/sobjects"),
    ("DELETE", f"{DATA}/composite/sobjects"),
    ("GET", f"{DATA}/composite/sobjects/Account"),
    ("POST", f"{DATA}/jobs/ingest"),
    ("POST", f"{DATA}/jobs/query"),
    ("GET", f"{DATA}/jobs/ingest/750000000000000AAA"),
    ("PATCH", f"{DATA}/jobs/ingest/750000000000000AAA"),
    ("GET", f"{DATA}/jobs/query/750000000000000AAA/results"),
    ("GET", f"{DATA}/sobjects/Account/updated"),
    ("GET", f"{DATA}/sobjects/Account/deleted"),
    ("POST", "/services/async/59.0/job"),
    ("POST", "/services/async/59.0/job/750000000000000AAA/batch"),
    ("GET", "/services/async/59.0/job/750000000000000AAA/batch/751000000000000AAA/result"),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=15), inner, max_size=4)
    ),
    max_leaves=12,
)
# Bodies shaped like the real ones, with wrong parts: where the handlers look first.
shaped = st.fixed_dictionaries(
    {},
    optional={
        "compositeRequest": json_values,
        "batchRequests": json_values,
        "records": json_values,
        "allOrNone": json_values,
        "operation": st.sampled_from(["insert", "upsert", "query", "delete", "x"]),
        "object": st.sampled_from(["Account", "Contact", "Nope", ""]),
        "query": st.sampled_from(["SELECT Id FROM Account", "SELECT FROM", ""]),
        "externalIdFieldName": st.sampled_from(["Id", "Name", "Nope"]),
        "columnDelimiter": st.sampled_from(["COMMA", "TAB", "BOGUS"]),
        "state": st.sampled_from(["UploadComplete", "Aborted", "Closed", "x"]),
    },
)
params = st.dictionaries(
    st.sampled_from(["start", "end", "ids", "fields", "locator", "maxRecords", "allOrNone"]),
    st.text(max_size=30),
    max_size=3,
)


@pytest.fixture(scope="module")
def api() -> MockClient:
    model = builtin_model("crm")
    mock = Mock(
        model, SqlStore(model, "sqlite://"), credentials=Credentials(tokens=frozenset({TOKEN}))
    )
    return MockClient(mock, headers={"Authorization": f"Bearer {TOKEN}", "X-SFDC-Session": TOKEN})


def _salesforce_error(body: Any) -> bool:
    if isinstance(body, dict):  # Bulk API 1.0's shape, or a collection's per-record answers
        return "exceptionCode" in body or "hasErrors" in body
    return isinstance(body, list) and all("errorCode" in e or "statusCode" in e for e in body)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    call=st.sampled_from(PATHS),
    body=st.one_of(shaped, json_values, st.text(max_size=40)),
    query=params,
)
def test_bad_input_is_refused_in_salesforce_s_shape(
    api: MockClient, call: tuple[str, str], body: Any, query: dict[str, str]
) -> None:
    method, path = call
    if isinstance(body, str):
        answer = api.request(
            method, path, content=body.encode(), params=query, headers={"Content-Type": "text/csv"}
        )
    else:
        answer = api.request(method, path, json=body, params=query)
    assert answer.status < 500, (call, body, answer.body)
    if answer.status >= 400:
        assert _salesforce_error(json.loads(answer.body)), (call, body, answer.body)


def test_a_csv_cell_past_the_parser_s_limit_fails_the_job_not_the_server(api: MockClient) -> None:
    job = api.post(f"{DATA}/jobs/ingest", json={"object": "Account", "operation": "insert"}).json()
    path = f"{DATA}/jobs/ingest/{job['id']}"
    huge = ("Name\n" + "x" * 200_000 + "\n").encode()
    uploaded = api.request(
        "PUT", f"{path}/batches", content=huge, headers={"Content-Type": "text/csv"}
    )
    assert uploaded.status == 201
    closed = api.patch(path, json={"state": "UploadComplete"})
    assert closed.status == 400
    assert json.loads(closed.body)[0]["errorCode"] == "INVALIDBATCH"


def test_a_malformed_tree_record_leaves_none_of_the_tree(api: MockClient) -> None:
    good = {"attributes": {"type": "Account", "referenceId": "a"}, "Name": "Half a tree"}
    answer = api.post(f"{DATA}/composite/tree/Account", json={"records": [good, 5]})
    assert answer.status == 400
    found = api.get(
        f"{DATA}/query", params={"q": "SELECT COUNT() FROM Account WHERE Name = 'Half a tree'"}
    )
    assert json.loads(found.body)["totalSize"] == 0
