"""Canonical JSONL: the published schema, exact round trips, atomic writes, and line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from myna.errors import InputError, TraceFormatError
from myna.traces import Body, Exchange, Message, ReadOptions, Session, ToolCall, read
from myna.traces.jsonl import event_line, session_line, trace_schema, write_jsonl
from tests.traces.helpers import WriteFile

# Keys and values that redaction or pseudonymisation would change are kept out, so that what goes
# in is exactly what must come back.
names = st.text(st.characters(codec="utf-8", categories=["L", "N"]), min_size=1, max_size=8).filter(
    lambda name: not any(part in name.lower() for part in ("pass", "token", "secret", "key", "sid"))
)
texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20).filter(
    lambda text: "redacted" not in text.lower()
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(names, children, max_size=3),
    max_leaves=8,
)
times = st.none() | st.datetimes(
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5))]) | st.none()
)
pairs = st.lists(st.tuples(names, texts), max_size=3)
bodies = st.one_of(
    st.builds(Body),
    st.builds(Body, kind=st.just("json"), value=json_values, mime_type=st.none() | texts),
    st.builds(Body, kind=st.sampled_from(["text", "base64"]), value=texts, mime_type=texts),
)
exchanges = st.builds(
    Exchange,
    id=names,
    method=st.sampled_from(["GET", "POST", "PATCH", "DELETE"]),
    url=names.map(lambda path: f"https://api.example.com/{path}"),
    status=st.integers(100, 599),
    query=pairs,
    request_headers=pairs,
    request_body=bodies,
    response_headers=pairs,
    response_body=bodies,
    started_at=times,
    duration_ms=st.none() | st.floats(0, 1e6),
    actor=st.none() | names,
)
tool_calls = st.builds(
    ToolCall,
    id=names,
    name=names,
    arguments=json_values,
    result=json_values,
    error=st.none() | texts,
    started_at=times,
    actor=st.none() | names,
)
messages = st.builds(
    Message,
    id=names,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    text=texts,
    started_at=times,
)
sessions = st.builds(
    Session,
    id=names,
    events=st.lists(exchanges | tool_calls | messages, max_size=4),
    task=st.none() | texts,
    outcome=st.none() | st.sampled_from(["success", "failure", "unknown"]),
    feedback=st.none() | texts,
    source=st.none() | texts,
    metadata=st.dictionaries(names, json_values, max_size=3),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(original=st.lists(sessions, max_size=3))
def test_write_then_read_gives_back_equal_sessions(tmp_path: Path, original: list[Session]) -> None:
    path = tmp_path / "round.jsonl"

    write_jsonl(original, path)

    assert list(read(path)) == original


@settings(max_examples=40)
@given(session=sessions)
def test_every_written_line_validates_against_the_published_schema(session: Session) -> None:
    validator = Draft202012Validator(trace_schema())

    lines = [session_line(session), *(event_line(e, session.id) for e in session.events)]

    for line in lines:
        assert list(validator.iter_errors(json.loads(json.dumps(line)))) == []


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(trace_schema())


def test_file_layout_is_a_header_then_its_events(tmp_path: Path) -> None:
    session = Session(
        "s1",
        [Message("m1", "user", "close INC001"), ToolCall("c1", "close", {"number": "INC001"})],
        task="close INC001",
        outcome="failure",
    )
    path = tmp_path / "out.jsonl"

    written = write_jsonl([session], path)

    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"type": "session", "version": 1, "id": "s1", "task": "close INC001", "outcome": "failure"},
        {"type": "message", "session": "s1", "id": "m1", "role": "user", "text": "close INC001"},
        {
            "type": "tool_call",
            "session": "s1",
            "id": "c1",
            "name": "close",
            "arguments": {"number": "INC001"},
        },
    ]
    assert (written.sessions, written.events) == (1, 2)


def test_parts_of_one_session_count_once_and_read_back_as_parts(tmp_path: Path) -> None:
    parts = [Session("s", [Message(f"m{i}", "user", "hi")]) for i in range(3)]
    path = tmp_path / "parts.jsonl"

    written = write_jsonl(parts, path)

    assert written.sessions == 1
    assert list(read(path)) == parts
    assert [len(p.events) for p in read(path, options=ReadOptions(part_events=2))] == [1, 1, 1]


def test_a_failing_write_leaves_neither_output_nor_temporary_file(tmp_path: Path) -> None:
    def broken() -> Iterator[Session]:
        yield Session("s", [Message("m", "user", "hi")])
        raise TraceFormatError("truncated", file="in.har", entry=7)

    path = tmp_path / "out.jsonl"
    path.write_text("previous content\n")

    with pytest.raises(TraceFormatError):
        write_jsonl(broken(), path)

    assert path.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_values_json_cannot_hold_are_refused_naming_the_event(tmp_path: Path) -> None:
    session = Session("s", [ToolCall("c1", "measure", result=float("nan"))])

    with pytest.raises(InputError, match="event 'c1' of session 's'"):
        write_jsonl([session], tmp_path / "out.jsonl")

    assert list(tmp_path.iterdir()) == []


def test_jsonl_input_is_redacted_too(write_json: WriteFile) -> None:
    lines = [
        {"type": "session", "version": 1, "id": "s"},
        {
            "type": "exchange",
            "session": "s",
            "id": "e",
            "method": "POST",
            "url": "https://h.example/login?api_key=abc",
            "status": 200,
            "request_headers": [["Authorization", "Basic dXNlcjpwdw=="]],
            "request_body": {"kind": "json", "value": {"user": "u", "password": "hunter2"}},
        },
    ]
    path = write_json("s.jsonl", "\n".join(json.dumps(line) for line in lines))

    ((exchange,),) = [s.exchanges for s in read(path)]

    assert exchange.url == "https://h.example/login?api_key=[REDACTED]"
    assert exchange.request_headers == [("Authorization", "Basic [REDACTED]")]
    assert exchange.request_body.value == {"user": "u", "password": "[REDACTED]"}


HEADER = '{"type": "session", "version": 1, "id": "s"}'
EVENT = '{"type": "message", "session": "s", "id": "m", "role": "user", "text": "hi"}'


@pytest.mark.parametrize(
    ("lines", "line", "expected"),
    [
        ([HEADER, EVENT, '{"type": "message", "session": "s"'], 3, "invalid JSON"),
        ([HEADER, EVENT.replace('"user"', '"robot"')], 2, "not a canonical trace line"),
        ([HEADER, EVENT.replace('"text": "hi"', '"txt": "hi"')], 2, "text"),
        ([EVENT], 1, "expected a session header"),
        ([HEADER, EVENT.replace('"session": "s"', '"session": "t"')], 2, "belongs to session"),
        ([HEADER, EVENT.replace("}", ', "started_at": "noon"}')], 2, "not an ISO 8601 time"),
    ],
    ids=["truncated", "bad-enum", "missing-field", "event-first", "wrong-session", "bad-time"],
)
def test_bad_lines_name_the_file_and_line(
    write_json: WriteFile, lines: list[str], line: int, expected: str
) -> None:
    path = write_json("bad.jsonl", "\n".join(lines))

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path, format="jsonl"))

    assert (raised.value.file, raised.value.line) == (str(path), line)


def test_schema_errors_name_the_field(write_json: WriteFile) -> None:
    bad: dict[str, Any] = {
        "type": "exchange",
        "session": "s",
        "id": "e",
        "method": "GET",
        "url": "https://h/",
        "status": 200,
        "response_body": {"kind": "text", "value": 3},
    }
    path = write_json("bad.jsonl", f"{HEADER}\n{json.dumps(bad)}\n")

    with pytest.raises(TraceFormatError) as raised:
        list(read(path))

    assert raised.value.field == "response_body.value"
    assert raised.value.line == 2
