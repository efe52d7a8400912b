"""The built-in ERP back end's corpus and model: both reproducible, the corpus exercising every
rule both ways, the model pinning the documented conventions and life cycles, and the shipped
back end (model plus the `erp` extension) answering its own corpus."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import pytest

from myna.backends import BACKENDS, builtin_model
from myna.backends.erp.corpus import CHAPTERS, build_corpus
from myna.backends.erp.rules import (
    PAYMENT_ACTIONS,
    PERIOD_ACTIONS,
    PO_ACTIONS,
    REQUISITION_ACTIONS,
)
from myna.schemas.model import ServiceModel
from myna.schemas.openapi import dumps
from myna.traces.jsonl import write_jsonl
from myna.traces.model import Session
from myna.traces.reading import read

PACKAGE = files("myna.backends.erp")
API = "/api/erp/v1"
TOKEN = {"Authorization": "Bearer myna-token"}


@pytest.fixture(scope="module")
def shipped() -> ServiceModel:
    return builtin_model("erp")


@pytest.fixture(scope="module")
def corpus() -> list[Session]:
    return build_corpus()


# -- reproducibility ----------------------------------------------------------------------------


def test_regenerating_the_corpus_reproduces_the_shipped_file_byte_for_byte(
    corpus: list[Session], tmp_path: Path
) -> None:
    written = tmp_path / "corpus.jsonl"
    write_jsonl(corpus, written)
    assert written.read_bytes() == PACKAGE.joinpath("corpus.jsonl").read_bytes(), (
        "regenerate: python -m myna.backends.erp.corpus -o myna/backends/erp/corpus.jsonl"
    )


def test_learning_the_corpus_into_the_overlay_reproduces_the_shipped_model() -> None:
    assert dumps(BACKENDS["erp"].learn()) == PACKAGE.joinpath("model.yaml").read_text(
        encoding="utf-8"
    ), (
        "regenerate: python -m myna.backends erp"
    )


def test_every_chapter_is_a_session_with_its_task(corpus: list[Session]) -> None:
    assert [session.task for session in corpus] == [chapter.task for chapter in CHAPTERS]
    assert len(list(read(Path(str(PACKAGE.joinpath("corpus.jsonl")))))) == len(CHAPTERS)


def test_every_rule_is_refused_somewhere_in_the_corpus(corpus: list[Session]) -> None:
    refused = {
        exchange.response_body.value["error"]["code"]
        for session in corpus
        for exchange in session.exchanges
        if exchange.status >= 400
    }
    assert {
        "approval_limit_exceeded",
        "unknown_role",
        "invalid_transition",
        "no_lines",
        "over_receipt",
        "unknown_line",
        "invalid_quantity",
        "period_closed",
        "no_period",
        "payment_blocked",
        "unauthorized",
    } <= refused


# -- the shipped model --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "field", "table"),
    [
        ("purchase-order", "status", PO_ACTIONS),
        ("purchase-requisition", "status", REQUISITION_ACTIONS),
        ("vendor-invoice", "payment_status", PAYMENT_ACTIONS),
        ("accounting-period", "status", PERIOD_ACTIONS),
    ],
)
def test_the_pinned_life_cycles_are_the_rule_tables(
    shipped: ServiceModel,
    resource: str,
    field: str,
    table: dict[str, tuple[tuple[str, ...], str]],
) -> None:
    (machine,) = [m for m in shipped.resources[resource].state_machines if m.field == field]
    accepted = {(t.source, t.target) for t in machine.transitions if t.operation}
    assert accepted == {(s, target) for sources, target in table.values() for s in sources}
    for action, (_, target) in table.items():
        effects = shipped.operation(f"{action}_{resource}").effects
        assert (effects[0].field, effects[0].value) == (field, target)
    assert all(refused.status == 409 for refused in machine.refused)


def test_the_conventions_are_the_documented_ones(shipped: ServiceModel) -> None:
    conventions = shipped.conventions
    assert (conventions.envelope.list_key, conventions.envelope.total_key) == ("data", "total")
    assert (conventions.pagination.limit_param, conventions.pagination.max_limit) == ("limit", 200)
    assert conventions.auth.scheme == "bearer"
    assert conventions.auth.unauthorized_headers == {"WWW-Authenticate": 'Bearer realm="erp"'}
    shape = shipped.error_shape(409)
    assert shape is not None
    assert shape.template == {
        "error": {"code": "{code}", "message": "{message}", "field": "{field}"}
    }


# -- conformance --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def conformance(corpus: list[Session]) -> tuple[float, list[str]]:
    from myna.mocks.conformance import run_conformance

    # The chapters run against one service and later ones use earlier records, so they replay
    # as one session in one world.
    whole = Session(id="erp", events=[event for session in corpus for event in session.events])
    report = run_conformance(builtin_model("erp"), [whole])
    return report.share, [mismatch.reason for mismatch in report.mismatches]


# The conformance checker merges a recorded list's items into one schema and drops a key's null
# samples first, so a key that is null in some items and a string in others must be a string in
# all (myna/mocks/conformance.py `_common`); the approved orders' `requisition` is exactly that.
CHECKER_QUIRK = re.compile(
    r"body at \$\['data'\]\[\d+\]\['requisition'\]: null is not of type 'string'"
)


def test_the_shipped_back_end_answers_its_own_corpus(
    conformance: tuple[float, list[str]],
) -> None:
    share, reasons = conformance
    assert share >= 0.99
    assert [reason for reason in reasons if not CHECKER_QUIRK.fullmatch(reason)] == []
