"""A reference ServiceNow instance in memory: the pen the corpus author writes traffic with.

It answers Table, Batch, Attachment and OAuth calls the way ServiceNow's documentation and the
real recordings show (see PROTOCOL.md), and runs the platform's out-of-box business rules for the
shipped tables: numbering, defaults, the priority lookup, the incident, problem and change state
models with their data policies, SLA timers, and the audit and journal side effects. Deterministic
throughout: ids come from a counter, time from a clock the author advances.

This is not the mock. The mock is *learned* from the traffic written here, so this module stays
independent of Myna's runtime (no store, no query dialect): the corpus is a separate statement of
how ServiceNow behaves, against which the learned model and the runtime are then checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from myna.backends import JSON_TYPE as JSON_TYPE
from myna.backends import Reply as Reply
from myna.backends import json_reply as json_reply
from myna.backends.itsm import ADMIN as ADMIN  # the administrator every instance is born with
from myna.backends.itsm.rules import (
    DOMAIN,
    INSERT_VALUES,
    PARENT_FIELD,
    STATE_MODELS,
    Stamper,
    Verdict,
    approval_of,
    approval_source,
    caller_fields,
    decided_state,
    entered,
    full_name,
    insert_defaults,
    judge_move,
    judge_start,
    leaves_hold,
    not_a_member,
    on_approval,
    outside_group,
    priority_of,
    read_only,
    reassignments,
    relinked,
    reopened,
    role_grants,
    unapproved,
)
from myna.backends.itsm.tables import (
    CHOICES,
    CI_TABLES,
    SUPER_CLASSES,
    TABLES,
    TASK_TABLES,
    Column,
    table,
)
from myna.errors import MockError
from myna.traces.model import Body, Pairs

Row = dict[str, str]

STAMP: Final = "%Y-%m-%d %H:%M:%S"
EPOCH: Final = datetime(1970, 1, 1)
DEFAULT_LIMIT: Final = 10000

# SLA definitions (contract_sla) attached to incidents by priority: name and resolution target.
SLA_DEFINITIONS: Final[Mapping[str, tuple[str, timedelta]]] = {
    "1": ("Priority 1 resolution (4 hour)", timedelta(hours=4)),
    "2": ("Priority 2 resolution (8 hour)", timedelta(hours=8)),
    "3": ("Priority 3 resolution (1 day)", timedelta(days=1)),
    "4": ("Priority 4 resolution (2 day)", timedelta(days=2)),
    "5": ("Priority 5 resolution (5 day)", timedelta(days=5)),
}


def external_id(target: str, name: str) -> str:
    """The sys_id of a record in a table the back end does not serve (a stable digest)."""
    return hashlib.md5(f"{target}/{name}".encode()).hexdigest()


# Records of tables the back end does not serve, which served records still reference.
_EXTERNAL_NAMES: Final[Mapping[str, tuple[str, ...]]] = {
    "core_company": ("Acme Corporation", "Dell Inc.", "Microsoft"),
    "cmn_location": ("London Office", "Tokyo Office", "San Diego Data Center"),
    "cmn_department": ("IT", "Finance", "Sales", "Human Resources", "Marketing"),
    "cmn_cost_center": ("IT Operations", "Corporate"),
    "cmdb_ci_service": ("Email", "Payroll", "Customer Portal"),
    "sc_catalog": ("Service Catalog",),
    "cmdb_model": ("PowerEdge R740", "ProLiant DL380"),
    "cmn_schedule": ("8-5 weekdays",),
    "sys_user_group_type": ("itil", "catalog"),
    "alm_asset": ("P1000170", "P1000171", "P1000172", "P1000173", "P1000174"),
    "db_image": ("avatar",),
    "sys_perspective": ("Self-Service",),
    "contract_sla": tuple(name for name, _ in SLA_DEFINITIONS.values()),
}
EXTERNAL: Final[Mapping[str, Mapping[str, str]]] = {
    "sys_user_group": {"global": "global"},
    **{
        target: {external_id(target, name): name for name in names}
        for target, names in _EXTERNAL_NAMES.items()
    },
}
SLA_ID_BY_PRIORITY: Final[Mapping[str, str]] = {
    priority: external_id("contract_sla", name) for priority, (name, _) in SLA_DEFINITIONS.items()
}

# Fields clients cannot write: the platform silently ignores them in a request body.
SYSTEM_FIELDS: Final = frozenset(
    {
        "sys_id",
        "sys_created_by",
        "sys_created_on",
        "sys_updated_by",
        "sys_updated_on",
        "sys_mod_count",
        "sys_class_name",
        "number",
    }
)
JOURNAL_FIELDS: Final = ("comments", "work_notes")
CLASS_PATHS: Final[Mapping[str, str]] = {
    "cmdb_ci": "/!!",
    "cmdb_ci_server": "/!!/!2/!(",
    "cmdb_ci_appl": "/!!/!#",
}


class Refused(MockError):
    """A call the instance answers with a ServiceNow error body instead of a result."""

    kind = "refused"

    def __init__(self, status: int, message: str, detail: str | None) -> None:
        self.status = status
        self.detail = detail
        super().__init__(message, status=status, detail=detail)


def not_found() -> Refused:
    return Refused(
        404, "No Record found", "Record doesn't exist or ACL restricts the record retrieval"
    )


def acl_refusal() -> Refused:
    return Refused(
        403, "Operation Failed", "ACL Exception Update Failed due to security constraints"
    )


def data_policy(labels: Iterable[str]) -> Refused:
    listed = ", ".join(labels)
    return Refused(
        403,
        "Operation Failed",
        f"Data Policy Exception: \n\tThe following fields are mandatory: {listed}",
    )


@dataclass(slots=True)
class Request:
    method: str
    path: str
    params: Pairs = field(default_factory=list)
    body: Body = field(default_factory=Body)
    content_type: str | None = None
    user: str | None = None  # sys_user.user_name of the authenticated caller; None: no credential


def error_reply(refusal: Refused) -> Reply:
    body = {"error": {"message": refusal.message, "detail": refusal.detail}, "status": "failure"}
    headers: Pairs = []
    if refusal.status == 401:
        headers.append(("WWW-Authenticate", 'Basic realm="Service-now"'))
    return json_reply(refusal.status, body, headers)


_TABLE_PATH: Final = re.compile(r"^/api/now/(?:v[12]/)?table/([^/]+)(?:/([^/]+))?$")
_ATTACHMENT_PATH: Final = re.compile(r"^/api/now/(?:v1/)?attachment(?:/([^/]+))?(?:/(file))?$")
_BATCH_PATH: Final = re.compile(r"^/api/now/(?:v1/)?batch$")


class Instance:
    """One ServiceNow instance: tables of rows, counters, a clock and the business rules."""

    def __init__(self, host: str, start: datetime) -> None:
        self.host = host
        self.now = start
        self.rows: dict[str, dict[str, Row]] = {name: {} for name in TABLES}
        self.files: dict[str, bytes] = {}
        self.oauth_clients: dict[str, str] = {}
        self.passwords: dict[str, str] = {}
        self._counters: dict[str, int] = {}
        self._ids = 0
        self._tokens: dict[str, str] = {}
        self._insert_system_user(ADMIN, "System", "Administrator")
        self._insert_dictionary()

    # -- the clock and ids ------------------------------------------------------------------

    def stamp(self, moment: datetime | None = None) -> str:
        return (moment or self.now).strftime(STAMP)

    def advance(self, delta: timedelta) -> None:
        self.now += delta

    def new_id(self) -> str:
        self._ids += 1
        return hashlib.md5(f"myna-itsm/{self._ids}".encode()).hexdigest()

    def _next_number(self, name: str) -> str:
        spec = table(name)
        assert spec.number_prefix is not None
        current = self._counters.get(name, spec.number_start - 1) + 1
        self._counters[name] = current
        return f"{spec.number_prefix}{current:07d}"

    # -- lookups --------------------------------------------------------------------------------

    def user_id(self, user_name: str) -> str:
        for sys_id, row in self.rows["sys_user"].items():
            if row["user_name"] == user_name:
                return sys_id
        raise MockError(f"no user {user_name!r} on the instance", table="sys_user")

    def _log_in(self, user_name: str) -> None:
        """Each Basic-auth call opens a session, which stamps the user's last login."""
        row = self.rows["sys_user"][self.user_id(user_name)]
        row.update(last_login=self.now.strftime("%Y-%m-%d"), last_login_time=self.stamp())

    def _active_user(self, user_name: str) -> bool:
        return any(
            row["user_name"] == user_name and row["active"] == "true"
            for row in self.rows["sys_user"].values()
        )

    def find(self, target: str, sys_id: str) -> tuple[str, Row] | None:
        """The table and row behind a reference; `task` and `cmdb_ci` span their child classes."""
        if target == "task":
            candidates: Iterable[str] = sorted(TASK_TABLES)
        elif target == "cmdb_ci":
            candidates = sorted(CI_TABLES)
        else:
            candidates = (target,) if target in self.rows else ()
        for name in candidates:
            row = self.rows[name].get(sys_id)
            if row is not None:
                return name, row
        return None

    def display(self, target: str, sys_id: str) -> str:
        if not sys_id:
            return ""
        found = self.find(target, sys_id)
        if found is None:
            return EXTERNAL.get(target, {}).get(sys_id, sys_id)
        name, row = found
        return row.get(table(name).display_field, sys_id)

    def members(self, group_id: str) -> set[str]:
        return {
            row["user"]
            for row in self.rows["sys_user_grmember"].values()
            if row["group"] == group_id
        }

    def _rows_of(self, name: str) -> list[tuple[str, Row]]:
        if name == "cmdb_ci":
            return [
                (n, r)
                for n in ("cmdb_ci", "cmdb_ci_server", "cmdb_ci_appl")
                for r in self.rows[n].values()
            ]
        return [(name, row) for row in self.rows[name].values()]

    # -- dispatch -------------------------------------------------------------------------------

    def handle(self, request: Request) -> Reply:
        """Answer one call, turning a refusal into ServiceNow's error body."""
        try:
            if request.path == "/oauth_token.do" and request.method == "POST":
                return self._token(request)
            if request.user is None or not self._active_user(request.user):
                raise Refused(401, "User Not Authenticated", "Required to provide Auth information")
            self._log_in(request.user)
            return self._route(request)
        except Refused as refusal:
            return error_reply(refusal)

    def _route(self, request: Request) -> Reply:
        if match := _TABLE_PATH.match(request.path):
            name, sys_id = match.groups()
            return self._table_call(request, name, sys_id)
        if match := _ATTACHMENT_PATH.match(request.path):
            return self._attachment_call(request, *match.groups())
        if _BATCH_PATH.match(request.path) and request.method == "POST":
            return self._batch(request)
        raise Refused(400, "Requested URI does not represent any resource", None)

    def _table_call(self, request: Request, name: str, sys_id: str | None) -> Reply:
        if name not in TABLES or name == "sys_attachment":
            raise Refused(400, f"Invalid table {name}", None)
        params = dict(request.params)
        assert request.user is not None
        if name == "task_sla" and request.method == "GET":
            refresh_slas(self)
        if sys_id is None and request.method == "GET":
            return self._list(request, name, params)
        if sys_id is None and request.method == "POST":
            row = self.insert(name, self._body_values(request, name), request.user)
            return json_reply(201, {"result": self.render(name, row, params)})
        if sys_id is None:
            raise Refused(405, "Method not Supported", f"{request.method} is not supported")
        found = self.find(name, sys_id)
        if found is None:
            raise not_found()
        row_table, row = found
        if request.method == "GET":
            return json_reply(200, {"result": self.render(name, row, params)})
        if request.method in ("PATCH", "PUT"):
            updated = self.update(
                row_table, sys_id, self._body_values(request, row_table), request.user
            )
            return json_reply(200, {"result": self.render(name, updated, params)})
        if request.method == "DELETE":
            self.delete(row_table, sys_id)
            return Reply(204, Body())
        raise Refused(405, "Method not Supported", f"{request.method} is not supported")

    def _body_values(self, request: Request, name: str) -> dict[str, str]:
        if request.body.kind != "json" or not isinstance(request.body.value, dict):
            raise Refused(400, "Exception while reading request", "The payload is not valid JSON.")
        columns = set(table(name).names)
        return {
            key: _as_text(value)
            for key, value in request.body.value.items()
            if key in columns and key not in SYSTEM_FIELDS
        }

    # -- list and render --------------------------------------------------------------------

    def _list(self, request: Request, name: str, params: dict[str, str]) -> Reply:
        matches, order = compile_query(params.get("sysparm_query", ""), name, self)
        # Besides sysparm_query the Table API takes plain `field=value` pairs as equality filters.
        columns = set(table(name).names)
        equal = {k: v for k, v in params.items() if k in columns}
        rows = [
            row
            for row_table, row in self._rows_of(name)
            if matches(row_table, row) and all(row.get(k) == v for k, v in equal.items())
        ]
        for key, descending in reversed(order):
            rows.sort(key=partial(_sort_key, name, key), reverse=descending)
        total = len(rows)
        limit = int(params.get("sysparm_limit") or DEFAULT_LIMIT)
        offset = int(params.get("sysparm_offset") or 0)
        page = rows[offset : offset + limit]
        headers: Pairs = [("X-Total-Count", str(total))]
        link = page_links(f"{self.host}{request.path}", request.params, limit, offset, total)
        if link is not None and params.get("sysparm_suppress_pagination_header") != "true":
            headers.append(("Link", link))
        return json_reply(
            200, {"result": [self.render(name, row, params) for row in page]}, headers
        )

    def render(self, name: str, row: Row, params: Mapping[str, str]) -> dict[str, Any]:
        """A row as the Table API sends it, honouring sysparm_fields and the display modes."""
        mode = params.get("sysparm_display_value", "false").lower()
        bare = params.get("sysparm_exclude_reference_link", "false").lower() == "true"
        wanted = [f.strip() for f in params.get("sysparm_fields", "").split(",") if f.strip()]
        spec = table(name)
        out: dict[str, Any] = {}
        for field_name in wanted or spec.names:
            if "." in field_name:
                value, shown = self.walk(name, row, field_name)
                out[field_name] = pick(mode, value, shown)
            elif field_name in spec.names:
                out[field_name] = self._render_column(spec.column(field_name), row, mode, bare)
        return out

    def _render_column(self, column: Column, row: Row, mode: str, bare: bool) -> Any:
        value = row.get(column.name, "")
        if column.kind == "reference":
            assert column.target is not None
            if not value and mode != "all":
                return ""
            shown = self.display(column.target, value)
            link = f"{self.host}/api/now/table/{column.target}/{value}"
            if mode == "all":
                rendered = {"display_value": shown, "link": link, "value": value}
                if bare or not value:
                    del rendered["link"]
                return rendered
            key, text = ("display_value", shown) if mode == "true" else ("value", value)
            return text if bare else {"link": link, key: text}
        shown = self._display_column(column, row, value)
        if mode == "all":
            rendered = {"display_value": shown, "value": value}
            if column.kind == "datetime" and value:
                rendered["display_value_internal"] = value
            return rendered
        return shown if mode == "true" else value

    def _display_column(self, column: Column, row: Row, value: str) -> str:
        if column.kind == "choice" and column.choices is not None:
            return CHOICES[column.choices].get(value, value)
        if column.kind == "list" and column.target is not None:
            return ", ".join(self.display(column.target, item) for item in value.split(",") if item)
        if column.kind == "journal":
            return self.journal_text(row["sys_id"], column.name)
        return value

    def walk(self, name: str, row: Row, path: str) -> tuple[str, str]:
        """Follow a dot-walked path (`caller_id.user_name`) to its value and display value."""
        head, _, rest = path.partition(".")
        column = table(name).column(head)
        if column.kind != "reference" or column.target is None:
            raise Refused(400, f"Invalid dot-walk {path}", f"{head} is not a reference field")
        found = self.find(column.target, row.get(head, ""))
        if found is None:
            return "", ""
        target_table, target_row = found
        if "." in rest:
            return self.walk(target_table, target_row, rest)
        target_column = table(target_table).column(rest)
        value = target_row.get(rest, "")
        if target_column.kind == "reference" and target_column.target is not None:
            return value, self.display(target_column.target, value)
        return value, self._display_column(target_column, target_row, value)

    def journal_text(self, sys_id: str, element: str) -> str:
        elements = JOURNAL_FIELDS if element == "comments_and_work_notes" else (element,)
        entries = [
            row
            for row in self.rows["sys_journal_field"].values()
            if row["element_id"] == sys_id and row["element"] in elements
        ]
        entries.sort(key=lambda row: row["sys_created_on"], reverse=True)
        return "".join(
            journal_entry(row, self._full_name(row["sys_created_by"])) for row in entries
        )

    def _full_name(self, user_name: str) -> str:
        return self.rows["sys_user"][self.user_id(user_name)]["name"]

    # -- writes ---------------------------------------------------------------------------------

    def insert(self, name: str, values: Mapping[str, str], user: str) -> Row:
        """Insert a record as the platform does: defaults, numbering, rules, side effects."""
        spec = table(name)
        stamp = self.stamp()
        row: Row = dict.fromkeys(spec.names, "")
        journal = _journal_entries(name, values)
        row.update({k: v for k, v in values.items() if k not in spec.journal})
        row.update(
            sys_id=self.new_id(),
            sys_created_by=user,
            sys_created_on=stamp,
            sys_updated_by=user,
            sys_updated_on=stamp,
        )
        if "sys_mod_count" in row:
            row["sys_mod_count"] = "0"
        if spec.number_prefix is not None:
            row["number"] = self._next_number(name)
        if "sys_domain" in row:
            row.update(DOMAIN)
        if "sys_class_name" in row:
            row["sys_class_name"] = name
        self._fill(name, row, user)
        rule = INSERT_RULES.get(name)
        if rule is not None:
            rule(self, row, user)
        if name in PARENT_FIELD:
            row["parent"] = row[PARENT_FIELD[name]]
        model = STATE_MODELS.get(name)
        if model is not None:
            row.update(entered(model, None, row, values, self.stamper(name, user)))
            _refuse(judge_start(model, row[model.field]))
        self.rows[name][row["sys_id"]] = row
        for element, text in journal.items():
            self._journal(name, row["sys_id"], element, text, user)
        after = AFTER_INSERT.get(name)
        if after is not None:
            after(self, row, user)
        return row

    def update(self, name: str, sys_id: str, values: Mapping[str, str], user: str) -> Row:
        """Update a record: rules may refuse (nothing changes) or derive more changes."""
        old = self.rows[name][sys_id]
        journal = _journal_entries(name, values)
        new = dict(old)
        new.update({k: v for k, v in values.items() if k not in table(name).journal})
        model = STATE_MODELS.get(name)
        if model is not None:
            _refuse(read_only(model, old[model.field]))
        rule = UPDATE_RULES.get(name)
        if rule is not None:
            rule(self, old, new, user)
        if model is not None:
            new.update(entered(model, old[model.field], new, values, self.stamper(name, user)))
            _refuse(judge_move(model, old[model.field], new[model.field]))
        changed = [key for key in new if new[key] != old[key]]
        if not changed and not journal:
            return old
        stamp = self.stamp()
        new.update(sys_updated_by=user, sys_updated_on=stamp)
        if "sys_mod_count" in new:
            new["sys_mod_count"] = str(int(old["sys_mod_count"] or 0) + 1)
        self.rows[name][sys_id] = new
        checkpoint = new.get("sys_mod_count", "0")
        for key in changed:
            self._audit(name, sys_id, key, old[key], new[key], user, checkpoint)
        for element, text in journal.items():
            self._audit(name, sys_id, element, "", text, user, checkpoint)
            self._journal(name, sys_id, element, text, user)
        after = AFTER_UPDATE.get(name)
        if after is not None:
            after(self, old, new, user)
        return self.rows[name][sys_id]

    def _fill(self, name: str, row: Row, user: str) -> None:
        """What an insert fills in (`rules.insert_defaults`, `INSERT_VALUES`, `caller_fields`):
        the table's defaults for what the client left empty, its fixed values, the caller."""
        task = name in TASK_TABLES
        _fill_empty(row, insert_defaults(name, task))
        row.update((key, value) for key, value in INSERT_VALUES.get(name, {}).items() if key in row)
        caller = self.user_id(user)
        _fill_empty(row, dict.fromkeys(caller_fields(name, task), caller))

    def stamper(self, name: str, user: str) -> Stamper:
        """Who and when, for what entering a state of `name` stamps (`rules.entered`)."""

        def kind(column: str) -> tuple[str, str | None] | None:
            spec = table(name)
            if column not in spec.names:
                return None
            found = spec.column(column)
            return found.kind, found.target

        return Stamper(self.stamp(), self.user_id(user), kind)

    def delete(self, name: str, sys_id: str) -> None:
        del self.rows[name][sys_id]
        for sla_id in [k for k, row in self.rows["task_sla"].items() if row["task"] == sys_id]:
            del self.rows["task_sla"][sla_id]

    def system_insert(self, name: str, values: Mapping[str, str], user: str) -> Row:
        """A record the platform writes itself (audit, journal, SLA): no rules, no numbering."""
        spec = table(name)
        row: Row = dict.fromkeys(spec.names, "")
        row.update(values)
        row.update(sys_id=self.new_id(), sys_created_by=user, sys_created_on=self.stamp())
        if "sys_updated_on" in row:
            row.update(sys_updated_by=user, sys_updated_on=self.stamp(), sys_mod_count="0")
        if "sys_domain" in row:
            row.update(DOMAIN)
        self.rows[name][row["sys_id"]] = row
        return row

    def system_update(
        self, name: str, sys_id: str, values: Mapping[str, str], user: str, *, audit: bool = False
    ) -> None:
        """A change the platform makes itself; `audit` for tables whose history is kept."""
        row = self.rows[name][sys_id]
        changed = {k: v for k, v in values.items() if row[k] != v}
        if not changed:
            return
        before = dict(row)
        row.update(changed)
        row.update(sys_updated_by=user, sys_updated_on=self.stamp())
        row["sys_mod_count"] = str(int(row["sys_mod_count"] or 0) + 1)
        if audit:
            for key in changed:
                self._audit(name, sys_id, key, before[key], row[key], user, row["sys_mod_count"])

    def _audit(
        self,
        name: str,
        sys_id: str,
        field_name: str,
        old: str,
        new: str,
        user: str,
        checkpoint: str,
    ) -> None:
        if field_name in ("sys_updated_on", "sys_updated_by", "sys_mod_count"):
            return
        values = audit_values(name, sys_id, field_name, (old, new), user, checkpoint)
        self.system_insert("sys_audit", values, user)

    def _journal(self, name: str, sys_id: str, element: str, text: str, user: str) -> None:
        self.system_insert(
            "sys_journal_field",
            {"element": element, "element_id": sys_id, "name": name, "value": text},
            user,
        )

    def _insert_system_user(self, user_name: str, first: str, last: str) -> None:
        row = self.system_insert(
            "sys_user",
            {"user_name": user_name, "first_name": first, "last_name": last},
            "system",
        )
        _fill_empty(row, insert_defaults("sys_user", task=False))
        _user_name(self, row, "system")

    def _insert_dictionary(self) -> None:
        """sys_db_object: one row per table, each pointing at its parent class."""
        ids: dict[str, str] = {}
        for name, parent in SUPER_CLASSES.items():
            label = TABLES[name].label if name in TABLES else name.replace("_", " ").title()
            row = self.system_insert(
                "sys_db_object",
                {
                    "name": name,
                    "label": label,
                    "super_class": ids[parent] if parent else "",
                    "is_extendable": "true" if name in ("task", "cmdb", "cmdb_ci") else "false",
                    "access": "public",
                    "sys_class_name": "sys_db_object",
                },
                "system",
            )
            ids[name] = row["sys_id"]

    # -- attachments, batch, OAuth --------------------------------------------------------------

    def _attachment_call(
        self, request: Request, sys_id: str | None, file_part: str | None
    ) -> Reply:
        params = dict(request.params)
        assert request.user is not None
        if sys_id == "file" and request.method == "POST":
            return self._upload(request, params, request.user)
        if sys_id is None and request.method == "GET":
            return self._list(request, "sys_attachment", params)
        if sys_id is None:
            raise Refused(405, "Method not Supported", f"{request.method} is not supported")
        row = self.rows["sys_attachment"].get(sys_id)
        if row is None:
            raise Refused(404, "Record doesn't exist", f"Attachment record not found: {sys_id}")
        if request.method == "GET" and file_part:
            data = self.files[sys_id]
            return Reply(
                200, _bytes_body(data, row["content_type"]), [("Content-Type", row["content_type"])]
            )
        if request.method == "GET":
            return json_reply(200, {"result": self.render("sys_attachment", row, {})})
        if request.method == "DELETE":
            del self.rows["sys_attachment"][sys_id]
            del self.files[sys_id]
            return Reply(204, Body())
        raise Refused(405, "Method not Supported", f"{request.method} is not supported")

    def _upload(self, request: Request, params: Mapping[str, str], user: str) -> Reply:
        target, target_id = params.get("table_name", ""), params.get("table_sys_id", "")
        if target not in TABLES or target_id not in self.rows[target]:
            raise Refused(
                400, "Invalid table or sys_id", f"No record {target_id} in table {target}"
            )
        data = _body_bytes(request.body)
        content_type = request.content_type or "application/octet-stream"
        row = self.system_insert(
            "sys_attachment",
            attachment_values(params.get("file_name", ""), target, target_id, data, content_type),
            user,
        )
        row["download_link"] = f"{self.host}/api/now/attachment/{row['sys_id']}/file"
        self.files[row["sys_id"]] = data
        location = f"{self.host}/api/now/attachment/{row['sys_id']}"
        return json_reply(
            201, {"result": self.render("sys_attachment", row, {})}, [("Location", location)]
        )

    def _batch(self, request: Request) -> Reply:
        if request.body.kind != "json" or not isinstance(request.body.value, dict):
            raise Refused(400, "Exception while reading request", "The payload is not valid JSON.")
        batch = request.body.value
        serviced = []
        for item in batch.get("rest_requests", []):
            url = urlsplit(item["url"])
            headers = {h["name"].lower(): h["value"] for h in item.get("headers", [])}
            raw = base64.b64decode(item["body"]) if item.get("body") else b""
            inner = Request(
                item["method"],
                url.path,
                parse_qsl(url.query, keep_blank_values=True),
                Body("json", json.loads(raw), "application/json") if raw else Body(),
                headers.get("content-type"),
                request.user,
            )
            try:
                reply = self._route(inner)
            except Refused as refusal:
                reply = error_reply(refusal)
            payload = (
                json.dumps(reply.body.value, separators=(",", ":")).encode()
                if reply.body.kind == "json"
                else b""
            )
            serviced.append(
                {
                    "id": item["id"],
                    "body": base64.b64encode(payload).decode(),
                    "status_code": reply.status,
                    "status_text": HTTPStatus(reply.status).phrase,
                    "headers": [{"name": k, "value": v} for k, v in reply.headers],
                    "execution_time": 3,
                }
            )
        return json_reply(
            200,
            {
                "batch_request_id": str(batch.get("batch_request_id", "")),
                "serviced_requests": serviced,
                "unserviced_requests": [],
            },
        )

    def _token(self, request: Request) -> Reply:
        form = dict(parse_qsl(str(request.body.value or ""), keep_blank_values=True))
        grant = form.get("grant_type", "")
        client_ok = self.oauth_clients.get(form.get("client_id", "")) == form.get("client_secret")
        if grant == "password":
            user = form.get("username", "")
            valid = client_ok and self.passwords.get(user) == form.get("password")
        elif grant == "refresh_token":
            user = self._tokens.get(form.get("refresh_token", ""), "")
            valid = client_ok and bool(user)
        elif grant == "client_credentials":
            user, valid = ADMIN, client_ok
        else:
            user, valid = "", False
        if not valid:
            return json_reply(401, {"error_description": "access_denied", "error": "server_error"})
        access = self.new_id()
        self._tokens[access] = user
        body: dict[str, Any] = {"access_token": access}
        if grant != "client_credentials":
            refresh = self.new_id()
            self._tokens[refresh] = user
            body["refresh_token"] = refresh
        body.update(scope="useraccount", token_type="Bearer", expires_in=1799)
        return json_reply(200, body)

    def bearer_user(self, token: str) -> str | None:
        return self._tokens.get(token)


