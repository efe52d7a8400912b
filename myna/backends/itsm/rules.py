"""The ITSM state models, stated once and read by both sides.

Which state moves a table allows, which it refuses and with what words, which fields a state
needs on entry (the data policies, `required_on_entry`), and which states are final (a record
there is read-only: the platform's ACL refuses every update) are model facts: the pinned
`state_machines` of `overlay.yaml`. The served mock enforces them through the runtime and
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
    required: Mapping[str, tuple[str, ...]]  # the data policies: fields a state needs on entry
    stamps: Mapping[str, tuple[str, ...]]  # fields entering a state stamps (`changes_on_entry`)
    sets: Mapping[str, Mapping[str, str]]  # values entering a state sets (`sets_on_entry`)

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


# -- priority and reassignment ------------------------------------------------------------------

# Priority lookup rules (out of box): (impact, urgency) -> priority.
PRIORITY: Final[Mapping[tuple[str, str], str]] = {
    ("1", "1"): "1",
    ("1", "2"): "2",
    ("1", "3"): "3",
    ("2", "1"): "2",
    ("2", "2"): "3",
    ("2", "3"): "4",
    ("3", "1"): "3",
    ("3", "2"): "4",
    ("3", "3"): "5",
}


def priority_of(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str | None:
    """The priority a write gives an incident or problem (from `before`, None on insert): the
    impact x urgency lookup's, on insert and whenever either changes; None: it keeps its
    own."""
    pair = (_plain(after.get("impact")), _plain(after.get("urgency")))
    if before is not None and pair == (_plain(before.get("impact")), _plain(before.get("urgency"))):
        return None
    return PRIORITY.get(pair)


def reassignments(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """The reassignment count of an incident moved from one assignment group to another (a
    first group is no reassignment); None: the write reassigns nothing."""
    group = _plain(before.get("assignment_group"))
    if not group or _plain(after.get("assignment_group")) == group:
        return None
    return str(int(_plain(before.get("reassignment_count")) or 0) + 1)


def relinked(before: str, after: str) -> list[str]:
    """The problems whose related_incidents an incident moving from problem `before` to
    `after` recounts: the one it leaves and the one it joins."""
    return [] if before == after else sorted({before, after} - {""})


def _plain(value: Any) -> str:
    return "" if value is None else str(value)


# -- leaving On Hold ----------------------------------------------------------------------------


def leaves_hold(before: str, after: str) -> bool:
    """An incident moving to any state but On Hold has no hold reason: it is cleared, whatever
    the client sent (the reason belongs to On Hold alone; the differential test found the mock
    clearing it on entering In Progress from New, where a rule only for leaving On Hold did
    not)."""
    return before != after and after != "3"


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
    # libyaml's parser when PyYAML has it: the pure-Python one costs ~0.06 s of every start.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schemas: Mapping[str, Any] = yaml.load(text, Loader=loader)["components"]["schemas"]
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
                required=_by_state(machine.get("required_on_entry")),
                stamps=_by_state(machine.get("changes_on_entry")),
                sets={
                    str(state): {name: str(value) for name, value in entry["values"].items()}
                    for state, entry in (machine.get("sets_on_entry") or {}).items()
                },
            )
    return models


def _by_state(listed: Mapping[str, list[str]] | None) -> dict[str, tuple[str, ...]]:
    return {str(state): tuple(names) for state, names in (listed or {}).items()}


STATE_MODELS: Final = state_models()


# -- what entering a state writes ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stamper:
    """Who and when a write happens, for the fields entering a state stamps: `now` as
    `YYYY-MM-DD HH:MM:SS`, `caller` the caller's sys_user id ("" when it has none), and
    `kind(name)` a column's (kind, reference target) on the written table, None for no column."""

    now: str
    caller: str
    kind: Callable[[str], tuple[str, str | None] | None]

    def value(self, name: str) -> str | None:
        """What entering a state stamps into `name`: now for a date or date-time column, the
        caller for a `*_by` reference to sys_user; None: the column takes no stamp (a value the
        state sets, such as `active`, is `sets_on_entry`'s)."""
        column = self.kind(name)
        if column is None:
            return None
        kind, target = column
        if kind in ("datetime", "date"):
            return self.now if kind == "datetime" else self.now[:10]
        if kind == "reference" and target == "sys_user" and name.endswith("_by"):
            return self.caller or None
        return None


def entered(
    model: StateModel,
    before: str | None,
    after: Mapping[str, Any],
    sent: Collection[str],
    stamper: Stamper,
) -> dict[str, str]:
    """What a write moving `model.field` from `before` (None on insert) to `after`'s value
    writes on entering it, as the overlay's pinned state model states it: the values the state
    sets (`sets_on_entry`; a value the client sent itself wins, as the runtime's
    `entry_values` lets it) and who and when for the fields it stamps (`changes_on_entry`:
    resolved_at and resolved_by on Resolved, closed_at and closed_by on Closed). {} when the
    write stays in its state."""
    state = str(after.get(model.field) or "")
    if not state or state == before:
        return {}
    values = {name: value for name, value in model.sets.get(state, {}).items() if name not in sent}
    for name in model.stamps.get(state, ()):
        stamp = stamper.value(name)
        if stamp is not None:
            values[name] = stamp
    return values


