"""The VCR reader: vcrpy, Betamax and Ruby VCR cassettes, streaming, bad input, Notion corpus."""

from __future__ import annotations

import base64
import gzip
import json
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myna.errors import TraceFormatError
from myna.traces import (
    Filters,
    ReadOptions,
    ReadReport,
    jsonarray,
    read,
    read_many,
    recorded,
)
from myna.traces.model import Body
from myna.traces.redact import REDACTED, redact_json
from myna.traces.source import Source
from myna.traces.yamlstream import sequence_items
from tests.traces.cassettes import FIXTURES, RECORDED, exchanges, summary
from tests.traces.helpers import CORPUS, WriteFile

NOTION = CORPUS / "vcr" / "notion-sdk-py"


def interaction(
    uri: str = "https://api.example.com/v1/tickets",
    *,
    method: str = "GET",
    status: Any = None,
    request_body: Any = None,
    response_body: Any = '{"results": []}',
    headers: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One vcrpy interaction, as its serializers write them."""
    return {
        "request": {
            "body": request_body,
            "headers": {"Accept": ["*/*"], **(headers or {})},
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": response_body},
            "headers": {"Content-Type": ["application/json"]},
            "status": status if status is not None else {"code": 200, "message": "OK"},
        },
    }


def cassette(*interactions: dict[str, Any]) -> dict[str, Any]:
    return {"interactions": list(interactions), "version": 1}


def as_yaml(value: Any) -> str:
    return yaml.dump(value, Dumper=yaml.CDumper)


@pytest.mark.parametrize("name", ["vcrpy.yaml", "vcrpy.json", "betamax.json"])
def test_real_recorders_cassettes_read_as_served(name: str) -> None:
    read_back = exchanges(name)

    assert [summary(exchange) for exchange in read_back] == RECORDED[name]
    assert [exchange.id for exchange in read_back] == [
        f"{Path(name).stem}#{index}" for index in range(len(read_back))
    ]
    get, create = read_back[0], read_back[1]
    assert get.request_header("authorization") == f"Bearer {REDACTED}"
    assert create.request_body == Body(
        "json", {"ticket": {"subject": "New laptop"}}, "application/json"
    )
    assert read_back[-2].request_body.value == f"grant_type=password&password={REDACTED}"
    assert [value for name_, value in read_back[2].response_headers if name_ == "Set-Cookie"] == [
        f"a={REDACTED}",
        f"b={REDACTED}",
    ]


def test_the_query_written_without_a_question_mark_is_read_as_a_query() -> None:
    stream = read(FIXTURES / "vcrpy.yaml")
    groups = [ex for session in stream for ex in session.exchanges][2]

    assert groups.url.endswith("/api/v2/groups.json?page%5Bsize%5D=100")
    assert groups.query == [("page[size]", "100")]
    assert stream.report.queries_without_question_mark == 1


def test_ruby_vcr_cassette_fields() -> None:
    stream = read(FIXTURES / "ruby_vcr.yml")
    (session,) = stream
    get, create, download, delete = session.exchanges

    assert (session.id, session.metadata) == ("ruby_vcr", {"format": "vcr"})
    assert (get.method, get.query, get.status) == ("GET", [("page", "2")], 200)
    assert get.started_at == datetime(2011, 11, 1, 4, 58, 44, tzinfo=UTC)
    assert get.request_header("authorization") == f"Basic {REDACTED}"
    assert get.response_body.value == {
        "tickets": [{"id": 35435, "subject": "VPN drops", "status": "open"}],
        "next_page": None,
    }
    assert get.response_header("x-rate-limit") == "700"
    assert create.request_body.value == {
        "ticket": {"subject": "Printer jam", "priority": "high"},
        "password": REDACTED,
    }
    assert create.request_header("x-api-key") == REDACTED
    assert [v for k, v in create.response_headers if k == "Set-Cookie"] == [
        f"_session={REDACTED}; path=/; HttpOnly",
        f"locale={REDACTED}; path=/",
    ]
    assert download.response_body == Body(
        "base64",
        base64.b64encode(bytes.fromhex("89504e47fffe0001")).decode(),
        "application/octet-stream",
    )
    assert (delete.method, delete.status, delete.response_body.kind) == ("DELETE", 204, "empty")


def test_gzip_bodies_are_inflated_and_bombs_stay_compressed(
    write_json: WriteFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recorded, "MAX_INFLATED_BYTES", 10_000)
    small = gzip.compress(b'{"ok": true}')
    bomb = gzip.compress(b"0" * 1_000_000)
    items = [interaction(response_body=data) for data in (small, bomb, b'{"stale": "header"}')]
    for item in items:
        item["response"]["headers"]["Content-Encoding"] = ["gzip"]
    path = write_json("gz.yaml", as_yaml(cassette(*items)))

    bodies = [ex.response_body for session in read(path) for ex in session.exchanges]

    assert bodies[0] == Body("json", {"ok": True}, "application/json")
    assert bodies[1] == Body("base64", base64.b64encode(bomb).decode(), "application/json")
    assert bodies[2] == Body("json", {"stale": "header"}, "application/json")


def test_yaml_anchors_and_aliases_are_followed(write_json: WriteFile) -> None:
    text = """
interactions:
- request:
    body: null
    headers: &common
      Accept: [application/json]
    method: GET
    uri: &uri https://api.example.com/v1/a
  response: &ok
    body: {string: '{"a": 1}'}
    headers: {}
    status: {code: 200, message: OK}
- request: {body: null, headers: *common, method: GET, uri: *uri}
  response: *ok
version: 1
"""
    first, second = exchanges_of(write_json("anchors.yaml", text))

    assert (second.url, second.request_headers) == (first.url, first.request_headers)
    assert second.response_body.value == {"a": 1}


LAUGHS = "\n".join(
    ["laughs:", "  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"  a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
)
ONE_INTERACTION = """
interactions:
- request: {method: GET, uri: 'https://h.example/x', body: null, headers: HEADERS}
  response: {status: {code: 200}, headers: {}, body: {string: ''}}
  laughs: *a9
"""


def test_a_billion_laughs_costs_what_it_weighs(write_json: WriteFile) -> None:
    fine = LAUGHS + ONE_INTERACTION.replace("HEADERS", "{Accept: [x]}")
    in_headers = LAUGHS + ONE_INTERACTION.replace("HEADERS", "{Accept: *a9}")

    (exchange,) = exchanges_of(write_json("laughs.yaml", fine))  # shared, never walked
    with pytest.raises(TraceFormatError, match="expected a header value") as raised:
        list(read(write_json("laughs-in-headers.yaml", in_headers)))

    assert exchange.status == 200
    assert (raised.value.entry, raised.value.field) == (0, "interactions[0].request.headers.Accept")


def exchanges_of(path: Path, **options: Any) -> list[Any]:
    return [
        ex for session in read(path, options=ReadOptions(**options)) for ex in session.exchanges
    ]


@pytest.mark.parametrize(
    ("content", "entry", "field", "expected"),
    [
        ("- request: {}\n", None, "", "expected a mapping"),
        ("version: 1\n", None, "interactions", "no `interactions` or `http_interactions`"),
        ("interactions: {}\n", None, "interactions", "expected a list"),
        (
            as_yaml(cassette(interaction(), {"response": {}})),
            1,
            "interactions[1].request",
            "`request`",
        ),
        (
            as_yaml(cassette({"request": {"uri": "https://h/", "method": "GET"}})),
            0,
            "interactions[0].response",
            "`response`",
        ),
        (as_yaml(cassette(interaction(uri=""))), 0, "interactions[0].request.uri", "non-empty"),
        (
            as_yaml(cassette(interaction(status={"code": "OK"}))),
            0,
            "interactions[0].response.status.code",
            "integer HTTP status",
        ),
        (
            as_yaml({"http_interactions": [{**interaction(), "recorded_at": "last tuesday"}]}),
            0,
            "http_interactions[0].recorded_at",
            "HTTP date",
        ),
        (
            as_yaml({"http_interactions": [interaction(response_body=None)]}).replace(
                "string: null", "base64_string: 'abc'"
            ),
            0,
            "http_interactions[0].response.body.base64_string",
            "base64",
        ),
        (
            as_yaml(cassette(interaction(headers={"X-A": [{"nested": 1}]}))),
            0,
            "interactions[0].request.headers.X-A",
            "header value",
        ),
        (
            as_yaml(cassette(interaction(), interaction())).replace(
                "method: GET", "method: !ruby/object:Foo GET", 1
            ),
            0,
            None,
            "unsupported YAML tag !ruby/object:Foo",
        ),
        (
            as_yaml(cassette(interaction(), interaction())).replace(
                "version: 1\n", "- request: {method: GET, uri: [\n"
            ),
            2,
            None,
            "invalid YAML",
        ),
        (
            json.dumps(cassette(interaction(), interaction()))[:-40],
            1,
            None,
            "truncated JSON",
        ),
        (json.dumps({"interactions": 3}), None, "interactions", "expected an array"),
        (
            json.dumps(cassette(interaction(method=""))),
            0,
            "interactions[0].request.method",
            "non-empty",
        ),
    ],
    ids=[
        "yaml-top-list",
        "yaml-no-interactions",
        "yaml-not-list",
        "no-request",
        "no-response",
        "empty-uri",
        "status-not-int",
        "bad-recorded-at",
        "bad-base64",
        "header-not-text",
        "ruby-object-tag",
        "truncated-yaml",
        "truncated-json",
        "json-not-array",
        "json-empty-method",
    ],
)
def test_bad_cassettes_name_file_entry_and_field(
    write_json: WriteFile,
    streamed: None,
    content: str,
    entry: int | None,
    field: str | None,
    expected: str,
) -> None:
    path = write_json("bad.cassette", content)

    with pytest.raises(TraceFormatError, match=expected) as raised:
        list(read(path, format="vcr"))

    assert (raised.value.file, raised.value.entry) == (str(path), entry)
    if field is not None:
        assert raised.value.field == field


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_big_cassettes_stream_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serializer: str
) -> None:
    monkeypatch.setattr(jsonarray, "WHOLE_FILE_BYTES", 0)
    records = [{"id": n, "subject": "VPN drops " * 20} for n in range(20)]
    item = interaction(response_body=json.dumps({"results": records}))
    path = tmp_path / f"big.{serializer}"
    with path.open("w") as out:
        if serializer == "yaml":
            text = "- " + as_yaml(item).replace("\n", "\n  ").rstrip() + "\n"
            out.write("interactions:\n" + text * 800 + "version: 1\n")
        else:
            out.write('{"version": 1, "interactions": [')
            out.write(",".join(json.dumps(item) for _ in range(800)))
            out.write("]}")
    assert path.stat().st_size > 3_500_000

    tracemalloc.start()
    try:
        stream = read(path, options=ReadOptions(part_events=20))
        parts = [(part.id, len(part.events)) for part in stream]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert parts == [("big", 20)] * 40
    assert stream.report.sessions == 1
    assert peak < 1_500_000


def test_filters_and_pseudonymisation_apply(write_json: WriteFile) -> None:
    items = [
        interaction(response_body='{"email": "ada@example.com"}'),
        interaction(method="POST", request_body='{"name": "x"}'),
    ]
    path = write_json("f.yaml", as_yaml(cassette(*items)))
    options = ReadOptions(filters=Filters.build(methods=["GET"]), pseudonymise_key="k")

    stream = read(path, options=options)
    (exchange,) = [ex for session in stream for ex in session.exchanges]

    assert exchange.method == "GET"
    assert exchange.response_body.value["email"] != "ada@example.com"
    assert stream.report.skipped == {"filtered": 1}


def test_static_and_non_http_interactions_are_counted_not_read(write_json: WriteFile) -> None:
    logo = interaction("https://cdn.example.com/logo.png", response_body=b"\x89PNG")
    logo["response"]["headers"]["Content-Type"] = ["image/png"]
    items = [interaction(), logo, interaction("ftp://files.example.com/x")]
    path = write_json("s.yaml", as_yaml(cassette(*items)))

    stream = read(path)
    kept = [ex.url for session in stream for ex in session.exchanges]

    assert kept == ["https://api.example.com/v1/tickets"]
    assert stream.report.skipped == {"static": 1, "non_http": 1}
    assert len(exchanges_of(path, include_static=True)) == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.binary(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(json_values, max_size=4), extra=json_values)
def test_yaml_items_are_what_yaml_safe_load_builds(
    tmp_path_factory: pytest.TempPathFactory, items: list[Any], extra: Any
) -> None:
    shared = items[:1] * 2  # the same object twice: the dumper writes an anchor and an alias
    document = {"before": extra, "interactions": items + shared, "version": 1}
    path = tmp_path_factory.mktemp("yaml") / "c.yaml"
    path.write_text(as_yaml(document))

    with path.open("rb") as file:
        source = Source(path, file, ReadOptions(), ReadReport())
        built = [item for _, _, item in sequence_items(source, ("interactions",))]

    assert built == yaml.safe_load(path.read_text())["interactions"]


def _notion_cassettes() -> list[Path]:
    return sorted(NOTION.glob("*.yaml")) if NOTION.is_dir() else []


_VCRPY_FIELDS = {
    "request": {"body", "headers", "method", "uri"},
    "response": {"body", "headers", "status"},
}


@pytest.mark.corpus
@pytest.mark.skipif(not NOTION.is_dir(), reason=f"corpus not present at {NOTION}")
@pytest.mark.parametrize("path", _notion_cassettes(), ids=lambda path: path.stem)
def test_every_notion_cassette_imports_field_by_field(path: Path) -> None:
    """Each interaction, read independently with yaml.safe_load, against what the reader gives."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    (session,) = read(path)

    assert session.id == path.stem
    assert len(session.exchanges) == len(raw)
    for item, exchange in zip(raw, session.exchanges, strict=True):
        request, response = item["request"], item["response"]
        assert {part: set(item[part]) for part in _VCRPY_FIELDS} == _VCRPY_FIELDS
        assert set(response["body"]) == {"string"}
        assert (exchange.method, exchange.url) == (request["method"], request["uri"])
        assert exchange.status == response["status"]["code"]
        assert exchange.request_headers == _expected_headers(request["headers"])
        assert exchange.response_headers == _expected_headers(response["headers"])
        assert exchange.request_body.value == _expected_body(request["body"], request["headers"])
        assert exchange.response_body.value == _expected_body(
            response["body"]["string"], response["headers"]
        )


def _expected_headers(headers: dict[str, list[str]]) -> list[tuple[str, str]]:
    secret = {"authorization", "cookie", "set-cookie"}
    return [
        (name, REDACTED if name.lower() in secret else value)
        for name, values in headers.items()
        for value in values
    ]


def _expected_body(text: str, headers: dict[str, list[str]]) -> Any:
    if not text:
        return None
    content_type = next((v[0] for k, v in headers.items() if k.lower() == "content-type"), "")
    return redact_json(json.loads(text)) if "json" in content_type else text


@pytest.mark.corpus
@pytest.mark.skipif(not NOTION.is_dir(), reason=f"corpus not present at {NOTION}")
def test_the_notion_corpus_reads_as_one_import_with_unique_ids() -> None:
    stream = read_many(_notion_cassettes())
    sessions = list(stream)
    ids = [ex.id for session in sessions for ex in session.exchanges]

    assert (stream.report.files, stream.report.sessions, len(ids)) == (79, 79, 334)
    assert len(set(ids)) == len(ids)
    assert {ex.request_header("authorization") for s in sessions for ex in s.exchanges} == {
        REDACTED
    }