def page_links(url: str, params: Pairs, limit: int, offset: int, total: int) -> str | None:
    """The Link header of a list page, as the recordings show it; None when one page holds all.

    Entries repeat the request's parameters with sysparm_limit and sysparm_offset last, in the
    order first, prev, next, last. A prev entry appears when offset - limit >= -1: the real
    instance answered limit=1, offset=0 with a prev at offset -1, and limit=500, offset=0 with
    none.
    """
    if offset == 0 and total <= limit:
        return None
    kept = [(k, v) for k, v in params if k not in ("sysparm_limit", "sysparm_offset")]

    def link(at: int, rel: str) -> str:
        query = urlencode([*kept, ("sysparm_limit", str(limit)), ("sysparm_offset", str(at))])
        return f'<{url}?{query}>;rel="{rel}"'

    links = [link(0, "first")]
    if offset - limit >= -1:
        links.append(link(offset - limit, "prev"))
    if offset + limit < total:
        links.append(link(offset + limit, "next"))
    links.append(link(max(total - 1, 0) // limit * limit, "last"))
    return ",".join(links)


def attachment_values(
    file_name: str, table_name: str, table_sys_id: str, data: bytes, content_type: str
) -> Row:
    """The sys_attachment fields the platform fills in for an uploaded file."""
    return {
        "file_name": file_name,
        "table_name": table_name,
        "table_sys_id": table_sys_id,
        "content_type": content_type,
        "size_bytes": str(len(data)),
        "size_compressed": str(len(zlib.compress(data))),
        "compressed": "true",
        "chunk_size_bytes": "700000",
        "state": "available",
        **_image_size(data, content_type),
    }


def audit_values(
    name: str, sys_id: str, field_name: str, change: tuple[str, str], user: str, checkpoint: str
) -> Row:
    """The sys_audit row of one field's `change` (old, new) to a record of table `name`."""
    digest = hashlib.md5(f"{sys_id}/{checkpoint}".encode()).hexdigest()[:16]
    return {
        "tablename": name,
        "documentkey": sys_id,
        "fieldname": field_name,
        "oldvalue": change[0],
        "newvalue": change[1],
        "user": user,
        "reason": "",
        "record_checkpoint": checkpoint,
        "internal_checkpoint": digest,
    }


def journal_entry(entry: Mapping[str, str], who: str) -> str:
    """One sys_journal_field entry as a journal field's display value shows it, by `who`."""
    label = CHOICES["journal_element"].get(entry["element"], entry["element"])
    return f"{entry['sys_created_on']} - {who} ({label})\n{entry['value']}\n\n"


def _journal_entries(name: str, values: Mapping[str, str]) -> dict[str, str]:
    """The journal entries a write makes: its non-empty comments and work notes, on a table
    whose columns they are journals of."""
    journal = table(name).journal
    return {key: values[key] for key in JOURNAL_FIELDS if key in journal and values.get(key)}


def _as_text(value: Any) -> str:
    """Values as the platform stores them: strings, 'true'/'false', '' for null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict):
        return _as_text(value.get("value"))
    return str(value)


def pick(mode: str, value: str, shown: str) -> Any:
    """A field as `sysparm_display_value` `mode` shows it: its value, display value or both."""
    if mode == "all":
        return {"display_value": shown, "value": value}
    return shown if mode == "true" else value


def _sort_key(name: str, key: str, row: Row) -> tuple[int, float, str]:
    value = row.get(key, "")
    column = table(name).column(key) if key in table(name).names else None
    if column is not None and column.kind in ("integer", "decimal", "choice"):
        try:
            return (0, float(value), "")
        except ValueError:
            pass
    return (1, 0.0, value.lower())


def _image_size(data: bytes, content_type: str) -> dict[str, str]:
    """Width and height of a PNG (its IHDR chunk), as the attachment record carries them."""
    if content_type != "image/png" or data[12:16] != b"IHDR":
        return {}
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return {"image_width": str(width), "image_height": str(height)}


def _body_bytes(body: Body) -> bytes:
    if body.kind == "base64":
        return base64.b64decode(str(body.value))
    if body.kind == "json":
        return json.dumps(body.value).encode()
    return str(body.value or "").encode()


def _bytes_body(data: bytes, content_type: str) -> Body:
    try:
        return Body("text", data.decode("utf-8"), content_type)
    except UnicodeDecodeError:
        return Body("base64", base64.b64encode(data).decode(), content_type)


# -- encoded queries (the subset the corpus uses, evaluated independently of the mock's parser) --

_OPERATORS: Final = (
    "ISNOTEMPTY",
    "ISEMPTY",
    "NOT LIKE",
    "NOT IN",
    "STARTSWITH",
    "ENDSWITH",
    "BETWEEN",
    "LIKE",
    "IN",
    "!=",
    "<=",
    ">=",
    "=",
    "<",
    ">",
)
_FIELD: Final = re.compile(r"[a-z0-9_.]+")

Predicate = Callable[[str, Row], bool]


def compile_query(
    query: str, name: str, instance: Instance
) -> tuple[Predicate, list[tuple[str, bool]]]:
    """An encoded query as a row predicate and its ORDERBY keys; unknown syntax is refused."""
    order: list[tuple[str, bool]] = []
    groups: list[list[list[Predicate]]] = []
    for group_text in query.split("^NQ") if query else []:
        ands: list[list[Predicate]] = []
        for term in group_text.split("^"):
            if not term:
                continue
            if term.startswith("ORDERBYDESC"):
                order.append((term[len("ORDERBYDESC") :], True))
            elif term.startswith("ORDERBY"):
                order.append((term[len("ORDERBY") :], False))
            elif term.startswith("OR") and ands:
                ands[-1].append(_condition(term[2:], instance))
            else:
                ands.append([_condition(term, instance)])
        groups.append(ands)
    groups = [group for group in groups if group]

    def matches(row_table: str, row: Row) -> bool:
        if not groups:
            return True
        return any(all(any(p(row_table, row) for p in ors) for ors in group) for group in groups)

    return matches, order


def _condition(term: str, instance: Instance) -> Predicate:
    match = _FIELD.match(term)
    if match is None:
        raise Refused(400, f"Invalid query term {term!r}", "expected a field name")
    field_path, rest = match.group(), term[match.end() :]
    for operator in _OPERATORS:
        if rest.startswith(operator):
            return _predicate(field_path, operator, rest[len(operator) :], instance)
    raise Refused(400, f"Invalid query term {term!r}", "unknown operator")


def _predicate(field_path: str, operator: str, wanted: str, instance: Instance) -> Predicate:
    def value_of(row_table: str, row: Row) -> str:
        if "." not in field_path:
            return row.get(field_path, "")
        return instance.walk(row_table, row, field_path)[0]

    def test(row_table: str, row: Row) -> bool:
        value = value_of(row_table, row)
        return _compare(operator, value, wanted)

    return test


def _compare(operator: str, value: str, wanted: str) -> bool:
    # String comparisons are case-insensitive, as on ServiceNow's MySQL-backed instances.
    low, target = value.lower(), wanted.lower()
    if operator == "ISEMPTY":
        return value == ""
    if operator == "ISNOTEMPTY":
        return value != ""
    if operator == "=":
        return low == target
    if operator == "!=":
        return low != target
    if operator == "LIKE":
        return target in low
    if operator == "NOT LIKE":
        return target not in low
    if operator == "STARTSWITH":
        return low.startswith(target)
    if operator == "ENDSWITH":
        return low.endswith(target)
    if operator == "IN":
        return low in target.split(",")
    if operator == "NOT IN":
        return low not in target.split(",")
    if operator == "BETWEEN":
        start, _, end = wanted.partition("@")
        return _ordered(start, value) and _ordered(value, end)
    ordered = {
        "<": (value, wanted, False),
        "<=": (value, wanted, True),
        ">": (wanted, value, False),
        ">=": (wanted, value, True),
    }
    left, right, inclusive = ordered[operator]
    return _ordered(left, right) and (inclusive or left != right)


def _ordered(left: str, right: str) -> bool:
    try:
        return float(left) <= float(right)
    except ValueError:
        return left <= right


# -- business rules -------------------------------------------------------------------------

RowRule = Callable[[Instance, Row, str], None]
ChangeRule = Callable[[Instance, Row, Row, str], None]


def _refuse(verdict: Verdict | None) -> None:
    """Raise a state model's refusal (`rules.STATE_MODELS`: the overlay's, the mock's too)."""
    if verdict is not None:
        raise Refused(verdict.status, verdict.message, verdict.detail)


def _require(new: Row, name: str, fields: Iterable[str]) -> None:
    missing = [table(name).column(f).label for f in fields if not new.get(f)]
    if missing:
        raise data_policy(missing)


def _data_policy(new: Row, name: str) -> None:
    """Entering a state without the fields its data policy makes mandatory is refused: the
    pinned state model's `required_on_entry` (overlay.yaml), which the served mock enforces
    from the same statement."""
    model = STATE_MODELS[name]
    _require(new, name, model.required.get(new[model.field], ()))


def _check_assignment(instance: Instance, row: Row, old: Row | None = None) -> None:
    pair = (row.get("assignment_group", ""), row.get("assigned_to", ""))
    was = None if old is None else (old.get("assignment_group", ""), old.get("assigned_to", ""))
    if outside_group(was, pair, instance.members):
        person = instance.display("sys_user", pair[1])
        _refuse(not_a_member(person, instance.display("sys_user_group", pair[0])))


def _fill_empty(row: Row, values: Mapping[str, str]) -> None:
    """Give each of the row's columns in `values` its value there, if it is empty."""
    for key, value in values.items():
        if key in row and not row[key]:
            row[key] = value


def _task_defaults(instance: Instance, row: Row, user: str) -> None:
    row["opened_at"] = row["opened_at"] or instance.stamp()
    row["task_effective_number"] = row["number"]
    _check_assignment(instance, row)


def _incident_insert(instance: Instance, row: Row, user: str) -> None:
    _task_defaults(instance, row, user)
    row["priority"] = priority_of(None, row) or row["priority"]
    _incident_state_entry(instance, {}, row, user)


def _incident_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    new["priority"] = priority_of(old, new) or new["priority"]
    new["reassignment_count"] = reassignments(old, new) or new["reassignment_count"]
    _check_assignment(instance, new, old)
    if new["state"] != old["state"]:
        _incident_state_entry(instance, old, new, user)
        slas = (sla for sla in instance.rows["task_sla"].values() if sla["task"] == new["sys_id"])
        if sla_missed(new["state"], slas, instance.now.replace(tzinfo=None)):
            new["made_sla"] = "false"


def _incident_state_entry(instance: Instance, old: Row, new: Row, user: str) -> None:
    state, before = new["state"], old.get("state", "")
    _data_policy(new, "incident")
    if leaves_hold(before, state):
        new["hold_reason"] = ""
    if state == "6":
        new.update(resolution_times(new["opened_at"], instance.now.replace(tzinfo=None)))
    reopening = reopened(before, state, old.get("reopen_count", ""))
    if reopening is not None:
        new.update(reopening, reopened_time=instance.stamp(), reopened_by=instance.user_id(user))


def _problem_insert(instance: Instance, row: Row, user: str) -> None:
    _task_defaults(instance, row, user)
    row["priority"] = priority_of(None, row) or row["priority"]


def _problem_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    new["priority"] = priority_of(old, new) or new["priority"]
    _check_assignment(instance, new, old)
    if new["state"] != old["state"]:
        _data_policy(new, "problem")


def _change_insert(instance: Instance, row: Row, user: str) -> None:
    _task_defaults(instance, row, user)
    _refuse(unapproved(row["number"], row["state"], row["approval"]))


def _change_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    _check_assignment(instance, new, old)
    new["state"] = decided_state((old["state"], old["approval"]), (new["state"], new["approval"]))
    if new["state"] == old["state"]:
        return
    _refuse(unapproved(new["number"], new["state"], new["approval"]))
    _data_policy(new, "change_request")


def _change_task_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "change_task", ["change_request"])
    _task_defaults(instance, row, user)


def _change_task_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    _check_assignment(instance, new, old)
    if new["state"] != old["state"]:
        _data_policy(new, "change_task")


def _request_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    new.update(on_approval("sc_request", old["approval"], new["approval"]))


def _item_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "sc_req_item", ["request"])
    _task_defaults(instance, row, user)


