"""SOQL: select lists, WHERE into the filter AST, date literals, sorting and paging, errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.mocks.dialects import QuerySyntaxError
from myna.mocks.dialects.soql import (
    Count,
    FieldRef,
    FieldsMacro,
    SoqlQuery,
    malformed_query_message,
    parse_soql,
)
from myna.mocks.query import And, Condition, Filter, Not, Or, Query, SortKey

# A Thursday; the week (Sunday start) runs 2024-03-10 .. 2024-03-16, and 2024 is a leap year.
NOW = datetime(2024, 3, 14, 15, 30, tzinfo=UTC)


def where(clause: str) -> Filter | None:
    return parse_soql(f"SELECT Id FROM Account WHERE {clause}", now=NOW).where


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        pytest.param("Name = 'Acme'", Condition("Name", "=", "Acme"), id="equals"),
        pytest.param("Name != 'Acme'", Condition("Name", "!=", "Acme"), id="not-equals"),
        pytest.param("Name <> 'Acme'", Condition("Name", "!=", "Acme"), id="not-equals-sql"),
        pytest.param("Amount < 10", Condition("Amount", "<", 10), id="less"),
        pytest.param("Amount <= 10.5", Condition("Amount", "<=", 10.5), id="less-or-equal"),
        pytest.param("Amount > -3", Condition("Amount", ">", -3), id="greater-negative"),
        pytest.param("Amount >= 0", Condition("Amount", ">=", 0), id="greater-or-equal"),
        pytest.param("Name LIKE 'Ac%'", Condition("Name", "pattern", "Ac%"), id="like"),
        pytest.param(
            r"Name LIKE '100\% sure\_'",
            Condition("Name", "pattern", r"100\% sure\_"),
            id="like-keeps-wildcard-escapes",
        ),
        pytest.param(
            "Industry IN ('Banking', 'Retail')",
            Condition("Industry", "in", ("Banking", "Retail")),
            id="in",
        ),
        pytest.param(
            "Industry NOT IN ('Banking')",
            Condition("Industry", "not_in", ("Banking",)),
            id="not-in",
        ),
        pytest.param("IsDeleted = true", Condition("IsDeleted", "=", True), id="true"),
        pytest.param("IsDeleted = FALSE", Condition("IsDeleted", "=", False), id="false"),
        pytest.param("Phone = null", Condition("Phone", "is_empty"), id="equals-null"),
        pytest.param("Phone != NULL", Condition("Phone", "is_not_empty"), id="not-null"),
        pytest.param(
            "CloseDate = 2024-02-29", Condition("CloseDate", "=", "2024-02-29"), id="date"
        ),
        pytest.param(
            "CreatedDate > 2024-01-01T10:00:00Z",
            Condition("CreatedDate", ">", "2024-01-01T10:00:00+00:00"),
            id="datetime-utc",
        ),
        pytest.param(
            "CreatedDate > 2024-01-01T10:00:00.000+0100",
            Condition("CreatedDate", ">", "2024-01-01T10:00:00+01:00"),
            id="datetime-offset",
        ),
        pytest.param(
            "Owner.Profile.Name = 'Admin'",
            Condition("Owner.Profile.Name", "=", "Admin"),
            id="relationship-path",
        ),
        pytest.param(
            r"Name = 'O\'Brien \\ \"Co\"\N'",
            Condition("Name", "=", 'O\'Brien \\ "Co"\n'),
            id="string-escapes",
        ),
        pytest.param(
            r"Name = 'a\%b'", Condition("Name", "=", "a%b"), id="percent-escape-outside-like"
        ),
    ],
)
def test_each_operator_and_literal(clause: str, expected: Filter) -> None:
    assert where(clause) == expected


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        pytest.param(
            "a = 1 AND b = 2 AND c = 3",
            And((Condition("a", "=", 1), Condition("b", "=", 2), Condition("c", "=", 3))),
            id="and-chain",
        ),
        pytest.param(
            "a = 1 or b = 2",
            Or((Condition("a", "=", 1), Condition("b", "=", 2))),
            id="or-lowercase",
        ),
        pytest.param(
            "(a = 1 OR b = 2) AND NOT c = 3",
            And(
                (
                    Or((Condition("a", "=", 1), Condition("b", "=", 2))),
                    Not(Condition("c", "=", 3)),
                )
            ),
            id="parentheses-and-not",
        ),
        pytest.param(
            "NOT (a = 1 AND b = 2)",
            Not(And((Condition("a", "=", 1), Condition("b", "=", 2)))),
            id="not-group",
        ),
    ],
)
def test_boolean_structure(clause: str, expected: Filter) -> None:
    assert where(clause) == expected


@pytest.mark.parametrize(
    ("clause", "matching"),
    [
        pytest.param("Tags INCLUDES ('a')", ["a", "a;b;c", "c;a"], id="includes-one"),
        pytest.param("Tags INCLUDES ('a;b')", ["a;b;c"], id="semicolon-means-all"),
        pytest.param("Tags INCLUDES ('b', 'ab')", ["a;b;c", "ab"], id="any-value"),
        pytest.param("Tags EXCLUDES ('a')", ["ab", "50%;x", None], id="excludes"),
        pytest.param("Tags INCLUDES ('50%')", ["50%;x"], id="wildcards-are-literal"),
    ],
)
def test_multi_select_picklists(clause: str, matching: list[str | None]) -> None:
    from myna.mocks.evaluate import evaluate

    records = [{"Tags": tags} for tags in ("a", "a;b;c", "c;a", "ab", "50%;x", None)]
    found, _ = evaluate(records, Query(where=where(clause)))
    assert [record["Tags"] for record in found] == matching


def _day(first: str, last: str) -> tuple[str, str]:
    return f"{first}T00:00:00", f"{last}T23:59:59.999999"


@pytest.mark.parametrize(
    ("literal", "first", "last"),
    [
        pytest.param("TODAY", "2024-03-14", "2024-03-14", id="today"),
        pytest.param("YESTERDAY", "2024-03-13", "2024-03-13", id="yesterday"),
        pytest.param("TOMORROW", "2024-03-15", "2024-03-15", id="tomorrow"),
        pytest.param("THIS_WEEK", "2024-03-10", "2024-03-16", id="this-week"),
        pytest.param("LAST_WEEK", "2024-03-03", "2024-03-09", id="last-week"),
        pytest.param("NEXT_WEEK", "2024-03-17", "2024-03-23", id="next-week"),
        pytest.param("THIS_MONTH", "2024-03-01", "2024-03-31", id="this-month"),
        pytest.param("LAST_MONTH", "2024-02-01", "2024-02-29", id="last-month-leap"),
        pytest.param("NEXT_MONTH", "2024-04-01", "2024-04-30", id="next-month"),
        pytest.param("THIS_QUARTER", "2024-01-01", "2024-03-31", id="this-quarter"),
        pytest.param("LAST_QUARTER", "2023-10-01", "2023-12-31", id="last-quarter"),
        pytest.param("NEXT_QUARTER", "2024-04-01", "2024-06-30", id="next-quarter"),
        pytest.param("THIS_YEAR", "2024-01-01", "2024-12-31", id="this-year"),
        pytest.param("LAST_FISCAL_YEAR", "2023-01-01", "2023-12-31", id="last-fiscal-year"),
        pytest.param("LAST_90_DAYS", "2023-12-15", "2024-03-14", id="last-90-days"),
        pytest.param("NEXT_90_DAYS", "2024-03-15", "2024-06-12", id="next-90-days"),
        pytest.param("LAST_N_DAYS:7", "2024-03-07", "2024-03-14", id="last-n-days-includes-today"),
        pytest.param("NEXT_N_DAYS:3", "2024-03-15", "2024-03-17", id="next-n-days-from-tomorrow"),
        pytest.param("N_DAYS_AGO:2", "2024-03-12", "2024-03-12", id="n-days-ago"),
        pytest.param("LAST_N_WEEKS:2", "2024-02-25", "2024-03-09", id="last-n-weeks"),
        pytest.param("N_WEEKS_AGO:1", "2024-03-03", "2024-03-09", id="n-weeks-ago"),
        pytest.param("LAST_N_MONTHS:2", "2024-01-01", "2024-02-29", id="last-n-months"),
        pytest.param("NEXT_N_MONTHS:2", "2024-04-01", "2024-05-31", id="next-n-months"),
        pytest.param("LAST_N_QUARTERS:2", "2023-07-01", "2023-12-31", id="last-n-quarters"),
        pytest.param("LAST_N_YEARS:2", "2022-01-01", "2023-12-31", id="last-n-years"),
        pytest.param("n_years_ago:1", "2023-01-01", "2023-12-31", id="case-insensitive"),
    ],
)
def test_date_literals_are_whole_day_ranges_anchored_on_now(
    literal: str, first: str, last: str
) -> None:
    assert where(f"CreatedDate = {literal}") == Condition(
        "CreatedDate", "between", _day(first, last)
    )


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        pytest.param(">", Condition("d", ">", "2024-03-31T23:59:59.999999"), id="after-range"),
        pytest.param(">=", Condition("d", ">=", "2024-03-01T00:00:00"), id="from-range-start"),
        pytest.param("<", Condition("d", "<", "2024-03-01T00:00:00"), id="before-range"),
        pytest.param("<=", Condition("d", "<=", "2024-03-31T23:59:59.999999"), id="to-range-end"),
        pytest.param(
            "!=",
            Or(
                (
                    Condition("d", "<", "2024-03-01T00:00:00"),
                    Condition("d", ">", "2024-03-31T23:59:59.999999"),
                )
            ),
            id="outside-range",
        ),
    ],
)
def test_comparing_with_a_date_literal_uses_the_range_bounds(op: str, expected: Filter) -> None:
    assert where(f"d {op} THIS_MONTH") == expected


def test_a_full_query() -> None:
    query = parse_soql(
        """select Id, Name, Account.Name
             from Contact
            where Account.Industry = 'Retail'
         order by LastName asc nulls last, CreatedDate DESC
            limit 50 offset 100""",
        now=NOW,
    )
    assert query == SoqlQuery(
        object_name="Contact",
        select=(FieldRef("Id"), FieldRef("Name"), FieldRef("Account.Name")),
        where=Condition("Account.Industry", "=", "Retail"),
        order_by=(SortKey("LastName", False, False), SortKey("CreatedDate", True, None)),
        limit=50,
        offset=100,
    )
    assert query.fields == ("Id", "Name", "Account.Name")
    assert query.to_query() == Query(
        where=query.where, order_by=query.order_by, limit=50, offset=100, fields=query.fields
    )
    assert not query.is_count


@pytest.mark.parametrize(
    ("select", "items", "is_count", "fields"),
    [
        pytest.param("COUNT()", (Count(),), True, (), id="count"),
        pytest.param("COUNT(Id)", (Count("Id"),), False, (), id="count-field"),
        pytest.param("count(Id) total", (Count("Id", "total"),), False, (), id="count-alias"),
        pytest.param("FIELDS(ALL)", (FieldsMacro("ALL"),), False, None, id="fields-all"),
        pytest.param(
            "Id, FIELDS(standard)",
            (FieldRef("Id"), FieldsMacro("STANDARD")),
            False,
            None,
            id="mixed",
        ),
    ],
)
def test_select_items(
    select: str, items: tuple[Any, ...], is_count: bool, fields: tuple[str, ...] | None
) -> None:
    query = parse_soql(f"SELECT {select} FROM Case")
    assert (query.select, query.is_count, query.fields) == (items, is_count, fields)


@pytest.mark.parametrize(
    ("text", "position", "detail"),
    [
        pytest.param("SELECT Id FORM Account", 10, "unexpected token: FORM", id="typo-keyword"),
        pytest.param("SELECT FROM Account", 7, "expected a field name", id="empty-select"),
        pytest.param("SELECT Id FROM", 14, "expected an object name", id="no-object"),
        pytest.param(
            "SELECT Id FROM A WHERE a = 1 AND b = 2 OR c = 3",
            39,
            "use parentheses to combine AND and OR",
            id="mixed-and-or",
        ),
        pytest.param(
            "SELECT Id FROM A WHERE Name = 'x", 30, "unterminated string", id="open-quote"
        ),
        pytest.param(
            "SELECT Id FROM A WHERE Name = 'a\\qb'", 32, "invalid escape", id="bad-escape"
        ),
        pytest.param(
            "SELECT Id FROM A WHERE Name LIKE 5", 33, "LIKE needs a string", id="like-int"
        ),
        pytest.param("SELECT Id FROM A WHERE Amount > null", 32, "null can only", id="null-order"),
        pytest.param("SELECT Id FROM A WHERE Name = :name", 30, "bind variables", id="bind"),
        pytest.param("SELECT Id FROM A WHERE d = 2024-02-30", 27, "invalid date", id="bad-date"),
        pytest.param(
            "SELECT Id FROM A WHERE d > 2024-02-01T10:00:00", 27, "needs a time zone", id="zoneless"
        ),
        pytest.param(
            "SELECT Id FROM A WHERE d = LAST_N_DAYS", 38, "unexpected end", id="n-missing"
        ),
        pytest.param(
            "SELECT Id FROM A WHERE d = LAST_N_DAYS:x", 39, "non-negative", id="n-not-int"
        ),
        pytest.param(
            "SELECT Id FROM A WHERE Id IN (SELECT AccountId FROM Contact)",
            30,
            "semi-join",
            id="semi-join",
        ),
        pytest.param("SELECT Id FROM A WHERE d IN (TODAY)", 29, "IN list", id="literal-in-list"),
        pytest.param(
            "SELECT Id FROM A WHERE Tags INCLUDES (1)", 38, "list of string literals", id="includes"
        ),
        pytest.param(
            "SELECT Id, (SELECT Id FROM Contacts) FROM A", 11, "subqueries", id="subquery"
        ),
        pytest.param("SELECT Id, COUNT() FROM A", 0, "COUNT() must be the only", id="count-mixed"),
        pytest.param("SELECT SUM(Amount) FROM A", 7, "SUM() is not supported", id="sum"),
        pytest.param("SELECT Id FROM A GROUP BY Name", 17, "GROUP BY", id="group-by"),
        pytest.param("SELECT Id FROM A LIMIT -1", 23, "non-negative integer", id="negative-limit"),
        pytest.param("SELECT Id FROM A WHERE", 22, "found end of query", id="empty-where"),
        pytest.param("SELECT Id FROM A WHERE Name", 23, "expected an operator", id="no-op"),
        pytest.param("SELECT Id FROM A WHERE Name = 'a' #", 34, "unexpected character", id="junk"),
    ],
)
def test_malformed_queries_name_the_position(text: str, position: int, detail: str) -> None:
    with pytest.raises(QuerySyntaxError) as raised:
        parse_soql(text, now=NOW)
    assert detail in raised.value.detail
    assert raised.value.position == position
    assert raised.value.dialect == "soql"


def test_malformed_query_message_has_salesforces_shape() -> None:
    with pytest.raises(QuerySyntaxError) as raised:
        parse_soql("SELECT Id\nFROM Account\nWHERE Name = 'a' AND OR")
    assert malformed_query_message(raised.value) == (
        "\nWHERE Name = 'a' AND OR\n"
        "                     ^\n"
        "ERROR at Row:3:Column:22\n"
        "expected a field name, found OR"
    )


# --- round trip: random filters rendered as SOQL parse back unchanged ---

_KEYWORDS = {"SELECT", "FROM", "WHERE", "ORDER", "BY", "LIMIT", "OFFSET", "AND", "OR", "NOT"}
_KEYWORDS |= {"GROUP"}
_NAME = st.builds(
    str.__add__,
    st.sampled_from("abcxyzABCXYZ"),
    st.text("abcxyzABCXYZ0189_", max_size=7),
).filter(lambda name: name.upper() not in _KEYWORDS)
_FIELD = st.lists(_NAME, min_size=1, max_size=3).map(".".join)
_STRING_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def render_string(value: str) -> str:
    return "'" + "".join(_STRING_ESCAPES.get(char, char) for char in value) + "'"


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10)
# (value as the AST holds it, value as SOQL writes it)
_LITERALS = st.one_of(
    _TEXT.map(lambda text: (text, render_string(text))),
    st.integers(-(10**9), 10**9).map(lambda n: (n, str(n))),
    st.decimals(-(10**6), 10**6, places=3, allow_nan=False, allow_infinity=False).map(
        lambda d: (float(d), format(d, "f"))
    ),
    st.booleans().map(lambda b: (b, str(b).upper())),
    st.dates().map(lambda d: (d.isoformat(), d.isoformat())),
)
_COMPARISON = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])


@st.composite
def _conditions(draw: st.DrawFn) -> tuple[Filter, str]:
    field = draw(_FIELD)
    kind = draw(st.sampled_from(["compare", "like", "in", "not_in", "null", "not_null"]))
    if kind == "compare":
        op = draw(_COMPARISON)
        value, text = draw(_LITERALS)
        return Condition(field, op, value), f"{field} {op} {text}"  # type: ignore[arg-type]
    if kind == "like":
        pattern = draw(_TEXT.filter(lambda text: "\\" not in text))
        return Condition(field, "pattern", pattern), f"{field} LIKE {render_string(pattern)}"
    if kind in ("in", "not_in"):
        items = draw(st.lists(_LITERALS, min_size=1, max_size=3))
        rendered = ", ".join(text for _, text in items)
        spelled = "IN" if kind == "in" else "NOT IN"
        values = tuple(value for value, _ in items)
        return Condition(field, kind, values), f"{field} {spelled} ({rendered})"  # type: ignore[arg-type]
    if kind == "null":
        return Condition(field, "is_empty"), f"{field} = null"
    return Condition(field, "is_not_empty"), f"{field} != NULL"


def _combine(
    children: st.SearchStrategy[tuple[Filter, str]],
) -> st.SearchStrategy[tuple[Filter, str]]:
    def joined(parts: list[tuple[Filter, str]], word: str) -> tuple[Filter, str]:
        node = And(tuple(p for p, _ in parts)) if word == "AND" else Or(tuple(p for p, _ in parts))
        return node, f" {word} ".join(f"({text})" for _, text in parts)

    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(lambda parts: joined(parts, "AND")),
        st.lists(children, min_size=2, max_size=3).map(lambda parts: joined(parts, "OR")),
        children.map(lambda child: (Not(child[0]), f"NOT ({child[1]})")),
    )


_FILTERS = st.recursive(_conditions(), _combine, max_leaves=8)


@given(
    _FILTERS,
    st.lists(st.tuples(_FIELD, st.booleans(), st.sampled_from([None, True, False])), max_size=3),
    st.one_of(st.none(), st.integers(0, 2000)),
    st.integers(0, 2000),
)
def test_rendered_queries_parse_back_unchanged(
    filter_and_text: tuple[Filter, str],
    sorts: list[tuple[str, bool, bool | None]],
    limit: int | None,
    offset: int,
) -> None:
    filter_, clause = filter_and_text
    order = ", ".join(
        f"{field} {'DESC' if desc else 'ASC'}"
        + ("" if nulls is None else f" NULLS {'FIRST' if nulls else 'LAST'}")
        for field, desc, nulls in sorts
    )
    text = f"SELECT Id FROM Account WHERE {clause}"
    text += f" ORDER BY {order}" if sorts else ""
    text += f" LIMIT {limit}" if limit is not None else ""
    text += f" OFFSET {offset}"
    parsed = parse_soql(text, now=NOW)
    assert parsed.where == filter_
    assert parsed.order_by == tuple(SortKey(f, d, n) for f, d, n in sorts)
    assert (parsed.limit, parsed.offset) == (limit, offset)


# --- fuzz: any text either parses or raises QuerySyntaxError ---

_TOKENS = st.sampled_from(
    [
        "SELECT ", "FROM ", "WHERE ", "AND ", "OR ", "NOT ", "(", ")", ",", "Id ", "a.b ", "=",
        "!=", "<", ">=", "LIKE ", "IN ", "'x'", "'", "\\", "1", "-2.5", "2024-01-01",
        "2024-13-45T99:00:00Z", "TODAY", "LAST_N_DAYS", ":", "5", "null ", "ORDER BY ",
        "DESC ", "NULLS ", "LIMIT ", "OFFSET ", "COUNT()", "FIELDS(ALL)", " ", "\n", "é",
    ]
)  # fmt: skip


@given(
    st.one_of(
        st.text(),
        st.lists(_TOKENS, max_size=16).map("".join),
        st.lists(_TOKENS, max_size=16).map(
            lambda parts: "SELECT Id FROM A WHERE " + "".join(parts)
        ),
    )
)
def test_arbitrary_text_parses_or_raises_query_syntax_error(text: str) -> None:
    # Anything other than QuerySyntaxError escaping here fails the test.
    error = _syntax_error(text)
    assert error is None or 0 <= error.position <= len(text)
    if error is not None:
        assert "ERROR at Row:" in malformed_query_message(error)


def _syntax_error(text: str) -> QuerySyntaxError | None:
    try:
        parse_soql(text, now=NOW)
    except QuerySyntaxError as error:
        return error
    return None


# --- real recordings ---

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
SALESFORCE_HARS = sorted((CORPUS / "har" / "jupiterone_graph-salesforce").rglob("*.har"))


def _recorded_soql() -> list[str]:
    queries: set[str] = set()
    for har in SALESFORCE_HARS:
        for entry in json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]:
            url = urlsplit(entry["request"]["url"])
            if url.path.endswith(("/query", "/queryAll")):
                queries.update(value for key, value in parse_qsl(url.query) if key == "q")
    return sorted(queries)


@pytest.mark.corpus
@pytest.mark.skipif(not SALESFORCE_HARS, reason=f"no Salesforce recordings under {CORPUS}")
def test_every_recorded_salesforce_query_parses() -> None:
    queries = _recorded_soql()
    assert queries, "the Salesforce recordings hold no /query calls"
    for text in queries:
        query = parse_soql(text, now=NOW)
        written = text.split(" FROM ")[0].removeprefix("SELECT ").split(", ")
        assert query.fields == tuple(written)
        assert query.object_name == text.rsplit(" FROM ", 1)[1]


@pytest.mark.parametrize("name", ["Group", "Order", "order"])
def test_objects_named_like_keywords(name: str) -> None:
    assert parse_soql(f"SELECT Id FROM {name} ORDER BY Id").object_name == name
