"""Service extensions: a model opts into hooks by name, and the runtime calls each at its point.

Every test serves the hand-written ServiceNow-like example model with one probe extension that
exercises a single hook, so what the runtime does without extensions stays what it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from myna.errors import MockError, ModelError
from myna.mocks import Mock, MockClient
from myna.mocks.auth import Credentials
from myna.mocks.example import TABLE, servicenow_example
from myna.mocks.extensions import (
    EXTENSIONS,
    Extension,
    Extensions,
    PageCall,
    RenderCall,
    Route,
    RouteCall,
    WriteCall,
    extensions_for,
    register_extension,
)
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.query import Query
from myna.mocks.rejection import Rejection
from myna.mocks.sqlstore import SqlStore

USER = ("admin", "secret")
PROBE = "probe"


@pytest.fixture
def register() -> Iterator[Any]:
    """Register extensions for one test, and take them out of the registry after it."""
    added: list[str] = []

    def add(extension: Extension) -> None:
        register_extension(extension)
        added.append(extension.name)

    yield add
    for name in added:
        EXTENSIONS.unregister(name)


def serve(register: Any, **hooks: Any) -> MockClient:
    register(Extension(name=PROBE, **hooks))
    model = servicenow_example()
    model.extensions = [PROBE]
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([USER])))
    return MockClient(mock, auth=USER)


def create(client: MockClient, **values: Any) -> dict[str, Any]:
    response = client.post(f"{TABLE}/incident", json={"short_description": "x", **values})
    assert response.status == 201, response.json()
    result: dict[str, Any] = response.json()["result"]
    return result


# -- the registry ------------------------------------------------------------------------------


def test_a_second_extension_with_the_same_name_is_refused(register: Any) -> None:
    register(Extension(name=PROBE))
    with pytest.raises(MockError, match="already registered"):
        register_extension(Extension(name=PROBE))


def test_a_model_naming_an_unknown_extension_is_a_model_error() -> None:
    model = servicenow_example()
    model.extensions = ["nowhere"]
    with pytest.raises(ModelError, match=r"'nowhere'.*there are: .*servicenow"):
        extensions_for(model)


def test_a_built_in_extension_is_found_without_importing_it_first() -> None:
    model = servicenow_example()
    model.extensions = ["servicenow"]
    assert [extension.name for extension in extensions_for(model).chosen] == ["servicenow"]


def test_the_model_file_keeps_the_extensions_it_opts_into() -> None:
    from myna.schemas.openapi import dumps, loads

    model = servicenow_example()
    model.extensions = ["servicenow"]
    assert loads(dumps(model)).extensions == ["servicenow"]
    assert "extensions" not in dumps(servicenow_example())


@pytest.mark.parametrize(
    ("path", "served"),
    [
        ("/api/now/v2/table/incident", "/api/now/table/incident"),
        ("/api/now/v2/table", "/api/now/table"),
        ("/api/now/v2/tables/incident", "/api/now/v2/tables/incident"),
        ("/api/now/table/incident", "/api/now/table/incident"),
    ],
    ids=["below", "itself", "not-a-whole-segment", "unaliased"],
)
def test_aliases_replace_whole_leading_segments(path: str, served: str) -> None:
    extensions = Extensions(
        (Extension(name="alias", aliases=(("/api/now/v2/table", "/api/now/table"),)),)
    )
    assert extensions.alias(path) == served


# -- routes ------------------------------------------------------------------------------------


def test_an_extension_route_answers_before_the_model_s_operations(register: Any) -> None:
    def count(call: RouteCall) -> MockResponse:
        _, total = call.transaction().list("incident", Query())
        return MockResponse(200, payload={"count": total, "by": call.user()})

    client = serve(register, routes=(Route("GET", f"{TABLE}/incident/count", count),))
    create(client)
    assert client.get(f"{TABLE}/incident/count").json() == {"count": 1, "by": "admin"}


def test_a_reading_route_that_writes_runs_again_as_a_writer(register: Any, store_url: str) -> None:
    """A GET route is expected to read; one that writes after all (on PostgreSQL, where a
    reading transaction refuses to write) is run again in a writing one, once."""

    def touch(call: RouteCall) -> MockResponse:
        tx = call.transaction()
        record = tx.get("incident", call.params["id"])
        assert record is not None
        tx.update(
            "incident", call.params["id"], {**record, "description": record["description"] + "!"}
        )
        return MockResponse(200, payload={"description": record["description"] + "!"})

    register(Extension(name=PROBE, routes=(Route("GET", f"{TABLE}/touch/{{id}}", touch),)))
    model = servicenow_example()
    model.extensions = [PROBE]
    store = SqlStore(model, store_url)
    try:
        mock = Mock(model, store, credentials=Credentials(users=dict([USER])))
        client = MockClient(mock, auth=USER)
        record_id = create(client, description="seen")["sys_id"]
        answers = [client.get(f"{TABLE}/touch/{record_id}").json() for _ in range(2)]
        stored = client.get(f"{TABLE}/incident/{record_id}").json()["result"]
    finally:
        store.close()
    assert answers == [{"description": "seen!"}, {"description": "seen!!"}]
    assert stored["description"] == "seen!!"


def test_an_authenticated_route_answers_the_service_s_401(register: Any) -> None:
    client = serve(
        register, routes=(Route("GET", "/ping", lambda call: MockResponse(200, payload={})),)
    )
    assert client.get("/ping", headers={"Authorization": ""}).status == 401


def test_an_open_route_needs_no_credential(register: Any) -> None:
    def pong(call: RouteCall) -> MockResponse:
        return MockResponse(200, payload={"principal": call.principal})

    client = serve(register, routes=(Route("GET", "/ping", pong, authenticated=False),))
    assert client.get("/ping", headers={"Authorization": ""}).json() == {"principal": None}


def test_a_non_transactional_route_serves_other_requests_in_the_same_world(
    register: Any,
) -> None:
    def twice(call: RouteCall) -> MockResponse:
        inner = MockRequest(
            "POST",
            f"{TABLE}/incident",
            headers=call.request.headers,
            body=b'{"short_description": "from inside"}',
        )
        statuses = [call.serve(inner).status, call.serve(inner).status]
        return MockResponse(200, payload={"statuses": statuses, "tx": call.tx is None})

    client = serve(register, routes=(Route("POST", "/twice", twice, transactional=False),))
    assert client.post("/twice").json() == {"statuses": [201, 201], "tx": True}
    assert client.get(f"{TABLE}/incident").json()["result"][1]["short_description"] == (
        "from inside"
    )


def test_an_unrouted_hook_answers_paths_no_operation_serves(register: Any) -> None:
    def invalid(mock: Mock, request: MockRequest, path: str) -> Rejection | None:
        return Rejection(400, f"Invalid table {path.rsplit('/', 1)[-1]}")

    client = serve(register, unrouted=invalid)
    response = client.get(f"{TABLE}/nothing")
    assert (response.status, response.json()["error"]["message"]) == (400, "Invalid table nothing")


def test_a_rejection_with_a_body_is_answered_verbatim(register: Any) -> None:
    def refuse(call: RouteCall) -> MockResponse:
        raise Rejection(401, "no", body={"error": "server_error"})

    client = serve(register, routes=(Route("POST", "/token", refuse, authenticated=False),))
    response = client.post("/token")
    assert (response.status, response.json()) == (401, {"error": "server_error"})


# -- writes ------------------------------------------------------------------------------------


def test_before_write_derives_fields_into_the_stored_record(register: Any) -> None:
    def shout(call: WriteCall) -> None:
        if call.kind != "delete":
            call.after["description"] = str(call.after["short_description"]).upper()

    client = serve(register, before_write=shout)
    record = create(client, short_description="printer")
    again = client.get(f"{TABLE}/incident/{record['sys_id']}").json()["result"]
    assert (record["description"], again["description"]) == ("PRINTER", "PRINTER")


def test_a_refusal_in_after_write_rolls_back_the_write_and_its_side_effects(
    register: Any,
) -> None:
    def side_effect_then_refuse(call: WriteCall) -> None:
        values = {"user_name": f"shadow-{call.kind}"}
        call.mock.insert_record(call.tx, "sys_user", values, call.principal)
        if call.kind == "update":
            raise Rejection(403, "Operation Failed", detail="not today")

    client = serve(register, after_write=side_effect_then_refuse)
    record = create(client)
    refused = client.patch(f"{TABLE}/incident/{record['sys_id']}", json={"description": "y"})
    assert (refused.status, refused.json()["error"]["detail"]) == (403, "not today")
    users = client.get(f"{TABLE}/sys_user").json()["result"]
    assert [user["user_name"] for user in users] == ["shadow-create"]
    after = client.get(f"{TABLE}/incident/{record['sys_id']}").json()["result"]
    assert after["description"] == record["description"] != "y"


def test_a_custom_action_goes_through_the_write_hooks_like_an_update(register: Any) -> None:
    """An action (resolve) is a write: the hooks derive and refuse on it as on a PATCH, so an
    extension's rules cannot be stepped around by calling the action instead."""
    seen: list[tuple[str, str | None, str]] = []

    def note(call: WriteCall) -> None:
        before = None if call.before is None else str(call.before["state"])
        seen.append((call.kind, before, str(call.after["state"])))
        if call.kind == "update" and call.sent.get("close_code") == "forbidden":
            raise Rejection(403, "Operation Failed", detail="not this code")
        call.after["description"] = f"seen in state {call.after['state']}"

    client = serve(register, before_write=note)
    record = create(client)
    path = f"{TABLE}/incident/{record['sys_id']}/resolve"
    refused = client.post(path, json={"close_code": "forbidden"})
    assert (refused.status, refused.json()["error"]["detail"]) == (403, "not this code")
    resolved = client.post(path, json={"close_code": "fixed", "close_notes": "rebooted"})
    assert resolved.status == 200, resolved.json()
    assert resolved.json()["result"]["description"] == "seen in state 6"
    assert seen[1:] == [("update", "1", "6"), ("update", "1", "6")]


