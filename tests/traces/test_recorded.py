"""Pieces every recorded-HTTP reader shares: queries written without `?`, bodies, headers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.traces import read
from myna.traces.model import Body
from myna.traces.recorded import decode_body, without_bare_query
from myna.traces.redact import REDACTED
from tests.traces.helpers import WriteFile, entry, har


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://x.example/api/v1/groups.json&page[size]=100",
            "https://x.example/api/v1/groups.json?page[size]=100",
        ),
        ("https://x.example/a&b=1&c=&d=2#top", "https://x.example/a?b=1&c=&d=2#top"),
        ("https://x.example/a&page%5Bsize%5D=100", "https://x.example/a?page%5Bsize%5D=100"),
        ("/relative/a.json&x=1", "/relative/a.json?x=1"),
        ("https://x.example/a?x=1&y=2", None),
        ("https://x.example/search/R&D", None),
        ("https://x.example/a&b=c/d", None),
        ("https://x.example/a&flag", None),
        ("https://x.example/a&=1", None),
        ("https://x.example/a&b=1&flag", None),
        ("https://x.example/a", None),
    ],
    ids=[
        "bracketed-name",
        "several-and-fragment",
        "encoded-name",
        "relative",
        "has-question-mark",
        "ampersand-in-a-name",
        "slash-after-pairs",
        "bare-word",
        "no-name",
        "one-pair-not-a-pair",
        "no-ampersand",
    ],
)
def test_a_query_written_without_question_mark(url: str, expected: str | None) -> None:
    assert without_bare_query(url) == expected


_WORDS = st.text("abcz09_.[]%-", min_size=1, max_size=6)


@given(st.lists(st.tuples(_WORDS, st.text("abz09_.-%", max_size=6)), min_size=1, max_size=4))
def test_pairs_after_the_first_ampersand_become_the_query(pairs: list[tuple[str, str]]) -> None:
    written = "&".join(f"{name}={value}" for name, value in pairs)

    fixed = without_bare_query(f"https://h.example/api/items.json&{written}")

    assert fixed == f"https://h.example/api/items.json?{written}"
    assert without_bare_query(fixed) is None


@given(st.text())
def test_any_url_is_rewritten_at_most_once(url: str) -> None:
    fixed = without_bare_query(url)

    assert fixed is None or ("?" in fixed and without_bare_query(fixed) is None)


def test_every_reader_reads_it_before_filters_and_redaction(write_json: WriteFile) -> None:
    url = "https://h.example/api/v2/groups.json&page=2&api_key=s3cr3t"
    path = write_json("q.har", har([entry(url), entry("https://h.example/api/v2/users.json")]))

    stream = read(path)
    first, second = [ex for session in stream for ex in session.exchanges]

    assert first.url == f"https://h.example/api/v2/groups.json?page=2&api_key={REDACTED}"
    assert (first.path, first.query) == (
        "/api/v2/groups.json",
        [("page", "2"), ("api_key", REDACTED)],
    )
    assert second.query == []
    assert stream.report.queries_without_question_mark == 1


@pytest.mark.parametrize(
    ("data", "mime", "expected"),
    [
        (b'{"a": 1}', "application/json", Body("json", {"a": 1}, "application/json")),
        ("é".encode("latin-1"), "text/plain; charset=ISO-8859-1", Body("text", "é", None)),
        ("é".encode(), "text/plain; charset=no-such-charset", Body("text", "é", None)),
        (b"\xff\xfe", "text/plain", Body("base64", "//4=", "text/plain")),
    ],
    ids=["json", "declared-charset", "unknown-charset", "not-text"],
)
def test_bytes_are_decoded_with_their_charset(data: bytes, mime: str, expected: Body) -> None:
    body, _ = decode_body(data, mime, None)

    assert (body.kind, body.value) == (expected.kind, expected.value)
    assert body.mime_type == mime
