"""The ITSM back end's trace corpus: realistic ServiceNow Table API sessions, written by a script.

Each session is one piece of IT-service-management work with a task text (report an outage,
triage, put on hold, resolve, reopen, run a change through approval, fulfil a catalog request...)
recorded as the HTTP exchanges a client makes against a reference instance
(`myna.backends.itsm.instance`). Learning this corpus yields the built-in ITSM model, so it
exercises every read and write path and every refusal the model must know about.

Deterministic: the same code writes the same bytes, which a test checks against the committed
`corpus.jsonl`. Regenerate with

    python -m myna.backends.itsm.corpus -o myna/backends/itsm/corpus.jsonl

The instance the corpus starts from is not empty: it has its administrator and its table
dictionary, which the recordings never show whole. `initial_records()` gives that state as seed
records, and `--initial-seed DIR` writes them as seed files, so that a replay of the corpus
(`myna conformance itsm corpus.jsonl --one-world --seed-dir DIR --user admin`) starts where the
recording did.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Literal
from urllib.parse import urlencode

from myna.backends import SECRET, corpus_command, record_exchange
from myna.backends.itsm.instance import (
    ADMIN,
    Instance,
    Reply,
    Request,
    external_id,
)
from myna.backends.itsm.tables import ancestors
from myna.traces.model import Body, Pairs, Session

HOST: Final = "https://example.service-now.com"
START: Final = datetime(2026, 3, 2, 8, 0, 0)
# pysnc's default read parameters: every field as {display_value, value}, references without links.
PYSNC_READ: Final[Pairs] = [
    ("sysparm_display_value", "all"),
    ("sysparm_exclude_reference_link", "true"),
    ("sysparm_suppress_pagination_header", "true"),
]
CLIENT_ID: Final = "9a5c1e0b7f2d4c6e8a1b3d5f7e9c0a2b"

Auth = Literal["basic", "bearer", "none"]


@dataclass(slots=True)
class Scribe:
    """Makes calls against the instance as one client would, and records them as a session."""

    instance: Instance
    session: Session
    user: str = ADMIN
    auth: Auth = "basic"
    token: str | None = None
    step: timedelta = field(default_factory=lambda: timedelta(seconds=20))

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Pairs | None = None,
        body: Body | None = None,
        auth: Auth | None = None,
    ) -> Reply:
        self.instance.advance(self.step)
        query = list(params or [])
        sent = body or Body()
        mode = auth or self.auth
        request = Request(method, path, query, sent, sent.mime_type, self._caller(mode))
        reply = self.instance.handle(request)
        self._record(method, path, query, sent, reply, mode)
        return reply

    def _caller(self, mode: Auth) -> str | None:
        if mode == "basic":
            return self.user
        if mode == "bearer" and self.token is not None:
            return self.instance.bearer_user(self.token)
        return None

    def _record(
        self, method: str, path: str, query: Pairs, sent: Body, reply: Reply, mode: Auth
    ) -> None:
        headers: Pairs = [("Accept", "application/json")]
        if mode == "basic":
            headers.append(("Authorization", f"Basic {SECRET}"))
        elif mode == "bearer":
            headers.append(("Authorization", f"Bearer {SECRET}"))
        if sent.kind != "empty" and sent.mime_type:
            headers.append(("Content-Type", sent.mime_type))
        url = f"{HOST}{path}" + (f"?{urlencode(query)}" if query else "")
        record_exchange(
            self.session,
            request=(method, url, query, headers, sent),
            reply=reply,
            at=self.instance.now,
            latency=(18.0, 900),
            actor=self.user if mode == "basic" else None,
        )

    # -- Table API conveniences -------------------------------------------------------------

    def create(
        self, name: str, values: Mapping[str, Any], params: Pairs | None = None
    ) -> dict[str, Any]:
        reply = self.call("POST", f"/api/now/table/{name}", params=params, body=_json(values))
        return _result(reply)

    def read(self, name: str, sys_id: str, params: Pairs | None = None) -> Reply:
        return self.call("GET", f"/api/now/table/{name}/{sys_id}", params=params)

    def query(self, name: str, params: Pairs) -> list[dict[str, Any]]:
        reply = self.call("GET", f"/api/now/table/{name}", params=params)
        result = reply.body.value["result"]
        assert isinstance(result, list)
        return result

    def patch(
        self, name: str, sys_id: str, values: Mapping[str, Any], params: Pairs | None = None
    ) -> Reply:
        return self.call(
            "PATCH", f"/api/now/table/{name}/{sys_id}", params=params, body=_json(values)
        )

    def put(self, name: str, sys_id: str, values: Mapping[str, Any]) -> Reply:
        return self.call("PUT", f"/api/now/table/{name}/{sys_id}", body=_json(values))

    def delete(self, name: str, sys_id: str) -> Reply:
        return self.call("DELETE", f"/api/now/table/{name}/{sys_id}")

    def wait(self, **delta: float) -> None:
        self.instance.advance(timedelta(**delta))


def _json(values: Mapping[str, Any]) -> Body:
    return Body("json", dict(values), "application/json")


def _result(reply: Reply) -> dict[str, Any]:
    result = reply.body.value["result"]
    assert isinstance(result, dict), reply.body.value
    return result


def sys_id(record: Mapping[str, Any]) -> str:
    value = record["sys_id"]
    return str(value["value"] if isinstance(value, dict) else value)


# -- the directory: people, groups, CIs -------------------------------------------------------

# (user_name, first, last, title, department, vip, gender)
PEOPLE: Final = (
    ("aisha.khan", "Aisha", "Khan", "Service Desk Analyst", "IT", False, "Female"),
    ("sam.okafor", "Sam", "Okafor", "Service Desk Analyst", "IT", False, "Male"),
    ("tomas.novak", "Tomas", "Novak", "Network Engineer", "IT", False, "Male"),
    ("mei.lin", "Mei", "Lin", "Database Administrator", "IT", False, "Female"),
    ("olga.petrova", "Olga", "Petrova", "Hardware Technician", "IT", False, "Female"),
    ("jonas.berg", "Jonas", "Berg", "Application Engineer", "IT", False, "Male"),
    ("priya.raman", "Priya", "Raman", "Problem Manager", "IT", False, "Female"),
    ("carlos.mendes", "Carlos", "Mendes", "Change Manager", "IT", False, "Male"),
    ("lena.fischer", "Lena", "Fischer", "Chief Financial Officer", "Finance", True, "Female"),
    ("marco.rossi", "Marco", "Rossi", "Account Executive", "Sales", False, "Male"),
    ("nina.sato", "Nina", "Sato", "HR Partner", "Human Resources", False, "Female"),
    ("omar.haddad", "Omar", "Haddad", "Marketing Specialist", "Marketing", False, "Male"),
)
# group -> (description, manager, members)
GROUPS: Final = {
    "Service Desk": (
        "First line support for all employees",
        "aisha.khan",
        ("aisha.khan", "sam.okafor"),
    ),
    "Network": ("LAN, WAN, VPN and firewalls", "tomas.novak", ("tomas.novak", "jonas.berg")),
    "Database": ("Database platforms", "mei.lin", ("mei.lin",)),
    "Hardware": ("Desktops, laptops and servers", "olga.petrova", ("olga.petrova", "sam.okafor")),
    "Application Support": ("Business applications", "jonas.berg", ("jonas.berg", "mei.lin")),
    "Change Advisory Board": (
        "Approves normal and emergency changes",
        "carlos.mendes",
        ("carlos.mendes", "priya.raman"),
    ),
    "Problem Management": ("Root cause analysis", "priya.raman", ("priya.raman", "tomas.novak")),
}
# name, os, os_version, ip, cpu_count, ram, disk, virtual
SERVERS: Final = (
    ("lnx-mail-01", "Linux Red Hat", "9.3", "10.20.1.11", "8", "32768", "500", "true"),
    ("lnx-db-01", "Linux Red Hat", "9.3", "10.20.1.21", "16", "131072", "2000", "false"),
    (
        "win-file-01",
        "Windows 2022 Datacenter",
        "10.0.20348",
        "10.20.2.31",
        "4",
        "16384",
        "4000",
        "true",
    ),
    ("lnx-web-01", "Linux Ubuntu", "22.04", "10.20.3.41", "4", "8192", "200", "true"),
    ("lnx-web-02", "Linux Ubuntu", "22.04", "10.20.3.42", "4", "8192", "200", "true"),
)
APPLICATIONS: Final = (
    ("Mail Gateway", "3.4.1", "/opt/mailgw", "25"),
    ("Payroll", "2024.2", "/opt/payroll", "8443"),
    ("Customer Portal", "5.12.0", "/srv/portal", "443"),
)


# Roles (name, description, elevated); users get theirs by name (`sys_user.roles`), and group
# members inherit their group's.
ROLES: Final = (
    ("itil", "Fulfiller work in incident, problem and change management", False),
    ("knowledge", "Create and edit knowledge articles", False),
    ("catalog_admin", "Manage the service catalog", False),
    ("approver_user", "Approve requests and changes", False),
    ("security_admin", "Elevated privilege for security administration", True),
)
EXTRA_ROLES: Final = {
    "priya.raman": "knowledge,approver_user",
    "carlos.mendes": "approver_user",
    "nina.sato": "catalog_admin",
}
# category -> (description, [(item, short description, price, [(variable, question, type,
# mandatory)])])
CATALOG: Final = {
    "Hardware": (
        "Laptops, monitors and accessories",
        [
            (
                "Standard Laptop",
                "A 14-inch business laptop with docking station",
                "1299.00",
                [
                    ("operating_system", "Operating system", "5", True),
                    ("additional_software", "Additional software", "2", False),
                ],
            ),
            ("Monitor", "A 27-inch monitor", "249.00", []),
        ],
    ),
    "Software": (
        "Licences for desktop software",
        [
            (
                "Software License",
                "A licence for a desktop application",
                "150.00",
                [("application", "Which application", "6", True)],
            ),
        ],
    ),
}
# knowledge base -> (description, owner, categories)
KNOWLEDGE_BASES: Final = {
    "IT": ("How-to and troubleshooting for IT services", "priya.raman", ("Email", "Network")),
}


@dataclass(slots=True)
class Directory:
    """The sys_ids the workflows refer to, filled in by the setup session."""

    users: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    cis: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    items: dict[str, str] = field(default_factory=dict)
    knowledge_bases: dict[str, str] = field(default_factory=dict)
    kb_categories: dict[str, str] = field(default_factory=dict)


def setup_directory(scribe: Scribe, directory: Directory) -> None:
    """Onboarding by the administrator: roles, users, groups, memberships and configuration
    items."""
    for name, description, elevated in ROLES:
        role = scribe.create(
            "sys_user_role",
            {"name": name, "description": description, "elevated_privilege": elevated},
        )
        directory.roles[name] = sys_id(role)
    it = external_id("cmn_department", "IT")
    for user_name, first, last, title, department, vip, gender in PEOPLE:
        record = scribe.create(
            "sys_user",
            {
                "user_name": user_name,
                "first_name": first,
                "last_name": last,
                "title": title,
                "email": f"{user_name}@example.com",
                "phone": "+44 20 7946 0" + str(100 + len(directory.users)),
                "department": external_id("cmn_department", department),
                "company": external_id("core_company", "Acme Corporation"),
                "location": external_id("cmn_location", "London Office"),
                "vip": vip,
                "time_zone": "Europe/London",
                "preferred_language": "en",
                "employee_number": f"E{1040 + len(directory.users)}",
                "gender": gender,
                "mobile_phone": f"(555) 555-{100 + len(directory.users):04d}",
                "roles": ",".join(
                    filter(None, ("itil" if department == "IT" else "", EXTRA_ROLES.get(user_name)))
                ),
                "cost_center": external_id("cmn_cost_center", "Corporate"),
                "date_format": "dd-MM-yyyy",
                "avatar": external_id("db_image", "avatar"),
                "photo": external_id("db_image", "avatar"),
                "default_perspective": external_id("sys_perspective", "Self-Service"),
                "federated_id": base64.b64encode(user_name.encode()).decode(),
                "user_password": f"{user_name}-pw",
            },
        )
        directory.users[user_name] = sys_id(record)
        scribe.instance.passwords[user_name] = f"{user_name}-pw"
    monitoring = scribe.create(
        "sys_user",
        {
            "user_name": "svc.monitoring",
            "web_service_access_only": True,
            "internal_integration_user": True,
            "roles": "itil",
        },
    )
    directory.users["svc.monitoring"] = sys_id(monitoring)
    scribe.instance.passwords[ADMIN] = "admin-pw"
    for user_name, manager in (("sam.okafor", "aisha.khan"), ("tomas.novak", "carlos.mendes")):
        scribe.patch("sys_user", directory.users[user_name], {"manager": directory.users[manager]})
    operations = scribe.create(
        "sys_user_group",
        {"name": "IT Operations", "description": "Parent of the resolver groups"},
    )
    itil = external_id("sys_user_group_type", "itil")
    for name, (description, manager, _) in GROUPS.items():
        record = scribe.create(
            "sys_user_group",
            {
                "name": name,
                "description": description,
                "manager": directory.users[manager],
                "email": name.lower().replace(" ", "-") + "@example.com",
                "cost_center": external_id("cmn_cost_center", "IT Operations"),
                "parent": sys_id(operations),
                "type": itil,
                "roles": "itil",
            },
        )
        directory.groups[name] = sys_id(record)
    for name, (_, _, members) in GROUPS.items():
        for member in members:
            scribe.create(
                "sys_user_grmember",
                {"user": directory.users[member], "group": directory.groups[name]},
            )
    dell = external_id("core_company", "Dell Inc.")
    for name, os, version, ip, cpus, ram, disk, virtual in SERVERS:
        record = scribe.create(
            "cmdb_ci_server",
            {
                "name": name,
                "host_name": name,
                "fqdn": f"{name}.corp.example.com",
                "ip_address": ip,
                "os": os,
                "os_version": version,
                "cpu_count": cpus,
                "cpu_speed": "2900",
                "cpu_type": "GenuineIntel",
                "cpu_manufacturer": external_id("core_company", "Acme Corporation"),
                "ram": ram,
                "disk_space": disk,
                "virtual": virtual,
                "manufacturer": dell,
                "vendor": dell,
                "model_id": external_id("cmdb_model", "PowerEdge R740"),
                "serial_number": f"CZ{4471 + len(directory.cis)}R740",
                "asset_tag": f"P{1000170 + len(directory.cis)}",
                "classification": "Production",
                "environment": "Production",
                "firewall_status": "Intranet",
                "install_date": "2024-05-13 09:00:00",
                "warranty_expiration": "2028-05-12",
                "assigned": "2024-05-14 10:00:00",
                "managed_by": directory.users["olga.petrova"],
                "support_group": directory.groups["Hardware"],
                "company": external_id("core_company", "Acme Corporation"),
                "location": external_id("cmn_location", "San Diego Data Center"),
                "cost_center": external_id("cmn_cost_center", "IT Operations"),
                "department": it,
                "short_description": f"{os} server {name}",
                "category": "Hardware",
                "subcategory": "Computer",
                "maintenance_schedule": external_id("cmn_schedule", "8-5 weekdays"),
                "asset": external_id("alm_asset", f"P{1000170 + len(directory.cis)}"),
                "cd_speed": "24",
                "cost": "2839.99",
                "cost_cc": "USD",
                "model_number": "R740",
                "os_service_pack": "n/a",
                "used_for": "Production",
                "hardware_status": "installed",
                "assigned_to": directory.users["olga.petrova"],
                "owned_by": directory.users["olga.petrova"],
                "managed_by_group": directory.groups["Hardware"],
            },
        )
        directory.cis[name] = sys_id(record)
    for name, version, directory_path, port in APPLICATIONS:
        record = scribe.create(
            "cmdb_ci_appl",
            {
                "name": name,
                "version": version,
                "install_directory": directory_path,
                "tcp_port": port,
                "running_process": name.lower().replace(" ", "_"),
                "used_for": "Production",
                "owned_by": directory.users["jonas.berg"],
                "support_group": directory.groups["Application Support"],
                "short_description": f"{name} application",
                "category": "Software",
                "install_date": "2025-01-20 14:00:00",
            },
        )
        directory.cis[name] = sys_id(record)
    router = scribe.create(
        "cmdb_ci",
        {
            "name": "rtr-core-01",
            "short_description": "Core router, London office",
            "ip_address": "10.20.0.1",
            "category": "Network",
            "support_group": directory.groups["Network"],
            "managed_by": directory.users["tomas.novak"],
        },
    )
    directory.cis["rtr-core-01"] = sys_id(router)
    scribe.instance.oauth_clients[CLIENT_ID] = "client-secret"
    # The elevated role is granted by hand, to the two people who hold it.
    for user_name in ("carlos.mendes", "priya.raman"):
        scribe.create(
            "sys_user_has_role",
            {"user": directory.users[user_name], "role": directory.roles["security_admin"]},
        )


def setup_catalog(s: Scribe, d: Directory) -> None:
    """Set up the service catalog's categories, items and their variables, and the IT
    knowledge base with its categories."""
    catalog = external_id("sc_catalog", "Service Catalog")
    for order, (category, (description, items)) in enumerate(CATALOG.items(), start=1):
        parent = s.create(
            "sc_category",
            {
                "title": category,
                "description": description,
                "sc_catalog": catalog,
                "order": str(order * 100),
            },
        )
        for name, short, price, variables in items:
            item = s.create(
                "sc_cat_item",
                {
                    "name": name,
                    "short_description": short,
                    "category": sys_id(parent),
                    "sc_catalogs": catalog,
                    "price": price,
                },
            )
            d.items[name] = sys_id(item)
            for position, (variable, question, kind, mandatory) in enumerate(variables, 1):
                s.create(
                    "item_option_new",
                    {
                        "name": variable,
                        "question_text": question,
                        "type": kind,
                        "cat_item": sys_id(item),
                        "mandatory": mandatory,
                        "order": str(position * 100),
                    },
                )
    s.query(
        "item_option_new",
        [("sysparm_query", f"cat_item={d.items['Standard Laptop']}^ORDERBYorder")],
    )
    for title, (description, owner, categories) in KNOWLEDGE_BASES.items():
        base = s.create(
            "kb_knowledge_base",
            {"title": title, "description": description, "owner": d.users[owner]},
        )
        d.knowledge_bases[title] = sys_id(base)
        for label in categories:
            kb_category = s.create(
                "kb_category",
                {
                    "label": label,
                    "value": label.lower(),
                    "parent_table": "kb_knowledge_base",
                    "parent_id": sys_id(base),
                    "full_category": label,
                },
            )
            d.kb_categories[label] = sys_id(kb_category)
    s.query("sys_user_has_role", [("sysparm_query", f"user={d.users['priya.raman']}")])


# -- workflows ----------------------------------------------------------------------------------

Workflow = Callable[[Scribe, Directory], None]


def browse_directory(s: Scribe, d: Directory) -> None:
    """Review the directory: page through users, list groups and their members, and look up
    servers and applications."""
    for offset in (0, 5, 10):
        s.query("sys_user", [("sysparm_limit", "5"), ("sysparm_offset", str(offset))])
    s.query("sys_user_group", [("sysparm_limit", "500")])
    s.query(
        "sys_user_grmember",
        [
            ("sysparm_query", "group.name=Network"),
            ("sysparm_fields", "sys_id,user,group,user.name"),
        ],
    )
    s.query(
        "cmdb_ci_server",
        [("sysparm_query", "osSTARTSWITHLinux^ORDERBYname"), ("sysparm_limit", "3")],
    )
    s.query(
        "cmdb_ci",
        [
            ("sysparm_fields", "sys_id,name,sys_class_name,operational_status"),
            ("sysparm_limit", "20"),
        ],
    )
    s.read("cmdb_ci_appl", d.cis["Payroll"])
    s.read("sys_user", d.users["lena.fischer"], [("sysparm_display_value", "true")])


def report_email_outage(s: Scribe, d: Directory) -> None:
    """A VIP called: Outlook cannot connect. Log an incident against the mail server and
    check its SLA."""
    incident = s.create(
        "incident",
        {
            "caller_id": d.users["lena.fischer"],
            "short_description": "Outlook cannot connect to the mail server",
            "description": "Since 08:00 Outlook shows 'Trying to connect...' and no mail arrives.",
            "category": "software",
            "subcategory": "email",
            "impact": "2",
            "urgency": "1",
            "contact_type": "phone",
            "cmdb_ci": d.cis["lnx-mail-01"],
            "business_service": external_id("cmdb_ci_service", "Email"),
            "assignment_group": d.groups["Service Desk"],
            "location": external_id("cmn_location", "London Office"),
            "company": external_id("core_company", "Acme Corporation"),
        },
    )
    s.read("incident", sys_id(incident))
    s.query("incident", [("sysparm_query", f"number={incident['number']}")])
    s.query("task_sla", [("sysparm_query", f"task={sys_id(incident)}")])


def self_service_reports(s: Scribe, d: Directory) -> None:
    """Employees report their own problems through the self-service portal."""
    reports = (
        (
            "marco.rossi",
            "VPN drops every few minutes from the hotel",
            "network",
            "vpn",
            "2",
            "2",
            "rtr-core-01",
        ),
        (
            "nina.sato",
            "Payroll report shows last month's figures",
            "software",
            "",
            "3",
            "2",
            "Payroll",
        ),
        (
            "omar.haddad",
            "Laptop fan is very loud and the laptop is hot",
            "hardware",
            "laptop",
            "3",
            "3",
            "",
        ),
        (
            "marco.rossi",
            "Customer portal login page times out",
            "software",
            "web",
            "2",
            "2",
            "Customer Portal",
        ),
        (
            "nina.sato",
            "Shared drive H: is not mapped after login",
            "network",
            "file share",
            "3",
            "2",
            "win-file-01",
        ),
    )
    for caller, text, category, subcategory, impact, urgency, ci in reports:
        s.user = caller
        s.create(
            "incident",
            {
                "caller_id": d.users[caller],
                "short_description": text,
                "category": category,
                "subcategory": subcategory,
                "impact": impact,
                "urgency": urgency,
                "contact_type": "self-service",
                "cmdb_ci": d.cis[ci] if ci else "",
            },
        )
    s.query(
        "incident",
        [
            ("sysparm_query", f"caller_id={d.users['nina.sato']}^active=true^ORDERBYDESCopened_at"),
            ("sysparm_fields", "number,short_description,state,opened_at"),
        ],
    )


def triage_queue(s: Scribe, d: Directory) -> None:
    """Triage the new incidents: route each to the right group and engineer and start work."""
    new = s.query(
        "incident",
        [
            ("sysparm_query", "active=true^state=1^ORDERBYpriority^ORDERBYnumber"),
            (
                "sysparm_fields",
                "sys_id,number,short_description,priority,category,assignment_group",
            ),
            ("sysparm_limit", "10"),
        ],
    )
    routes = {
        "network": ("Network", "tomas.novak"),
        "software": ("Application Support", "jonas.berg"),
        "hardware": ("Hardware", "olga.petrova"),
    }
    for incident in new:
        if incident["category"] not in routes or incident["assignment_group"]:
            continue
        group, person = routes[incident["category"]]
        s.patch(
            "incident",
            incident["sys_id"],
            {
                "assignment_group": d.groups[group],
                "assigned_to": d.users[person],
                "state": "2",
                "work_notes": f"Routed to {group}.",
            },
        )
    s.query(
        "incident",
        [
            ("sysparm_query", "assignment_groupISEMPTY^active=true"),
            ("sysparm_fields", "number,short_description"),
        ],
    )


def _incident_by_text(s: Scribe, text: str) -> dict[str, Any]:
    found = s.query("incident", [("sysparm_query", f"short_descriptionSTARTSWITH{text}")])
    return found[0]


def assign_outside_group(s: Scribe, d: Directory) -> None:
    """Hand the email incident to the Network group; the first choice of engineer is not a
    member of it."""
    email = _incident_by_text(s, "Outlook cannot connect")
    s.patch(
        "incident",
        sys_id(email),
        {"assignment_group": d.groups["Network"], "assigned_to": d.users["mei.lin"]},
    )
    s.query(
        "sys_user_grmember",
        [("sysparm_query", f"group={d.groups['Network']}^user={d.users['mei.lin']}")],
    )
    s.query(
        "sys_user_grmember",
        [
            ("sysparm_query", f"group={d.groups['Network']}"),
            ("sysparm_fields", "user.user_name,user.name"),
        ],
    )
    s.patch(
        "incident",
        sys_id(email),
        {
            "assignment_group": d.groups["Network"],
            "assigned_to": d.users["tomas.novak"],
            "state": "2",
        },
    )


def work_notes(s: Scribe, d: Directory) -> None:
    """Record what is being done on the email incident and tell the caller."""
    email = _incident_by_text(s, "Outlook cannot connect")
    s.patch(
        "incident",
        sys_id(email),
        {"work_notes": "Mail gateway queue is at 12k messages; restarting the relay."},
    )
    s.patch(
        "incident",
        sys_id(email),
        {"comments": "We are restarting the mail relay; mail should flow within 15 minutes."},
    )
    s.query(
        "sys_journal_field",
        [("sysparm_query", f"element_id={sys_id(email)}^ORDERBYsys_created_on")],
    )
    s.read(
        "incident",
        sys_id(email),
        [
            ("sysparm_display_value", "true"),
            ("sysparm_fields", "number,state,comments,work_notes,assigned_to"),
        ],
    )


def hold_and_resume(s: Scribe, d: Directory) -> None:
    """Put the VPN incident on hold while waiting for the caller's log, then resume it."""
    vpn = _incident_by_text(s, "VPN drops")
    s.patch("incident", sys_id(vpn), {"state": "3"})
    s.patch(
        "incident",
        sys_id(vpn),
        {
            "state": "3",
            "hold_reason": "1",
            "comments": "Can you send the VPN client log from the laptop?",
        },
    )
    s.wait(hours=2)
    s.query("task_sla", [("sysparm_query", f"task={sys_id(vpn)}")])
    s.user = "marco.rossi"
    s.patch(
        "incident", sys_id(vpn), {"comments": "Log attached, the drops happen on hotel Wi-Fi only."}
    )
    s.user = "tomas.novak"
    s.patch(
        "incident",
        sys_id(vpn),
        {"state": "2", "work_notes": "MTU issue on hotel networks; pushing profile."},
    )
    s.query(
        "task_sla",
        [("sysparm_query", f"task={sys_id(vpn)}"), ("sysparm_display_value", "all")],
    )


