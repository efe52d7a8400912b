"""SOSL: the FIND / IN / RETURNING / LIMIT clauses and the search-term matcher."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.mocks.dialects import QuerySyntaxError
from myna.mocks.dialects.sosl import SoslQuery, SoslReturning, match_term, parse_sosl
from myna.mocks.query import Condition, SortKey


def test_the_issue_example() -> None:
    assert parse_sosl(
        "FIND {Acme} IN ALL FIELDS RETURNING Account(Id, Name), Contact"
    ) == SoslQuery(
        term="Acme",
        scope="ALL",
        returning=(SoslReturning("Account", ("Id", "Name")), SoslReturning("Contact")),
    )


def test_returning_items_take_soql_where_order_and_limit() -> None:
    query = parse_sosl(
        "find {jo*} in name fields returning "
        "Contact(Id, Email WHERE MailingCity = 'Paris' ORDER BY LastName DESC LIMIT 5 OFFSET 1) "
        "LIMIT 20"
    )
    assert query == SoslQuery(
        term="jo*",
        scope="NAME",
        returning=(
            SoslReturning(
                "Contact",
                ("Id", "Email"),
                Condition("MailingCity", "=", "Paris"),
                (SortKey("LastName", descending=True),),
                limit=5,
                offset=1,
            ),
        ),
        limit=20,
    )


def test_the_term_keeps_escapes_for_the_matcher() -> None:
    query = parse_sosl(r"FIND {100\% \{sure\}} RETURNING Case")
    assert query.term == r"100\% \{sure\}"
    assert match_term(query.term)("we are 100% {sure} of it")


@pytest.mark.parametrize(
    ("term", "text", "matches"),
    [
        pytest.param("acme", "ACME Corp", True, id="case-insensitive-word"),
        pytest.param("acme", "Acmeville", False, id="whole-words-only"),
        pytest.param("acme*", "Acmeville", True, id="star-wildcard"),
        pytest.param("gl?be", "the globe", True, id="question-one-char"),
        pytest.param("gl?be", "the glbe", False, id="question-needs-a-char"),
        pytest.param('"acme corp"', "acme   corp", True, id="phrase"),
        pytest.param('"acme corp"', "corp acme", False, id="phrase-order"),
        pytest.param("acme corp", "corp of acme", True, id="words-all-match"),
        pytest.param("acme AND corp", "acme only", False, id="and"),
        pytest.param("acme OR globex", "Globex", True, id="or"),
        pytest.param("acme AND NOT corp", "acme corp", False, id="and-not-excludes"),
        pytest.param("acme AND NOT corp", "acme ltd", True, id="and-not-keeps"),
    ],
)
def test_term_matching(term: str, text: str, matches: bool) -> None:
    assert match_term(term)(text) is matches


@pytest.mark.parametrize(
    ("text", "position", "detail"),
    [
        pytest.param("SELECT Id FROM Account", 0, "starts with FIND", id="not-sosl"),
        pytest.param("FIND Acme", 5, "in braces", id="no-braces"),
        pytest.param("FIND {Acme", 5, "not closed", id="open-brace"),
        pytest.param("FIND {  }", 5, "empty", id="empty-term"),
        pytest.param("FIND {a (b)}", 8, "reserved character", id="unescaped-reserved"),
        pytest.param("FIND {x} IN BODY FIELDS", 12, "unexpected token: BODY", id="bad-scope"),
        pytest.param("FIND {x} RETURNING Account(", 27, "field name", id="open-returning"),
        pytest.param("FIND {x} WITH SNIPPET", 9, "WITH clauses", id="with"),
    ],
)
def test_malformed_searches_name_the_position(text: str, position: int, detail: str) -> None:
    with pytest.raises(QuerySyntaxError) as raised:
        parse_sosl(text)
    assert detail in raised.value.detail
    assert raised.value.position == position


_TOKENS = st.sampled_from(
    ["FIND ", "{", "}", "'", "\\", "a", "*", "?", '"', " OR ", " AND NOT ", "(", ")", "IN ",
     "ALL ", "FIELDS ", "RETURNING ", "Account", ",", "LIMIT ", "5", " WHERE x = 1"]
)  # fmt: skip


@given(st.one_of(st.text(), st.lists(_TOKENS, max_size=14).map("".join)))
def test_arbitrary_text_parses_or_raises_query_syntax_error(text: str) -> None:
    # Anything other than QuerySyntaxError escaping here fails the test.
    try:
        query = parse_sosl(text)
    except QuerySyntaxError:
        return
    match_term(query.term)(text)
