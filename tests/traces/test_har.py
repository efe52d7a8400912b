"""The HAR reader: sessions, bodies, static assets, ids, and the real Polly.js corpus."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from base64 import b64encode
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from myna.errors import TraceFormatError
from myna.traces import Exchange, ReadOptions, read, read_many
from myna.traces import har as har_reader
from tests.traces.helpers import HAR_CORPUS, WriteFile, corpus_hars, entry, har


def exchanges_of(path: Path, **options: Any) -> list[Exchange]:
    return [
        ex for session in read(path, options=ReadOptions(**options)) for ex in session.exchanges
    ]


def test_entries_without_pages_form_one_session_named_after_the_file(write_json: WriteFile) -> None:
    path = write_json("recording.har", har([entry(), entry(method="POST", status=201)]))

    sessions = list(read(path))

    assert [s.id for s in sessions] == ["recording"]
    assert [(e.id, e.method, e.status) for e in sessions[0].exchanges] == [
        ("recording#0", "GET", 200),
        ("recording#1", "POST", 201),
    ]
    assert sessions[0].source == str(path)
    assert sessions[0].metadata["creator"] == "WebInspector 537"


def test_pages_become_sessions_with_their_titles(write_json: WriteFile, parse_mode: str) -> None:
    pages = [
        {"id": "page_1", "title": "Incidents", "startedDateTime": "2024-05-01T10:00:00Z"},
        {"id": "page_2", "title": "Users", "startedDateTime": "2024-05-01T10:01:00Z"},
    ]
    entries = [entry(pageref="page_1"), entry(pageref="page_2"), entry(pageref="page_1")]
    path = write_json("browse.har", har(entries, pages))

    sessions = {s.id: s for s in read(path)}

    assert {sid: [e.id for e in s.exchanges] for sid, s in sessions.items()} == {
        "browse/page_1": ["browse#0", "browse#2"],
        "browse/page_2": ["browse#1"],
    }
    assert sessions["browse/page_2"].metadata["title"] == "Users"


def test_request_fields_are_mapped(write_json: WriteFile) -> None:
    url = "https://dev.service-now.com/api/now/table/incident?sysparm_limit=2&sysparm_offset=0"
    item = entry(url, headers=[{"name": "content-length", "value": 86}])
    item["request"]["queryString"] = [
        {"name": "sysparm_limit", "value": "2"},
        {"name": "sysparm_offset", "value": "0"},
    ]
    (exchange,) = exchanges_of(write_json("q.har", har([item])))

    assert exchange.url == url
    assert exchange.host == "dev.service-now.com"
    assert exchange.path == "/api/now/table/incident"
    assert exchange.query == [("sysparm_limit", "2"), ("sysparm_offset", "0")]
    assert exchange.request_headers == [("content-length", "86")]
    assert exchange.started_at == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert exchange.duration_ms == 12.5


def test_query_is_parsed_from_the_url_when_the_har_omits_it(write_json: WriteFile) -> None:
    (exchange,) = exchanges_of(write_json("q.har", har([entry("https://h.example/a?x=1&y=&x=2")])))

    assert exchange.query == [("x", "1"), ("y", ""), ("x", "2")]


@pytest.mark.parametrize(
    ("text", "mime", "encoding", "kind", "value"),
    [
        ('{"a": [1, 2]}', "application/json", None, "json", {"a": [1, 2]}),
        ('{"a": 1}', "text/plain", None, "json", {"a": 1}),
        ("<html>oops</html>", "application/json", None, "text", "<html>oops</html>"),
        ("not json", "text/plain", None, "text", "not json"),
        ('{"n": NaN}', "application/json", None, "text", '{"n": NaN}'),
        ("iVBORw0KGgo=", "application/pdf", "base64", "base64", "iVBORw0KGgo="),
        ("", "application/json", None, "empty", None),
        (None, "application/json", None, "empty", None),
    ],
    ids=["json", "json-as-text-plain", "html-as-json", "text", "nan", "base64", "blank", "absent"],
)
def test_response_bodies_keep_their_kind(
    write_json: WriteFile, text: str | None, mime: str, encoding: str | None, kind: str, value: Any
) -> None:
    item = entry(response_text=text, response_mime=mime)
    if encoding:
        item["response"]["content"]["encoding"] = encoding

    (exchange,) = exchanges_of(write_json("b.har", har([item])))

    assert (exchange.response_body.kind, exchange.response_body.value) == (kind, value)


@pytest.mark.parametrize(
    ("url", "mime", "resource_type"),
    [
        ("https://h.example/logo.png", "image/png", None),
        ("https://h.example/font", "font/woff2", None),
        ("https://h.example/app.js?v=3", "application/octet-stream", None),
        ("https://h.example/site", "text/css; charset=utf-8", None),
        ("https://h.example/bundle", "text/plain", "script"),
    ],
    ids=["image", "font", "script-by-extension", "style-by-mime", "chrome-resource-type"],
)
def test_static_assets_are_skipped_and_counted_unless_asked_for(
    write_json: WriteFile, url: str, mime: str, resource_type: str | None
) -> None:
    asset = entry(url, response_mime=mime, response_text="x")
    if resource_type:
        asset["_resourceType"] = resource_type
    path = write_json("s.har", har([entry(), asset]))

    stream = read(path)
    kept = [ex.url for session in stream for ex in session.exchanges]
    with_static = exchanges_of(path, include_static=True)

    assert kept == ["https://api.example.com/api/now/table/incident"]
    assert stream.report.skipped == {"static": 1}
    assert [ex.id for ex in with_static] == ["s#0", "s#1"]


def test_websocket_and_non_http_entries_are_counted_not_read(write_json: WriteFile) -> None:
    socket = entry("wss://h.example/socket", status=101, _resourceType="websocket")
    socket["_webSocketMessages"] = [{"type": "send", "time": 1.0, "opcode": 1, "data": "hi"}]
    data_url = entry("data:text/plain;base64,aGk=")
    path = write_json("w.har", har([socket, entry(), data_url]))

    stream = read(path, options=ReadOptions(include_static=True))
    ids = [ex.id for session in stream for ex in session.exchanges]

    assert ids == ["w#1"]
    assert stream.report.skipped == {"websocket": 1, "non_http": 1}


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "fiddler.har"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(har([entry()])).encode())

    assert [ex.id for s in read(path) for ex in s.exchanges] == ["fiddler#0"]


@pytest.fixture(params=["whole", "streamed"])
def parse_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test on small files parsed whole and again with streaming forced."""
    if request.param == "streamed":
        monkeypatch.setattr(har_reader, "WHOLE_FILE_BYTES", 0)
    return str(request.param)