def resolve_and_close(s: Scribe, d: Directory) -> None:
    """Resolve the email incident with a resolution code and notes, then close it after
    three days."""
    email = _incident_by_text(s, "Outlook cannot connect")
    s.patch("incident", sys_id(email), {"state": "6"})
    s.patch("incident", sys_id(email), {"state": "6", "close_code": "Solution provided"})
    s.patch(
        "incident",
        sys_id(email),
        {
            "state": "6",
            "close_code": "Solution provided",
            "close_notes": "Mail relay restarted and queue drained; the caller confirmed mail.",
        },
    )
    s.query(
        "sys_audit",
        [
            ("sysparm_query", f"documentkey={sys_id(email)}^ORDERBYsys_created_on"),
            ("sysparm_fields", "fieldname,oldvalue,newvalue,user,record_checkpoint"),
        ],
    )
    s.query(
        "task_sla",
        [
            ("sysparm_query", f"task={sys_id(email)}"),
            ("sysparm_fields", "stage,has_breached,end_time"),
        ],
    )
    s.wait(days=3)
    s.user = "aisha.khan"
    s.patch("incident", sys_id(email), {"state": "7"})
    s.patch("incident", sys_id(email), {"short_description": "Outlook cannot connect (closed)"})
    s.read("incident", sys_id(email))


