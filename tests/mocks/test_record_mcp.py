"""`myna record --mcp`: a stdio MCP server (written with the official SDK) recorded through the
wrapper by the official client, learned, served as a mock, and asked the same again."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from myna.mocks import Mock, MockClient
from myna.mocks.conformance import body_schema, first_violation
from myna.mocks.mcp_server import caller_for_client, mcp_app
from myna.schemas import learn
from myna.schemas.openapi import load, save
from myna.traces import ToolCall, read
from tests.mocks.test_mcp_server import serving, with_session

SERVER = Path(__file__).parent / "fixtures" / "ticket_mcp_server.py"

Call = tuple[str, dict[str, Any]]


def _desk_session(created: list[str]) -> list[Call]:
    """The calls a help-desk agent makes; `{n}` in an argument is the n-th created ticket."""
    return [
        ("create_ticket", {"title": "VPN drops every few minutes", "priority": 2}),
        ("create_ticket", {"title": "Printer on floor 3 jams"}),
        ("create_ticket", {"title": "New laptop for Ana", "priority": 4}),
        ("get_ticket", {"ticket_id": "{0}"}),
        ("update_ticket", {"ticket_id": "{0}", "priority": 1}),
        ("get_ticket", {"ticket_id": "{1}"}),
        ("close_ticket", {"ticket_id": "{1}"}),
        ("update_ticket", {"ticket_id": "{2}", "priority": 5}),
        ("close_ticket", {"ticket_id": "{2}"}),
        ("get_ticket", {"ticket_id": "TCK-1"}),
    ]


def _arguments(arguments: dict[str, Any], created: list[str]) -> dict[str, Any]:
    return {
        key: created[int(value[1:-1])] if isinstance(value, str) and value[:1] == "{" else value
        for key, value in arguments.items()
    }


async def _run(session: ClientSession) -> tuple[list[dict[str, Any]], list[tuple[Any, bool]]]:
    """List the tools and make the session's calls; the tools and each (result, is_error)."""
    listed = await session.list_tools()
    created: list[str] = []
    answers = []
    for name, arguments in _desk_session(created):
        answer = await session.call_tool(name, _arguments(arguments, created))
        result = answer.structured_content
        if name == "create_ticket" and result is not None:
            created.append(result["id"])
        answers.append((result, answer.is_error))
    return [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools], answers


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The session run by the official client against `myna record --mcp -- SERVER`."""
    output = tmp_path_factory.mktemp("mcp") / "desk.jsonl"
    wrapper = ["-c", "from myna.cli import main; main()", "record", "--mcp", "-o", str(output)]
    parameters = StdioServerParameters(
        command=sys.executable, args=[*wrapper, "--", sys.executable, str(SERVER)]
    )

    async def main() -> Any:
        async with (
            stdio_client(parameters) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            await session.initialize()
            return await _run(session)

    return output, anyio.run(main)


def test_the_wrapper_passes_traffic_through_and_records_every_call(
    recorded: tuple[Path, Any],
) -> None:
    output, (tools, answers) = recorded
    sessions = list(read(output))
    calls = [event for session in sessions for event in session.events]
    assert all(isinstance(call, ToolCall) for call in calls)
    assert [call.name for call in calls] == [name for name, _ in _desk_session([])]
    assert [call.error is not None for call in calls if isinstance(call, ToolCall)] == [
        is_error for _, is_error in answers
    ]
    assert answers[-1] == (None, True)  # the unknown ticket
    assert sessions[-1].metadata["server"]["name"] == "ticket-desk"
    recorded_tools = {tool["name"]: tool for tool in sessions[-1].metadata["tools"]}
    assert {tool["name"] for tool in tools} == set(recorded_tools)
    for tool in tools:
        assert recorded_tools[tool["name"]]["inputSchema"] == tool["inputSchema"]


def test_the_learned_mock_lists_and_answers_the_tools_as_recorded(
    recorded: tuple[Path, Any], tmp_path: Path
) -> None:
    output, (tools, answers) = recorded
    (learned,) = learn(read(output))
    save(learned, tmp_path / "desk.yaml")
    model = load(tmp_path / "desk.yaml")
    app = mcp_app(model, caller_for_client(MockClient(Mock(model))))

    with serving(app) as base_url:
        mock_tools, mock_answers = with_session(base_url, _run)

    def offered(listed: list[dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
        return {tool["name"]: (tool["description"], tool["inputSchema"]) for tool in listed}

    assert offered(mock_tools) == offered(tools)
    assert [is_error for _, is_error in mock_answers] == [is_error for _, is_error in answers]
    for (result, _), (mock_result, _) in zip(answers, mock_answers, strict=True):
        if result is not None:
            assert first_violation(body_schema(result), mock_result) is None, mock_result
            assert set(mock_result) == set(result)
