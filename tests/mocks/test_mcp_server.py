"""The MCP server over streamable HTTP, driven by the official MCP client.

Each test serves the app with uvicorn on a free loopback port in a thread and talks to it with
`mcp.client.streamable_http`, first with a recording fake caller, then with the real mock.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.types import CallToolResult
from starlette.applications import Starlette

from myna.mocks import Mock, MockClient
from myna.mocks.app import create_app
from myna.mocks.example import TABLE as SN_TABLE
from myna.mocks.mcp_server import HttpCaller, caller_for_client, mcp_app
from myna.mocks.tools import Toolbox
from myna.schemas.model import ServiceModel
from tests.mocks.conftest import USER
from tests.mocks.test_tools import TABLE, incident_model

T = TypeVar("T")


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Serve `app` on a free loopback port in a thread; yield its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        assert time.monotonic() < deadline, "uvicorn did not start within 10 s"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def with_session(
    base_url: str,
    use: Callable[[ClientSession], Awaitable[T]],
    headers: dict[str, str] | None = None,
) -> T:
    async def main() -> T:
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await use(session)

    return anyio.run(main)


class RecordingCaller:
    """Answers like a tiny table API and records what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, str], Any, dict[str, str]]] = []

    def __call__(
        self, method: str, path: str, params: dict[str, str], body: Any, headers: dict[str, str]
    ) -> tuple[int, Any]:
        self.calls.append((method, path, params, body, headers))
        if method == "POST":
            return 201, {"result": {"sys_id": "abc", **body}}
        return 404, {"error": {"message": "No Record found"}, "status": "failure"}


def payload(result: CallToolResult) -> Any:
    assert result.content[0].type == "text"
    return json.loads(result.content[0].text)


@pytest.fixture(scope="module")
def model() -> ServiceModel:
    return incident_model()


def test_tools_list_matches_the_mcp_renderer(model: ServiceModel) -> None:
    with serving(mcp_app(model, RecordingCaller())) as url:
        listed = with_session(url, lambda session: session.list_tools())
    rendered = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
    assert rendered == Toolbox(model).mcp()


def test_tools_call_sends_the_http_request_and_returns_status_and_body(
    model: ServiceModel,
) -> None:
    caller = RecordingCaller()
    app = mcp_app(model, caller, headers={"Authorization": "Basic YTpi"})
    with serving(app) as url:
        created = with_session(
            url,
            lambda session: session.call_tool(
                "create_incident", {"short_description": "Disk full"}
            ),
            headers={"X-Myna-World": "episode-7"},
        )
    assert caller.calls == [
        (
            "POST",
            TABLE,
            {},
            {"short_description": "Disk full"},
            {"authorization": "Basic YTpi", "x-myna-world": "episode-7"},
        )
    ]
    expected = {
        "status": 201,
        "body": {"result": {"sys_id": "abc", "short_description": "Disk full"}},
    }
    assert created.is_error is False
    assert payload(created) == expected
    assert created.structured_content == expected


def test_an_error_status_is_a_tool_error_the_agent_can_read(model: ServiceModel) -> None:
    with serving(mcp_app(model, RecordingCaller())) as url:
        result = with_session(
            url, lambda session: session.call_tool("get_incident", {"sys_id": "missing"})
        )
    assert result.is_error is True
    assert payload(result)["status"] == 404


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        pytest.param("create_incident", {}, "'short_description' is a required", id="missing"),
        pytest.param(
            "get_incident", {"sys_id": 5}, "sys_id: 5 is not of type 'string'", id="wrong-type"
        ),
        pytest.param("launch_rocket", {}, "no tool 'launch_rocket'", id="unknown-tool"),
    ],
)
def test_bad_calls_never_reach_the_service(
    model: ServiceModel, name: str, arguments: dict[str, Any], message: str
) -> None:
    caller = RecordingCaller()
    with serving(mcp_app(model, caller)) as url:
        result = with_session(url, lambda session: session.call_tool(name, arguments))
    assert result.is_error is True
    assert result.content[0].type == "text"
    assert message in result.content[0].text
    assert caller.calls == []