def reopen_incident(s: Scribe, d: Directory) -> None:
    """The caller reports that the portal fix did not hold: reopen the incident."""
    portal = _incident_by_text(s, "Customer portal login")
    s.user = "jonas.berg"
    s.patch(
        "incident",
        sys_id(portal),
        {
            "state": "6",
            "close_code": "Workaround provided",
            "close_notes": "Recycled the portal application pool.",
        },
    )
    s.wait(hours=20)
    s.user = "marco.rossi"
    s.patch(
        "incident",
        sys_id(portal),
        {"state": "2", "comments": "It is timing out again this morning."},
    )
    s.read(
        "incident",
        sys_id(portal),
        [
            (
                "sysparm_fields",
                "number,state,reopen_count,reopened_by,reopened_time,resolved_at,close_code",
            )
        ],
    )


def escalate_priority(s: Scribe, d: Directory) -> None:
    """Every customer is affected by the portal timeouts: raise impact and urgency."""
    portal = _incident_by_text(s, "Customer portal login")
    s.patch(
        "incident",
        sys_id(portal),
        {"impact": "1", "urgency": "1", "work_notes": "All customers affected; raising to P1."},
    )
    s.query("task_sla", [("sysparm_query", f"task={sys_id(portal)}^ORDERBYsys_created_on")])
    s.read("incident", sys_id(portal), [("sysparm_display_value", "all")])


