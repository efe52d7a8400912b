"""The ServiceNow tables the ITSM back end ships, as the platform's data dictionary describes them.

This catalogue is what the corpus author writes records from: column names and types, the choice
lists behind coded fields (with the labels `sysparm_display_value=true` shows), reference targets,
and number prefixes. Column lists follow the out-of-box dictionary of each table (task and its
children, the user and group tables, the CMDB classes the real recordings show), so that records in
the shipped corpus carry the same fields, with the same kinds of values, as a real instance's.

Columns are written one per line, `name kind [label]`, because a table has up to a hundred of them
and a dataclass literal per column would bury the facts in punctuation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from myna.errors import ModelError

Kind = Literal[
    "string",
    "integer",
    "decimal",
    "boolean",
    "datetime",
    "date",
    "duration",  # glide_duration: rendered as a date-time from the epoch, 1970-01-01 08:00:00
    "choice",
    "reference",
    "list",  # glide_list: comma-separated sys_ids
    "journal",  # comments / work_notes: write-only input, stored in sys_journal_field
    "sys_id",
]


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind
    label: str
    target: str | None = None  # referenced table, for reference and list columns
    choices: str | None = None  # name of the choice list in CHOICES


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    label: str
    columns: tuple[Column, ...]
    number_prefix: str | None = None
    number_start: int = 10001
    display_field: str = "number"

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise ModelError(f"table {self.name} has no column {name!r}", path=f"itsm.{self.name}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    @property
    def journal(self) -> frozenset[str]:
        """The journal columns (a task's comments and work notes): input that becomes a
        sys_journal_field entry, never a stored value. A CI's `comments` is a plain string."""
        return frozenset(column.name for column in self.columns if column.kind == "journal")


# Choice lists: value -> label, in the order ServiceNow lists them.
CHOICES: Final[Mapping[str, Mapping[str, str]]] = {
    "incident_state": {
        "1": "New",
        "2": "In Progress",
        "3": "On Hold",
        "6": "Resolved",
        "7": "Closed",
        "8": "Canceled",
    },
    "impact": {"1": "1 - High", "2": "2 - Medium", "3": "3 - Low"},
    "urgency": {"1": "1 - High", "2": "2 - Medium", "3": "3 - Low"},
    "priority": {
        "1": "1 - Critical",
        "2": "2 - High",
        "3": "3 - Moderate",
        "4": "4 - Low",
        "5": "5 - Planning",
    },
    "severity": {"1": "1 - High", "2": "2 - Medium", "3": "3 - Low"},
    "hold_reason": {
        "1": "Awaiting Caller",
        "3": "Awaiting Problem",
        "4": "Awaiting Vendor",
        "5": "Awaiting Change",
    },
    "incident_close_code": {
        "Duplicate": "Duplicate",
        "Known error": "Known error",
        "No resolution provided": "No resolution provided",
        "Resolved by caller": "Resolved by caller",
        "Resolved by change": "Resolved by change",
        "Resolved by problem": "Resolved by problem",
        "Solution provided": "Solution provided",
        "Workaround provided": "Workaround provided",
        "User error": "User error",
    },
    "incident_category": {
        "inquiry": "Inquiry / Help",
        "software": "Software",
        "hardware": "Hardware",
        "network": "Network",
        "database": "Database",
    },
    "contact_type": {
        "email": "Email",
        "phone": "Phone",
        "self-service": "Self-service",
        "virtual_agent": "Virtual Agent",
        "walk-in": "Walk-in",
    },
    "notify": {"1": "Do Not Notify", "2": "Send Email"},
    "approval": {
        "not requested": "Not Yet Requested",
        "requested": "Requested",
        "approved": "Approved",
        "rejected": "Rejected",
    },
    "upon_approval": {"proceed": "Proceed to Next Task", "do_nothing": "Wait for a User"},
    "upon_reject": {"cancel": "Cancel all future Tasks", "goto": "Go to a previous Task"},
    "problem_state": {
        "101": "New",
        "102": "Assess",
        "103": "Root Cause Analysis",
        "104": "Fix in Progress",
        "106": "Resolved",
        "107": "Closed",
    },
    "problem_resolution_code": {
        "fix_applied": "Fix Applied",
        "risk_accepted": "Risk Accepted",
        "canceled": "Canceled",
        "duplicate": "Duplicate",
    },
    "change_state": {
        "-5": "New",
        "-4": "Assess",
        "-3": "Authorize",
        "-2": "Scheduled",
        "-1": "Implement",
        "0": "Review",
        "3": "Closed",
        "4": "Canceled",
    },
    "change_type": {"standard": "Standard", "normal": "Normal", "emergency": "Emergency"},
    "change_risk": {"1": "Very High", "2": "High", "3": "Moderate", "4": "Low"},
    "change_close_code": {
        "successful": "Successful",
        "successful_issues": "Successful with issues",
        "unsuccessful": "Unsuccessful",
    },
    "change_task_state": {
        "-5": "Pending",
        "1": "Open",
        "2": "In Progress",
        "3": "Closed",
        "4": "Canceled",
    },
    "change_task_type": {
        "planning": "Planning",
        "implementation": "Implementation",
        "testing": "Testing",
        "review": "Review",
    },
    "task_state": {
        "-5": "Pending",
        "1": "Open",
        "2": "Work in Progress",
        "3": "Closed Complete",
        "4": "Closed Incomplete",
        "7": "Closed Skipped",
    },
    "request_state": {
        "requested": "Pending Approval",
        "in_process": "Approved",
        "closed_complete": "Closed Complete",
        "closed_incomplete": "Closed Incomplete",
        "closed_cancelled": "Closed Cancelled",
        "closed_rejected": "Closed Rejected",
    },
    "ritm_stage": {
        "waiting_for_approval": "Waiting for Approval",
        "request_approved": "Request Approved",
        "fulfillment": "Fulfillment",
        "delivery": "Delivery",
        "complete": "Completed",
    },
    "kb_workflow_state": {
        "draft": "Draft",
        "review": "Review",
        "published": "Published",
        "retired": "Retired",
    },
    "sla_stage": {
        "in_progress": "In progress",
        "paused": "Paused",
        "completed": "Completed",
        "cancelled": "Cancelled",
    },
    "journal_element": {"comments": "Additional comments", "work_notes": "Work notes"},
    "ci_operational_status": {
        "1": "Operational",
        "2": "Non-Operational",
        "3": "Repair in Progress",
        "5": "Retired",
    },
    "ci_install_status": {"1": "Installed", "3": "In Maintenance", "7": "Retired"},
    "approval_state": {
        "not requested": "Not Yet Requested",
        "requested": "Requested",
        "approved": "Approved",
        "rejected": "Rejected",
        "cancelled": "Cancelled",
        "not_required": "No Longer Required",
    },
    "question_type": {
        "1": "Yes / No",
        "2": "Multi Line Text",
        "3": "Multiple Choice",
        "5": "Select Box",
        "6": "Single Line Text",
        "7": "CheckBox",
        "8": "Reference",
        "9": "Date",
    },
}

# Labels ServiceNow prints in data-policy messages; other labels are the name made readable.
_LABELS: Final[Mapping[str, str]] = {
    "close_code": "Resolution code",
    "close_notes": "Resolution notes",
    "hold_reason": "On hold reason",
    "sys_id": "Sys ID",
    "cmdb_ci": "Configuration item",
    "caller_id": "Caller",
    "problem_id": "Problem",
    "rfc": "Change Request",
    "fix_notes": "Fix notes",
    "cause_notes": "Cause notes",
    "resolution_code": "Resolution code",
    "sysapproval": "Approval for",
    "question_text": "Question",
}

_SYSTEM = """
sys_id sys_id
sys_created_by string
sys_created_on datetime
sys_updated_by string
sys_updated_on datetime
sys_mod_count integer
sys_tags string
"""

_DOMAIN = """
sys_domain reference:sys_user_group
sys_domain_path string
"""

_TASK = (
    _SYSTEM
    + _DOMAIN
    + """
number string
short_description string
description string
state choice:task_state
active boolean
impact choice:impact
urgency choice:urgency
priority choice:priority
approval choice:approval
approval_history string
approval_set datetime
assigned_to reference:sys_user
assignment_group reference:sys_user_group
additional_assignee_list list:sys_user
group_list list:sys_user_group
watch_list list:sys_user
work_notes_list list:sys_user
business_duration duration
calendar_duration duration
business_service reference:cmdb_ci_service
service_offering reference:service_offering
cmdb_ci reference:cmdb_ci
company reference:core_company
location reference:cmn_location
contact_type choice:contact_type
contract reference:ast_contract
correlation_display string
correlation_id string
delivery_plan reference:sc_cat_item_delivery_plan
delivery_task reference:sc_cat_item_delivery_task
due_date datetime
escalation integer
expected_start datetime
follow_up datetime
knowledge boolean
made_sla boolean
opened_at datetime
opened_by reference:sys_user
closed_at datetime
closed_by reference:sys_user
close_notes string
order integer
parent reference:task
reassignment_count integer
route_reason integer
sla_due datetime
sys_class_name string
task_effective_number string
time_worked string
universal_request reference:task
upon_approval choice:upon_approval
upon_reject choice:upon_reject
user_input string
activity_due datetime
work_start datetime
work_end datetime
comments journal
work_notes journal
comments_and_work_notes journal
"""
)

_INCIDENT = """
caller_id reference:sys_user
category choice:incident_category
subcategory string
incident_state choice:incident_state
hold_reason choice:hold_reason
close_code choice:incident_close_code
severity choice:severity
notify choice:notify
problem_id reference:problem
rfc reference:change_request
caused_by reference:change_request
parent_incident reference:incident
child_incidents integer
reopen_count integer
reopened_by reference:sys_user
reopened_time datetime
resolved_at datetime
resolved_by reference:sys_user
business_impact string
business_stc integer
calendar_stc integer
cause string
origin_id string
origin_table string
"""

_PROBLEM = """
problem_state choice:problem_state
category string
subcategory string
known_error boolean
workaround string
cause_notes string
fix_notes string
resolution_code choice:problem_resolution_code
resolved_at datetime
resolved_by reference:sys_user
first_reported_by_task reference:task
related_incidents integer
rfc reference:change_request
reopen_count integer
"""

_CHANGE_REQUEST = """
type choice:change_type
category string
risk choice:change_risk
requested_by reference:sys_user
requested_by_date datetime
start_date datetime
end_date datetime
justification string
implementation_plan string
backout_plan string
test_plan string
change_plan string
risk_impact_analysis string
cab_required boolean
cab_date date
cab_delegate reference:sys_user
cab_recommendation string
close_code choice:change_close_code
on_hold boolean
on_hold_reason string
outside_maintenance_schedule boolean
production_system boolean
conflict_status string
conflict_last_run datetime
phase string
phase_state string
reason string
review_comments string
review_date date
review_status string
scope integer
std_change_producer_version reference:std_change_producer_version
on_hold_task list:change_task
rejection_goto reference:task
wf_activity reference:wf_activity
"""

_CHANGE_TASK = """
change_request reference:change_request
change_task_type choice:change_task_type
planned_start_date datetime
planned_end_date datetime
close_code choice:change_close_code
on_hold boolean
on_hold_reason string
created_from string
rejection_goto reference:task
wf_activity reference:wf_activity
"""

_SC_REQUEST = """
requested_for reference:sys_user
request_state choice:request_state
price decimal
special_instructions string
delivery_address string
calendar_stc integer
"""

_SC_REQ_ITEM = """
request reference:sc_request
cat_item reference:sc_cat_item
requested_for reference:sys_user
stage choice:ritm_stage
quantity integer
price decimal
recurring_price decimal
backordered boolean
estimated_delivery datetime
"""

_USER = (
    _SYSTEM
    + _DOMAIN
    + """
user_name string
first_name string
middle_name string
last_name string
name string
title string
email string
phone string
mobile_phone string
home_phone string
active boolean
locked_out boolean
vip boolean
web_service_access_only boolean
internal_integration_user boolean
password_needs_reset boolean
enable_multifactor_authn boolean
failed_attempts integer
notification integer
calendar_integration integer
last_login date
last_login_time datetime
manager reference:sys_user
company reference:core_company
department reference:cmn_department
cost_center reference:cmn_cost_center
location reference:cmn_location
default_perspective reference:sys_perspective
employee_number string
gender string
building string
street string
city string
state string
zip string
country string
time_zone string
time_format string
date_format string
preferred_language string
roles string
source string
ldap_server string
schedule string
introduction string
federated_id string
avatar string
photo string
user_password string
sys_class_name string
"""
)

_GROUP = (
    _SYSTEM
    + """
name string
description string
email string
active boolean
manager reference:sys_user
parent reference:sys_user_group
default_assignee reference:sys_user
exclude_manager boolean
include_members boolean
cost_center reference:cmn_cost_center
roles string
source string
type list:sys_user_group_type
"""
)

_GRMEMBER = (
    _SYSTEM
    + """
user reference:sys_user
group reference:sys_user_group
"""
)

_CI = (
    _SYSTEM
    + _DOMAIN
    + """
name string
short_description string
sys_class_name string
sys_class_path string
category string
subcategory string
operational_status choice:ci_operational_status
install_status choice:ci_install_status
hardware_status string
hardware_substatus string
classification string
environment string
used_for string
asset reference:alm_asset
asset_tag string
serial_number string
model_id reference:cmdb_model
model_number string
manufacturer reference:core_company
vendor reference:core_company
company reference:core_company
location reference:cmn_location
department reference:cmn_department
cost_center reference:cmn_cost_center
cost decimal
cost_cc string
assigned datetime
assigned_to reference:sys_user
assignment_group reference:sys_user_group
managed_by reference:sys_user
managed_by_group reference:sys_user_group
owned_by reference:sys_user
support_group reference:sys_user_group
supported_by reference:sys_user
install_date datetime
warranty_expiration date
purchase_date date
order_date datetime
delivery_date datetime
due datetime
due_in string
checked_in datetime
checked_out datetime
first_discovered datetime
last_discovered datetime
discovery_source string
attested boolean
attested_by reference:sys_user
attested_date datetime
attestation_score integer
attestation_status string
fault_count integer
monitor boolean
skip_sync boolean
unverified boolean
can_print boolean
change_control reference:sys_user_group
maintenance_schedule reference:cmn_schedule
schedule reference:cmn_schedule
dns_domain string
fqdn string
ip_address string
mac_address string
gl_account string
invoice_number string
po_number string
lease_id string
justification string
life_cycle_stage string
life_cycle_stage_status string
business_unit reference:business_unit
duplicate_of reference:cmdb_ci
most_frequent_user reference:sys_user
object_id string
correlation_id string
attributes string
comments string
start_date datetime
"""
)

_SERVER = """
host_name string
os string
os_version string
os_service_pack string
os_address_width integer
os_domain string
cpu_type string
cpu_name string
cpu_manufacturer reference:core_company
cpu_count integer
cpu_core_count integer
cpu_core_thread integer
cpu_speed integer
ram integer
disk_space decimal
virtual boolean
firewall_status string
internet_facing boolean
default_gateway string
chassis_type string
form_factor string
floppy string
cd_rom boolean
cd_speed integer
dr_backup reference:cmdb_ci
"""

_APPLICATION = """
version string
edition string
install_directory string
config_directory string
running_process string
running_process_command string
tcp_port string
"""

_KNOWLEDGE = (
    _SYSTEM
    + _DOMAIN
    + """
number string
short_description string
text string
kb_knowledge_base reference:kb_knowledge_base
kb_category reference:kb_category
workflow_state choice:kb_workflow_state
article_type string
author reference:sys_user
published date
valid_to date
active boolean
sys_view_count integer
rating decimal
use_count integer
"""
)

_TASK_SLA = (
    _SYSTEM
    + _DOMAIN
    + """
task reference:task
sla reference:contract_sla
stage choice:sla_stage
active boolean
has_breached boolean
start_time datetime
end_time datetime
pause_time datetime
pause_duration duration
planned_end_time datetime
original_breach_time datetime
duration duration
business_duration duration
time_left duration
business_time_left duration
percentage decimal
business_percentage decimal
schedule reference:cmn_schedule
timezone string
"""
)

_JOURNAL = """
sys_id sys_id
sys_created_by string
sys_created_on datetime
element choice:journal_element
element_id string
name string
value string
"""

_AUDIT = """
sys_id sys_id
sys_created_by string
sys_created_on datetime
tablename string
documentkey string
fieldname string
oldvalue string
newvalue string
user string
reason string
record_checkpoint integer
internal_checkpoint string
"""

_DB_OBJECT = (
    _SYSTEM
    + """
name string
label string
super_class reference:sys_db_object
is_extendable boolean
number_ref reference:sys_number
access string
sys_class_name string
"""
)

_ATTACHMENT = (
    _SYSTEM
    + """
file_name string
table_name string
table_sys_id string
content_type string
size_bytes integer
size_compressed integer
compressed boolean
chunk_size_bytes integer
state string
average_image_color string
image_width integer
image_height integer
download_link string
"""
)


_KNOWLEDGE_BASE = (
    _SYSTEM
    + """
title string
description string
owner reference:sys_user
active boolean
kb_version string
"""
)

# A category sits under a knowledge base or another category: parent_table names which, and
# parent_id is that record's sys_id (a document id, not a reference).
_KB_CATEGORY = (
    _SYSTEM
    + """
label string
value string
parent_table string
parent_id string
full_category string
active boolean
"""
)

_SC_CATEGORY = (
    _SYSTEM
    + """
title string
description string
parent reference:sc_category
sc_catalog reference:sc_catalog
active boolean
order integer
"""
)

_SC_CAT_ITEM = (
    _SYSTEM
    + _DOMAIN
    + """
name string
short_description string
description string
category reference:sc_category
sc_catalogs string
price decimal
recurring_price decimal
active boolean
order integer
sys_class_name string
"""
)

# Catalog item variables (the dictionary calls the table item_option_new).
_ITEM_OPTION = (
    _SYSTEM
    + """
name string
question_text string
type choice:question_type
cat_item reference:sc_cat_item
order integer
mandatory boolean
default_value string
active boolean
"""
)

_APPROVER = (
    _SYSTEM
    + _DOMAIN
    + """
approver reference:sys_user
sysapproval reference:task
source_table string
document_id string
state choice:approval_state
comments string
due_date datetime
expected_start datetime
order integer
"""
)

_ROLE = (
    _SYSTEM
    + """
name string
description string
elevated_privilege boolean
grantable boolean
can_delegate boolean
"""
)

_HAS_ROLE = (
    _SYSTEM
    + """
user reference:sys_user
role reference:sys_user_role
inherited boolean
granted_by reference:sys_user_group
state string
"""
)


def _columns(
    spec: str, choices: Mapping[str, str], labels: Mapping[str, str]
) -> tuple[Column, ...]:
    columns: dict[str, Column] = {}
    for line in filter(None, (line.strip() for line in spec.splitlines())):
        name, kind_spec = line.split()
        kind, _, argument = kind_spec.partition(":")
        label = labels.get(name) or _LABELS.get(name) or name.replace("_", " ").capitalize()
        if kind in ("reference", "list"):
            columns[name] = Column(name, kind, label, target=argument)  # type: ignore[arg-type]
        elif kind == "choice" or name in choices:
            columns[name] = Column(name, "choice", label, choices=choices.get(name, argument))
        else:
            columns[name] = Column(name, kind, label)  # type: ignore[arg-type]
    return tuple(columns.values())


def _table(
    name: str,
    label: str,
    spec: str,
    *,
    prefix: str | None = None,
    display: str = "number",
    choices: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Table:
    """A table; `choices` gives inherited columns (task.state) this table's own choice list."""
    columns = _columns(spec, choices or {}, labels or {})
    return Table(name, label, columns, prefix, display_field=display)


TABLES: Final[Mapping[str, Table]] = {
    table.name: table
    for table in (
        _table(
            "incident",
            "Incident",
            _TASK + _INCIDENT,
            prefix="INC",
            choices={"state": "incident_state"},
        ),
        _table(
            "problem",
            "Problem",
            _TASK + _PROBLEM,
            prefix="PRB",
            choices={"state": "problem_state"},
            labels={"close_notes": "Close notes"},
        ),
        _table(
            "change_request",
            "Change Request",
            _TASK + _CHANGE_REQUEST,
            prefix="CHG",
            choices={"state": "change_state"},
            labels={"close_code": "Close code", "close_notes": "Close notes"},
        ),
        _table(
            "change_task",
            "Change Task",
            _TASK + _CHANGE_TASK,
            prefix="CTASK",
            choices={"state": "change_task_state"},
            labels={"close_code": "Close code", "close_notes": "Close notes"},
        ),
        _table("sc_request", "Request", _TASK + _SC_REQUEST, prefix="REQ"),
        _table("sc_req_item", "Requested Item", _TASK + _SC_REQ_ITEM, prefix="RITM"),
        _table("sys_user", "User", _USER, display="name"),
        _table("sys_user_group", "Group", _GROUP, display="name"),
        _table("sys_user_grmember", "Group Member", _GRMEMBER, display="sys_id"),
        _table("cmdb_ci", "Configuration Item", _CI, display="name"),
        _table("cmdb_ci_server", "Server", _CI + _SERVER, display="name"),
        _table("cmdb_ci_appl", "Application", _CI + _APPLICATION, display="name"),
        _table("kb_knowledge", "Knowledge", _KNOWLEDGE, prefix="KB"),
        _table("kb_knowledge_base", "Knowledge Base", _KNOWLEDGE_BASE, display="title"),
        _table("kb_category", "Category", _KB_CATEGORY, display="label"),
        _table("sc_category", "Category", _SC_CATEGORY, display="title"),
        _table("sc_cat_item", "Catalog Item", _SC_CAT_ITEM, display="name"),
        _table("item_option_new", "Variable", _ITEM_OPTION, display="question_text"),
        _table("sysapproval_approver", "Approval", _APPROVER, display="sys_id"),
        _table("sys_user_role", "Role", _ROLE, display="name"),
        _table("sys_user_has_role", "User Role", _HAS_ROLE, display="sys_id"),
        _table("task_sla", "Task SLA", _TASK_SLA, display="sys_id"),
        _table("sys_journal_field", "Journal Entry", _JOURNAL, display="sys_id"),
        _table("sys_audit", "Sys audit", _AUDIT, display="sys_id"),
        _table("sys_attachment", "Attachment", _ATTACHMENT, display="file_name"),
        _table("sys_db_object", "Table", _DB_OBJECT, display="name"),
    )
}
"""Every table the back end serves, by name."""

# Each table's parent class in the dictionary (sys_db_object.super_class); the classes between
# a served table and its root are listed too, because clients walk the chain.
SUPER_CLASSES: Final[Mapping[str, str | None]] = {
    "task": None,
    "incident": "task",
    "problem": "task",
    "change_request": "task",
    "change_task": "task",
    "sc_request": "task",
    "sc_req_item": "task",
    "cmdb": None,
    "cmdb_ci": "cmdb",
    "cmdb_ci_hardware": "cmdb_ci",
    "cmdb_ci_computer": "cmdb_ci_hardware",
    "cmdb_ci_server": "cmdb_ci_computer",
    "cmdb_ci_appl": "cmdb_ci",
    "sys_user": None,
    "sys_user_group": None,
    "sys_user_grmember": None,
    "kb_knowledge": None,
    "kb_knowledge_base": None,
    "kb_category": None,
    "sc_category": None,
    "sc_cat_item": None,
    "item_option_new": None,
    "sysapproval_approver": None,
    "sys_user_role": None,
    "sys_user_has_role": None,
    "task_sla": None,
    "sys_journal_field": None,
    "sys_audit": None,
    "sys_attachment": None,
    "sys_db_object": None,
}

TASK_TABLES: Final = frozenset(
    {"incident", "problem", "change_request", "change_task", "sc_request", "sc_req_item"}
)
CI_TABLES: Final = frozenset({"cmdb_ci", "cmdb_ci_server", "cmdb_ci_appl"})


def ancestors(name: str) -> tuple[str, ...]:
    """The classes `name` extends, nearest first (`cmdb_ci_server` -> ... `cmdb_ci`, `cmdb`)."""
    chain: list[str] = []
    parent = SUPER_CLASSES.get(name)
    while parent is not None:
        chain.append(parent)
        parent = SUPER_CLASSES.get(parent)
    return tuple(chain)


def table(name: str) -> Table:
    """The table called `name`, or a `ModelError` naming the tables there are."""
    try:
        return TABLES[name]
    except KeyError:
        known = ", ".join(sorted(TABLES))
        raise ModelError(f"no table {name!r}; the ITSM back end has {known}") from None
