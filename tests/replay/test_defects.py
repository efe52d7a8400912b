"""Mutants: the reference with one checked value made wrong at a time, whatever it writes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from myna.replay.defects import mutants
from myna.replay.episode import Episode, FieldEquals, HttpStep, Solution, Verifier
from myna.replay.run import Routes
from tests.replay.conftest import A2, resolve_episode
from tests.replay.fakes import incident_model

MODEL = incident_model()
ROUTES = Routes.from_model(MODEL)
values = st.one_of(
    st.text(min_size=1, max_size=12),
    st.lists(st.sampled_from(["disk", "full", "on", "host", "db1"]), min_size=2, max_size=5).map(
        " ".join
    ),
)


def _writing(body: dict[str, Any]) -> Episode:
    episode = resolve_episode()
    checks = [
        FieldEquals(
            name=f"{name} set", resource="incident", where={"sys_id": A2}, field=name, value=v
        )
        for name, v in body.items()
    ]
    step = HttpStep(method="PATCH", path=f"/api/now/table/incident/{A2}", body=body)
    return episode.model_copy(
        update={"verifier": Verifier(checks=checks), "reference": Solution(steps=[step])}
    )


@given(st.dictionaries(st.sampled_from(["state", "close_notes", "urgency"]), values, min_size=1))
def test_each_mutant_changes_exactly_one_checked_value(body: dict[str, Any]) -> None:
    found = list(mutants(_writing(body), MODEL, ROUTES))
    assert sorted(m.what for m in found) == sorted(f"incident.{name}" for name in body)
    for mutant in found:
        (step,) = mutant.steps
        assert isinstance(step, HttpStep)
        changed = [name for name in body if step.body[name] != body[name]]
        assert changed == [mutant.what.removeprefix("incident.")]
