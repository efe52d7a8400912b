"""The nock reader: real recorder output, bodies in every form, bad input, the octokit corpus."""

from __future__ import annotations

import base64
import gzip
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from myna.errors import TraceFormatError
from myna.traces import Exchange, ReadOptions, jsonarray, read, read_many
from myna.traces.model import Body
from myna.traces.redact import REDACTED, redact_json
from tests.traces.cassettes import RECORDED, exchanges, summary
from tests.traces.helpers import CORPUS, WriteFile

OCTOKIT = CORPUS / "nock" / "octokit_fixtures"


def definition(**fields: Any) -> dict[str, Any]:
    """One recorded request, as octokit's normalised fixtures write them."""
    return {
        "scope": "https://api.github.com:443",
        "method": "get",
        "path": "/repos/o/r/labels",
        "body": "",
        "status": 200,
        "response": [{"id": 1, "name": "bug"}],
        "reqheaders": {"accept": "application/vnd.github.v3+json", "content-length": 0},
        "responseIsBinary": False,
        "headers": {"content-type": "application/json; charset=utf-8"},
        **fields,
    }


def only(path: Path) -> Exchange:
    (exchange,) = [ex for session in read(path) for ex in session.exchanges]
    return exchange


def test_real_nock_recording_reads_as_served(streamed: None) -> None:
    read_back = exchanges("nock.json")

    assert [summary(exchange) for exchange in read_back] == RECORDED["nock.json"]
    assert [exchange.id for exchange in read_back] == [f"nock#{n}" for n in range(7)]
    assert read_back[0].request_header("authorization") == f"Bearer {REDACTED}"
    assert read_back[1].request_body == Body(
        "json", {"ticket": {"subject": "New laptop"}}, "application/json"
    )
    assert read_back[2].query == [("page[size]", "100")]
    assert [v for k, v in read_back[2].response_headers if k == "Set-Cookie"] == [
        f"a={REDACTED}",
        f"b={REDACTED}",
    ]
    assert read_back[5].request_body.value == f"grant_type=password&password={REDACTED}"


def test_octokit_fields_default_port_and_header_map(write_json: WriteFile) -> None:
    exchange = only(write_json("labels.json", [definition()]))

    assert (exchange.method, exchange.url, exchange.host) == (
        "GET",
        "https://api.github.com/repos/o/r/labels",
        "api.github.com",
    )
    assert exchange.response_body == Body(
        "json", [{"id": 1, "name": "bug"}], "application/json; charset=utf-8"
    )
    assert exchange.request_headers == [
        ("accept", "application/vnd.github.v3+json"),
        ("content-length", "0"),
    ]


def test_a_scope_on_another_port_keeps_it(write_json: WriteFile) -> None:
    exchange = only(write_json("p.json", [definition(scope="http://localhost:8080")]))

    assert exchange.url == "http://localhost:8080/repos/o/r/labels"


def test_content_encoded_responses_are_hex_chunks(write_json: WriteFile) -> None:
    data = gzip.compress(json.dumps({"items": list(range(50))}).encode())
    chunks = [data[:10].hex(), data[10:].hex()]
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    path = write_json("gz.json", [definition(response=chunks, headers=headers)])

    assert only(path).response_body.value == {"items": list(range(50))}


def test_a_json_array_answer_with_content_encoding_is_not_taken_for_chunks(
    write_json: WriteFile,
) -> None:
    headers = {"content-type": "application/json", "content-encoding": "identity"}
    path = write_json("arr.json", [definition(response=["open", "closed"], headers=headers)])

    assert only(path).response_body.value == ["open", "closed"]


def test_status_defaults_to_200_and_secrets_in_json_bodies_are_redacted(
    write_json: WriteFile,
) -> None:
    item = definition(method="post", body={"client_secret": "s"}, response={"token": "t"})
    del item["status"]

    exchange = only(write_json("d.json", [item]))

    assert exchange.status == 200
    assert exchange.request_body.value == {"client_secret": REDACTED}
    assert exchange.response_body.value == {"token": REDACTED}