def test_delete_hooks_see_the_record_that_goes(register: Any) -> None:
    seen: list[tuple[str, str]] = []

    def note(call: WriteCall) -> None:
        if call.kind == "delete":
            seen.append((call.kind, str(call.after["short_description"])))

    client = serve(register, after_write=note)
    record = create(client, short_description="gone")
    assert client.delete(f"{TABLE}/incident/{record['sys_id']}").status == 204
    assert seen == [("delete", "gone")]


def test_partial_put_keeps_the_fields_not_sent(register: Any) -> None:
    client = serve(register, partial_put=True)
    record = create(client, description="kept")
    put = client.put(f"{TABLE}/incident/{record['sys_id']}", json={"short_description": "new"})
    assert put.json()["result"]["description"] == "kept"


def test_unknown_body_fields_are_dropped_when_the_service_ignores_them(register: Any) -> None:
    client = serve(register, ignore_unknown_fields=True)
    record = create(client, u_custom="y")
    assert "u_custom" not in record


# -- rendering and paging ------------------------------------------------------------------------


def test_render_rewrites_each_record_of_items_and_lists(register: Any) -> None:
    def tag(call: RenderCall) -> dict[str, Any]:
        return {**call.rendered, "seen_by": call.request.method}

    client = serve(register, render=tag)
    record = create(client)
    assert record["seen_by"] == "POST"
    assert [row["seen_by"] for row in client.get(f"{TABLE}/incident").json()["result"]] == ["GET"]