# -- what an insert fills in -----------------------------------------------------------------------

# Every record is born in the global domain (the platform's domain rule, whatever was sent).
DOMAIN: Final[Mapping[str, str]] = {"sys_domain": "global", "sys_domain_path": "/"}
# The values the platform's insert rules give a task left empty (the task table's defaults).
TASK_DEFAULTS: Final[Mapping[str, str]] = {
    "active": "true",
    "approval": "not requested",
    "upon_approval": "proceed",
    "upon_reject": "cancel",
    "escalation": "0",
    "reassignment_count": "0",
    "made_sla": "true",
    "knowledge": "false",
    "impact": "3",
    "urgency": "3",
    "priority": "4",
}
_CI_DEFAULTS: Final[Mapping[str, str]] = {
    "operational_status": "1",
    "install_status": "1",
    "fault_count": "0",
    **dict.fromkeys(
        (
            "attested",
            "can_print",
            "monitor",
            "skip_sync",
            "unverified",
            "virtual",
            "cd_rom",
            "internet_facing",
        ),
        "false",
    ),
}
# Each table's own defaults for what a client leaves empty (a task's come on top of the task
# table's; where a record starts is its state model's, `insert_defaults`). The model learns the
# same values as field defaults from the corpus these wrote; the mock applies these too, for a
# column a client sent empty, where no learned default stands in.
INSERT_DEFAULTS: Final[Mapping[str, Mapping[str, str]]] = {
    "incident": {
        "category": "inquiry",
        "severity": "3",
        "notify": "1",
        "reopen_count": "0",
        "child_incidents": "0",
    },
    "problem": {"related_incidents": "0"},
    "change_request": {
        "type": "normal",
        "risk": "3",
        "scope": "3",
        "cab_required": "false",
        "on_hold": "false",
        "outside_maintenance_schedule": "false",
        "production_system": "false",
        "conflict_status": "Not Run",
    },
    "change_task": {"change_task_type": "implementation"},
    "sc_request": {"request_state": "requested", "price": "0"},
    "sc_req_item": {
        "stage": "waiting_for_approval",
        "quantity": "1",
        "price": "0",
        "recurring_price": "0",
    },
    "sys_user": {
        "active": "true",
        "locked_out": "false",
        "vip": "false",
        "web_service_access_only": "false",
        "internal_integration_user": "false",
        "password_needs_reset": "false",
        "enable_multifactor_authn": "false",
        "failed_attempts": "0",
        "notification": "2",
        "calendar_integration": "1",
        "sys_class_name": "sys_user",
    },
    "sys_user_group": {"active": "true", "exclude_manager": "false", "include_members": "false"},
    "cmdb_ci": _CI_DEFAULTS,
    "cmdb_ci_server": _CI_DEFAULTS,
    "cmdb_ci_appl": _CI_DEFAULTS,
    "kb_knowledge": {"article_type": "text", "valid_to": "2100-01-01"},
    "kb_knowledge_base": {"active": "true"},
    "kb_category": {"active": "true", "parent_table": "kb_knowledge_base"},
    "sc_category": {"active": "true", "order": "0"},
    "sc_cat_item": {"active": "true", "price": "0", "recurring_price": "0", "order": "0"},
    "item_option_new": {"active": "true", "mandatory": "false", "order": "100", "type": "6"},
    "sys_user_role": {"elevated_privilege": "false", "grantable": "true", "can_delegate": "true"},
    "sys_user_has_role": {"inherited": "false", "state": "active"},
}
# What an insert sets whatever the client sent: a request and its items wait for approval, a
# new problem is no known error and was never reopened, a new article is active and unread.
INSERT_VALUES: Final[Mapping[str, Mapping[str, str]]] = {
    "problem": {"reopen_count": "0", "known_error": "false"},
    "change_task": {"on_hold": "false"},
    "sc_request": {"approval": "requested"},
    "sc_req_item": {"approval": "requested", "backordered": "false"},
    "kb_knowledge": {"active": "true", "sys_view_count": "0", "use_count": "0"},
}
# The references an insert fills with the caller when the client left them empty: who opened a
# task, requested a change, a request is for, wrote an article.
CALLER_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "change_request": ("requested_by",),
    "sc_request": ("requested_for",),
    "kb_knowledge": ("author",),
}


def insert_defaults(table_name: str, task: bool) -> dict[str, str]:
    """The values a new record of `table_name` takes for what the client left empty (`task`:
    the table extends task): its state model's first initial state (as the runtime starts a
    record of any model), the task table's defaults and its own."""
    model = STATE_MODELS.get(table_name)
    start = {model.field: model.initial[0]} if model is not None and model.initial else {}
    return {**start, **(TASK_DEFAULTS if task else {}), **INSERT_DEFAULTS.get(table_name, {})}