@pytest.mark.parametrize(
    ("content", "entry", "field", "expected"),
    [
        (json.dumps({"scope": "x"}), None, "", "JSON array"),
        (json.dumps([definition(), 3]), 1, "[1]", "a recorded request"),
        (json.dumps([definition(scope="api.github.com")]), 0, "[0].scope", "origin"),
        (json.dumps([definition(scope="https://h:99999")]), 0, "[0].scope", "bad port"),
        (json.dumps([definition(path=None)]), 0, "[0].path", "path as a string"),
        (json.dumps([definition(method="")]), 0, "[0].method", "non-empty"),
        (json.dumps([definition(status="OK")]), 0, "[0].status", "integer HTTP status"),
        (
            json.dumps([definition(responseIsBinary=True, response="zz")]),
            0,
            "[0].response",
            "hex-encoded",
        ),
        (json.dumps([definition(headers={"x": {"y": 1}})]), 0, "[0].headers.x", "header value"),
        (json.dumps([definition(rawHeaders=["a", "b", "c"])]), 0, "[0].rawHeaders", "header"),
        (json.dumps([definition(), definition()])[:-30], 1, None, "truncated JSON"),
    ],
    ids=[
        "not-array",
        "item-not-object",
        "scope-no-scheme",
        "scope-bad-port",
        "no-path",
        "empty-method",
        "status-text",
        "binary-not-hex",
        "header-object",
        "raw-headers-odd",
        "truncated",
    ],
)
def test_bad_recordings_name_file_entry_and_field(
    write_json: WriteFile,
    streamed: None,
    content: str,
    entry: int | None,
    field: str | None,
    expected: str,
) -> None:
    path = write_json("bad.json", content)

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path, format="nock"))

    assert (raised.value.file, raised.value.entry) == (str(path), entry)
    if field is not None:
        assert raised.value.field == field


def test_a_big_recording_streams_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonarray, "WHOLE_FILE_BYTES", 0)
    records = [{"id": n, "title": "VPN drops " * 20} for n in range(20)]
    path = tmp_path / "big.json"
    with path.open("w") as out:
        out.write("[" + ",".join(json.dumps(definition(response=records)) for _ in range(800)))
        out.write("]")
    assert path.stat().st_size > 3_500_000

    tracemalloc.start()
    try:
        parts = [len(part.events) for part in read(path, options=ReadOptions(part_events=20))]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert parts == [20] * 40
    assert peak < 1_500_000


def _octokit() -> list[Path]:
    return sorted(OCTOKIT.glob("*.json")) if OCTOKIT.is_dir() else []


_NOCK_FIELDS = {
    "scope",
    "method",
    "path",
    "body",
    "status",
    "response",
    "headers",
    "reqheaders",
    "responseIsBinary",
}


@pytest.mark.corpus
@pytest.mark.skipif(not OCTOKIT.is_dir(), reason=f"corpus not present at {OCTOKIT}")
@pytest.mark.parametrize("path", _octokit(), ids=lambda path: path.stem)
def test_every_octokit_scenario_imports_field_by_field(path: Path) -> None:
    """Each recorded request, read independently with json.load, against what the reader gives."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    (session,) = read(path)

    assert (session.id, session.metadata) == (path.stem, {"format": "nock"})
    assert len(session.exchanges) == len(raw)
    for item, exchange in zip(raw, session.exchanges, strict=True):
        assert set(item) <= _NOCK_FIELDS
        assert exchange.url == item["scope"].removesuffix(":443") + item["path"]
        assert (exchange.method, exchange.status) == (item["method"].upper(), item["status"])
        assert len(exchange.request_headers) == len(item["reqheaders"])
        assert exchange.response_headers == [(k, str(v)) for k, v in item["headers"].items()]
        assert exchange.request_body.value == _expected(item["body"])
        assert exchange.response_body.value == _expected(
            item["response"], binary=item["responseIsBinary"]
        )


def _expected(value: Any, *, binary: bool = False) -> Any:
    if binary:
        return base64.b64encode(bytes.fromhex(value)).decode()
    if value == "":
        return None
    if isinstance(value, str):
        return value
    return redact_json(value)


@pytest.mark.corpus
@pytest.mark.skipif(not OCTOKIT.is_dir(), reason=f"corpus not present at {OCTOKIT}")
def test_the_octokit_corpus_reads_as_one_import_with_no_live_token() -> None:
    stream = read_many(_octokit())
    exchanges_read = [ex for session in stream for ex in session.exchanges]

    assert (stream.report.files, stream.report.sessions, len(exchanges_read)) == (22, 22, 71)
    assert len({ex.id for ex in exchanges_read}) == len(exchanges_read)
    tokens = {ex.request_header("authorization") for ex in exchanges_read} - {None}
    assert tokens == {f"token {REDACTED}"}
