"""Services and path templates: each templating rule, naming, and stability under reordering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.schemas.paths import (
    Sibling,
    Siblings,
    api_base,
    judge,
    param_name,
    singular,
    site_of,
    split_path,
    template_paths,
)


def templates(
    paths: list[str], ids: set[str] | None = None, shapes: list[int | None] | None = None
) -> set[str]:
    split = [split_path(path) for path in paths]
    result = template_paths(split, shapes or [None] * len(split), ids or set())
    return {"/" + "/".join(template) for template in result.of_exchange.values()}


@pytest.mark.parametrize(
    ("path", "base"),
    [
        pytest.param("/api/now/table/incident", "/api/now", id="servicenow"),
        pytest.param("/services/data/v50.0/query", "/services/data/v50.0", id="salesforce"),
        pytest.param("/rest/api/3/issue/JJJ-9", "/rest/api/3", id="jira-cloud"),
        pytest.param("/rest/api/2/issue", "/rest/api/2", id="jira-server"),
        pytest.param("/v1/customers/cus_1", "/v1", id="stripe-style"),
        pytest.param("/api/users/3", "/api", id="bare-api"),
        pytest.param("/users/3", "", id="no-base"),
    ],
)
def test_api_base(path: str, base: str) -> None:
    segments = split_path(path)

    assert "/" + "/".join(segments[: api_base(segments)]) == (base or "/")


@pytest.mark.parametrize(
    ("host", "site"),
    [
        pytest.param("dev197215.service-now.com", "service-now.com", id="subdomain"),
        pytest.param("login.salesforce.com", "salesforce.com", id="login-host"),
        pytest.param("localhost:8080", "localhost:8080", id="local"),
        pytest.param("10.0.0.1:443", "10.0.0.1:443", id="address"),
    ],
)
def test_site_of(host: str, site: str) -> None:
    assert site_of(host) == site


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        pytest.param(
            ["/issue/10010", "/issue/10017", "/issue/JJJ-9"],
            {"/issue/{}"},
            id="integers-and-keys",
        ),
        pytest.param(
            [
                "/table/sys_db_object/0f99faa5c4ea090af7e9e9b6f8e33190",
                "/table/sys_db_object/e331873e2e0a7adc26cc1b4dd6cff348",
            ],
            {"/table/sys_db_object/{}"},
            id="hex32",
        ),
        pytest.param(
            ["/orders/123e4567-e89b-12d3-a456-426614174000", "/orders/01ARZ3NDEKTSV4RRFFQ69G5FAV"],
            {"/orders/{}"},
            id="uuid-and-ulid",
        ),
        pytest.param(["/reports/2024-04-16", "/reports/2024-04-17"], {"/reports/{}"}, id="dates"),
        pytest.param(
            ["/customers/cus_9s8d7f6g5h", "/customers/cus_1a2b3c4d5e"],
            {"/customers/{}"},
            id="prefixed-ids",
        ),
        pytest.param(
            ["/sobjects/User/005FECBB8C2B44CYXS", "/sobjects/User/005FECBB8C2B44C"],
            {"/sobjects/User/{}"},
            id="salesforce-ids",
        ),
        pytest.param(
            ["/table/incident", "/table/sys_user", "/table/cmdb_ci_server"],
            {"/table/incident", "/table/sys_user", "/table/cmdb_ci_server"},
            id="table-pattern-keeps-resource-names",
        ),
        pytest.param(
            ["/sobjects/Account/describe", "/sobjects/Contact/describe"],
            {"/sobjects/Account/describe", "/sobjects/Contact/describe"},
            id="sobjects-are-resources",
        ),
        pytest.param(
            [
                *(f"/sobjects/{name}" for name in ("Account", "Case", "Lead", "Task", "User")),
                "/sobjects/Product2/01t5g0000000004AAA",
                "/sobjects/Product2",
            ],
            {
                *(f"/sobjects/{name}" for name in ("Account", "Case", "Lead", "Task", "User")),
                "/sobjects/Product2/{}",
                "/sobjects/Product2",
            },
            id="an-sobject-named-with-digits",
        ),
        pytest.param(
            ["/users/me", "/users/me", "/users/search", "/users/search", "/users/42", "/users/43"],
            {"/users/me", "/users/search", "/users/{}"},
            id="frequent-literals-stay-literal",
        ),
        pytest.param(
            ["/issue/10010/transitions", "/issue/JJJ-9/transitions", "/issue/10010"],
            {"/issue/{}/transitions", "/issue/{}"},
            id="action-below-item",
        ),
        pytest.param(
            ["/services/data/v50.0"], {"/services/data/v50.0"}, id="versions-stay-literal"
        ),
    ],
)
def test_templates(paths: list[str], expected: set[str]) -> None:
    assert templates(paths) == expected


def test_cross_reference_turns_a_word_into_an_id() -> None:
    paths = ["/project", "/project/BUG", "/project/SP", "/project/NOSUCH"]

    assert templates(paths) == {"/project", "/project/BUG", "/project/SP", "/project/NOSUCH"}
    assert templates(paths, ids={"BUG", "SP"}) == {"/project", "/project/{}"}


def test_word_written_like_a_known_id_follows_it() -> None:
    paths = ["/project/BUG", "/project/NOSUCH"]

    assert templates(paths, ids={"BUG"}) == {"/project/{}"}


def test_a_username_that_is_also_a_route_stays_a_route() -> None:
    paths = ["/field", "/issue", "/myself", "/project", "/user/search"]

    assert "/user/search" in templates(paths, ids={"user"})


def test_where_records_are_made_stays_a_route_though_it_answers_like_its_ids() -> None:
    # POST /attachment/file answers the attachment it made, shaped like GET /attachment/{id}.
    hexes = [f"{n:032x}" for n in range(1, 4)]
    paths = [split_path(f"/attachment/{value}") for value in [*hexes, "file", "file"]]
    shapes: list[int | None] = [7] * len(paths)
    made = [False] * len(hexes) + [True, True]

    result = template_paths(paths, shapes, set(hexes), made)
    found = {"/" + "/".join(template) for template in result.of_exchange.values()}

    assert found == {"/attachment/{}", "/attachment/file"}
    # Without the evidence that calls there make records, the shape pulls `file` in.
    assert templates([f"/attachment/{v}" for v in [*hexes, "file"]], set(hexes), [7] * 4) == {
        "/attachment/{}"
    }


def test_siblings_sharing_a_response_shape_with_ids_are_ids() -> None:
    sibling = Sibling("alpha", "word", 1, frozenset({7}), "widgets", False)
    known = Sibling("42", "integer", 1, frozenset({7}), "widgets", False)
    votes = judge(sibling, Siblings.of((sibling, known)))

    assert any("same record shape" in vote.reason for vote in votes)


def test_sibling_with_a_shape_of_its_own_is_a_resource() -> None:
    one = Sibling("incident", "word", 1, frozenset({1}), "things", False)
    other = Sibling("problem", "word", 1, frozenset({2}), "things", False)
    votes = judge(one, Siblings.of((one, other)))

    assert any("record shape of its own" in vote.reason for vote in votes)
    assert sum(vote.weight for vote in votes) <= 0


@pytest.mark.parametrize(
    ("resource", "values", "fields_of", "service_id", "expected"),
    [
        pytest.param(
            "issue",
            ["10010", "JJJ-9"],
            {"10010": {"id"}, "JJJ-9": {"key"}},
            None,
            "issueIdOrKey",
            id="jira-id-or-key",
        ),
        pytest.param("project", ["BUG"], {"BUG": {"key"}}, None, "projectKey", id="key"),
        pytest.param(
            "sys_db_object", ["a" * 32], {"a" * 32: {"sys_id"}}, None, "sys_id", id="specific-field"
        ),
        pytest.param("sys_db_object", ["a" * 32], {}, "sys_id", "sys_id", id="service-id-field"),
        pytest.param("orders", ["12", "13"], {}, None, "orderId", id="integers-by-class"),
        pytest.param(None, ["12"], {}, None, "id", id="no-resource"),
    ],
)
def test_parameter_names_say_what_they_hold(
    resource: str | None,
    values: list[str],
    fields_of: dict[str, set[str]],
    service_id: str | None,
    expected: str,
) -> None:
    assert param_name(resource, values, fields_of, service_id) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("issues", "issue"),
        ("categories", "category"),
        ("status", "status"),
        ("sys_user", "sys_user"),
        ("Account", "Account"),
        ("boxes", "box"),
    ],
)
def test_singular(word: str, expected: str) -> None:
    assert singular(word) == expected


_segments = st.sampled_from(
    [
        "users",
        "me",
        "search",
        "42",
        "43",
        "JJJ-9",
        "10010",
        "table",
        "incident",
        "sys_user",
        "a" * 32,
        "b" * 32,
        "transitions",
        "v2",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_segments, min_size=1, max_size=4), min_size=1, max_size=12), st.randoms())
def test_templating_does_not_depend_on_input_order(paths: list[list[str]], random: object) -> None:
    order = list(range(len(paths)))
    random.shuffle(order)  # type: ignore[attr-defined]
    ids = {"JJJ-9", "a" * 32}
    shapes: list[int | None] = [hash(path[0]) for path in paths]

    first = template_paths(paths, shapes, ids)
    second = template_paths([paths[i] for i in order], [shapes[i] for i in order], ids)

    assert [second.of_exchange[position] for position in range(len(paths))] == [
        first.of_exchange[index] for index in order
    ]