def sla_breach(s: Scribe, d: Directory) -> None:
    """The P1 portal incident runs past its SLA; resolve it and check the SLA record."""
    portal = _incident_by_text(s, "Customer portal login")
    s.wait(hours=5)
    s.query(
        "task_sla",
        [
            ("sysparm_query", f"task={sys_id(portal)}^stage=in_progress"),
            ("sysparm_display_value", "true"),
        ],
    )
    s.patch(
        "incident",
        sys_id(portal),
        {
            "state": "6",
            "close_code": "Solution provided",
            "close_notes": "Session store moved to a dedicated cache cluster.",
        },
    )
    s.read(
        "incident",
        sys_id(portal),
        [("sysparm_fields", "number,state,made_sla,resolved_at,priority")],
    )
    s.query("task_sla", [("sysparm_query", "has_breached=true"), ("sysparm_display_value", "true")])


def cancel_duplicate(s: Scribe, d: Directory) -> None:
    """Cancel an incident that duplicates an open one and link it to the original."""
    s.user = "nina.sato"
    duplicate = s.create(
        "incident",
        {
            "caller_id": d.users["nina.sato"],
            "short_description": "Payroll report still shows old numbers",
            "category": "software",
            "contact_type": "self-service",
        },
    )
    s.user = "sam.okafor"
    original = _incident_by_text(s, "Payroll report shows")
    s.patch(
        "incident",
        sys_id(duplicate),
        {
            "state": "8",
            "parent_incident": sys_id(original),
            "work_notes": f"Duplicate of {original['number']}.",
        },
    )
    s.read(
        "incident",
        sys_id(duplicate),
        [("sysparm_fields", "number,state,active,parent_incident,closed_at")],
    )
    s.query(
        "incident",
        [
            ("sysparm_query", f"parent_incident={sys_id(original)}"),
            ("sysparm_fields", "number,state"),
        ],
    )


def problem_from_incidents(s: Scribe, d: Directory) -> None:
    """Open a problem for the recurring mail outages, link the incidents, find the root
    cause and resolve it."""
    email = _incident_by_text(s, "Outlook cannot connect")
    s.user = "aisha.khan"
    repeat = s.create(
        "incident",
        {
            "caller_id": d.users["omar.haddad"],
            "short_description": "No new mail since lunch",
            "category": "software",
            "subcategory": "email",
            "impact": "2",
            "urgency": "2",
            "cmdb_ci": d.cis["lnx-mail-01"],
            "assignment_group": d.groups["Service Desk"],
            "assigned_to": d.users["sam.okafor"],
        },
    )
    s.user = "priya.raman"
    problem = s.create(
        "problem",
        {
            "short_description": "Mail relay queue stalls under load",
            "description": "Two outages in a week with the relay queue growing until restart.",
            "impact": "2",
            "urgency": "2",
            "cmdb_ci": d.cis["Mail Gateway"],
            "assignment_group": d.groups["Problem Management"],
            "assigned_to": d.users["priya.raman"],
            "first_reported_by_task": sys_id(email),
            "category": "software",
        },
    )
    s.user = "aisha.khan"
    s.patch(
        "incident",
        sys_id(repeat),
        {"problem_id": sys_id(problem), "state": "3", "hold_reason": "3"},
    )
    s.user = "priya.raman"
    s.read(
        "problem", sys_id(problem), [("sysparm_fields", "number,state,related_incidents,priority")]
    )
    s.patch("problem", sys_id(problem), {"state": "102"})
    s.patch(
        "problem",
        sys_id(problem),
        {"state": "103", "cause_notes": "Relay workers leak connections to the spam filter."},
    )
    s.patch(
        "problem",
        sys_id(problem),
        {
            "state": "104",
            "known_error": "true",
            "workaround": "Restart the relay when the queue exceeds 5k.",
        },
    )
    s.patch("problem", sys_id(problem), {"state": "106"})
    s.patch(
        "problem",
        sys_id(problem),
        {
            "state": "106",
            "resolution_code": "fix_applied",
            "fix_notes": "Upgraded the relay to 3.5 with pooled connections.",
        },
    )
    s.query(
        "incident",
        [
            ("sysparm_query", f"problem_id={sys_id(problem)}"),
            ("sysparm_fields", "number,state,hold_reason,problem_id"),
        ],
    )
    s.user = "sam.okafor"
    s.patch(
        "incident",
        sys_id(repeat),
        {
            "state": "6",
            "close_code": "Resolved by problem",
            "close_notes": f"Fixed by {problem['number']}.",
        },
    )
    s.user = "priya.raman"
    s.patch("problem", sys_id(problem), {"state": "107"})
    s.read("problem", sys_id(problem), [("sysparm_display_value", "true")])