def _item_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    _check_assignment(instance, new, old)
    new.update(on_approval("sc_req_item", old["approval"], new["approval"]))


def _user_name(instance: Instance, row: Row, user: str) -> None:
    row["name"] = full_name(row["first_name"], row["last_name"])


def _member_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "sys_user_grmember", ["user", "group"])


def _ci_insert(instance: Instance, row: Row, user: str) -> None:
    row["sys_class_path"] = CLASS_PATHS[row["sys_class_name"]]


# -- SLA timers on incidents ------------------------------------------------------------------


def _duration(delta: timedelta) -> str:
    return (EPOCH + delta).strftime(STAMP)


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, STAMP).replace(tzinfo=None)


# The pure half of the SLA rules, shared with the served mock's `servicenow` extension: each
# takes a task_sla row (or the task) and the moment, and returns the values to write. `now` is
# naive UTC, as every stamp is.
RUNNING_STAGES: Final = ("in_progress", "paused")
ON_HOLD: Final = "3"
FINISHED_STATES: Final = ("6", "7")
CANCELED: Final = "8"


def resolution_times(opened_at: str, now: datetime) -> Row:
    """How long an incident resolved at `now` was open, as resolving records it (calendar and
    business duration and seconds to close); {} when `opened_at` is no stamp (a world replayed
    from a recording may hold anything there)."""
    try:
        open_for = now - _parse(opened_at)
    except ValueError:
        return {}
    seconds = str(int(open_for.total_seconds()))
    # Without a business schedule, business time is calendar time.
    return {
        "calendar_duration": _duration(open_for),
        "business_duration": _duration(open_for),
        "calendar_stc": seconds,
        "business_stc": seconds,
    }


