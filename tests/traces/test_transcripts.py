"""Agent transcripts (OpenAI chat, Responses, Anthropic) and MCP logs become sessions of calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from myna.errors import TraceFormatError
from myna.traces import Message, Session, ToolCall, read
from tests.traces.helpers import WriteFile

FIXTURES = Path(__file__).parent / "fixtures"


def only_session(path: Path, format: str | None = None) -> Session:
    (session,) = read(path, format=format)
    return session


def calls(session: Session) -> list[tuple[str, str, object, object, str | None]]:
    return [(c.id, c.name, c.arguments, c.result, c.error) for c in session.tool_calls]


def test_openai_chat_calls_are_matched_to_tool_messages() -> None:
    session = only_session(FIXTURES / "openai_chat.json")

    assert session.id == "chat-incident-triage-0007"
    assert session.task == (
        "Reassign INC0010023 to the Network group and add a work note explaining why."
    )
    assert (session.outcome, session.feedback) == (
        "failure",
        "The agent reassigned the ticket but never added the work note.",
    )
    assert session.metadata["model"] == "gpt-4o-2024-08-06"
    assert [tool["function"]["name"] for tool in session.metadata["tools"]] == [
        "get_incident",
        "update_incident",
    ]
    assert [(type(e).__name__, getattr(e, "role", None)) for e in session.events] == [
        ("Message", "system"),
        ("Message", "user"),
        ("ToolCall", None),
        ("Message", "assistant"),
        ("ToolCall", None),
        ("Message", "assistant"),
    ]
    get, update = session.tool_calls
    assert (get.id, get.name, get.arguments) == (
        "call_6Qp2sWm3",
        "get_incident",
        {"number": "INC0010023"},
    )
    assert isinstance(get.result, dict)
    assert get.result["assignment_group"]["display_value"] == "Service Desk"
    assert update.result == {"status": "updated", "sys_updated_on": "2024-05-02 09:14:07"}


def test_openai_chat_jsonl_holds_one_conversation_per_line() -> None:
    stream = read(FIXTURES / "openai_chat.jsonl")
    sessions = list(stream)

    assert [(s.id, s.task, s.outcome) for s in sessions] == [
        ("chat-001", "How many P1 incidents are open?", "success"),
        ("chat-002", "Reset the password of user jdoe", "failure"),
    ]
    assert calls(sessions[1]) == [
        (
            "call_b1",
            "reset_password",
            {"user_name": "jdoe", "new_password": "[REDACTED]"},
            "Error: insufficient privileges (requires role user_admin)",
            None,
        ),
        ("call_b2", "notify_user", {"user_name": "jdoe"}, "sent", None),
    ]
    assert sessions[1].messages[0].text == "Reset the password of user jdoe"
    assert stream.report.sessions == 2


def test_openai_responses_items_pair_function_calls_with_outputs() -> None:
    stream = read(FIXTURES / "openai_responses.json")
    (session,) = stream

    assert session.outcome == "success"
    assert calls(session) == [
        (
            "call_kQ3m",
            "find_ci",
            {"name": "fw-edge-01"},
            {"sys_id": "fa7409dc022e6a38471a52b7fb3c7ad0", "sys_class_name": "cmdb_ci_ip_firewall"},
            None,
        ),
        (
            "call_Zr7t",
            "create_change",
            {
                "cmdb_ci": "fa7409dc022e6a38471a52b7fb3c7ad0",
                "type": "normal",
                "short_description": "Update firewall rule 42",
            },
            {"number": "CHG0030012", "state": "-5"},
            None,
        ),
    ]
    assert [m.role for m in session.messages] == ["system", "user", "assistant"]
    assert stream.report.skipped == {"reasoning_item": 1}


def test_anthropic_tool_use_blocks_pair_with_results_and_errors() -> None:
    stream = read(FIXTURES / "anthropic.json")
    (session,) = stream

    assert session.messages[0] == Message(
        "msgs-itsm-0042/0",
        "system",
        "You are an ITSM automation agent. Only close incidents in state Resolved.",
    )
    assert calls(session)[1:] == [
        (
            "toolu_01B7cd1",
            "close_incident",
            {"number": "INC0010009", "close_code": "Solved (Permanently)"},
            {"number": "INC0010009", "state": "7"},
            None,
        ),
        (
            "toolu_01B7cd2",
            "close_incident",
            {"number": "INC0010015"},
            None,
            "Data policy: close_code is mandatory when closing an incident",
        ),
    ]
    assert session.tool_calls[0].result == [
        {"number": "INC0010009", "state": "6"},
        {"number": "INC0010015", "state": "6"},
    ]
    assert stream.report.skipped == {"thinking_block": 1}


def test_mcp_calls_are_matched_by_id_and_kept_in_request_order() -> None:
    stream = read(FIXTURES / "mcp.jsonl")
    (session,) = stream

    assert session.id == "mcp"
    assert session.metadata["client"]["name"] == "claude-desktop"
    assert session.metadata["server"]["name"] == "servicenow-mcp"
    assert calls(session) == [
        (
            "mcp#2",
            "get_incident",
            {"number": "INC0010031"},
            {
                "number": "INC0010031",
                "state": "7",
                "short_description": "Printer on 3rd floor offline",
            },
            None,
        ),
        (
            "mcp#3",
            "add_comment",
            {"number": "INC0010031", "comment": "Looking into it"},
            None,
            "Incident INC0010031 is closed; comments are read-only",
        ),
        (
            "mcp#4",
            "reopen_incident",
            {"number": "INC0010031"},
            None,
            "-32602: Unknown tool: reopen_incident",
        ),
        ("mcp#5", "get_incident", {"number": "INC0010032"}, None, "no response recorded"),
    ]
    assert session.tool_calls[0].started_at == datetime(2025, 3, 4, 16, 20, 5, 3000, tzinfo=UTC)
    assert stream.report.skipped == {"mcp_other": 5}


def test_mcp_log_may_be_a_json_array_of_bare_messages(write_json: WriteFile) -> None:
    path = write_json(
        "log.json",
        [
            {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "ping"}},
            {"jsonrpc": "2.0", "id": "a", "result": {"structuredContent": {"ok": True}}},
        ],
    )

    assert calls(only_session(path)) == [("log#a", "ping", None, {"ok": True}, None)]


def test_a_json_array_of_messages_is_one_conversation(write_json: WriteFile) -> None:
    path = write_json(
        "bare.json",
        [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi there"}],
    )

    session = only_session(path, format="openai-chat")

    assert session.id == "bare"
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "hello"),
        ("assistant", "hi there"),
    ]


@pytest.mark.parametrize(
    ("format", "conversation", "expected"),
    [
        (
            "openai-chat",
            {"messages": [{"role": "tool", "tool_call_id": "call_x", "content": "1"}]},
            "call 'call_x', which was never made",
        ),
        (
            "anthropic",
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
                ]
            },
            "never made",
        ),
        (
            "openai-responses",
            {"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
            "has no name",
        ),
        ("openai-chat", {"conversation": []}, "expected a `messages` list"),
    ],
    ids=["orphan-tool-message", "orphan-tool-result", "nameless-call", "no-messages"],
)
def test_malformed_conversations_name_the_file_and_line(
    write_json: WriteFile, format: str, conversation: dict[str, object], expected: str
) -> None:
    good = {"messages": [{"role": "user", "content": "hi"}], "input": "hi"}
    path = write_json("bad.jsonl", f"{json.dumps(good)}\n{json.dumps(conversation)}\n")

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path, format=format))

    assert (raised.value.file, raised.value.line) == (str(path), 2)


def test_truncated_transcript_names_the_line(write_json: WriteFile) -> None:
    path = write_json("cut.json", '{\n  "messages": [\n    {"role": "user", "content": "hi"},\n')

    with pytest.raises(TraceFormatError, match="invalid JSON") as raised:
        list(read(path, format="anthropic"))

    assert raised.value.line == 4


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("chat.jsonl", '{"messages": []}\n{"messages": [{"role": "user", "content": NaN}]}\n', 2),
        ("chat.json", '{\n  "messages": [{"role": "user", "content": Infinity}]\n}', None),
        ("log.jsonl", '{"jsonrpc": "2.0", "id": 1, "result": {"x": -Infinity}}\n', 1),
    ],
    ids=["jsonl-line", "json-document", "mcp-line"],
)
def test_nan_and_infinity_are_refused_where_they_are_read(
    write_json: WriteFile, name: str, text: str, line: int | None
) -> None:
    path = write_json(name, text)
    format = "mcp" if name.startswith("log") else "openai-chat"

    with pytest.raises(TraceFormatError, match="is not a JSON value") as raised:
        list(read(path, format=format))

    assert (raised.value.file, raised.value.line) == (str(path), line)


def test_mcp_responses_carry_results_through_redaction(write_json: WriteFile) -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "login", "arguments": {"user": "a", "password": "pw"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"structuredContent": {"access_token": "eyJhbGciOi", "expires_in": 3600}},
        },
    ]
    path = write_json("auth.jsonl", "\n".join(json.dumps(line) for line in lines))

    (call,) = only_session(path).tool_calls

    assert call == ToolCall(
        "auth#1",
        "login",
        {"user": "a", "password": "[REDACTED]"},
        {"access_token": "[REDACTED]", "expires_in": 3600},
    )