def caller_fields(table_name: str, task: bool) -> tuple[str, ...]:
    """The references a new record of `table_name` takes the caller in, unless sent."""
    return (*(("opened_by",) if task else ()), *CALLER_FIELDS.get(table_name, ()))


def full_name(first: str, last: str) -> str:
    """A user's name, from the first and last names (sys_user.name)."""
    return " ".join(part for part in (first, last) if part)


# A task created under another record has that record as its parent (the platform's insert
# rules): a change task its change, a requested item its request. Not a model fact: the value is
# another field's, which the learner can only see as a constant (the corpus's one change).
PARENT_FIELD: Final[Mapping[str, str]] = {"change_task": "change_request", "sc_req_item": "request"}


# -- approvals (sysapproval_approver) -----------------------------------------------------------

# Approvers no longer asked: their rows stay, but they no longer decide the record.
_SETTLED: Final = frozenset({"not requested", "cancelled", "not_required"})


def approval_of(states: Iterable[str]) -> str | None:
    """The approval a record's approvers give it, from each approver's state: rejected as soon
    as one rejects, approved once every approver still asked has approved, requested while any
    is still to decide; None when no approver is asked (the record's approval is left alone)."""
    asked = [state for state in states if state not in _SETTLED]
    if not asked:
        return None
    if "rejected" in asked:
        return "rejected"
    return "approved" if all(state == "approved" for state in asked) else "requested"


# What an approved request or requested item moves on to (the request fulfilment flow): a
# request is then in process, an item in fulfilment.
ON_APPROVAL: Final[Mapping[str, Mapping[str, str]]] = {
    "sc_request": {"request_state": "in_process"},
    "sc_req_item": {"stage": "fulfillment"},
}


def on_approval(table_name: str, before: str, after: str) -> Mapping[str, str]:
    """The values a record of `table_name` takes when its approval becomes approved (from
    `before`, "" on insert); {} for any other write."""
    if after != "approved" or before == "approved":
        return {}
    return ON_APPROVAL.get(table_name, {})


def approval_source(table_name: str, record_id: str) -> dict[str, str]:
    """What an approval row names about the record it approves, besides the reference: the
    record's table and id (ServiceNow's source_table and document_id)."""
    return {"source_table": table_name, "document_id": record_id}


# -- roles (sys_user_has_role) ------------------------------------------------------------------


def role_names(listed: str) -> list[str]:
    """The role names a `roles` column lists (sys_user.roles, sys_user_group.roles: a comma
    list of names, `itil,knowledge`), in order, each once."""
    return list(dict.fromkeys(name.strip() for name in listed.split(",") if name.strip()))


def role_grants(
    user: str, listed: str, role_id: Callable[[str], str | None], group: str = ""
) -> list[dict[str, str]]:
    """The sys_user_has_role rows a user gets for the roles `listed` names: a user created with
    roles has them, and a member of a group has the group's roles, inherited from it (granted
    by `group`). A name no sys_user_role carries grants nothing, as the platform ignores it."""
    grants = []
    for name in role_names(listed):
        role = role_id(name)
        if role is not None:
            grants.append(
                {
                    "user": user,
                    "role": role,
                    "inherited": "true" if group else "false",
                    "granted_by": group,
                    "state": "active",
                }
            )
    return grants


# -- the service catalog ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Variable:
    """One variable of a catalog item (item_option_new): its name, what it asks, whether an
    order must answer it."""

    name: str
    question: str
    mandatory: bool


def missing_variables(variables: Iterable[Variable], answers: Mapping[str, Any]) -> Verdict | None:
    """An order that leaves a mandatory variable of its item unanswered is refused (400, naming
    each unanswered question)."""
    missing = [v.question or v.name for v in variables if v.mandatory and not answers.get(v.name)]
    if not missing:
        return None
    return Verdict(400, "Mandatory Variables are required", ", ".join(missing))


def ordered_records(
    item: Mapping[str, str], quantity: int, requested_for: str
) -> tuple[dict[str, str], dict[str, str]]:
    """The request and requested item one order of a catalog item makes (the Service Catalog
    API's order now): a request for whom it was ordered, at the item's price times the
    quantity, and a requested item of that catalog item. (The answers to the item's variables
    live in sc_item_option on the platform, a table this back end does not serve.)"""
    each = float(item.get("price") or 0)
    price = f"{each * quantity:.2f}"
    name = item.get("name") or item.get("short_description") or ""
    request = {"requested_for": requested_for, "short_description": name, "price": price}
    line = {
        "cat_item": item["sys_id"],
        "requested_for": requested_for,
        "short_description": item.get("short_description") or name,
        "description": item.get("description") or "",
        "quantity": str(quantity),
        "price": price,
    }
    return request, line