def normal_change(s: Scribe, d: Directory) -> None:
    """Run the mail gateway upgrade through the normal change process: assess, approve,
    implement with tasks, review and close."""
    s.user = "carlos.mendes"
    change = s.create(
        "change_request",
        {
            "short_description": "Upgrade mail gateway to 3.5",
            "description": "Apply vendor release 3.5 with connection pooling (fixes relay stalls).",
            "category": "Software",
            "cmdb_ci": d.cis["Mail Gateway"],
            "assignment_group": d.groups["Application Support"],
            "assigned_to": d.users["jonas.berg"],
            "impact": "2",
            "risk": "3",
            "start_date": "2026-03-07 22:00:00",
            "end_date": "2026-03-08 01:00:00",
            "justification": "Removes the root cause of the recurring mail outages.",
            "implementation_plan": "Drain queue, stop relay, install 3.5, start relay, verify.",
            "backout_plan": "Reinstall 3.4.1 from the package cache.",
            "test_plan": "Send test mail to internal and external mailboxes.",
        },
    )
    cid = sys_id(change)
    s.patch("change_request", cid, {"state": "-4"})
    s.patch("change_request", cid, {"state": "-2"})
    s.patch("change_request", cid, {"state": "-3"})
    approvals = [
        s.create("sysapproval_approver", {"sysapproval": cid, "approver": d.users[approver]})
        for approver in ("priya.raman", "carlos.mendes")
    ]
    s.user = "priya.raman"
    s.query(
        "sysapproval_approver",
        [("sysparm_query", f"approver={d.users['priya.raman']}^state=requested")],
    )
    s.patch(
        "sysapproval_approver",
        sys_id(approvals[0]),
        {"state": "approved", "comments": "Approved at CAB."},
    )
    s.user = "carlos.mendes"
    s.patch("sysapproval_approver", sys_id(approvals[1]), {"state": "approved"})
    s.read("change_request", cid, [("sysparm_fields", "number,state,approval")])
    tasks = [
        s.create(
            "change_task",
            {
                "change_request": cid,
                "short_description": text,
                "change_task_type": kind,
                "assignment_group": d.groups["Application Support"],
                "assigned_to": d.users["jonas.berg"],
                "planned_start_date": "2026-03-07 22:00:00",
                "planned_end_date": "2026-03-08 01:00:00",
            },
        )
        for text, kind in (
            ("Install release 3.5", "implementation"),
            ("Verify mail flow", "testing"),
        )
    ]
    s.call("POST", "/api/now/table/change_task", body=_json({"short_description": "Orphan task"}))
    s.wait(days=5)
    s.user = "jonas.berg"
    s.patch("change_request", cid, {"state": "-1"})
    for task in tasks:
        s.patch("change_task", sys_id(task), {"state": "2"})
        s.patch("change_task", sys_id(task), {"state": "3"})
        s.patch(
            "change_task",
            sys_id(task),
            {"state": "3", "close_code": "successful", "close_notes": "Done as planned."},
        )
    s.query(
        "change_task",
        [
            ("sysparm_query", f"change_request={cid}"),
            ("sysparm_fields", "number,state,change_task_type,closed_at"),
        ],
    )
    s.patch("change_request", cid, {"state": "0"})
    s.user = "carlos.mendes"
    s.patch("change_request", cid, {"state": "3"})
    s.patch(
        "change_request",
        cid,
        {
            "state": "3",
            "close_code": "successful",
            "close_notes": "Upgrade completed in the window.",
        },
    )
    s.read(
        "change_request",
        cid,
        [("sysparm_display_value", "all"), ("sysparm_exclude_reference_link", "true")],
    )


def rejected_change(s: Scribe, d: Directory) -> None:
    """An emergency router change is rejected at approval and canceled."""
    s.user = "tomas.novak"
    change = s.create(
        "change_request",
        {
            "short_description": "Replace core router firmware during business hours",
            "type": "emergency",
            "cmdb_ci": d.cis["rtr-core-01"],
            "assignment_group": d.groups["Network"],
            "assigned_to": d.users["tomas.novak"],
            "risk": "2",
            "impact": "1",
            "start_date": "2026-03-09 11:00:00",
            "end_date": "2026-03-09 12:00:00",
        },
    )
    s.patch("change_request", sys_id(change), {"state": "-3"})
    s.user = "carlos.mendes"
    # The change manager rejects it on the change itself, which needs no approval record.
    s.patch(
        "change_request",
        sys_id(change),
        {"approval": "rejected", "comments": "Not during business hours."},
    )
    s.patch("change_request", sys_id(change), {"state": "4"})
    s.query(
        "change_request",
        [
            ("sysparm_query", "type=emergency^ORtype=normal^ORDERBYnumber"),
            ("sysparm_fields", "number,type,state,approval"),
        ],
    )


def catalog_request(s: Scribe, d: Directory) -> None:
    """Order a laptop for a starter through the service catalog and fulfil it."""
    s.user = "nina.sato"
    request = s.create(
        "sc_request",
        {
            "requested_for": d.users["nina.sato"],
            "short_description": "New laptop for a starter",
            "special_instructions": "Deliver to HR, 3rd floor.",
            "price": "1299.00",
        },
    )
    item = s.create(
        "sc_req_item",
        {
            "request": sys_id(request),
            "cat_item": d.items["Standard Laptop"],
            "requested_for": d.users["nina.sato"],
            "short_description": "Standard Laptop",
            "quantity": "1",
            "price": "1299.00",
        },
    )
    s.user = "carlos.mendes"
    approval = s.create(
        "sysapproval_approver",
        {"sysapproval": sys_id(request), "approver": d.users["carlos.mendes"]},
    )
    s.patch("sysapproval_approver", sys_id(approval), {"state": "approved"})
    s.patch("sc_req_item", sys_id(item), {"approval": "approved"})
    s.user = "olga.petrova"
    s.patch(
        "sc_req_item",
        sys_id(item),
        {
            "assignment_group": d.groups["Hardware"],
            "assigned_to": d.users["olga.petrova"],
            "state": "2",
        },
    )
    s.patch(
        "sc_req_item",
        sys_id(item),
        {"state": "3", "work_notes": "Imaged and delivered, asset P1000311."},
    )
    s.patch("sc_request", sys_id(request), {"state": "3"})
    s.query(
        "sc_req_item",
        [("sysparm_query", f"request={sys_id(request)}"), ("sysparm_display_value", "true")],
    )
    s.read("sc_request", sys_id(request))