def sla_start(task_id: str, priority: str, now: datetime) -> Row:
    """A task_sla starting at `now` on the contract SLA of the task's priority."""
    target = SLA_DEFINITIONS[priority][1]
    return {
        "task": task_id,
        "sla": SLA_ID_BY_PRIORITY[priority],
        "stage": "in_progress",
        "active": "true",
        "has_breached": "false",
        "start_time": now.strftime(STAMP),
        "planned_end_time": (now + target).strftime(STAMP),
        "original_breach_time": (now + target).strftime(STAMP),
        "pause_duration": _duration(timedelta()),
        "duration": _duration(timedelta()),
        "business_duration": _duration(timedelta()),
        "time_left": _duration(target),
        "business_time_left": _duration(target),
        "percentage": "0",
        "business_percentage": "0",
        "schedule": external_id("cmn_schedule", "8-5 weekdays"),
        "timezone": "UTC",
    }


def sla_progress(sla: Mapping[str, str], now: datetime) -> Row:
    """A running SLA's elapsed time, time left and breach flag at `now` (the timer job)."""
    start, planned = _parse(sla["start_time"]), _parse(sla["planned_end_time"])
    paused = _parse(sla["pause_duration"]) - EPOCH
    elapsed = now - start - paused
    target = planned - start - paused
    # Without a business schedule, business time is calendar time.
    return {
        "duration": _duration(elapsed),
        "business_duration": _duration(elapsed),
        "time_left": _duration(max(planned - now, timedelta())),
        "business_time_left": _duration(max(planned - now, timedelta())),
        "percentage": f"{elapsed / target * 100:.2f}",
        "business_percentage": f"{elapsed / target * 100:.2f}",
        "has_breached": "true" if now > planned else "false",
    }