def test_reading_streams_memory_stays_flat_whatever_the_file_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(har_reader, "WHOLE_FILE_BYTES", 0)
    records = [{"sys_id": f"{n:032x}", "short_description": "VPN drops " * 20} for n in range(20)]
    item = json.dumps(entry(response_text=json.dumps({"result": records})))
    path = tmp_path / "big.har"
    with path.open("w") as out:
        out.write('{"log": {"version": "1.2", "entries": [')
        out.write(",".join(item for _ in range(1500)))
        out.write("]}}")
    assert path.stat().st_size > 9_000_000

    tracemalloc.start()
    try:
        count = sum(len(part.events) for part in read(path, options=ReadOptions(part_events=50)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert count == 1500
    assert peak < 3_000_000


def test_long_sessions_are_yielded_in_parts_sharing_the_id(write_json: WriteFile) -> None:
    path = write_json("long.har", har([entry() for _ in range(5)]))

    stream = read(path, options=ReadOptions(part_events=2))
    parts = list(stream)

    assert [(p.id, len(p.events)) for p in parts] == [("long", 2), ("long", 2), ("long", 1)]
    assert [e.id for p in parts for e in p.events] == [f"long#{i}" for i in range(5)]
    assert stream.report.sessions == 1


def test_open_pages_together_hold_at_most_one_part(write_json: WriteFile, parse_mode: str) -> None:
    pages = ["p1", "p2", "p1", "p3", "p3", "p2"]
    path = write_json("pages.har", har([entry(pageref=page) for page in pages]))

    stream = read(path, options=ReadOptions(part_events=2))
    parts = [(part.id, [e.id for e in part.events]) for part in stream]

    assert parts == [
        ("pages/p1", ["pages#0"]),
        ("pages/p2", ["pages#1"]),
        ("pages/p1", ["pages#2"]),
        ("pages/p3", ["pages#3"]),
        ("pages/p2", ["pages#5"]),
        ("pages/p3", ["pages#4"]),
    ]
    assert stream.report.sessions == 3


@pytest.mark.parametrize(
    ("content", "entry_index", "expected"),
    [
        ('{"log": {"entries": [{"request": {}', 0, "truncated JSON"),
        ('{"log": {"version": "1.2", "creator": {}}}', None, "no `log.entries`"),
        ('{"log": {"entries": {}}}', None, "expected an array"),
        ('{"log": []}', None, "`log` must be a JSON object"),
        (json.dumps(har([entry(), {"response": {"status": 200}}])), 1, "no request"),
        (
            json.dumps(har([entry(), entry(), {"request": {"url": "https://h/"}, "response": {}}])),
            2,
            "no method",
        ),
        (json.dumps(har([{**entry(), "response": {"content": {}}}])), 0, "integer status"),
        (json.dumps(har([entry(started="yesterday")])), 0, "not an ISO 8601 time"),
    ],
    ids=[
        "truncated",
        "no-entries",
        "entries-not-array",
        "log-not-object",
        "no-request",
        "no-method",
        "no-status",
        "bad-time",
    ],
)
def test_bad_har_names_the_file_and_entry(
    write_json: WriteFile, parse_mode: str, content: str, entry_index: int | None, expected: str
) -> None:
    path = write_json("bad.har", content)

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path, format="har"))

    assert raised.value.file == str(path)
    assert raised.value.entry == entry_index
    assert str(path) in str(raised.value)


