"""Filters keep the exchanges a user asks for and count the rest."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from myna.errors import InputError
from myna.traces import Filters, Message, ReadOptions, read
from myna.traces.filters import StatusRange, parse_status
from tests.traces.helpers import WriteFile, entry, har

ENTRIES = [
    entry("https://a.example/api/now/table/incident", started="2024-05-01T10:00:00Z"),
    entry(
        "https://a.example:8443/api/now/table/sys_user",
        method="POST",
        status=201,
        started="2024-05-02T10:00:00Z",
    ),
    entry("https://b.example/rest/api/3/issue", status=404, started="2024-05-03T10:00:00Z"),
    entry(
        "https://b.example/rest/api/3/search",
        method="post",
        status=500,
        started="2024-05-04T10:00:00Z",
    ),
]


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (Filters.build(hosts=["a.example"]), [0, 1]),
        (Filters.build(hosts=["A.example:8443"]), [1]),
        (Filters.build(path_prefixes=["/rest/api/3/"]), [2, 3]),
        (Filters.build(methods=["post"]), [1, 3]),
        (Filters.build(statuses=["4xx", "201"]), [1, 2]),
        (Filters.build(statuses=["400-599"]), [2, 3]),
        (Filters.build(since="2024-05-02", until="2024-05-03T10:00:00+00:00"), [1, 2]),
        (Filters.build(hosts=["b.example"], methods=["POST"]), [3]),
        (Filters(), [0, 1, 2, 3]),
    ],
    ids=[
        "host",
        "host-with-port",
        "path",
        "method",
        "status",
        "status-range",
        "time",
        "and",
        "none",
    ],
)
def test_filters_keep_matching_exchanges(
    write_json: WriteFile, filters: Filters, kept: list[int]
) -> None:
    stream = read(write_json("f.har", har(ENTRIES)), options=ReadOptions(filters=filters))

    ids = [ex.id for session in stream for ex in session.exchanges]

    assert ids == [f"f#{index}" for index in kept]
    assert stream.report.skipped.get("filtered", 0) == len(ENTRIES) - len(kept)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("404", StatusRange(404, 404)),
        ("2xx", StatusRange(200, 299)),
        ("200-204", StatusRange(200, 204)),
    ],
)
def test_status_specs(text: str, expected: StatusRange) -> None:
    assert parse_status(text) == expected


@pytest.mark.parametrize("text", ["ok", "6xx", "300-200", "20"])
def test_bad_status_specs_name_the_option(text: str) -> None:
    with pytest.raises(InputError, match="bad status filter") as raised:
        parse_status(text)

    assert raised.value.field == "status"


def test_bad_times_name_the_option() -> None:
    with pytest.raises(InputError, match="bad time 'last week'") as raised:
        Filters.build(since="last week")

    assert raised.value.field == "since"


def test_time_range_applies_to_transcript_events_and_keeps_untimed_ones() -> None:
    filters = Filters.build(since="2024-05-02")

    assert filters.keeps(Message("m", "user", "hi"))
    assert not filters.keeps(Message("m", "user", "hi", datetime(2024, 5, 1, tzinfo=UTC)))
    assert filters.keeps(Message("m", "user", "hi", datetime(2024, 5, 2, 9)))