def sla_transition(
    sla: Mapping[str, str], old: Mapping[str, str], new: Mapping[str, str], now: datetime
) -> Row | None:
    """What a change of the task does to one of its running SLAs: a new priority or canceling
    cancels it, entering On Hold pauses it, leaving On Hold resumes it with the held time added
    to its pause duration and its deadline; None: the change leaves it alone."""
    if new["priority"] != old["priority"] or new["state"] == CANCELED:
        return {"stage": "cancelled", "active": "false", "end_time": now.strftime(STAMP)}
    if new["state"] == ON_HOLD and old["state"] != ON_HOLD:
        return {"stage": "paused", "pause_time": now.strftime(STAMP)}
    if old["state"] == ON_HOLD and new["state"] != ON_HOLD:
        held = now - _parse(sla["pause_time"])
        total = _parse(sla["pause_duration"]) - EPOCH + held
        planned = _parse(sla["planned_end_time"]) + held
        return {
            "stage": "in_progress",
            "pause_time": "",
            "pause_duration": _duration(total),
            "planned_end_time": planned.strftime(STAMP),
        }
    return None


def sla_completion(sla: Mapping[str, str], new: Mapping[str, str], now: datetime) -> Row | None:
    """Resolving or closing the task completes a running SLA, breached if past its deadline."""
    if new["state"] not in FINISHED_STATES or sla["stage"] != "in_progress":
        return None
    return {
        "stage": "completed",
        "active": "false",
        "end_time": now.strftime(STAMP),
        "has_breached": "true" if now > _parse(sla["planned_end_time"]) else "false",
    }