def _independent_count(path: Path) -> int:
    """Non-static HTTP entries, counted with json.load and a plain reading of the HAR spec."""
    static_prefixes = ("image/", "font/", "text/css", "text/javascript", "application/javascript")
    entries = json.loads(path.read_text(encoding="utf-8"))["log"]["entries"]
    return sum(
        1
        for item in entries
        if not item["response"]["content"].get("mimeType", "").startswith(static_prefixes)
    )


@pytest.mark.corpus
@pytest.mark.skipif(not HAR_CORPUS.is_dir(), reason=f"corpus not present at {HAR_CORPUS}")
@pytest.mark.parametrize("path", corpus_hars(), ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_corpus_har_imports_with_matching_counts(path: Path, parse_mode: str) -> None:
    stream = read(path)
    sessions = list(stream)

    assert sum(len(s.exchanges) for s in sessions) == _independent_count(path)
    assert [s.id for s in sessions] == [path.stem]
    assert stream.report.skipped == {}


@pytest.mark.corpus
@pytest.mark.skipif(not HAR_CORPUS.is_dir(), reason=f"corpus not present at {HAR_CORPUS}")
def test_corpus_keeps_upstream_redaction_and_finds_no_live_credentials() -> None:
    exchanges = [ex for s in read_many(corpus_hars()) for ex in s.exchanges]
    auth = {ex.request_header("authorization") for ex in exchanges} - {None}

    assert auth <= {"Bearer [REDACTED]", "Basic [REDACTED]", "[REDACTED]"}
    assert len({ex.id for ex in exchanges}) == len(exchanges)


def test_read_many_reports_across_files_and_tracks_bytes(write_json: WriteFile) -> None:
    first = write_json(
        "a.har", har([entry(), entry("https://h.example/x.css", response_mime="text/css")])
    )
    second = write_json("b.har", har([entry(), entry()]))

    stream = read_many([first, second])
    positions = [stream.position for _ in stream]

    assert positions == sorted(positions)
    assert stream.position == stream.bytes_read == first.stat().st_size + second.stat().st_size
    assert (stream.report.files, stream.report.sessions, stream.report.events) == (2, 2, 3)
    assert stream.report.skipped == {"static": 1}


@pytest.mark.parametrize("encoding", ["hex", "base64"])
def test_a_compressed_answer_polly_kept_as_chunks_is_inflated(
    write_json: WriteFile, encoding: str
) -> None:
    # Polly.js records an answer it did not decode as a JSON list of chunks of the gzip bytes.
    answer = {"id": 57366118, "iid": 1, "title": "Update README.md"}
    packed = gzip.compress(json.dumps(answer).encode())
    cut = [packed[:7], packed[7:]]
    chunks = [c.hex() for c in cut] if encoding == "hex" else [b64encode(c).decode() for c in cut]
    item = entry(response_text=json.dumps(chunks))
    item["response"]["content"]["encoding"] = encoding
    item["response"]["headers"] = [{"name": "content-encoding", "value": "gzip"}]

    (exchange,) = exchanges_of(write_json("polly.har", har([item])))

    assert (exchange.response_body.kind, exchange.response_body.value) == ("json", answer)


def test_chunks_that_are_not_what_the_encoding_says_are_kept_as_recorded(
    write_json: WriteFile,
) -> None:
    item = entry(response_text='["zz", "not hex"]')
    item["response"]["content"]["encoding"] = "hex"

    (exchange,) = exchanges_of(write_json("odd.har", har([item])))

    assert (exchange.response_body.kind, exchange.response_body.value) == (
        "json",
        ["zz", "not hex"],
    )
