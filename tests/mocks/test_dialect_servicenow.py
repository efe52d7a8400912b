"""ServiceNow encoded queries: what each operator parses to, how terms combine, what is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from myna.mocks.dialects import QuerySyntaxError
from myna.mocks.dialects.servicenow import parse_encoded_query
from myna.mocks.query import And, Condition, Filter, Not, Or, SortKey


def where(text: str) -> Filter | None:
    return parse_encoded_query(text)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("active=true", Condition("active", "=", "true"), id="equals"),
        pytest.param("state!=6", Condition("state", "!=", "6"), id="not-equals"),
        pytest.param("priority<3", Condition("priority", "<", "3"), id="less"),
        pytest.param("priority<=3", Condition("priority", "<=", "3"), id="less-or-equal"),
        pytest.param("priority>1", Condition("priority", ">", "1"), id="greater"),
        pytest.param("priority>=1", Condition("priority", ">=", "1"), id="greater-or-equal"),
        pytest.param("stateIN1,2,3", Condition("state", "in", ("1", "2", "3")), id="in"),
        pytest.param("stateNOT IN6,7", Condition("state", "not_in", ("6", "7")), id="not-in"),
        pytest.param(
            "short_descriptionLIKEdisk full",
            Condition("short_description", "like", "disk full"),
            id="like",
        ),
        pytest.param(
            "short_descriptionCONTAINSdisk",
            Condition("short_description", "like", "disk"),
            id="contains",
        ),
        pytest.param(
            "short_descriptionNOT LIKEdisk",
            Condition("short_description", "not_like", "disk"),
            id="not-like",
        ),
        pytest.param(
            "short_descriptionDOES NOT CONTAINdisk",
            Condition("short_description", "not_like", "disk"),
            id="does-not-contain",
        ),
        pytest.param(
            "numberSTARTSWITHINC00", Condition("number", "starts_with", "INC00"), id="starts"
        ),
        pytest.param("numberENDSWITH01", Condition("number", "ends_with", "01"), id="ends"),
        pytest.param("closed_atISEMPTY", Condition("closed_at", "is_empty"), id="is-empty"),
        pytest.param("closed_atISNOTEMPTY", Condition("closed_at", "is_not_empty"), id="not-empty"),
        pytest.param(
            "close_notesEMPTYSTRING", Condition("close_notes", "=", ""), id="empty-string"
        ),
        pytest.param(
            "close_notesANYTHING",
            Or((Condition("close_notes", "is_empty"), Condition("close_notes", "is_not_empty"))),
            id="anything",
        ),
        pytest.param("impactBETWEEN1@3", Condition("impact", "between", ("1", "3")), id="between"),
        pytest.param(
            "opened_atBETWEENjavascript:gs.dateGenerate('2024-01-01','00:00:00')"
            "@javascript:gs.dateGenerate('2024-01-31','23:59:59')",
            Condition("opened_at", "between", ("2024-01-01 00:00:00", "2024-01-31 23:59:59")),
            id="between-date-generate",
        ),
        pytest.param(
            "opened_at>=javascript:gs.dateGenerate('2024-02-29','start')",
            Condition("opened_at", ">=", "2024-02-29 00:00:00"),
            id="date-generate-start",
        ),
        pytest.param(
            "assigned_to.name=Beth Anglin",
            Condition("assigned_to.name", "=", "Beth Anglin"),
            id="dot-walked",
        ),
        pytest.param(
            "short_description=a=b!=c",
            Condition("short_description", "=", "a=b!=c"),
            id="value-with-equals",
        ),
        pytest.param("description=", Condition("description", "=", ""), id="empty-value"),
        pytest.param("stateIN", Condition("state", "in", ()), id="empty-in-list"),
    ],
)
def test_each_operator_parses_to_its_condition(text: str, expected: Filter) -> None:
    assert parse_encoded_query(text) == (expected, ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "active=true^priority=1",
            And((Condition("active", "=", "true"), Condition("priority", "=", "1"))),
            id="caret-is-and",
        ),
        pytest.param(
            "priority=1^ORpriority=2^ORpriority=3",
            Or(tuple(Condition("priority", "=", str(n)) for n in (1, 2, 3))),
            id="or-chain",
        ),
        pytest.param(
            "active=true^priority=1^ORurgency=1",
            And(
                (
                    Condition("active", "=", "true"),
                    Or((Condition("priority", "=", "1"), Condition("urgency", "=", "1"))),
                )
            ),
            id="or-binds-tighter-than-and",
        ),
        pytest.param(
            "active=true^priority=1^NQactive=false^category=hardware",
            Or(
                (
                    And((Condition("active", "=", "true"), Condition("priority", "=", "1"))),
                    And(
                        (Condition("active", "=", "false"), Condition("category", "=", "hardware"))
                    ),
                )
            ),
            id="new-query-is-or-of-groups",
        ),
        pytest.param("active=true^EQ", Condition("active", "=", "true"), id="end-marker-ignored"),
        pytest.param("^active=true^", Condition("active", "=", "true"), id="stray-carets-ignored"),
        pytest.param("ORactive=true", Condition("active", "=", "true"), id="leading-or-is-plain"),
    ],
)
def test_terms_combine_with_servicenow_precedence(text: str, expected: Filter) -> None:
    assert where(text) == expected


INCIDENTS = [
    {"number": "INC1", "active": "true", "priority": "1", "opened_at": "2024-01-05 09:00:00"},
    {"number": "INC2", "active": "true", "priority": "3", "opened_at": "2024-02-01 00:00:00"},
    {"number": "INC3", "active": "false", "priority": "1", "opened_at": "2024-01-31 23:59:59"},
    {"number": "INC4", "active": "false", "priority": "4", "close_notes": ""},
]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        pytest.param("active=true^priority=1^ORpriority=3", ["INC1", "INC2"], id="and-or"),
        pytest.param("active=true^priority=1^NQactive=false^priority=4", ["INC1", "INC4"], id="nq"),
        pytest.param(
            "opened_atBETWEENjavascript:gs.dateGenerate('2024-01-01','start')"
            "@javascript:gs.dateGenerate('2024-01-31','end')",
            ["INC1", "INC3"],
            id="between-dates",
        ),
        pytest.param("priorityIN1,4^ORDERBYDESCnumber", ["INC4", "INC3", "INC1"], id="in-sorted"),
        pytest.param("opened_atISEMPTY", ["INC4"], id="is-empty"),
        pytest.param("close_notesANYTHING", ["INC1", "INC2", "INC3", "INC4"], id="anything"),
    ],
)
def test_parsed_queries_select_the_records_servicenow_would(text: str, numbers: list[str]) -> None:
    from myna.mocks.evaluate import evaluate
    from myna.mocks.query import Query

    where, order = parse_encoded_query(text)
    found, _ = evaluate(INCIDENTS, Query(where=where, order_by=order))
    assert [record["number"] for record in found] == numbers


def test_sort_terms_collect_in_order_wherever_they_appear() -> None:
    assert parse_encoded_query("ORDERBYpriority^active=true^ORDERBYDESCsys_updated_on") == (
        Condition("active", "=", "true"),
        (SortKey("priority"), SortKey("sys_updated_on", descending=True)),
    )


def test_empty_query_has_no_filter() -> None:
    assert parse_encoded_query("") == (None, ())


def test_queries_pysnc_builds_parse() -> None:
    pysnc = pytest.importorskip("pysnc")
    client = pysnc.ServiceNowClient("https://example.service-now.com", ("user", "password"))
    record = client.GlideRecord("incident")
    condition = record.add_query("priority", "<", 3)
    condition.add_or_condition("state", "IN", "1,2")
    record.add_null_query("assigned_to")
    record.add_not_null_query("caller_id")
    record.add_active_query()
    record.add_query("number", "INC0010001")
    record.add_encoded_query("short_descriptionLIKEdisk^NQcategory=network")
    record.order_by_desc("number")

    filter_, order = parse_encoded_query(record.get_encoded_query())

    first_group = And(
        (
            Or((Condition("priority", "<", "3"), Condition("state", "in", ("1", "2")))),
            Condition("assigned_to", "is_empty"),
            Condition("caller_id", "is_not_empty"),
            Condition("active", "=", "true"),
            Condition("number", "=", "INC0010001"),
            Condition("short_description", "like", "disk"),
        )
    )
    assert filter_ == Or((first_group, Condition("category", "=", "network")))
    assert order == (SortKey("number", descending=True),)


def test_pysnc_default_order_parses() -> None:
    pysnc = pytest.importorskip("pysnc")
    record = pysnc.ServiceNowClient("https://x.service-now.com", ("u", "p")).GlideRecord("incident")
    assert parse_encoded_query(record.get_encoded_query()) == (None, (SortKey("sys_id"),))


@pytest.mark.parametrize(
    ("text", "position", "names"),
    [
        pytest.param("active=true^caller_idDYNAMIC90d1", 21, "DYNAMIC", id="dynamic"),
        pytest.param("short_descriptionSAMEASdescription", 17, "SAMEAS", id="same-as"),
        pytest.param("sys_class_nameINSTANCEOFtask", 14, "INSTANCEOF", id="instanceof"),
        pytest.param("sla_dueONToday@javascript:gs.daysAgoStart(0)", 7, "ON", id="on-today"),
        pytest.param(
            "opened_at>javascript:gs.beginningOfLast7Days()", 10, "javascript:", id="javascript"
        ),
        pytest.param("RLQUERYtask_sla.task,>=1^ENDRLQUERY", 0, "RLQUERY", id="related-list-query"),
        pytest.param("JOINincident.sys_id=task_sla.task!stage=breached", 0, "JOIN", id="join"),
        pytest.param("active=true^nonsense", 12, "nonsense", id="no-operator"),
        pytest.param("impactBETWEEN1", 13, "BETWEEN", id="between-one-bound"),
        pytest.param("impactBETWEEN1@2@3", 13, "BETWEEN", id="between-three-bounds"),
        pytest.param("closed_atISEMPTYyes", 16, "ISEMPTY", id="nullary-with-value"),
        pytest.param(
            "opened_at>javascript:gs.dateGenerate('2024-13-01','00:00:00')",
            10,
            "dateGenerate",
            id="date-generate-bad-month",
        ),
        pytest.param("a..b=1", 0, "a..b", id="empty-dot-walk-segment"),
        pytest.param("ORDERBYDESC", 11, "ORDERBY", id="order-without-field"),
        pytest.param("GROUPBYstate", 0, "GROUPBY", id="group-by"),
    ],
)
def test_unsupported_constructs_name_term_and_position(
    text: str, position: int, names: str
) -> None:
    with pytest.raises(QuerySyntaxError) as raised:
        parse_encoded_query(text)
    assert raised.value.position == position
    assert names in raised.value.message
    assert raised.value.dialect == "servicenow"


# --- round trip: random filters rendered the way ServiceNow writes them parse back unchanged ---

_FIELD = st.lists(
    st.builds(
        str.__add__,
        st.sampled_from("abcdefghijklmnopqrstuvwxyz_"),
        st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=8),
    ),
    min_size=1,
    max_size=3,
).map(".".join)
# Values may hold anything but the term separator; javascript: would be evaluated, not kept.
_VALUE = st.text(
    alphabet=st.characters(blacklist_characters="^", blacklist_categories=("Cs",)), max_size=12
).filter(lambda value: not value.startswith("javascript:"))
_ITEM = _VALUE.filter(lambda value: "," not in value and value != "")
_BOUND = _VALUE.filter(lambda value: "@" not in value)

_SPELLING = {
    "=": "=",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "in": "IN",
    "not_in": "NOT IN",
    "like": "LIKE",
    "not_like": "NOT LIKE",
    "starts_with": "STARTSWITH",
    "ends_with": "ENDSWITH",
    "is_empty": "ISEMPTY",
    "is_not_empty": "ISNOTEMPTY",
    "between": "BETWEEN",
}


@st.composite
def _conditions(draw: st.DrawFn) -> Condition:
    field = draw(_FIELD)
    op = draw(st.sampled_from(sorted(_SPELLING)))
    if op in ("is_empty", "is_not_empty"):
        return Condition(field, op)
    if op in ("in", "not_in"):
        return Condition(field, op, tuple(draw(st.lists(_ITEM, min_size=1, max_size=4))))
    if op == "between":
        return Condition(field, op, (draw(_BOUND), draw(_BOUND)))
    value = draw(_VALUE)
    if op in ("<", ">") and value.startswith("="):
        # `a<=1` reads as <= with value 1 in ServiceNow too: an inherent ambiguity, not a bug.
        value = value.lstrip("=")
    return Condition(field, op, value)


def _joined(parts: list[Filter], node: type[And] | type[Or]) -> Filter:
    return parts[0] if len(parts) == 1 else node(tuple(parts))


# The shapes an encoded query can express: OR of AND-groups of OR-chains of conditions.
_CHAINS = st.lists(_conditions(), min_size=1, max_size=3).map(lambda parts: _joined(parts, Or))
_GROUPS = st.lists(_CHAINS, min_size=1, max_size=3).map(lambda parts: _joined(parts, And))
_FILTERS = st.lists(_GROUPS, min_size=1, max_size=3).map(lambda parts: _joined(parts, Or))


def render_condition(condition: Condition) -> str:
    spelling = _SPELLING[condition.op]
    value = condition.value
    if condition.op in ("is_empty", "is_not_empty"):
        text = ""
    elif condition.op in ("in", "not_in"):
        text = ",".join(value)
    elif condition.op == "between":
        text = f"{value[0]}@{value[1]}"
    else:
        text = value
    return f"{condition.field}{spelling}{text}"


def render(filter_: Filter) -> str:
    """Render the OR-of-ANDs-of-ORs shape as ServiceNow does: ^NQ, then ^, then ^OR."""
    # A top-level OR of bare conditions reads the same as one ^OR chain or as ^NQ groups.
    groups = filter_.parts if isinstance(filter_, Or) and _is_group_list(filter_) else (filter_,)
    rendered_groups = []
    for group in groups:
        chains = group.parts if isinstance(group, And) else (group,)
        rendered_groups.append(
            "^".join(
                "^OR".join(render_condition(c) for c in _chain_conditions(chain))
                for chain in chains
            )
        )
    return "^NQ".join(rendered_groups)


def _is_group_list(node: Or) -> bool:
    return any(isinstance(part, And | Or) for part in node.parts)


def _chain_conditions(chain: Filter) -> tuple[Condition, ...]:
    if isinstance(chain, Condition):
        return (chain,)
    assert isinstance(chain, Or)
    return tuple(part for part in chain.parts if isinstance(part, Condition))


@given(_FILTERS, st.lists(st.tuples(_FIELD, st.booleans()), max_size=3))
def test_rendered_filters_parse_back_unchanged(
    filter_: Filter, sorts: list[tuple[str, bool]]
) -> None:
    text = render(filter_)
    order = "".join(f"^ORDERBY{'DESC' if desc else ''}{field}" for field, desc in sorts)
    assert parse_encoded_query(text + order) == (filter_, tuple(SortKey(f, d) for f, d in sorts))


# --- fuzz: any text either parses or raises QuerySyntaxError ---

_TOKENS = st.sampled_from(
    [
        "^", "^OR", "^NQ", "ORDERBY", "ORDERBYDESC", "=", "!=", "<", "<=", ">", ">=", "IN",
        "NOT IN", "LIKE", "ISEMPTY", "BETWEEN", "@", ",", "a", "b.c", "_", "1", " ", "EQ",
        "javascript:", "gs.dateGenerate(", "'2024-01-01'", "'end'", ")", "DYNAMIC", "\x00", "é",
    ]
)  # fmt: skip


@given(st.one_of(st.text(), st.lists(_TOKENS, max_size=12).map("".join)))
def test_arbitrary_text_parses_or_raises_query_syntax_error(text: str) -> None:
    # Anything other than QuerySyntaxError escaping here fails the test.
    error = _syntax_error(text)
    assert error is None or 0 <= error.position <= len(text)


def _syntax_error(text: str) -> QuerySyntaxError | None:
    try:
        filter_, order = parse_encoded_query(text)
    except QuerySyntaxError as error:
        return error
    assert filter_ is None or isinstance(filter_, Condition | And | Or | Not)
    assert all(isinstance(key, SortKey) for key in order)
    return None