def sla_missed(state: str, slas: Iterable[Mapping[str, str]], now: datetime) -> bool:
    """Whether a task entering `state` at `now` misses its SLA (made_sla false): it is resolved
    or closed while one of its SLAs still runs past its deadline."""
    return state in FINISHED_STATES and any(
        sla["stage"] in RUNNING_STAGES and now > _parse(sla["planned_end_time"]) for sla in slas
    )


def sla_due(slas: Iterable[Mapping[str, str]]) -> str | None:
    """The task's SLA due: the deadline of its most urgent SLA in progress; None: none runs."""
    running = [sla["planned_end_time"] for sla in slas if sla["stage"] == "in_progress"]
    return min(running) if running else None


def sla_restarts(old: Mapping[str, str], new: Mapping[str, str]) -> bool:
    """A new SLA starts when an active task's priority changes or a resolved one reopens."""
    reopened = old["state"] == "6" and new["state"] in ("1", "2")
    return (new["priority"] != old["priority"] and new["active"] == "true") or reopened


def _attach_sla(instance: Instance, incident: Row, user: str) -> None:
    now = instance.now.replace(tzinfo=None)
    instance.system_insert(
        "task_sla", sla_start(incident["sys_id"], incident["priority"], now), "system"
    )
    _sync_due(instance, incident["sys_id"])