def knowledge_articles(s: Scribe, d: Directory) -> None:
    """Publish knowledge articles for the mail and VPN fixes, search them, retire one."""
    s.user = "priya.raman"
    base = d.knowledge_bases["IT"]
    article = s.create(
        "kb_knowledge",
        {
            "short_description": "Outlook stuck on 'Trying to connect' after a mail relay outage",
            "text": "<p>Close Outlook, wait one minute, and start it again. If mail does not"
            " arrive, report an incident with the time of the last mail received.</p>",
            "kb_knowledge_base": base,
            "kb_category": d.kb_categories["Email"],
        },
    )
    s.patch("kb_knowledge", sys_id(article), {"workflow_state": "review"})
    s.patch("kb_knowledge", sys_id(article), {"workflow_state": "published"})
    vpn = s.create(
        "kb_knowledge",
        {
            "short_description": "VPN drops on hotel Wi-Fi",
            "text": "<p>Switch the VPN profile to 'Travel' (lower MTU).</p>",
            "kb_knowledge_base": base,
            "kb_category": d.kb_categories["Network"],
        },
    )
    s.patch("kb_knowledge", sys_id(vpn), {"workflow_state": "published"})
    s.patch("kb_knowledge", sys_id(vpn), {"workflow_state": "draft"})
    s.user = "aisha.khan"
    s.query(
        "kb_knowledge",
        [
            (
                "sysparm_query",
                "workflow_state=published^short_descriptionLIKEoutlook^ORshort_descriptionLIKEvpn",
            ),
            ("sysparm_fields", "number,short_description,published,author"),
        ],
    )
    s.user = "priya.raman"
    s.patch("kb_knowledge", sys_id(vpn), {"workflow_state": "retired"})
    s.query(
        "kb_knowledge",
        [("sysparm_query", "active=false"), ("sysparm_fields", "number,workflow_state")],
    )


def cmdb_maintenance(s: Scribe, d: Directory) -> None:
    """Record a memory upgrade on the file server, check it through the generic CI class, log a
    hardware fault on the database server and put the server back in service once replaced."""
    s.user = "olga.petrova"
    server = d.cis["win-file-01"]
    s.patch("cmdb_ci_server", server, {"operational_status": "3", "ram": "32768"})
    s.query(
        "cmdb_ci_server",
        [
            ("sysparm_query", "operational_status!=1"),
            ("sysparm_fields", "name,operational_status,ram"),
        ],
    )
    s.put(
        "cmdb_ci_server",
        server,
        {"operational_status": "1", "comments": "Memory upgraded to 32 GB."},
    )
    # A server is a configuration item too: the parent class reads and writes the same record.
    database = d.cis["lnx-db-01"]
    s.read(
        "cmdb_ci", server, [("sysparm_fields", "name,sys_class_name,operational_status,comments")]
    )
    s.patch("cmdb_ci_server", database, {"operational_status": "3"})
    s.query(
        "cmdb_ci",
        [
            ("sysparm_query", "sys_class_name=cmdb_ci_server^operational_status=3"),
            ("sysparm_fields", "name,sys_class_name"),
        ],
    )
    s.create(
        "incident",
        {
            "caller_id": d.users["olga.petrova"],
            "short_description": "RAID controller battery warning on lnx-db-01",
            "category": "hardware",
            "impact": "2",
            "urgency": "3",
            "cmdb_ci": database,
            "assignment_group": d.groups["Hardware"],
            "assigned_to": d.users["olga.petrova"],
            "contact_type": "email",
        },
    )
    s.query(
        "incident",
        [
            ("sysparm_query", "cmdb_ci.name=lnx-db-01"),
            ("sysparm_fields", "number,cmdb_ci,cmdb_ci.name,priority"),
        ],
    )
    s.patch("cmdb_ci", database, {"short_description": "Linux Red Hat server, RAID battery new"})
    s.patch("cmdb_ci_server", database, {"operational_status": "1"})
    s.read(
        "cmdb_ci_server",
        database,
        [("sysparm_fields", "name,short_description,operational_status,ram")],
    )


def pysnc_style_sync(s: Scribe, d: Directory) -> None:
    """Synchronise incidents the way ServiceNow's Python client does: paged reads, get by id
    and number, insert, update, delete."""
    s.user = ADMIN
    query = [("sysparm_query", "active=true^ORDERBYsys_id"), *PYSNC_READ]
    for offset in (0, 3, 6):
        s.query("incident", [*query, ("sysparm_limit", "3"), ("sysparm_offset", str(offset))])
    # New incidents only: the served mock mints other sys_ids, so the first by sys_id must be
    # a record of the same shape (no resolution or closure stamps) whichever it is.
    first = s.query(
        "incident",
        [
            ("sysparm_query", "state=1^ORDERBYsys_id"),
            *PYSNC_READ,
            ("sysparm_limit", "1"),
            ("sysparm_offset", "0"),
        ],
    )[0]
    number = first["number"]["value"]
    s.read(
        "incident",
        first["sys_id"]["value"],
        [("sysparm_query", "ORDERBYsys_id"), *PYSNC_READ, ("sysparm_limit", "100")],
    )
    s.query(
        "incident",
        [
            ("sysparm_query", f"number={number}^ORDERBYsys_id"),
            *PYSNC_READ,
            ("sysparm_limit", "100"),
            ("sysparm_offset", "0"),
        ],
    )
    created = s.create(
        "incident",
        {
            "short_description": "Synthetic monitor: portal login probe failed",
            "urgency": "2",
        },
        PYSNC_READ,
    )
    s.patch("incident", created["sys_id"]["value"], {"impact": "2"}, PYSNC_READ)
    s.delete("incident", created["sys_id"]["value"])


def error_answers(s: Scribe, d: Directory) -> None:
    """Calls that go wrong: unknown records, an unknown table, a body that is not JSON, an
    empty search."""
    s.user = "aisha.khan"
    missing = "0123456789abcdef0123456789abcdef"
    s.read("incident", missing)
    s.patch("incident", missing, {"state": "2"})
    s.delete("incident", missing)
    s.call("GET", "/api/now/table/incidents", params=[("sysparm_limit", "1")])
    s.call(
        "POST",
        "/api/now/table/incident",
        body=Body("text", "short_description=printer jam", "application/json"),
    )
    s.query("incident", [("sysparm_query", "short_descriptionLIKEzebra"), ("sysparm_limit", "5")])


def unauthenticated(s: Scribe, d: Directory) -> None:
    """Calls without a valid credential are turned away."""
    s.call("GET", "/api/now/table/sys_user", params=[("sysparm_limit", "1")], auth="none")
    s.user = "former.employee"
    s.call("GET", "/api/now/table/incident", params=[("sysparm_limit", "1")])
    s.user = "aisha.khan"
    s.call("GET", "/api/now/table/sys_user", params=[("sysparm_limit", "1")])


def _form(pairs: Iterable[tuple[str, str]]) -> Body:
    return Body("text", urlencode(list(pairs)), "application/x-www-form-urlencoded")


def oauth_clients(s: Scribe, d: Directory) -> None:
    """An integration signs in with OAuth (password, refresh and client-credentials grants)
    and calls the Table API with bearer tokens."""
    s.user = "integration"
    granted = s.call(
        "POST",
        "/oauth_token.do",
        body=_form(
            [
                ("grant_type", "password"),
                ("username", "aisha.khan"),
                ("password", "aisha.khan-pw"),
                ("client_id", CLIENT_ID),
                ("client_secret", "client-secret"),
            ]
        ),
        auth="none",
    )
    s.token = granted.body.value["access_token"]
    s.call(
        "GET",
        "/api/now/table/incident",
        params=[("sysparm_query", "active=true"), ("sysparm_limit", "2")],
        auth="bearer",
    )
    refreshed = s.call(
        "POST",
        "/oauth_token.do",
        body=_form(
            [
                ("grant_type", "refresh_token"),
                ("refresh_token", granted.body.value["refresh_token"]),
                ("client_id", CLIENT_ID),
                ("client_secret", "client-secret"),
            ]
        ),
        auth="none",
    )
    s.token = refreshed.body.value["access_token"]
    s.call(
        "GET",
        "/api/now/table/sys_user_group",
        params=[("sysparm_fields", "name"), ("sysparm_limit", "3")],
        auth="bearer",
    )
    machine = s.call(
        "POST",
        "/oauth_token.do",
        body=_form(
            [
                ("grant_type", "client_credentials"),
                ("client_id", CLIENT_ID),
                ("client_secret", "client-secret"),
            ]
        ),
        auth="none",
    )
    s.token = machine.body.value["access_token"]
    s.call(
        "GET",
        "/api/now/table/cmdb_ci_server",
        params=[("sysparm_fields", "name,ip_address")],
        auth="bearer",
    )
    s.call(
        "POST",
        "/oauth_token.do",
        body=_form(
            [
                ("grant_type", "client_credentials"),
                ("client_id", CLIENT_ID),
                ("client_secret", "wrong"),
            ]
        ),
        auth="none",
    )
    s.token = "expired-token"
    s.call("GET", "/api/now/table/incident", params=[("sysparm_limit", "1")], auth="bearer")