def test_link_header_is_the_extension_s_own(register: Any) -> None:
    def mine(call: PageCall) -> str | None:
        return None if call.total <= 1 else f"{call.offset}/{call.limit}/{call.total}"

    client = serve(register, link_header=mine)
    create(client)
    assert client.get(f"{TABLE}/incident", params={"sysparm_limit": "1"}).header("Link") is None
    create(client)
    listed = client.get(f"{TABLE}/incident", params={"sysparm_limit": "1"})
    assert listed.header("Link") == "0/1/2"


def test_without_extensions_one_page_has_no_link_and_several_do() -> None:
    model = servicenow_example()
    mock = Mock(model, SqlStore(model, "sqlite://"), credentials=Credentials(users=dict([USER])))
    client = MockClient(mock, auth=USER)
    create(client)
    assert client.get(f"{TABLE}/incident", params={"sysparm_limit": "5"}).header("Link") is None
    create(client)
    link = client.get(f"{TABLE}/incident", params={"sysparm_limit": "1"}).header("Link") or ""
    assert link.count('rel="next"') == 1


def test_side_effect_resources_are_the_union_of_the_chosen_extensions() -> None:
    extensions = Extensions(
        (
            Extension(name="audit", side_effect_resources=frozenset({"sys_audit"})),
            Extension(name="journal", side_effect_resources=frozenset({"sys_journal_field"})),
        )
    )
    assert extensions.side_effect_resources == {"sys_audit", "sys_journal_field"}