def test_the_real_mock_behind_mcp(mock: Mock) -> None:
    caller = caller_for_client(MockClient(mock, auth=USER))

    async def scenario(session: ClientSession) -> tuple[CallToolResult, ...]:
        created = await session.call_tool(
            "create_incident", {"short_description": "VPN down", "caller_id": "a" * 32}
        )
        sys_id = payload(created)["body"]["result"]["sys_id"]
        refused = await session.call_tool(
            "update_incident", {"sys_id": sys_id, "state": "7"}
        )  # New -> Closed is not an allowed transition
        # Resolved needs close_code and close_notes, as the tool description says.
        incomplete = await session.call_tool(
            "resolve_incident", {"sys_id": sys_id, "close_code": "Solved"}
        )
        resolved = await session.call_tool(
            "resolve_incident",
            {"sys_id": sys_id, "close_code": "Solved", "close_notes": "Restarted the VPN"},
        )
        fetched = await session.call_tool("get_incident", {"sys_id": sys_id})
        listed = await session.call_tool(
            "list_incident", {"sysparm_query": "state=6^short_descriptionLIKEvpn"}
        )
        return created, refused, incomplete, resolved, fetched, listed

    with serving(mcp_app(mock.model, caller)) as url:
        created, refused, incomplete, resolved, fetched, listed = with_session(url, scenario)

    assert payload(created)["status"] == 201
    assert refused.is_error is True
    assert payload(refused)["status"] == 400
    assert payload(incomplete)["status"] == 400
    assert "close_notes" in json.dumps(payload(incomplete)["body"])
    assert (
        "requires close_code, close_notes"
        in Toolbox(mock.model).tool("resolve_incident").description
    )
    assert payload(resolved)["status"] == 200
    record = payload(fetched)["body"]["result"]
    assert (record["state"], record["close_code"]) == ("6", "Solved")
    assert fetched.is_error is False
    assert [r["sys_id"] for r in payload(listed)["body"]["result"]] == [record["sys_id"]]


def test_a_mock_in_another_process_over_http(mock: Mock) -> None:
    with (
        serving(create_app(mock)) as mock_url,
        HttpCaller(mock_url, headers={"Accept": "application/json"}) as caller,
    ):
        app = mcp_app(mock.model, caller, headers={"Authorization": _basic(*USER)})
        with serving(app) as url:
            created = with_session(
                url,
                lambda session: session.call_tool(
                    "create_incident", {"short_description": "Email bounces"}
                ),
            )
        sys_id = payload(created)["body"]["result"]["sys_id"]
        unauthenticated = caller("GET", f"{SN_TABLE}/incident/{sys_id}", {}, None, {})
        fetched = caller(
            "GET", f"{SN_TABLE}/incident/{sys_id}", {}, None, {"Authorization": _basic(*USER)}
        )
    assert payload(created)["status"] == 201
    assert unauthenticated[0] == 401  # credentials travel with each call, not with the caller
    assert fetched[0] == 200
    assert fetched[1]["result"]["short_description"] == "Email bounces"


def _basic(user: str, password: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_an_unreachable_service_is_a_tool_error_and_the_session_survives(
    model: ServiceModel,
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()

    async def twice(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        first = await session.call_tool("get_incident", {"sys_id": "x"})
        second = await session.call_tool("get_incident", {"sys_id": "y"})
        return first, second

    with HttpCaller(dead_url, timeout=5) as caller, serving(mcp_app(model, caller)) as url:
        first, second = with_session(url, twice)
    for result in (first, second):
        assert result.is_error is True
        assert result.content[0].type == "text"
        assert "could not reach the service: ConnectError" in result.content[0].text