def _batch_item(
    item_id: int, method: str, url: str, body: Mapping[str, Any] | None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": str(item_id),
        "method": method,
        "url": url,
        "headers": [
            {"name": "Accept", "value": "application/json"},
            {"name": "Content-Type", "value": "application/json"},
        ],
    }
    if body is not None:
        item["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    return item


def batch_update(s: Scribe, d: Directory) -> None:
    """Add the same work note to every open hardware incident in one batch call, and delete
    a probe record."""
    s.user = "sam.okafor"
    open_hardware = s.query(
        "incident",
        [
            ("sysparm_query", "active=true^category=hardware^ORDERBYsys_id"),
            ("sysparm_fields", "sys_id"),
        ],
    )
    reads = "?" + urlencode(PYSNC_READ)
    items = [
        _batch_item(
            140000 + index,
            "PATCH",
            f"/api/now/table/incident/{row['sys_id']}{reads}",
            {"work_notes": "Hardware refresh wave 2 will replace this device."},
        )
        for index, row in enumerate(open_hardware)
    ]
    items.append(
        _batch_item(
            140100,
            "PATCH",
            "/api/now/table/incident/0123456789abcdef0123456789abcdef",
            {"state": "2"},
        )
    )
    s.call("POST", "/api/now/v1/batch", body=_json({"batch_request_id": 1, "rest_requests": items}))
    scratch = s.create("incident", {"short_description": "Batch delete probe"})
    s.call(
        "POST",
        "/api/now/v1/batch",
        body=_json(
            {
                "batch_request_id": 2,
                "rest_requests": [
                    _batch_item(
                        140200, "DELETE", f"/api/now/table/incident/{sys_id(scratch)}", None
                    )
                ],
            }
        ),
    )


def _png(width: int, height: int) -> bytes:
    """A plain grey PNG: the smallest real image an attachment test can carry."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data).to_bytes(4, "big")
        return len(data).to_bytes(4, "big") + kind + data + crc

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def attachments(s: Scribe, d: Directory) -> None:
    """Attach the caller's VPN log to the incident, read it back, and remove it."""
    s.user = "tomas.novak"
    vpn = _incident_by_text(s, "VPN drops")
    log = (
        "2026-03-02 09:14:02 tunnel up mtu=1500\n"
        "2026-03-02 09:16:40 tunnel down: fragmentation needed\n"
    )
    uploaded = s.call(
        "POST",
        "/api/now/v1/attachment/file",
        params=[
            ("file_name", "vpn-client.log"),
            ("table_name", "incident"),
            ("table_sys_id", sys_id(vpn)),
        ],
        body=Body("text", log, "text/plain"),
    )
    attachment = _result(uploaded)["sys_id"]
    s.call(
        "GET",
        "/api/now/v1/attachment",
        params=[
            ("sysparm_query", f"table_name=incident^table_sys_id={sys_id(vpn)}"),
            ("sysparm_limit", "100"),
            ("sysparm_offset", "0"),
        ],
    )
    s.call("GET", f"/api/now/v1/attachment/{attachment}")
    s.call("GET", f"/api/now/v1/attachment/{attachment}/file")
    change = s.query("change_request", [("sysparm_query", "type=normal"), ("sysparm_limit", "1")])[
        0
    ]
    s.call(
        "POST",
        "/api/now/v1/attachment/file",
        params=[
            ("file_name", "topology.png"),
            ("table_name", "change_request"),
            ("table_sys_id", sys_id(change)),
        ],
        body=Body("base64", base64.b64encode(_png(24, 16)).decode(), "image/png"),
    )
    s.call(
        "GET",
        "/api/now/v1/attachment",
        params=[("sysparm_query", "content_typeSTARTSWITHimage"), ("sysparm_limit", "10")],
    )
    s.call("DELETE", f"/api/now/v1/attachment/{attachment}")
    s.call("GET", f"/api/now/v1/attachment/{attachment}")


def delete_test_record(s: Scribe, d: Directory) -> None:
    """Remove a test incident and a stale group membership."""
    s.user = "aisha.khan"
    test = s.create(
        "incident",
        {"short_description": "TEST - please ignore", "caller_id": d.users["aisha.khan"]},
    )
    s.delete("incident", sys_id(test))
    s.read("incident", sys_id(test))
    member = s.query(
        "sys_user_grmember",
        [("sysparm_query", f"group={d.groups['Hardware']}^user={d.users['sam.okafor']}")],
    )[0]
    s.user = ADMIN
    s.delete("sys_user_grmember", sys_id(member))


def service_reports(s: Scribe, d: Directory) -> None:
    """Answer the service manager's questions with encoded queries."""
    s.user = "aisha.khan"
    s.query(
        "incident",
        [
            ("sysparm_query", "priorityIN1,2^NQstate=3"),
            ("sysparm_fields", "number,priority,state,assigned_to"),
            ("sysparm_display_value", "true"),
        ],
    )
    s.query(
        "incident",
        [
            (
                "sysparm_query",
                "opened_atBETWEEN2026-03-02 00:00:00@2026-03-02 23:59:59^ORDERBYDESCopened_at",
            ),
            ("sysparm_fields", "number,opened_at,category"),
        ],
    )
    s.query(
        "incident",
        [
            ("sysparm_query", "resolved_atISNOTEMPTY^reopen_count>0"),
            ("sysparm_fields", "number,reopen_count"),
        ],
    )
    s.query(
        "incident",
        [
            (
                "sysparm_query",
                "category!=software^categoryNOT INinquiry,database^short_descriptionNOT LIKEtest",
            ),
            ("sysparm_fields", "number,category"),
            ("sysparm_exclude_reference_link", "true"),
        ],
    )
    s.query(
        "incident",
        [
            (
                "sysparm_query",
                "assigned_to.user_name=tomas.novak^ORassigned_to.user_name=olga.petrova",
            ),
            ("sysparm_fields", "number,assigned_to.name"),
        ],
    )
    s.query(
        "sys_audit",
        [
            ("sysparm_query", "tablename=incident^fieldname=state^newvalue=6"),
            ("sysparm_fields", "documentkey,oldvalue,newvalue,user,sys_created_on"),
        ],
    )
    s.query("problem", [("sysparm_limit", "10")])
    s.query("change_request", [("sysparm_query", "active=false"), ("sysparm_limit", "10")])
    s.query(
        "sys_journal_field",
        [("sysparm_query", "name=incident^element=comments"), ("sysparm_limit", "5")],
    )
    s.query("incident", [("sysparm_query", "state=7"), ("sysparm_limit", "5")])


def smoke_test(s: Scribe, d: Directory) -> None:
    """An administrator checks every table end to end with a scratch record: create, read, list,
    update with PATCH and with PUT, delete; and reads the system tables."""
    change = s.query("change_request", [("sysparm_limit", "1")])[0]
    request = s.query("sc_request", [("sysparm_limit", "1")])[0]
    scratch: dict[str, dict[str, Any]] = {
        "incident": {"short_description": "Smoke test"},
        "problem": {"short_description": "Smoke test"},
        "change_request": {"short_description": "Smoke test", "type": "standard"},
        "change_task": {"short_description": "Smoke test", "change_request": sys_id(change)},
        "sc_request": {"short_description": "Smoke test"},
        "sc_req_item": {"short_description": "Smoke test", "request": sys_id(request)},
        "sys_user": {"user_name": "smoke.test", "first_name": "Smoke", "last_name": "Test"},
        "sys_user_group": {"name": "Smoke Test"},
        "sys_user_grmember": {"user": d.users["sam.okafor"], "group": d.groups["Database"]},
        "cmdb_ci": {"name": "smoke-ci"},
        "cmdb_ci_server": {"name": "smoke-server"},
        "cmdb_ci_appl": {"name": "Smoke App"},
        "kb_knowledge": {"short_description": "Smoke test"},
        "kb_knowledge_base": {"title": "Smoke KB"},
        "kb_category": {"label": "Smoke"},
        "sc_category": {"title": "Smoke"},
        "sc_cat_item": {"name": "Smoke Item"},
        "item_option_new": {"name": "smoke", "question_text": "Smoke?"},
        # An approval of a record by its table and id, as approvals of records that are no
        # tasks are kept; not yet requested.
        "sysapproval_approver": {
            "source_table": "change_request",
            "document_id": sys_id(change),
            "approver": d.users["carlos.mendes"],
            "state": "not requested",
        },
        "sys_user_role": {"name": "smoke_role"},
        "sys_user_has_role": {"user": d.users["sam.okafor"], "role": d.roles["knowledge"]},
    }
    edits: dict[str, tuple[dict[str, str], dict[str, str]]] = {
        "sys_user": ({"title": "Tester"}, {"title": "Senior Tester", "email": "smoke@example.com"}),
        "sys_user_group": ({"description": "Temporary"}, {"description": "Temporary group"}),
        "sys_user_grmember": (
            {"group": d.groups["Network"]},
            {"group": d.groups["Hardware"], "user": d.users["sam.okafor"]},
        ),
        "cmdb_ci": ({"ip_address": "10.99.0.1"}, {"ip_address": "10.99.0.2"}),
        "cmdb_ci_server": ({"ram": "4096"}, {"ram": "8192", "cpu_count": "2"}),
        "cmdb_ci_appl": ({"version": "0.2"}, {"version": "0.3", "tcp_port": "8080"}),
        "kb_knowledge": ({"text": "<p>Smoke, edited.</p>"}, {"text": "<p>Smoke, replaced.</p>"}),
        "kb_category": ({"value": "smoke"}, {"value": "smoke-2", "label": "Smoke 2"}),
        "sc_cat_item": ({"price": "2.00"}, {"price": "3.00", "short_description": "Smoke"}),
        "item_option_new": ({"mandatory": "true"}, {"mandatory": "false", "default_value": "no"}),
        "sysapproval_approver": (
            {"comments": "Smoke"},
            {"comments": "Smoke again", "due_date": "2026-04-01 00:00:00"},
        ),
        "sys_user_has_role": ({"state": "active"}, {"state": "active", "inherited": "false"}),
    }
    task_edit = ({"description": "Edited"}, {"description": "Replaced", "urgency": "2"})
    for name, values in scratch.items():
        record = s.create(name, values)
        s.read(name, sys_id(record))
        s.query(name, [("sysparm_query", f"sys_id={sys_id(record)}")])
        patch, replace = edits.get(name, task_edit)
        s.patch(name, sys_id(record), patch)
        s.put(name, sys_id(record), replace)
        s.delete(name, sys_id(record))
    for name in ("sys_audit", "sys_journal_field", "task_sla"):
        first = s.query(name, [("sysparm_limit", "1")])[0]
        s.read(name, sys_id(first))


def table_metadata(s: Scribe, d: Directory) -> None:
    """A CMDB integration checks which classes exist and walks each one's parent classes in the
    table dictionary, as discovery tools do before they import."""
    for name in ("cmdb_ci_server", "cmdb_ci_appl", "cmdb_ci_netgear"):
        found = s.query(
            "sys_db_object",
            [("sysparm_limit", "1"), ("name", name), ("sysparm_fields", "name,super_class")],
        )
        parent: Any = found[0]["super_class"] if found else ""
        while parent:
            step = s.read(
                "sys_db_object",
                parent["value"],
                [("sysparm_fields", "name,super_class,is_extendable")],
            )
            parent = step.body.value["result"]["super_class"]
    s.query("sys_db_object", [("sysparm_query", "super_class.name=task"), ("sysparm_limit", "10")])


@dataclass(frozen=True, slots=True)
class Chapter:
    """One session of the corpus: who works, and the workflow whose docstring is the task."""

    slug: str
    user: str
    write: Workflow

    @property
    def task(self) -> str:
        return " ".join((self.write.__doc__ or "").split())


def _setup(s: Scribe, d: Directory) -> None:
    """Onboard the IT organisation: create roles, users, groups, memberships and the
    configuration items the service desk supports; set up the service catalog and the
    knowledge base."""
    setup_directory(s, d)
    setup_catalog(s, d)


CHAPTERS: Final[tuple[Chapter, ...]] = (
    Chapter("setup", ADMIN, _setup),
    Chapter("browse-directory", "aisha.khan", browse_directory),
    Chapter("report-email-outage", "aisha.khan", report_email_outage),
    Chapter("self-service", "marco.rossi", self_service_reports),
    Chapter("triage", "aisha.khan", triage_queue),
    Chapter("assign-outside-group", "aisha.khan", assign_outside_group),
    Chapter("work-notes", "tomas.novak", work_notes),
    Chapter("hold-and-resume", "tomas.novak", hold_and_resume),
    Chapter("resolve-and-close", "tomas.novak", resolve_and_close),
    Chapter("reopen", "jonas.berg", reopen_incident),
    Chapter("escalate", "jonas.berg", escalate_priority),
    Chapter("sla-breach", "jonas.berg", sla_breach),
    Chapter("cancel-duplicate", "nina.sato", cancel_duplicate),
    Chapter("problem", "priya.raman", problem_from_incidents),
    Chapter("normal-change", "carlos.mendes", normal_change),
    Chapter("rejected-change", "tomas.novak", rejected_change),
    Chapter("catalog-request", "nina.sato", catalog_request),
    Chapter("knowledge", "priya.raman", knowledge_articles),
    Chapter("cmdb", "olga.petrova", cmdb_maintenance),
    Chapter("pysnc-sync", ADMIN, pysnc_style_sync),
    Chapter("errors", "aisha.khan", error_answers),
    Chapter("unauthenticated", "aisha.khan", unauthenticated),
    Chapter("oauth", "integration", oauth_clients),
    Chapter("batch", "sam.okafor", batch_update),
    Chapter("attachments", "tomas.novak", attachments),
    Chapter("delete", "aisha.khan", delete_test_record),
    Chapter("reports", "aisha.khan", service_reports),
    Chapter("table-metadata", ADMIN, table_metadata),
    Chapter("smoke-test", ADMIN, smoke_test),
)


# The corpus pauses between chapters; the reference world's timestamps follow the same clock.
CHAPTER_GAP: Final = timedelta(minutes=30)


def build_corpus() -> list[Session]:
    """Every chapter, in order, against one instance: later chapters see earlier records."""
    return run_chapters(Instance(HOST, START))


def run_chapters(instance: Instance) -> list[Session]:
    """Run every chapter against `instance`, in order, one recorded session each."""
    directory = Directory()
    sessions: list[Session] = []
    for number, chapter in enumerate(CHAPTERS, start=1):
        session = Session(
            id=f"itsm-{number:02d}-{chapter.slug}",
            task=chapter.task,
            outcome="success",
            source="myna.backends.itsm.corpus",
        )
        chapter.write(Scribe(instance, session, user=chapter.user), directory)
        instance.advance(CHAPTER_GAP)
        sessions.append(session)
    return sessions


# Tables whose served resource has another name in the model.
_RESOURCE_OF: Final = {"sys_attachment": "attachment"}


def initial_records() -> dict[str, list[dict[str, Any]]]:
    """The reference instance as the corpus found it (before its first call), as seed records
    per model resource."""
    return instance_records(Instance(HOST, START))


def instance_records(instance: Instance) -> dict[str, list[dict[str, Any]]]:
    """Every row of `instance` as the Table API reads it back (references as `{link, value}`,
    values as strings), per model resource, in insertion order.

    A record of a class is also a row of each parent class it extends (a server is a
    `cmdb_ci` too, with the parent's columns), as the platform keeps one record for the whole
    hierarchy (PROTOCOL.md §2.6)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, rows in instance.rows.items():
        for row in rows.values():
            for holder in (name, *ancestors(name)):
                if holder in instance.rows:
                    rendered = instance.render(holder, row, {})
                    out.setdefault(_RESOURCE_OF.get(holder, holder), []).append(rendered)
    return out


def main(argv: list[str] | None = None) -> None:
    corpus_command(
        argv, __doc__.splitlines()[0] if __doc__ else None, build_corpus, initial_records
    )


if __name__ == "__main__":
    main()
