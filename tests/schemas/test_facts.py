"""Facts with addresses: listing weakest first, pinning and editing, written back byte-stably."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from myna.errors import ModelError
from myna.schemas import facts
from myna.schemas.openapi import load, save

ITSM_MODEL = Path(__file__).resolve().parents[2] / "myna/backends/itsm/model.yaml"


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    copy = tmp_path / "itsm.yaml"
    shutil.copy(ITSM_MODEL, copy)
    return copy


def test_every_fact_has_a_unique_address_and_the_weakest_come_first(model_file: Path) -> None:
    model = load(model_file)
    listed = facts.weakest_first(model)
    assert len({fact.address for fact in listed}) == len(listed)
    strengths = [fact.strength for fact in listed]
    assert strengths == sorted(strengths)
    kinds = {fact.address.partition(":")[0] for fact in listed}
    assert kinds == {"resource", "field", "machine", "transition", "operation", "conventions"}


@pytest.mark.parametrize("kind", ["resource", "field", "machine", "transition", "operation"])
def test_pinning_then_unpinning_gives_back_the_same_bytes(model_file: Path, kind: str) -> None:
    original = model_file.read_bytes()
    model = load(model_file)
    address = next(
        fact.address
        for fact in facts.facts(model)
        if fact.address.startswith(f"{kind}:") and not fact.evidence.pinned
    )
    assert facts.pin(model, address, True).evidence.pinned
    save(model, model_file)
    assert model_file.read_bytes() != original
    assert facts.find(load(model_file), address).evidence.pinned

    facts.pin(model, address, False)
    save(model, model_file)
    assert model_file.read_bytes() == original


def test_editing_a_field_role_pins_it(model_file: Path) -> None:
    model = load(model_file)
    fact = facts.set_field_roles(model, "field:incident.number", {"immutable": False})
    save(model, model_file)

    spec = load(model_file).resources["incident"].fields["number"]
    assert (spec.immutable, spec.evidence.pinned, fact.evidence.pinned) == (False, True, True)


@pytest.mark.parametrize(
    ("address", "roles", "message"),
    [
        ("field:incident.nope", {"immutable": True}, "no field fact 'field:incident.nope'"),
        ("operation:list_incident", {"immutable": True}, "no field fact"),
        ("field:incident.number", {"primary": True}, "primary is not a field role"),
    ],
)
def test_bad_edits_name_what_is_wrong(
    model_file: Path, address: str, roles: dict[str, bool], message: str
) -> None:
    with pytest.raises(ModelError, match=message):
        facts.set_field_roles(load(model_file), address, roles)


def test_an_unknown_address_is_refused_by_name(model_file: Path) -> None:
    with pytest.raises(ModelError, match="no fact 'operation:nope'"):
        facts.pin(load(model_file), "operation:nope", True)
