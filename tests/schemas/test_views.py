"""Views: learning where each value of another resource's answer came from, and building it."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myna.schemas.model import Evidence
from myna.schemas.views import learn_view, project

_text = st.text(alphabet="abcdefgh XYZ", min_size=1, max_size=8)


def _doc(number: int, runs: list[str], owner: str) -> dict[str, Any]:
    return {
        "kind": "doc",
        "id": f"doc-{number:04d}",
        "title": [{"type": "text", "text": run} for run in runs],
        "owner": {"kind": "user", "id": owner},
        "created": f"2026-01-{number % 28 + 1:02d}T10:00:00Z",
        "removed": False,
    }


def _as_node(doc: dict[str, Any]) -> dict[str, Any]:
    """The service's rule the learner must find: a doc shown as a node of a tree."""
    return {
        "kind": "node",
        "id": doc["id"],
        "owner": doc["owner"],
        "created": doc["created"],
        "node_type": "doc_link",
        "doc_link": {"title": "".join(run["text"] for run in doc["title"])},
        "removed": True,
    }


_docs = st.tuples(st.lists(_text, min_size=1, max_size=3), st.sampled_from(["u1", "u2", "u3"]))
unseen_docs = st.lists(_docs, min_size=1, max_size=6)
# Records the service showed differ in their titles, and a title is a few letters long: two
# records titled "X" cannot tell a copied title from a constant.
training_docs = st.lists(
    _docs.filter(lambda doc: len("".join(doc[0])) >= 3),
    min_size=2,
    max_size=6,
    unique_by=lambda doc: "".join(doc[0]),
)


@given(training=training_docs, unseen=unseen_docs)
def test_a_learned_view_rebuilds_the_service_answer_for_records_it_never_saw(
    training: list[tuple[list[str], str]], unseen: list[tuple[list[str], str]]
) -> None:
    docs = [_doc(number, runs, owner) for number, (runs, owner) in enumerate(training)]
    view = learn_view("doc", [(doc, _as_node(doc)) for doc in docs], Evidence())
    assert view is not None

    for number, (runs, owner) in enumerate(unseen, start=100):
        doc = _doc(number, runs, owner)
        assert project(view, doc) == _as_node(doc)


def test_each_value_says_where_it_came_from() -> None:
    docs = [_doc(1, ["Plan ", "Q3"], "u1"), _doc(2, ["Budget"], "u2"), _doc(3, ["Hiring"], "u1")]
    view = learn_view("doc", [(doc, _as_node(doc)) for doc in docs], Evidence())
    assert view is not None

    sources = {".".join(f.path): f.source and ".".join(f.source) for f in view.fields}
    constants = {".".join(f.path): f.value for f in view.fields if f.source is None}
    assert sources["id"] == "id"
    assert sources["doc_link.title"] == "title.*.text"
    assert sources["owner.id"] == "owner.id"
    assert constants == {"kind": "node", "node_type": "doc_link", "removed": True}


def test_a_last_answer_of_another_shape_does_not_break_the_rule() -> None:
    """The record's last answer may itself have been another view of it (a page's markdown):
    what most examples agree on wins."""
    docs = [_doc(number, [f"Title {number}"], "u1") for number in range(1, 6)]
    examples = [(doc, _as_node(doc)) for doc in docs]
    examples[0] = ({"kind": "doc_markdown", "id": docs[0]["id"]}, _as_node(docs[0]))

    view = learn_view("doc", examples, Evidence())
    assert view is not None

    doc = _doc(42, ["Fresh"], "u3")
    assert project(view, doc) == _as_node(doc)


def test_one_example_is_no_rule() -> None:
    doc = _doc(1, ["Once"], "u1")
    assert learn_view("doc", [(doc, _as_node(doc))], Evidence()) is None


def test_a_record_without_the_source_still_gets_the_shape_clients_read() -> None:
    docs = [_doc(number, [f"Title {number}"], "u1") for number in range(1, 4)]
    view = learn_view("doc", [(doc, _as_node(doc)) for doc in docs], Evidence())
    assert view is not None

    bare = {"kind": "doc", "id": "doc-9999", "owner": {"kind": "user", "id": "u2"}}
    shown = project(view, bare)
    assert shown["id"] == "doc-9999"
    assert isinstance(shown["doc_link"]["title"], str)
    assert shown["owner"] == {"kind": "user", "id": "u2"}