def _sync_due(instance: Instance, task_id: str) -> None:
    """The task's SLA due and activity due follow its most urgent running SLA."""
    due = sla_due(sla for sla in instance.rows["task_sla"].values() if sla["task"] == task_id)
    if due is not None and task_id in instance.rows["incident"]:
        instance.rows["incident"][task_id].update(sla_due=due, activity_due=due)


def refresh_slas(instance: Instance) -> None:
    """The SLA timer job: bring every running SLA's elapsed time and breach flag up to now."""
    now = instance.now.replace(tzinfo=None)
    for sla_id, sla in instance.rows["task_sla"].items():
        if sla["stage"] == "in_progress":
            instance.system_update("task_sla", sla_id, sla_progress(sla, now), "system")


def _incident_slas(instance: Instance, old: Row, new: Row, user: str) -> None:
    running = [
        (sla_id, sla)
        for sla_id, sla in instance.rows["task_sla"].items()
        if sla["task"] == new["sys_id"] and sla["stage"] in RUNNING_STAGES
    ]
    now = instance.now.replace(tzinfo=None)
    refresh_slas(instance)
    for sla_id, sla in running:
        # `sla` is the live row: completion sees the stage a resume just wrote.
        change = sla_transition(sla, old, new, now)
        if change is not None:
            instance.system_update("task_sla", sla_id, change, "system")
        completion = sla_completion(sla, new, now)
        if completion is not None:
            instance.system_update("task_sla", sla_id, completion, "system")
    _sync_due(instance, new["sys_id"])
    if sla_restarts(old, new):
        _attach_sla(instance, new, user)


