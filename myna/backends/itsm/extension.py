"""The `servicenow` extension: the protocol of a ServiceNow instance that no learned fact says.

The ITSM model (learned from the shipped corpus) gives the tables, their fields, the state models
and the data the Table API answers with; the generic runtime serves it. What is left is written
here, as hooks the runtime calls (see `myna.mocks.extensions`), citing PROTOCOL.md:

- §2: `/api/now/v1/table` and `/api/now/v2/table` are `/api/now/table`; PUT is a partial update;
  body fields a table lacks are ignored; an unknown table answers 400 "Invalid table <name>";
- §2.1: `sysparm_display_value` (true, all), `sysparm_exclude_reference_link` and dot-walked
  `sysparm_fields` (`caller_id.user_name`);
- §2.3: the recorded `Link` shape and `sysparm_suppress_pagination_header`;
- §2.5 and §5: data policies refuse with 403 and the labels of the missing fields; insert
  defaults; priority from impact x urgency; an assignee must belong to the assignment group;
  every field change writes `sys_audit`, work notes and comments land in `sys_journal_field`;
  an incident's SLA (`task_sla`) starts on create, pauses On Hold, completes on resolve and
  breaches past its deadline, brought up to date on each write to the incident; a value refused
  in one column names `table.column`;
- §2.6: a record of a child class is also a row of each served parent class, written with it
  and derived for every seed before it is loaded (`prepare_seed`);
- §5: an approval's decision moves the record it is for (through that record's own update
  pipeline, `Mock.update_record`); a user created with roles, or added to a group with roles,
  is granted them (`sys_user_has_role`);
- §3 the batch API, §4 the attachment API (raw and multipart uploads), §1 the
  `/oauth_token.do` answer, §7 the Aggregate API (`stats.py`), §8 the Service Catalog API's
  order now (`catalog.py`).

The business facts themselves (the priority matrix, choice labels, column labels, the data-policy
wording, the Link shape, insert defaults, what entering a state stamps) come from the code the
reference instance the corpus was written with runs (`rules.py`, `instance.py`, `tables.py`), so
the mock and the corpus cannot drift apart (docs/adding-a-backend.md tables each rule's place).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlsplit

import orjson

from myna.backends.itsm.catalog import ORDER_NOW, order_now
from myna.backends.itsm.catalog import stored_text as _text
from myna.backends.itsm.instance import (
    EXTERNAL,
    JOURNAL_FIELDS,
    RUNNING_STAGES,
    SLA_DEFINITIONS,
    STAMP,
    acl_refusal,
    attachment_values,
    audit_values,
    data_policy,
    journal_entry,
    page_links,
    pick,
    resolution_times,
    sla_completion,
    sla_due,
    sla_missed,
    sla_progress,
    sla_restarts,
    sla_start,
    sla_transition,
)
from myna.backends.itsm.rules import (
    DOMAIN,
    INSERT_VALUES,
    PARENT_FIELD,
    Stamper,
    approval_of,
    approval_source,
    caller_fields,
    decided_state,
    full_name,
    insert_defaults,
    is_final,
    leaves_hold,
    not_a_member,
    on_approval,
    outside_group,
    priority_of,
    reassignments,
    relinked,
    reopened,
    role_grants,
    unapproved,
)
from myna.backends.itsm.stats import stats, unpack_stats
from myna.backends.itsm.tables import (
    CHOICES,
    SUPER_CLASSES,
    TABLES,
    TASK_TABLES,
    Column,
    ancestors,
)
from myna.mocks.extensions import (
    Extension,
    PageCall,
    RenderCall,
    Route,
    RouteCall,
    SeedRecords,
    SideEffectOwner,
    WriteCall,
)
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.query import And, Condition, Query, SortKey
from myna.mocks.rejection import Rejection
from myna.mocks.store import Record, Transaction
from myna.mocks.validation import REQUIRED_MISSING, check_strings
from myna.schemas.model import ServiceModel, StateMachine

if TYPE_CHECKING:
    from myna.mocks.runtime import Mock

_JSON: Final = ("Content-Type", "application/json;charset=UTF-8")
_TABLE_PATH: Final = re.compile(r"^/api/now/table/([^/]+)")
# The model names the attachment resource after its path; the dictionary calls it sys_attachment.
_TABLE_OF: Final = {"attachment": "sys_attachment"}
ATTACHMENT: Final = "attachment"
# Attachment bytes live beside their metadata, as ServiceNow keeps them in sys_attachment_doc.
ATTACHMENT_CONTENT: Final = "sys_attachment_doc"
# Fields every write changes; ServiceNow's audit leaves them out.
_UNAUDITED: Final = frozenset({"sys_updated_on", "sys_updated_by", "sys_mod_count"})
_SYSTEM_TABLES: Final = frozenset({"sys_audit", "sys_journal_field", ATTACHMENT})
_TOKEN_LIFETIME: Final = 1799
# The normal change model: the states past Authorize need an approved change.


# -- §2 paths and unknown tables -------------------------------------------------------------


def _unknown_table(mock: Mock, request: MockRequest, path: str) -> Rejection | None:
    match = _TABLE_PATH.match(path)
    if match is None or match.group(1) in mock.resources:
        return None
    message = f"Invalid table {match.group(1)}"
    body = {"error": {"message": message, "detail": None}, "status": "failure"}
    return Rejection(400, message, body=body)


def refusal(rejection: Rejection) -> Rejection:
    """ServiceNow's words for a body it cannot read, for a record created without a mandatory
    field (a data policy naming the fields' labels), and for a value the mock refuses in one
    column of a table, named as `table.column` (PROTOCOL.md §2.5)."""
    if rejection.code == REQUIRED_MISSING:
        policy = data_policy(_label(name) for name in rejection.fields)
        return Rejection(
            policy.status, policy.message, detail=policy.detail, fields=rejection.fields
        )
    if rejection.code == "unreadable_body":
        return Rejection(
            400, "Exception while reading request", detail="The payload is not valid JSON."
        )
    return _invalid_value(rejection) or rejection


# The generic validator's words for a value that fits none of a column's accepted shapes.
_NO_SCHEMA: Final = " is not valid under any of the given schemas"


def _invalid_value(rejection: Rejection) -> Rejection | None:
    """A 400 about one column of the written table, with the table and column named:
    `incident.state cannot change from 2 (In Progress) to 7 (Closed)`. A reference to no
    record is one of these too (PROTOCOL.md §2.5.1), where a learned mock answers 409."""
    about_a_value = rejection.status == 400 or rejection.check == "reference"
    if not about_a_value or rejection.resource is None or len(rejection.fields) != 1:
        return None
    table, name = _TABLE_OF.get(rejection.resource, rejection.resource), rejection.fields[0]
    if _column(rejection.resource, name) is None:
        return None  # a query parameter or a field of no table: the words are already right
    text = rejection.message.removeprefix(f"field {name}: ")
    if text.endswith(_NO_SCHEMA):
        text = text.removesuffix(_NO_SCHEMA) + " is not a value this column takes"
    detail = f"{table}.{text}" if text.startswith(f"{name} ") else f"{table}.{name}: {text}"
    return Rejection(
        400,
        f"Invalid value for {table}.{name}",
        detail=detail,
        fields=rejection.fields,
        resource=rejection.resource,
    )


def _label(name: str) -> str:
    """A column's label wherever the dictionary has it (labels follow names across tables)."""
    return next((columns[name].label for columns in _COLUMNS.values() if name in columns), name)


# -- §2.1 display values -----------------------------------------------------------------------


# Every column by table and name: rendering looks up each field of each record.
_COLUMNS: Final[dict[str, dict[str, Column]]] = {
    name: {column.name: column for column in table.columns} for name, table in TABLES.items()
}


def _column(resource: str, name: str) -> Column | None:
    return _COLUMNS.get(_TABLE_OF.get(resource, resource), {}).get(name)


def render(call: RenderCall) -> dict[str, Any]:
    """Rewrite a rendered record for `sysparm_display_value` and `..._exclude_reference_link`,
    and fill dot-walked `sysparm_fields`."""
    params = dict(call.request.query)
    mode = params.get("sysparm_display_value", "false").lower()
    bare = params.get("sysparm_exclude_reference_link", "false").lower() == "true"
    walked = call.fields is not None and any("." in name for name in call.fields)
    if mode not in ("true", "all") and not bare and not walked:
        return call.rendered
    resource = call.resource.resource.name
    out: dict[str, Any] = {}
    for name, rendered in call.rendered.items():
        if "." in name:
            value, shown = _walk(call, resource, call.record, name)
            out[name] = pick(mode, value, shown)
            continue
        reference = call.resource.references.get(name)
        value = _text(call.record.get(name))
        if reference is not None:
            out[name] = _reference(call, reference.resource, value, rendered, mode, bare)
        elif mode in ("true", "all"):
            shown = _shown(call, resource, call.record, name, value)
            out[name] = pick(mode, value, shown)
            if mode == "all" and value and _is_datetime(resource, name):
                out[name]["display_value_internal"] = value
        else:
            out[name] = rendered
    return out


def _reference(
    call: RenderCall, target: str, value: str, rendered: Any, mode: str, bare: bool
) -> Any:
    if not value:
        return {"display_value": "", "value": ""} if mode == "all" else ""
    link = rendered.get("link") if isinstance(rendered, dict) else None
    shown = _display(call, target, value) if mode in ("true", "all") else value
    if mode == "all":
        both = {"display_value": shown, "value": value}
        return both if bare or link is None else {"display_value": shown, "link": link, **both}
    key, text = ("display_value", shown) if mode == "true" else ("value", value)
    return text if bare or link is None else {"link": link, key: text}


def _display(call: RenderCall | WriteCall, target: str, record_id: str) -> str:
    """What a reference to `target` `record_id` shows: the target's display field."""
    contract = call.mock.resources.get(target)
    if contract is None:
        return EXTERNAL.get(target, {}).get(record_id, record_id)
    found = call.tx.get(target, record_id)
    if found is None:
        return record_id
    table = TABLES.get(target)
    field = contract.resource.display_field or (table.display_field if table else None)
    return _text(found.get(field)) if field else record_id


def _shown(call: RenderCall, resource: str, record: Record, name: str, value: str) -> str:
    column = _column(resource, name)
    if column is None:
        return value
    if column.kind == "choice" and column.choices is not None:
        return CHOICES[column.choices].get(value, value)
    if column.kind == "list" and column.target is not None:
        target = column.target
        return ", ".join(_display(call, target, item) for item in value.split(",") if item)
    if column.kind == "journal":
        return _journal_text(call, _text(record.get("sys_id")), name)
    return value


def _journal(resource: str) -> tuple[str, ...]:
    """The journal fields a write to `resource` may carry (a task's comments and work notes;
    a CI's comments are a plain column)."""
    table = TABLES.get(_TABLE_OF.get(resource, resource))
    return tuple(name for name in JOURNAL_FIELDS if table is not None and name in table.journal)


def _is_datetime(resource: str, name: str) -> bool:
    column = _column(resource, name)
    return column is not None and column.kind == "datetime"


def _walk(call: RenderCall, resource: str, record: Record, path: str) -> tuple[str, str]:
    """A dot-walked field (`caller_id.user_name`): its value and display value. A listed record
    comes projected, its walked value under the dotted name and the reference it walked
    through absent unless asked for too; a record read by id is walked here."""
    leaf = _leaf(call, resource, path)
    if leaf is None:
        return "", ""
    table, name = leaf
    target: Record = {}
    if path in record:
        value = _text(record[path])
    else:
        value, target = _walked(call, resource, record, path)
    if not value:
        return "", ""
    contract = call.mock.resources.get(table)
    nested = contract.references.get(name) if contract is not None else None
    if nested is not None:
        return value, _display(call, nested.resource, value)
    return value, _shown(call, table, target, name, value)


def _leaf(call: RenderCall, resource: str, path: str) -> tuple[str, str] | None:
    """The table and column a dot-walked name ends at; None when a step is no reference."""
    *steps, name = path.split(".")
    for step in steps:
        contract = call.mock.resources.get(resource)
        reference = contract.references.get(step) if contract is not None else None
        if reference is None:
            return None
        resource = reference.resource
    return resource, name


def _walked(call: RenderCall, resource: str, record: Record, path: str) -> tuple[str, Record]:
    """The value at the end of a dot-walk from `record`, and the record holding it."""
    head, _, rest = path.partition(".")
    contract = call.mock.resources.get(resource)
    reference = contract.references.get(head) if contract is not None else None
    target_id = _text(record.get(head))
    if reference is None or reference.resource not in call.mock.resources or not target_id:
        return "", {}
    target = call.tx.get(reference.resource, target_id)
    if target is None:
        return "", {}
    if "." in rest:
        return _walked(call, reference.resource, target, rest)
    return _text(target.get(rest)), target


def _journal_text(call: RenderCall, record_id: str, element: str) -> str:
    """Journal entries of one field, newest first, as the display value shows them."""
    if "sys_journal_field" not in call.mock.resources or not record_id:
        return ""
    entries, _ = call.tx.list(
        "sys_journal_field",
        Query(
            where=And(
                (Condition("element_id", "=", record_id), Condition("element", "=", element))
            ),
            order_by=(SortKey("sys_created_on", descending=True),),
        ),
    )
    return "".join(
        journal_entry(
            {name: _text(entry.get(name)) for name in ("sys_created_on", "element", "value")},
            _full_name(call, _text(entry.get("sys_created_by"))),
        )
        for entry in entries
    )


def _full_name(call: RenderCall, user_name: str) -> str:
    user = _user(call.tx, user_name) if "sys_user" in call.mock.resources else None
    return _text(user.get("name")) if user is not None and user.get("name") else user_name


def _user(tx: Transaction, user_name: str) -> Record | None:
    users, _ = tx.list("sys_user", Query(where=Condition("user_name", "=", user_name), limit=1))
    return users[0] if users else None


# -- §2.3 paging ---------------------------------------------------------------------------------


def link_header(call: PageCall) -> str | None:
    params = dict(call.request.query)
    if params.get("sysparm_suppress_pagination_header", "").lower() == "true":
        return None
    url = f"{call.request.base_url}{call.request.path}"
    return page_links(url, call.request.query, call.limit, call.offset, call.total)


# -- §2.5 and §5 business rules -----------------------------------------------------------------


def before_write(call: WriteCall) -> None:
    if call.kind == "delete":
        return
    resource = call.resource.resource.name
    after = call.after
    if call.kind == "create":
        _insert_defaults(call, resource, after)
    for name in _journal(resource):
        # Journal fields are input only: what is written becomes a sys_journal_field entry.
        if name in after:
            after[name] = ""
    if resource in ("incident", "problem"):
        _derive_priority(call.before, after)
    if resource == "incident":
        _incident_moves(call)
        count = reassignments(call.before, after) if call.before is not None else None
        if count is not None:
            after["reassignment_count"] = count
    if resource in ("sc_request", "sc_req_item"):
        was = "" if call.before is None else _text(call.before.get("approval"))
        after.update(on_approval(resource, was, _text(after.get("approval"))))
    if resource == "sysapproval_approver" and call.kind == "create":
        found = _task_of(call, _text(after.get("sysapproval")))
        if found is not None:
            after.update(approval_source(found, _text(after.get("sysapproval"))))
    _refuse_finished(call)
    if resource == "change_request":
        _change_approval(call)
    _data_policies(call, resource)
    _state_entry(call, resource)
    _check_assignment(call)


def _insert_defaults(call: WriteCall, resource: str, after: Record) -> None:
    """What the reference instance's insert fills in, from the same statement
    (`rules.insert_defaults`, `INSERT_VALUES`, `caller_fields`, `DOMAIN`): a table's default
    for a column left empty (one the client left out has the model's learned default already,
    the same value), the values an insert fixes whatever was sent (every record is born in the
    global domain, a request waits for approval), the caller in the references that take it,
    a task's parent and a user's name."""
    fields = call.resource.resource.fields
    task = resource in TASK_TABLES
    for name, value in insert_defaults(resource, task).items():
        if name in fields and not _text(after.get(name)):
            after[name] = value
    fixed = {**DOMAIN, **INSERT_VALUES.get(resource, {})}
    after.update((name, value) for name, value in fixed.items() if name in fields)
    names = [name for name in caller_fields(resource, task) if name in fields]
    caller = _caller_id(call) if names else ""
    for name in names:
        # Whoever the corpus's creates were made by is no default: a learned constant here is
        # the recording user's id, so the caller wins over anything but what the client sent.
        if caller and not _text(call.sent.get(name)):
            after[name] = caller
    if resource in PARENT_FIELD and "parent" in fields:
        after["parent"] = _text(after.get(PARENT_FIELD[resource]))
    if resource == "sys_user" and not after.get("name"):
        after["name"] = full_name(_text(after.get("first_name")), _text(after.get("last_name")))


def _derive_priority(before: Record | None, after: Record) -> None:
    """Priority follows the impact x urgency lookup (`rules.priority_of`)."""
    priority = priority_of(before, after)
    if priority is not None:
        after["priority"] = priority


def _incident_moves(call: WriteCall) -> None:
    """The incident business rules on a move (a create included): moving to any state but On
    Hold clears the hold reason, resolving records how long the incident was open
    (`instance.resolution_times`), and reopening a resolved incident counts the reopening,
    says who and when, and clears the resolution stamps (as the reference instance does)."""
    before = "" if call.before is None else _text(call.before.get("state"))
    after = _text(call.after.get("state"))
    if before == after:
        return
    if leaves_hold(before, after):
        call.after["hold_reason"] = ""
    if after == "6":
        times = resolution_times(_text(call.after.get("opened_at")), _now(call.mock))
        fields = call.resource.resource.fields
        call.after.update((name, value) for name, value in times.items() if name in fields)
    if call.before is not None and "task_sla" in call.mock.resources:
        record_id = _text(call.before.get("sys_id"))
        slas = [_as_text(sla) for sla in _slas_of(call.tx, record_id) if _timed(sla)]
        if sla_missed(after, slas, _now(call.mock)):
            call.after["made_sla"] = "false"
    reopening = reopened(before, after, _text((call.before or {}).get("reopen_count")))
    if reopening is not None:
        call.after.update(reopening, reopened_time=call.mock.stamp(), reopened_by=_caller_id(call))


def _refuse_finished(call: WriteCall) -> None:
    """A record in a state its state model never leaves (Closed, Canceled) is read-only: the
    platform's ACL refuses every update, not only a change of state."""
    if call.kind != "update" or call.before is None:
        return
    for machine in call.resource.state_machines:
        state = _text(call.before.get(machine.field))
        if machine.evidence.pinned and state and _is_terminal(machine, state):
            refusal = acl_refusal()
            raise Rejection(refusal.status, refusal.message, detail=refusal.detail)


def _is_terminal(machine: StateMachine, state: str) -> bool:
    return is_final(state, machine.states, (t.source or "" for t in machine.transitions))


def _change_approval(call: WriteCall) -> None:
    """An approval decided in Authorize moves the change; no change is scheduled, implemented,
    reviewed or closed without approval (`rules.decided_state`, `rules.unapproved`)."""
    before, after = call.before, call.after
    pair = (_text(after.get("state")), _text(after.get("approval")))
    was = None if before is None else (_text(before.get("state")), _text(before.get("approval")))
    state = decided_state(was, pair)
    if state != pair[0]:
        after["state"] = state
    if was is None or state != was[0]:
        verdict = unapproved(_text(after.get("number")), state, pair[1])
        if verdict is not None:
            raise Rejection(
                verdict.status, verdict.message, detail=verdict.detail, fields=("approval",)
            )


def _state_entry(call: WriteCall, resource: str) -> None:
    """Who and when entering a state stamps (resolved_at, closed_by, ...), by the same
    `rules.Stamper` the reference instance stamps with.

    Only the reviewed machines' `changes_on_entry` are applied: a learned machine's co-changing
    fields are evidence of what happened in the corpus, not rules the mock can replay. What a
    state sets to a constant (a closed task is inactive) is `sets_on_entry`, which the runtime
    has applied already.
    """
    stamper: Stamper | None = None
    for machine in call.resource.state_machines:
        target = _text(call.after.get(machine.field))
        if not machine.evidence.pinned or not target:
            continue
        if call.before is not None and _text(call.before.get(machine.field)) == target:
            continue
        for name in machine.changes_on_entry.get(target, []):
            stamper = stamper or _stamper(call, resource)
            value = stamper.value(name)
            if value is not None:
                call.after[name] = value


def _stamper(call: WriteCall, resource: str) -> Stamper:
    def kind(name: str) -> tuple[str, str | None] | None:
        column = _column(resource, name)
        return None if column is None else (column.kind, column.target)

    return Stamper(call.mock.stamp(), _caller_id(call), kind)


def _caller_id(call: WriteCall) -> str:
    """The caller's sys_user id; "" when the model serves no sys_user or the caller has no
    record there (a principal whose credentials live outside the world). No user is made up
    for such a caller: that would be a write the client never asked for."""
    user = _user(call.tx, call.principal) if "sys_user" in call.mock.resources else None
    return _text(user.get("sys_id")) if user is not None else ""


def _data_policies(call: WriteCall, resource: str) -> None:
    """Entering a state without its mandatory fields is refused with every missing label.

    The data policies are the reviewed state models' (pinned in overlay.yaml); a learned
    machine's co-occurring fields are left to the generic behaviour checks."""
    for machine in call.resource.state_machines:
        target = _text(call.after.get(machine.field))
        if (
            not machine.evidence.pinned
            or not target
            or (call.before is not None and _text(call.before.get(machine.field)) == target)
        ):
            continue
        missing = [
            name for name in machine.required_on_entry.get(target, []) if not call.after.get(name)
        ]
        if missing:
            labels = [
                column.label if column else name for name, column in _columns(resource, missing)
            ]
            refusal = data_policy(labels)
            raise Rejection(
                refusal.status, refusal.message, detail=refusal.detail, fields=tuple(missing)
            )


def _columns(resource: str, names: list[str]) -> Iterator[tuple[str, Column | None]]:
    for name in names:
        yield name, _column(resource, name)


def _check_assignment(call: WriteCall) -> None:
    """An assignee must be a member (sys_user_grmember) of the assignment group
    (`rules.outside_group`)."""
    after, before = call.after, call.before
    pair = (_text(after.get("assignment_group")), _text(after.get("assigned_to")))
    was = None
    if before is not None:
        was = (_text(before.get("assignment_group")), _text(before.get("assigned_to")))
    if "sys_user_grmember" in call.mock.resources and outside_group(
        was, pair, lambda group: _members(call, group)
    ):
        person, team = (
            _display(call, "sys_user", pair[1]),
            _display(call, "sys_user_group", pair[0]),
        )
        verdict = not_a_member(person, team)
        raise Rejection(
            verdict.status, verdict.message, detail=verdict.detail, fields=("assigned_to",)
        )


def _members(call: WriteCall, group: str) -> set[str]:
    members, _ = call.tx.list("sys_user_grmember", Query(where=Condition("group", "=", group)))
    return {_text(member.get("user")) for member in members}


def after_write(call: WriteCall) -> None:
    """Side effects in the same transaction: the record's rows in its other classes' tables,
    audit rows, journal entries, attachment bytes."""
    resource = call.resource.resource.name
    record_id = _text(call.after.get(call.resource.resource.id_field))
    _sync_hierarchy(call, resource, record_id)
    if call.kind == "delete":
        if resource == ATTACHMENT and call.tx.get(ATTACHMENT_CONTENT, record_id) is not None:
            call.tx.delete(ATTACHMENT_CONTENT, record_id)
        if resource == "incident" and "task_sla" in call.mock.resources:
            for sla in _slas_of(call.tx, record_id):
                call.tx.delete("task_sla", _text(sla.get("sys_id")))
        return
    if resource in _SYSTEM_TABLES:
        return
    checkpoint = _text(call.after.get("sys_mod_count", "0"))
    # ServiceNow audits a record under its class, whichever table the write came through.
    audited = _record_class(resource, _text(call.after.get("sys_class_name")))
    if call.kind == "update" and call.before is not None and "sys_audit" in call.mock.resources:
        for name, value in call.after.items():
            old = call.before.get(name)
            if name not in _UNAUDITED and _text(old) != _text(value):
                _audit(call, audited, record_id, name, _text(old), _text(value), checkpoint)
    for element in _journal(resource):
        text = _text(call.sent.get(element))
        if not text or "sys_journal_field" not in call.mock.resources:
            continue
        if call.kind == "update" and "sys_audit" in call.mock.resources:
            _audit(call, audited, record_id, element, "", text, checkpoint)
        values = {"element": element, "element_id": record_id, "name": audited, "value": text}
        _platform_insert(call, "sys_journal_field", values, call.principal)
    if resource == "incident" and "task_sla" in call.mock.resources:
        # After the audit: the platform's SLA engine writes sla_due without an audit row.
        _incident_slas(call, record_id)
    if resource == "incident":
        _recount_problems(call)
    _FOLLOW_UPS.get(resource, _nothing)(call)


# -- approvals and roles ------------------------------------------------------------------------


def _nothing(call: WriteCall) -> None:
    return None


def _task_of(call: WriteCall, record_id: str) -> str | None:
    """The served task table holding `record_id` (an approval names its record as a task)."""
    tables = sorted(TASK_TABLES & set(call.mock.resources))
    return next((name for name in tables if call.tx.get(name, record_id) is not None), None)


def _approvals_decide(call: WriteCall) -> None:
    """The record an approval is for takes the approval its approvers give it
    (`rules.approval_of`), through that record's own update pipeline: an approved change in
    Authorize is scheduled, a rejected one goes back to New, an approved request is in
    process."""
    before = None if call.before is None else _text(call.before.get("state"))
    if before == _text(call.after.get("state")):
        return
    target = _text(call.after.get("sysapproval"))
    table = _task_of(call, target)
    if table is None:
        return
    approvers, _ = call.tx.list(
        "sysapproval_approver", Query(where=Condition("sysapproval", "=", target))
    )
    decided = approval_of(_text(approver.get("state")) for approver in approvers)
    current = call.tx.get(table, target) or {}
    if decided is not None and decided != _text(current.get("approval")):
        call.mock.update_record(call, table, target, {"approval": decided})


def _grant(call: WriteCall, user: str, listed: str, group: str = "") -> None:
    """Store the sys_user_has_role rows `rules.role_grants` gives `user` for `listed`."""
    if not listed or "sys_user_has_role" not in call.mock.resources:
        return

    def role_id(name: str) -> str | None:
        roles, _ = call.tx.list("sys_user_role", Query(where=Condition("name", "=", name)))
        return _text(roles[0].get("sys_id")) if roles else None

    for grant in role_grants(user, listed, role_id, group):
        _platform_insert(call, "sys_user_has_role", grant, "system")


def _user_roles(call: WriteCall) -> None:
    """A user created with roles has them."""
    if call.kind == "create":
        _grant(call, _text(call.after.get("sys_id")), _text(call.after.get("roles")))


def _member_roles(call: WriteCall) -> None:
    """A new member of a group inherits the group's roles."""
    group_id = _text(call.after.get("group"))
    group = call.tx.get("sys_user_group", group_id) if call.kind == "create" else None
    if group is not None:
        _grant(call, _text(call.after.get("user")), _text(group.get("roles")), group_id)


# Side effects of a write to one table on others, after its own.
_FOLLOW_UPS: Final[Mapping[str, Callable[[WriteCall], None]]] = {
    "sysapproval_approver": _approvals_decide,
    "sys_user": _user_roles,
    "sys_user_grmember": _member_roles,
}


# -- §2.6 the table hierarchy -------------------------------------------------------------------


def _sync_hierarchy(call: WriteCall, resource: str, record_id: str) -> None:
    """One record, every table of its class hierarchy (PROTOCOL.md §2.6).

    ServiceNow keeps a record of a class once for the whole hierarchy: a server is a row of
    `cmdb_ci_server` and of `cmdb_ci`, where it shows the parent's columns and its own
    `sys_class_name`. The mock keeps one row per served table of the record's class chain and
    writes them together, so reading the parent table lists the child's records, a get by
    sys_id through the parent finds them, a reference to the parent resolves to them, and a
    write through either table is seen through the other.
    """
    for other in _class_tables(call, resource) - {resource}:
        held = call.tx.get(other, record_id)
        if call.kind == "delete":
            if held is not None:
                call.tx.delete(other, record_id)
            continue
        fields = call.mock.resources[other].resource.fields
        shared = {name: value for name, value in call.after.items() if name in fields}
        if held is None:
            call.tx.insert(other, record_id, shared)
        else:
            call.tx.update(other, record_id, {**held, **shared})


def _class_tables(call: WriteCall, resource: str) -> set[str]:
    """The served tables holding the written record (see `_holders`)."""
    record_class = _record_class(resource, _text(call.after.get("sys_class_name")))
    return _holders(record_class, call.mock.resources)


def _record_class(resource: str, recorded: str) -> str:
    """A record's class: its `sys_class_name` when that is `resource` or a class extending it,
    else `resource` itself."""
    known = recorded in SUPER_CLASSES and (recorded == resource or resource in ancestors(recorded))
    return recorded if known else resource


def _holders(record_class: str, served: Collection[str]) -> set[str]:
    """The served tables a record of `record_class` is a row of: its class and every served
    class that one extends."""
    return {name for name in (record_class, *ancestors(record_class)) if name in served}


def prepare_seed(model: ServiceModel, records: SeedRecords) -> SeedRecords:
    """A seed's records as the hierarchy keeps them (PROTOCOL.md §2.6), whoever made them.

    Generated records and seed files know nothing of classes: a generated server is no
    `cmdb_ci` row, a generated `cmdb_ci` row may claim class `cmdb_ci_server` with no server
    behind it, and a seed file may hold servers alone. Here every record of a child class gets
    (or is merged into) a row of each served parent table, with that table's columns and the
    child's values, as the extension's writes keep it; a parent row claiming a served child
    class that has no record with its sys_id is of the parent's own class.
    """
    served = model.resources
    present = {(name, record_id) for name, record_id, _ in records}
    out: SeedRecords = []
    for name, record_id, record in records:
        fields = served[name].fields
        record_class = _record_class(name, _text(record.get("sys_class_name")))
        if record_class in served and (record_class, record_id) not in present:
            record_class = name
        if "sys_class_name" in fields and _text(record.get("sys_class_name")) != record_class:
            record = {**record, "sys_class_name": record_class}
        out.append((name, record_id, record))
    position = {(name, record_id): index for index, (name, record_id, _) in enumerate(out)}
    for name, record_id, record in list(out):
        record_class = _record_class(name, _text(record.get("sys_class_name")))
        if record_class != name:
            continue  # a parent table's row of a child's record: the child's own row fills it
        for parent in (table for table in ancestors(name) if table in served):
            columns = served[parent].fields
            shared = {field: value for field, value in record.items() if field in columns}
            at = position.get((parent, record_id))
            if at is None:
                position[(parent, record_id)] = len(out)
                out.append((parent, record_id, shared))
            else:
                out[at] = (parent, record_id, {**out[at][2], **shared})
    return out


def _platform_insert(
    call: WriteCall, resource: str, values: Mapping[str, str], writer: str
) -> Record:
    """A record the platform writes itself (journal, audit, SLA): like every record, it is born
    in the global domain."""
    record: Record = dict(values)
    if "sys_domain" in call.mock.resources[resource].resource.fields:
        record.update(DOMAIN)
    return call.mock.insert_record(call.tx, resource, record, writer)


def _audit(
    call: WriteCall, table: str, record_id: str, field: str, old: str, new: str, checkpoint: str
) -> None:
    values = audit_values(table, record_id, field, (old, new), call.principal, checkpoint)
    _platform_insert(call, "sys_audit", values, call.principal)


# -- §5 SLA timers ------------------------------------------------------------------------------

# The columns the SLA rules read as text; a stored record may hold them typed.
_TASK_FIELDS: Final = ("state", "priority", "active")
_TIMER_FIELDS: Final = ("start_time", "planned_end_time", "pause_duration")
# The platform's SLA engine writes task_sla as this user, as the reference instance does.
_SLA_WRITER: Final = "system"


def _incident_slas(call: WriteCall, record_id: str) -> None:
    """The instance's SLA rules (`instance.sla_*`) on this write: start one on create; on an
    update bring each running SLA up to now (elapsed time, breach flag), then pause, resume,
    cancel or complete it as the incident's change says, and start another on a new priority
    or a reopening. The incident's sla_due follows its most urgent running SLA."""
    now = _now(call.mock)
    new = _task_view(call.after)
    # The SLAs as this write leaves them: read once, sla_due is computed from them.
    views: list[dict[str, str]] = []
    if call.before is None:
        views += _start_sla(call, record_id, new, now)
    else:
        old = _task_view(call.before)
        for sla in _slas_of(call.tx, record_id):
            view = _as_text(sla)
            if view["stage"] in RUNNING_STAGES and _timed(sla):
                view = _run_sla(call, sla, view, (old, new), now)
            views.append(view)
        if sla_restarts(old, new):
            views += _start_sla(call, record_id, new, now)
    _sync_due(call, record_id, views)


def _run_sla(
    call: WriteCall,
    sla: Record,
    view: dict[str, str],
    tasks: tuple[Mapping[str, str], Mapping[str, str]],
    now: datetime,
) -> dict[str, str]:
    """One running SLA brought up to now and moved as the task's change says; its new view."""
    if view["stage"] == "in_progress":
        view = _write_sla(call, sla, view, sla_progress(view, now))
    change = sla_transition(view, tasks[0], tasks[1], now)
    if change is not None:
        view = _write_sla(call, sla, view, change)
    # After the transition: resolving straight from On Hold resumes, then completes.
    completion = sla_completion(view, tasks[1], now)
    if completion is not None:
        view = _write_sla(call, sla, view, completion)
    return view


def _now(mock: Mock) -> datetime:
    """The mock's clock as the naive UTC moment the SLA rules compute with, to the second."""
    return datetime.fromtimestamp(int(mock.clock()), tz=UTC).replace(tzinfo=None)


def _as_text(record: Record) -> dict[str, str]:
    return {name: _text(value) for name, value in record.items()}


def _task_view(record: Record) -> dict[str, str]:
    return {name: _text(record.get(name)) for name in _TASK_FIELDS}


def _timed(sla: Record) -> bool:
    """Whether an SLA's timer fields read as stamps: a world replayed from a recording may hold
    task_sla rows without them, and those are left as recorded rather than guessed at."""
    try:
        for name in _TIMER_FIELDS:
            datetime.strptime(_text(sla.get(name)), STAMP)
    except ValueError:
        return False
    return True


def _start_sla(
    call: WriteCall, record_id: str, task: Mapping[str, str], now: datetime
) -> list[dict[str, str]]:
    """The SLA a task at this priority starts (none for a priority without one), as text."""
    if task["priority"] not in SLA_DEFINITIONS:
        return []
    values = sla_start(record_id, task["priority"], now)
    return [_as_text(_platform_insert(call, "task_sla", values, _SLA_WRITER))]


def _write_sla(
    call: WriteCall, stored: Record, view: dict[str, str], change: Mapping[str, str]
) -> dict[str, str]:
    """Store `change` on the SLA as the platform does (stamped, counted); returns the new view."""
    changed = {name: value for name, value in change.items() if view.get(name) != value}
    _platform_update(call, "task_sla", stored, changed, _SLA_WRITER)
    return {**view, **changed}


def _platform_update(
    call: WriteCall,
    table: str,
    stored: Record,
    changed: Mapping[str, str],
    writer: str,
    *,
    audit: bool = False,
) -> None:
    """A change the platform makes itself (no rules run), stamped and counted; `audit` for a
    table whose history is kept (the reference instance's `system_update`)."""
    if not changed:
        return
    before = dict(stored)
    stored.update(changed)
    stored.update(sys_updated_on=call.mock.stamp(), sys_updated_by=writer)
    count = stored.get("sys_mod_count")
    bumped = int(count or 0) + 1
    stored["sys_mod_count"] = bumped if isinstance(count, int) else str(bumped)
    record_id = _text(stored.get("sys_id"))
    call.tx.update(table, record_id, stored)
    if audit and "sys_audit" in call.mock.resources:
        for name, value in changed.items():
            old = _text(before.get(name))
            _audit(call, table, record_id, name, old, value, _text(stored["sys_mod_count"]))


def _recount_problems(call: WriteCall) -> None:
    """A problem's related_incidents counts the incidents linked to it: recounted for the
    problems an incident leaves and joins (`rules.relinked`)."""
    if call.before is None or "problem" not in call.mock.resources:
        return
    was, now = _text(call.before.get("problem_id")), _text(call.after.get("problem_id"))
    for problem_id in relinked(was, now):
        problem = call.tx.get("problem", problem_id)
        if problem is None:
            continue
        linked, _ = call.tx.list("incident", Query(where=Condition("problem_id", "=", problem_id)))
        count = {"related_incidents": str(len(linked))}
        _platform_update(call, "problem", dict(problem), count, call.principal, audit=True)


def _slas_of(tx: Transaction, task_id: str) -> list[Record]:
    slas, _ = tx.list(
        "task_sla",
        Query(where=Condition("task", "=", task_id), order_by=(SortKey("sys_created_on"),)),
    )
    return slas


def _sync_due(call: WriteCall, record_id: str, slas: Iterable[Mapping[str, str]]) -> None:
    due = sla_due(slas)
    fields = call.resource.resource.fields
    if due is None or "sla_due" not in fields:
        return
    wanted: dict[str, str] = {name: due for name in ("sla_due", "activity_due") if name in fields}
    if any(_text(call.after.get(name)) != value for name, value in wanted.items()):
        call.after.update(wanted)
        call.tx.update("incident", record_id, call.after)


# -- §3 the batch API -------------------------------------------------------------------------


def batch(call: RouteCall) -> MockResponse:
    """Serve each inner request as if sent alone, with the outer request's credential."""
    sent = _batch_body(call.request)
    serviced = [
        _serviced(item_id, call.serve(inner)) for item_id, inner in _inner(call.request, sent)
    ]
    payload = {
        "batch_request_id": str(sent.get("batch_request_id", "")),
        "serviced_requests": serviced,
        "unserviced_requests": [],
    }
    return MockResponse(200, [_JSON], payload=payload)


def unpack_batch(request: MockRequest) -> list[MockRequest]:
    """The inner requests a batch carries (the `Route.unpack` of the batch endpoint); [] for a
    batch the endpoint refuses whole, which serves none of them."""
    try:
        return [inner for _, inner in _inner(request, _batch_body(request))]
    except Rejection:
        return []


def _batch_body(request: MockRequest) -> dict[str, Any]:
    try:
        sent = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        raise _unreadable("The payload is not valid JSON.") from None
    if not isinstance(sent, dict) or not isinstance(sent.get("rest_requests"), list):
        raise _unreadable("rest_requests is missing")
    return sent


def _inner(request: MockRequest, sent: dict[str, Any]) -> list[tuple[str, MockRequest]]:
    """(item id, request) for each rest_request, every one checked before any is served."""
    outer = {k: v for k, v in request.headers.items() if k in ("authorization", "x-myna-world")}
    return [_inner_request(request, item, outer) for item in sent["rest_requests"]]


def _inner_request(
    request: MockRequest, item: Any, outer: dict[str, str]
) -> tuple[str, MockRequest]:
    if not isinstance(item, dict) or not isinstance(item.get("url"), str):
        raise _unreadable("a rest_request has no url")
    try:
        url = urlsplit(item["url"])
    except ValueError:
        raise _unreadable("a rest_request url is not a URL") from None
    try:
        body = base64.b64decode(item["body"], validate=True) if item.get("body") else b""
    except (ValueError, TypeError):
        raise _unreadable("a rest_request body is not base64") from None
    inner = MockRequest(
        method=str(item.get("method", "GET")).upper(),
        path=url.path,
        query=parse_qsl(url.query, keep_blank_values=True),
        headers={**outer, **_inner_headers(item.get("headers"))},
        body=body,
        base_url=request.base_url,
    )
    return str(item.get("id", "")), inner


def _inner_headers(sent: Any) -> dict[str, str]:
    """A rest_request's headers, a list of {name, value} objects; its own authorization is
    ignored (every item runs with the batch's credential)."""
    if sent is None:
        return {}
    if not isinstance(sent, list) or not all(_is_header(header) for header in sent):
        raise _unreadable("a rest_request's headers are not a list of {name, value} objects")
    headers = {str(header["name"]).lower(): str(header["value"]) for header in sent}
    headers.pop("authorization", None)
    return headers


def _is_header(header: Any) -> bool:
    return (
        isinstance(header, dict)
        and isinstance(header.get("name"), str)
        and isinstance(header.get("value"), str)
    )


def _unreadable(detail: str) -> Rejection:
    return Rejection(400, "Exception while reading request", detail=detail)


def _serviced(item_id: str, response: MockResponse) -> dict[str, Any]:
    return {
        "id": item_id,
        "body": base64.b64encode(response.body).decode("ascii"),
        "status_code": response.status,
        "status_text": HTTPStatus(response.status).phrase,
        "headers": [{"name": name, "value": value} for name, value in response.headers],
        "execution_time": 0,
    }


# -- §4 the attachment API ---------------------------------------------------------------------


def upload(call: RouteCall) -> MockResponse:
    """`POST /api/now/attachment/file?table_name=&table_sys_id=&file_name=`: the body is the
    file, its Content-Type the file's."""
    params = dict(call.request.query)
    content_type = call.request.headers.get("content-type") or "application/octet-stream"
    return _attach(
        call,
        (params.get("table_name", ""), params.get("table_sys_id", "")),
        params.get("file_name", ""),
        call.request.body,
        content_type,
    )


def upload_multipart(call: RouteCall) -> MockResponse:
    """`POST /api/now/attachment/upload`: a multipart/form-data body whose fields name the
    record (`table_name`, `table_sys_id`) and whose file part, last, carries the file with its
    name and type."""
    fields, file_part = _form(call.request)
    if file_part is None:
        raise _unreadable("the form has no file part")
    file_name, data, content_type = file_part
    target = (fields.get("table_name", ""), fields.get("table_sys_id", ""))
    return _attach(call, target, file_name, data, content_type)


def _form(request: MockRequest) -> tuple[dict[str, str], tuple[str, bytes, str] | None]:
    """A multipart/form-data body's plain fields, and its (last) file part."""
    content_type = request.headers.get("content-type", "")
    if (
        not content_type.lower().startswith("multipart/form-data")
        or "boundary=" not in content_type
    ):
        raise Rejection(
            415,
            "Unsupported Media Type",
            detail="POST /api/now/attachment/upload takes multipart/form-data with a boundary",
        )
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    fields: dict[str, str] = {}
    file_part: tuple[str, bytes, str] | None = None
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        file_name = part.get_filename()
        if file_name is not None:
            file_part = (file_name, data, part.get_content_type())
        elif isinstance(name, str):
            fields[name] = data.decode("utf-8", "replace")
    return fields, file_part


def _attach(
    call: RouteCall, target: tuple[str, str], file_name: str, data: bytes, content_type: str
) -> MockResponse:
    """Store a file uploaded for the record `target` (table, sys_id) and answer its
    attachment record (201, with its Location)."""
    check_strings({"file_name": file_name, "content_type": content_type}, status=400)
    tx, principal = call.transaction(), call.user()
    table, target_id = target
    if table not in call.mock.resources or tx.get(table, target_id) is None:
        raise Rejection(
            400, "Invalid table or sys_id", detail=f"No record {target_id} in table {table}"
        )
    values = attachment_values(file_name, table, target_id, data, content_type)
    record = call.mock.insert_record(tx, ATTACHMENT, values, principal)
    record_id = _text(record["sys_id"])
    where = f"{call.request.base_url}/api/now/attachment/{record_id}"
    record["download_link"] = f"{where}/file"
    tx.update(ATTACHMENT, record_id, record)
    tx.insert(ATTACHMENT_CONTENT, record_id, {"data": base64.b64encode(data).decode("ascii")})
    rendered = call.mock.renderers[ATTACHMENT].render(record, call.request.base_url)
    return MockResponse(201, [_JSON, ("Location", where)], payload={"result": rendered})


def download(call: RouteCall) -> MockResponse:
    tx = call.transaction()
    record_id = call.params["sys_id"]
    record = tx.get(ATTACHMENT, record_id)
    content = tx.get(ATTACHMENT_CONTENT, record_id)
    if record is None or content is None:
        raise Rejection(
            404, "Record doesn't exist", detail=f"Attachment record not found: {record_id}"
        )
    content_type = _text(record.get("content_type")) or "application/octet-stream"
    return MockResponse(
        200, [("Content-Type", content_type)], body=base64.b64decode(content["data"])
    )


# -- §1 the OAuth token endpoint ---------------------------------------------------------------


def token(call: RouteCall) -> MockResponse:
    """Password, client-credentials and refresh grants, answered as ServiceNow does."""
    form: dict[str, str] = dict(parse_qsl(call.request.body.decode("utf-8", "replace")))
    auth = call.mock.auth
    grant = form.get("grant_type", "")
    if grant == "refresh_token":
        access = auth.redeem_refresh_token(form.get("refresh_token", ""), call.world)
    else:
        issued = auth.issue_token(form, call.request.base_url, call.world)
        access = None if issued is None else str(issued["access_token"])
    holder = None if access is None else auth.holder(access)
    if access is None or holder is None:
        refused = {"error_description": "access_denied", "error": "server_error"}
        return MockResponse(401, [_JSON], payload=refused)
    body: dict[str, Any] = {"access_token": access}
    if grant != "client_credentials":
        # The client-credentials grant carries no refresh token (ServiceNow OAuth docs).
        body["refresh_token"] = auth.issue_refresh_token(*holder)
    body.update(scope="useraccount", token_type="Bearer", expires_in=_TOKEN_LIFETIME)
    return MockResponse(200, [_JSON], payload=body)


def _routes() -> tuple[Route, ...]:
    return (
        Route("POST", "/api/now/v1/batch", batch, transactional=False, unpack=unpack_batch),
        Route("POST", "/api/now/v1/attachment/file", upload),
        Route("POST", "/api/now/v1/attachment/upload", upload_multipart),
        Route("POST", ORDER_NOW, order_now, transactional=False),
        Route("GET", "/api/now/v1/attachment/{sys_id}/file", download),
        Route("POST", "/oauth_token.do", token, authenticated=False, transactional=False),
        Route("GET", "/api/now/stats/{table}", stats, transactional=False, unpack=unpack_stats),
    )


SERVICENOW = Extension(
    name="servicenow",
    routes=_routes(),
    aliases=(
        ("/api/now/v1/table", "/api/now/table"),
        ("/api/now/v2/table", "/api/now/table"),
        ("/api/now/attachment", "/api/now/v1/attachment"),
        ("/api/now/batch", "/api/now/v1/batch"),
        ("/api/now/v1/stats", "/api/now/stats"),
        ("/api/sn_sc/v1/servicecatalog", "/api/sn_sc/servicecatalog"),
    ),
    partial_put=True,
    ignore_unknown_fields=True,
    unrouted=_unknown_table,
    before_write=before_write,
    after_write=after_write,
    render=render,
    link_header=link_header,
    refusal=refusal,
    prepare_seed=prepare_seed,
    side_effect_resources=frozenset(
        {"sys_audit", "sys_journal_field", ATTACHMENT_CONTENT, "task_sla"}
    ),
    side_effect_owners=(
        ("sys_journal_field", SideEffectOwner("element_id", "name", "element")),
        ("sys_audit", SideEffectOwner("documentkey", "tablename", "fieldname")),
        ("task_sla", SideEffectOwner("task")),
    ),
    note_fields=frozenset(JOURNAL_FIELDS),
    # What the hooks look up: an incident's SLAs, a record's journal, a group's members, a user
    # by name (for display names): indexed, so a create costs the same in a world of any size.
    lookups=frozenset(
        {
            ("task_sla", "task"),
            ("sys_journal_field", "element_id"),
            ("sys_user_grmember", "group"),
            ("sys_user", "user_name"),
            ("sysapproval_approver", "sysapproval"),
            ("sys_user_role", "name"),
            ("incident", "problem_id"),
        }
    ),
)
