"""The ITSM state models, stated once and read by both sides.

Which state moves a table allows, which it refuses and with what words, and which states are
final (a record there is read-only: the platform's ACL refuses every update) are model facts: the
pinned `state_machines` of `overlay.yaml`. The served mock enforces them through the runtime and
`extension.py`; the reference instance that writes the corpus (`instance.py`) reads the same
statement here instead of keeping its own copy, so the two cannot drift apart
(tests/backends/test_itsm_differential.py sends both the same calls).

Pure: no store, no runtime, only the overlay's text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Final

import yaml


@dataclass(frozen=True, slots=True)
class StateModel:
    """One table's state field: its states, the moves it allows and those it refuses."""

    table: str
    field: str
    states: tuple[str, ...]
    initial: tuple[str, ...]
    labels: Mapping[str, str]
    transitions: frozenset[tuple[str, str]]
    refused: Mapping[tuple[str, str], tuple[int, str]]

    def final(self, state: str) -> bool:
        return is_final(state, self.states, (source for source, _ in self.transitions))

    def label(self, state: str) -> str:
        return f"{state} ({self.labels[state]})" if state in self.labels else state


def is_final(state: str, states: Iterable[str], sources: Iterable[str]) -> bool:
    """A state of the model that no transition leaves: a record there is read-only."""
    return state in set(states) and state not in set(sources)


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a write is refused: the status, ServiceNow's message and its detail."""

    status: int
    message: str
    detail: str | None


ACL_DETAIL: Final = "ACL Exception Update Failed due to security constraints"


# -- the change approval ------------------------------------------------------------------------

AUTHORIZE: Final = "-3"
DECIDED: Final[Mapping[str, str]] = {"approved": "-2", "rejected": "-5"}
NEEDS_APPROVAL: Final = frozenset({"-2", "-1", "0", "3"})


def decided_state(before: tuple[str, str] | None, after: tuple[str, str]) -> str:
    """The change's state once an approval decided in Authorize has moved it (approved:
    Scheduled, rejected: New); `before` and `after` are (state, approval), `before` None on
    insert."""
    state, approval = after
    decided = before is not None and state == before[0] == AUTHORIZE and approval != before[1]
    return DECIDED.get(approval, state) if decided else state


def unapproved(number: str, state: str, approval: str) -> Verdict | None:
    """No change is scheduled, implemented, reviewed or closed without approval (checked on
    entering `state`)."""
    if state not in NEEDS_APPROVAL or approval == "approved":
        return None
    label = state_models()["change_request"].labels.get(state, state)
    return Verdict(
        403, "Operation Failed", f"Change {number} cannot move to {label}: it has not been approved"
    )


# -- the assignee and the assignment group ------------------------------------------------------


def outside_group(
    before: tuple[str, str] | None,
    after: tuple[str, str],
    members: Callable[[str], Collection[str]],
) -> bool:
    """Whether a write that sets (assignment_group, assigned_to) to `after` (from `before`, None
    on insert) names an assignee outside the group. Only a new pair is checked, and only against
    a group whose members are known: a world replayed from a recording that never read
    sys_user_grmember knows none, and refusing there would invent a violation."""
    group, user = after
    if not group or not user or after == before:
        return False
    known = members(group)
    return bool(known) and user not in known


def not_a_member(person: str, team: str) -> Verdict:
    return Verdict(
        403,
        "Operation Failed",
        f"Invalid update: {person} is not a member of assignment group {team}",
    )


# -- leaving On Hold ----------------------------------------------------------------------------


def leaves_hold(before: str, after: str) -> bool:
    """An incident leaving On Hold has its hold reason cleared, whatever the client sent."""
    return before == "3" and after != "3"


# -- reopening a resolved incident --------------------------------------------------------------


def reopened(before: str, after: str, reopen_count: str) -> dict[str, str] | None:
    """Reopening a resolved incident (Resolved back to New, In Progress or On Hold) counts the
    reopening and clears the resolution stamps; the caller adds who and when
    (`reopened_by`, `reopened_time`). None for any other move."""
    if before != "6" or after not in ("1", "2", "3"):
        return None
    return {
        "reopen_count": str(int(reopen_count or 0) + 1),
        "resolved_at": "",
        "resolved_by": "",
    }


def read_only(model: StateModel, state: str) -> Verdict | None:
    """A record in a final state refuses every update (403, the platform's ACL)."""
    return Verdict(403, "Operation Failed", ACL_DETAIL) if model.final(state) else None


def judge_start(model: StateModel, state: str) -> Verdict | None:
    """The refusal, if any, of a new record in `state`: it must start in one of the model's
    initial states (checked once the table's insert rules have run, as the mock checks it)."""
    if not model.initial or state in model.initial:
        return None
    where = f"{model.table}.{model.field}"
    starts = ", ".join(model.label(initial) for initial in model.initial)
    return Verdict(
        400,
        f"Invalid value for {where}",
        f"{where} cannot start as {model.label(state)}; new records start as {starts}",
    )


def judge_move(model: StateModel, before: str, after: str) -> Verdict | None:
    """The refusal, if any, of moving `model.field` from `before` to `after`, checked once the
    table's business rules have run (as the mock checks it after the extension's hooks, so a
    rule's own words, such as the change approval's, come first): a move the model pins as
    refused answers the pinned status and message; any other move the model does not allow is
    a 400 naming both states."""
    if before == after or (before, after) in model.transitions:
        return None
    pinned = model.refused.get((before, after))
    if pinned is not None:
        return Verdict(pinned[0], pinned[1], pinned[1])
    where = f"{model.table}.{model.field}"
    return Verdict(
        400,
        f"Invalid value for {where}",
        f"{where} cannot change from {model.label(before)} to {model.label(after)}",
    )


@cache
def state_models() -> Mapping[str, StateModel]:
    """The pinned state models of overlay.yaml, by table."""
    text = files("myna.backends.itsm").joinpath("overlay.yaml").read_text(encoding="utf-8")
    schemas: Mapping[str, Any] = yaml.safe_load(text)["components"]["schemas"]
    models: dict[str, StateModel] = {}
    for schema in schemas.values():
        resource = schema.get("x-myna-resource") or {}
        for machine in resource.get("state_machines") or ():
            if not (machine.get("evidence") or {}).get("pinned"):
                continue
            models[resource["name"]] = StateModel(
                table=resource["name"],
                field=machine["field"],
                states=tuple(machine["states"]),
                initial=tuple(machine.get("initial") or ()),
                labels=dict(machine.get("labels") or {}),
                transitions=frozenset((t["source"], t["target"]) for t in machine["transitions"]),
                refused={
                    (r["source"], r["target"]): (r["status"], r["message"])
                    for r in machine.get("refused") or ()
                },
            )
    return models


STATE_MODELS: Final = state_models()

# A task created under another record has that record as its parent (the platform's insert
# rules): a change task its change, a requested item its request. Not a model fact: the value is
# another field's, which the learner can only see as a constant (the corpus's one change).
PARENT_FIELD: Final[Mapping[str, str]] = {"change_task": "change_request", "sc_req_item": "request"}
