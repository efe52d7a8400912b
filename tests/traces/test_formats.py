"""Format auto-detection, the reader registry, and errors for files that cannot be read at all."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from myna.errors import TraceFormatError
from myna.traces import READERS, Session, read, register_reader
from myna.traces.formats import Peek, detect_format
from myna.traces.jsonl import write_jsonl
from myna.traces.source import Source
from tests.traces.helpers import WriteFile, entry, har

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("openai_chat.json", "openai-chat"),
        ("openai_chat.jsonl", "openai-chat"),
        ("openai_responses.json", "openai-responses"),
        ("anthropic.json", "anthropic"),
        ("mcp.jsonl", "mcp"),
        ("vcrpy.yaml", "vcr"),
        ("vcrpy.json", "vcr"),
        ("betamax.json", "vcr"),
        ("ruby_vcr.yml", "vcr"),
        ("nock.json", "nock"),
    ],
)
def test_fixtures_are_recognised_from_their_first_bytes(name: str, expected: str) -> None:
    assert detect_format(Peek.of((FIXTURES / name).read_bytes()[:65536])) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"log": {"version": "1.2", "entries": []}}', "har"),
        ('{\n  "_comment": "exported", "log": {\n "entries": []}}', "har"),
        ('{"type":"session","version":1,"id":"s"}\n', "jsonl"),
        ('[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', "mcp"),
        ('[{"role": "user", "content": "hi"}]', "openai-chat"),
        ("# vcrpy\nversion: 1\ninteractions:\n- request:\n", "vcr"),
        ("---\nhttp_interactions: []\nrecorded_with: VCR 6.0.0\n", "vcr"),
        ('{"recorded_with": "betamax/0.9.0", "http_interactions": [', "vcr"),
        (
            '[{"response": {"big": 1}, "scope": "https://h:443", "method": "get", "path": "/"}]',
            "nock",
        ),
        ('[{"scope": "https://h:443", "response": "' + "x" * 70000, "nock"),
        ('[{"jsonrpc": "2.0", "method": "x", "scope": 1}]', "mcp"),
        ("interactions: 3\n", None),
        ("number,state\nINC001,New\n", None),
        ('{"data": [1, 2, 3]}', None),
    ],
    ids=[
        "har",
        "har-after-scalar",
        "jsonl",
        "mcp-array",
        "plain-chat",
        "vcrpy-yaml-after-comment",
        "ruby-vcr-empty",
        "betamax-json-after-scalar",
        "nock-object-first",
        "nock-longer-than-peek",
        "mcp-not-nock",
        "yaml-not-a-cassette",
        "csv",
        "other-json",
    ],
)
def test_detection_of_literal_heads(text: str, expected: str | None) -> None:
    assert detect_format(Peek.of(text.encode())) == expected


def test_canonical_output_is_recognised_as_jsonl(tmp_path: Path, write_json: WriteFile) -> None:
    out = tmp_path / "out.jsonl"
    write_jsonl(read(write_json("in.har", har([entry()]))), out)

    assert detect_format(Peek.of(out.read_bytes())) == "jsonl"


def test_explicit_format_overrides_detection(write_json: WriteFile) -> None:
    path = write_json("looks-like-chat.json", {"messages": [{"role": "user", "content": "hi"}]})

    (session,) = read(path, format="anthropic")

    assert session.messages[0].text == "hi"


def test_registering_a_name_twice_raises() -> None:
    with pytest.raises(ValueError, match="'har' is already registered"):
        register_reader("har", READERS["har"].read, detect=lambda peek: False, description="")


def test_a_registered_reader_is_used_for_detection(write_json: WriteFile) -> None:
    def read_csv(source: Source) -> Iterator[Session]:
        yield Session("csv", source=source.name)

    register_reader(
        "test-csv", read_csv, detect=lambda peek: peek.text.startswith("a,b"), description="csv"
    )
    try:
        assert [s.id for s in read(write_json("t.csv", "a,b\n1,2\n"))] == ["csv"]
    finally:
        del READERS["test-csv"]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: tmp / "missing.har", "cannot read the file"),
        (lambda tmp: tmp, "cannot read the file"),
        (lambda tmp: _write(tmp / "tickets.csv", "number,state\n"), "cannot tell the trace format"),
        (lambda tmp: _write(tmp / "empty.har", "  \n"), "the file is empty"),
    ],
    ids=["missing", "directory", "unknown-format", "empty"],
)
def test_unreadable_inputs_name_the_file(
    tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    path = make(tmp_path)

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path))

    assert raised.value.file == str(path)


def test_unknown_format_name_lists_the_known_ones(write_json: WriteFile) -> None:
    path = write_json("x.json", {})

    with pytest.raises(TraceFormatError, match=r"unknown format 'postman'; expected one of .*har"):
        list(read(path, format="postman"))


def test_an_empty_jsonl_file_is_an_empty_trace(write_json: WriteFile) -> None:
    assert list(read(write_json("nothing.jsonl", ""))) == []


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_peek_parses_a_complete_first_line_only() -> None:
    line = json.dumps({"type": "session", "version": 1, "id": "s"})

    assert Peek.of(f"{line}\n{{broken".encode()).first_value == {
        "type": "session",
        "version": 1,
        "id": "s",
    }
    assert Peek.of(b'{\n  "log": {}\n}').first_value is None
