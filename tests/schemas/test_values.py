"""Value classes of path segments and formats of string fields."""

from __future__ import annotations

import pytest

from myna.schemas.values import classify_segment, key_parts, prefix_of, string_format


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        pytest.param("10010", "integer", id="integer"),
        pytest.param("688868e1053926ed51b99e2c3257f0ba", "hex32", id="servicenow-sys_id"),
        pytest.param("123e4567-e89b-12d3-a456-426614174000", "uuid", id="uuid-v1"),
        pytest.param("0190b4a6-3c1e-7d2a-9b4f-8e6c5d4a3b2c", "uuid", id="uuid-v7"),
        pytest.param("01ARZ3NDEKTSV4RRFFQ69G5FAV", "ulid", id="ulid"),
        pytest.param("005FECBB8C2B44CYXS", "salesforce", id="salesforce-18"),
        pytest.param("005FECBB8C2B44C", "salesforce", id="salesforce-15"),
        pytest.param("JJJ-9", "key", id="jira-key"),
        pytest.param("INC0010001", "key", id="servicenow-number"),
        pytest.param("cus_9s8d7f6g5h", "prefixed", id="stripe-style"),
        pytest.param("2024-04-16", "date", id="date"),
        pytest.param("v50.0", "version", id="version"),
        pytest.param("incident", "word", id="table-name"),
        pytest.param("sys_user_group", "word", id="snake-word"),
        pytest.param("PermissionSetGroup", "word", id="eighteen-letter-word-is-no-salesforce-id"),
        pytest.param("00E7814EEC00425E2B", "other", id="salesforce-bad-checksum"),
    ],
)
def test_segment_classes(segment: str, expected: str) -> None:
    assert classify_segment(segment) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("2016-12-12 15:19:57", "date-time-space", id="servicenow-datetime"),
        pytest.param("2023-04-28T13:04:44.000+0000", "date-time", id="salesforce-datetime"),
        pytest.param("2022-01-08T23:02:29.858-05:00", "date-time", id="iso-offset"),
        pytest.param("2024-04-16", "date", id="date"),
        pytest.param("ada@example.com", "email", id="email"),
        pytest.param("https://dev1.service-now.com/api", "uri", id="uri"),
        pytest.param("10.0.0.1", "ipv4", id="ipv4"),
        pytest.param("3", "integer-string", id="number-as-string"),
        pytest.param("-2.5", "number-string", id="decimal-as-string"),
        pytest.param("false", "boolean-string", id="boolean-as-string"),
        pytest.param("", "empty", id="empty"),
        pytest.param("Printer jammed", None, id="free-text"),
    ],
)
def test_string_formats(value: str, expected: str | None) -> None:
    assert string_format(value) == expected


def test_key_parts_split_prefix_number_and_width() -> None:
    assert key_parts("INC0010001") == ("INC", 10001, 7)
    assert key_parts("PROJ-123") == ("PROJ-", 123, 3)
    assert key_parts("incident") is None


def test_prefix_of_prefixed_id() -> None:
    assert prefix_of("cus_9s8d7f6g5h") == "cus_"