def _after_incident_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    _incident_slas(instance, old, new, user)
    for problem_id in relinked(old["problem_id"], new["problem_id"]):
        if problem_id in instance.rows["problem"]:
            linked = [
                row for row in instance.rows["incident"].values() if row["problem_id"] == problem_id
            ]
            count = {"related_incidents": str(len(linked))}
            instance.system_update("problem", problem_id, count, user, audit=True)


# -- knowledge bases, the catalog, approvals and roles ------------------------------------------


def _variable_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "item_option_new", ["question_text"])


def _approver_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "sysapproval_approver", ["approver"])
    found = instance.find("task", row["sysapproval"]) if row["sysapproval"] else None
    if found is not None:
        row.update(approval_source(found[0], row["sysapproval"]))


def _approvals_decide(instance: Instance, row: Row, user: str) -> None:
    """The record an approval is for takes the approval its approvers give it
    (`rules.approval_of`), through its own update rules: an approved change in Authorize is
    scheduled, a rejected one goes back to New."""
    target = row["sysapproval"]
    found = instance.find("task", target) if target else None
    if found is None:
        return
    states = [
        other["state"]
        for other in instance.rows["sysapproval_approver"].values()
        if other["sysapproval"] == target
    ]
    decided = approval_of(states)
    if decided is not None and decided != found[1]["approval"]:
        instance.update(found[0], target, {"approval": decided}, user)


def _approver_update(instance: Instance, old: Row, new: Row, user: str) -> None:
    if new["state"] != old["state"]:
        _approvals_decide(instance, new, user)


def _grant(instance: Instance, user_id: str, listed: str, group: str = "") -> None:
    def role_id(name: str) -> str | None:
        roles = instance.rows["sys_user_role"].items()
        return next((sys_id for sys_id, role in roles if role["name"] == name), None)

    for grant in role_grants(user_id, listed, role_id, group):
        instance.system_insert("sys_user_has_role", grant, "system")


def _user_roles(instance: Instance, row: Row, user: str) -> None:
    """A user created with roles has them."""
    _grant(instance, row["sys_id"], row["roles"])


def _member_roles(instance: Instance, row: Row, user: str) -> None:
    """A new member of a group inherits the group's roles."""
    group = instance.rows["sys_user_group"].get(row["group"])
    if group is not None:
        _grant(instance, row["user"], group["roles"], group["sys_id"])


def _has_role_insert(instance: Instance, row: Row, user: str) -> None:
    _require(row, "sys_user_has_role", ["user", "role"])


INSERT_RULES: Final[Mapping[str, RowRule]] = {
    "incident": _incident_insert,
    "problem": _problem_insert,
    "change_request": _change_insert,
    "change_task": _change_task_insert,
    "sc_request": _task_defaults,
    "sc_req_item": _item_insert,
    "sys_user": _user_name,
    "sys_user_grmember": _member_insert,
    "cmdb_ci": _ci_insert,
    "cmdb_ci_server": _ci_insert,
    "cmdb_ci_appl": _ci_insert,
    "item_option_new": _variable_insert,
    "sysapproval_approver": _approver_insert,
    "sys_user_has_role": _has_role_insert,
}
UPDATE_RULES: Final[Mapping[str, ChangeRule]] = {
    "incident": _incident_update,
    "problem": _problem_update,
    "change_request": _change_update,
    "change_task": _change_task_update,
    "sc_request": _request_update,
    "sc_req_item": _item_update,
}
AFTER_INSERT: Final[Mapping[str, RowRule]] = {
    "incident": _attach_sla,
    "sys_user": _user_roles,
    "sys_user_grmember": _member_roles,
    "sysapproval_approver": _approvals_decide,
}
AFTER_UPDATE: Final[Mapping[str, ChangeRule]] = {
    "incident": _after_incident_update,
    "sysapproval_approver": _approver_update,
}
