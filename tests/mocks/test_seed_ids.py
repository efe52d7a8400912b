"""Minting ids: the values a runtime create and the seeder give new records."""

from __future__ import annotations

import random

import pytest

from myna.errors import MockError
from myna.mocks.ids import counter_name, format_sequence, mint_id, salesforce_checksum
from myna.schemas.model import IdFormat


@pytest.mark.parametrize(
    ("id15", "suffix"),
    [
        pytest.param("001D000000IqhSL", "IAZ", id="account"),
        pytest.param("0015000000abcde", "AAA", id="no-upper-case"),
        pytest.param("ABCDEABCDEABCDE", "555", id="all-upper-case"),
    ],
)
def test_salesforce_checksum(id15: str, suffix: str) -> None:
    assert salesforce_checksum(id15) == suffix


@pytest.mark.parametrize(
    ("fmt", "number", "expected"),
    [
        pytest.param(
            IdFormat(kind="sequence", prefix="INC", width=7), 10001, "INC0010001", id="sn"
        ),
        pytest.param(IdFormat(kind="sequence", prefix="PROJ-"), 12, "PROJ-12", id="jira"),
        pytest.param(IdFormat(kind="integer"), 42, "42", id="integer"),
    ],
)
def test_counter_formats(fmt: IdFormat, number: int, expected: str) -> None:
    assert format_sequence(fmt, number) == expected
    assert mint_id(fmt, random.Random(0), number=number) == expected


def test_a_counter_format_needs_its_number() -> None:
    with pytest.raises(MockError, match="a sequence id needs a counter value"):
        mint_id(IdFormat(kind="sequence", prefix="INC", width=7), random.Random(0))


def test_ulids_sort_by_their_time() -> None:
    rng = random.Random(0)
    ulid = IdFormat(kind="ulid")
    stamps = [0, 1, 1_700_000_000_000, 1_700_000_000_001]
    minted = [mint_id(ulid, rng, now_ms=stamp) for stamp in stamps]
    assert minted == sorted(minted)
    assert all(len(value) == 26 for value in minted)


def test_the_same_random_state_mints_the_same_ids() -> None:
    formats = [IdFormat(kind=kind) for kind in ("hex32", "uuid", "salesforce", "opaque")]
    first = [mint_id(fmt, random.Random(3), now_ms=0) for fmt in formats]
    assert first == [mint_id(fmt, random.Random(3), now_ms=0) for fmt in formats]
    assert len(set(first)) == len(first)


def test_counter_names_are_resource_dot_field() -> None:
    assert counter_name("incident", "number") == "incident.number"
