"""Pseudonymisation: personal data replaced by plausible fakes, consistently under one key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from myna.traces import ReadOptions, read, read_many
from myna.traces.pseudonymise import Pseudonymiser
from tests.traces.helpers import WriteFile, entry, har

EMAIL = re.compile(r"^[a-z]+\.[a-z]+\.[0-9a-f]{4}@example\.(com|org|net)$")


def test_the_same_value_maps_to_the_same_fake_under_one_key() -> None:
    first, second = Pseudonymiser("k1"), Pseudonymiser("k1")

    assert first.email("beth.anglin@example.com") == second.email("beth.anglin@example.com")
    assert first.email("Beth.Anglin@Example.com") == first.email("beth.anglin@example.com")
    assert first.person("full", "Beth Anglin") == second.person("full", "Beth Anglin")
    assert first.phone("+1 (555) 010-2030") == second.phone("+1 555 010 2030")


def test_another_key_gives_other_fakes() -> None:
    assert Pseudonymiser("k1").email("a@b.com") != Pseudonymiser("k2").email("a@b.com")


def test_fakes_are_plausible_and_distinct_from_the_originals() -> None:
    fake = Pseudonymiser("k").email("beth.anglin@acme.com")

    assert EMAIL.match(fake)
    assert "anglin" not in fake
    assert re.match(r"^\+1-\d{3}-555-\d{4}$", Pseudonymiser("k").phone("+44 20 7946 0958"))
    assert re.match(
        r"^[A-Z][a-z]+ [A-Z][a-z'-]+$", Pseudonymiser("k").person("full", "Beth Anglin")
    )


def test_distinct_emails_get_distinct_fakes() -> None:
    pseudonymiser = Pseudonymiser("k")

    fakes = {pseudonymiser.email(f"user{n}@acme.com") for n in range(500)}

    assert len(fakes) == 500


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("opened 2024-01-09 04:02:28", True),
        ("server 1.19.3.1 at 10.0.0.12", True),
        ("sys_id 3b0f02e201046f5d30d9b0efe1efbb55", True),
        ("call +1 (555) 010-2030 now", False),
        ("mail beth.anglin@example.com", False),
    ],
    ids=["date", "version-and-ip", "sys-id", "phone", "email"],
)
def test_free_text_changes_only_where_personal_data_is(text: str, kept: bool) -> None:
    assert (Pseudonymiser("k").text(text) == text) is kept


def test_names_are_replaced_by_key_and_only_for_people() -> None:
    pseudonymiser = Pseudonymiser("k")
    record = {
        "user": {
            "name": "Beth Anglin",
            "email": "beth.anglin@acme.com",
            "user_name": "beth.anglin",
        },
        "issuetype": {"name": "Task"},
        "caller_id": {"link": "https://h/api/now/table/sys_user/5137", "value": "5137153cc611227c"},
        "assignee": {"displayName": "Fred Luddy", "accountId": "5b10ac8d82e05b22cc7d4ef5"},
        "first_name": "Beth",
    }

    result = pseudonymiser.json(record)

    assert result["issuetype"] == {"name": "Task"}
    assert result["caller_id"] == record["caller_id"]
    assert result["user"]["name"] == pseudonymiser.person("full", "Beth Anglin")
    assert result["user"]["email"] == pseudonymiser.email("beth.anglin@acme.com")
    assert result["user"]["user_name"] == pseudonymiser.person("user", "beth.anglin")
    assert result["assignee"]["displayName"] != "Fred Luddy"
    assert result["assignee"]["accountId"] == "5b10ac8d82e05b22cc7d4ef5"
    assert result["first_name"] == pseudonymiser.person("first", "Beth")


def test_references_line_up_across_files_of_a_corpus(tmp_path: Path, write_json: WriteFile) -> None:
    user = '{"result": {"name": "Beth Anglin", "email": "beth.anglin@acme.com"}}'
    search = "https://h.example/api/now/table/sys_user?email=beth.anglin@acme.com"
    first = write_json("a.har", har([entry(response_text=user)]))
    second = write_json("b.har", har([entry(search, response_text='{"result": []}')]))
    options = ReadOptions(pseudonymise_key="corpus-secret")

    one, two = (s.exchanges[0] for s in read_many([first, second], options=options))
    again = next(iter(read(first, options=options))).exchanges[0]

    fake_email = one.response_body.value["result"]["email"]
    assert fake_email != "beth.anglin@acme.com"
    assert two.url.endswith(f"email={fake_email}")
    assert two.query == [("email", fake_email)]
    assert again.response_body.value == one.response_body.value


def test_an_empty_key_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        Pseudonymiser("")
