"""Realistic names for the opaque labels public ITSM datasets use ("Group 56", "Symptom 72").

The UCI event log and Myna's synthetic export code every group, location, category, symptom,
item and person as a word and a number. A benchmark built on them reads like a puzzle of numbers:
an agent matches "Symptom 72" to "Symptom 72" without reading anything, and look-alike records
differ only in a digit. `realistic_names` gives each coded label a name from a curated vocabulary
(people a Faker persona), so instructions, records and notes read as a service desk's would.

Only coded kinds are renamed: a kind is renamed when every one of its labels in the history is a
word and a number, so an export with real names keeps them all. The mapping is injective per kind
(two labels never merge into one entity), keeps every sys_id (ids derive from the source labels),
and is deterministic per seed: a label's name is picked by a keyed hash of the label, probing past
names already taken, in label order.

Subcategories and symptoms follow their category: each category is given a domain (email,
network, ERP...), and a subcategory or symptom takes a component and a fault of the domain of the
category it is most often filed under, so "Outlook keeps crashing (Email / Outlook)" rather than
a symptom from one domain under a category of another.

Names never hold the characters instructions and encoded queries use as delimiters
(`.,()"^=`), so a script that reads an instruction or writes a query meets them as any name.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from myna.itsm.importers.model import Category, Incident, IncidentHistory, User
from myna.itsm.pseudonymise import Persona, Pseudonymiser

__all__ = ["CODED", "realistic_names"]

CODED: Final = re.compile(r"[A-Za-z_]+(?: +[A-Za-z_]+)* +\d+")
"""A coded label: words and a number ("Group 56", "Opened by  8", "cmdb_ci 31")."""


@dataclass(frozen=True, slots=True)
class Domain:
    """A part of the estate: the categories it files under, its components, its faults."""

    categories: tuple[str, ...]
    components: tuple[str, ...]
    faults: tuple[str, ...]
    """Each with `{c}` for the component, read as the start of a sentence or after it."""


_GENERIC_FAULTS: Final = (
    "{c} is very slow",
    "{c} stopped responding",
    "{c} shows an error on start",
    "{c} fails since the latest update",
    "no access to {c}",
    "{c} is down for the whole team",
    "{c} intermittently unavailable",
)

DOMAINS: Final[tuple[Domain, ...]] = (
    Domain(
        ("Email", "Messaging", "Collaboration", "Video Conferencing", "Calendaring"),
        (
            "Outlook",
            "shared mailbox",
            "Teams",
            "Teams meetings",
            "Zoom Rooms",
            "distribution list",
            "calendar sharing",
            "Webex",
            "SharePoint site",
            "OneDrive sync",
            "mobile mail",
            "meeting room display",
        ),
        (
            "{c} keeps crashing",
            "{c} does not receive new messages",
            "{c} asks for the password again and again",
            "{c} drops the call after a few minutes",
        ),
    ),
    Domain(
        ("Network", "Remote Access", "Wireless", "DNS and DHCP", "Firewall"),
        (
            "VPN client",
            "office Wi-Fi",
            "guest Wi-Fi",
            "core switch",
            "branch router",
            "firewall rule",
            "proxy server",
            "load balancer",
            "DNS resolution",
            "DHCP lease",
            "network port",
            "SD-WAN link",
        ),
        (
            "{c} keeps disconnecting",
            "cannot connect through {c}",
            "{c} drops packets",
            "{c} times out",
        ),
    ),
    Domain(
        ("Hardware", "Laptops", "Desktops", "Peripherals", "Docking and Displays"),
        (
            "laptop",
            "docking station",
            "external monitor",
            "keyboard",
            "headset",
            "webcam",
            "desktop PC",
            "laptop battery",
            "USB-C charger",
            "thin client",
            "wireless mouse",
            "smart card reader",
        ),
        (
            "{c} will not power on",
            "{c} is not detected",
            "{c} overheats",
            "{c} is physically damaged",
        ),
    ),
    Domain(
        ("Printing", "Scanning", "Document Management", "Copiers", "Records Management"),
        (
            "floor printer",
            "label printer",
            "print queue",
            "scan to email",
            "document scanner",
            "plotter",
            "badge printer",
            "print server",
            "DocuSign",
            "records archive",
        ),
        (
            "{c} jams on every job",
            "{c} prints blank pages",
            "jobs stuck in {c}",
            "{c} rejects the badge",
        ),
    ),
    Domain(
        ("Access Management", "Identity", "Security", "Certificates", "Endpoint Protection"),
        (
            "Active Directory account",
            "Okta sign-in",
            "multi-factor prompt",
            "password reset portal",
            "shared drive permissions",
            "admin rights request",
            "smart card certificate",
            "phishing report button",
            "antivirus agent",
            "disk encryption",
            "privileged access vault",
            "guest account",
        ),
        (
            "{c} is locked",
            "{c} rejects valid credentials",
            "{c} flags a false alarm",
            "{c} expired",
        ),
    ),
    Domain(
        ("ERP", "Finance Systems", "Procurement", "Payroll", "Expenses"),
        (
            "SAP GUI",
            "SAP Fiori launchpad",
            "purchase order approval",
            "invoice matching",
            "month-end close",
            "expense claims",
            "payroll run",
            "vendor master data",
            "cost centre report",
            "Oracle Financials",
            "budget planning tool",
            "goods receipt posting",
        ),
        (
            "{c} posts to the wrong period",
            "{c} hangs on save",
            "{c} is missing entries",
            "{c} shows an authorisation error",
        ),
    ),
    Domain(
        ("CRM", "Sales Systems", "Customer Service", "Contact Centre", "Marketing Systems"),
        (
            "Salesforce",
            "Dynamics 365",
            "quote generator",
            "lead assignment",
            "customer portal",
            "Genesys softphone",
            "call recording",
            "IVR menu",
            "case routing",
            "CPQ pricing",
            "partner portal",
            "live chat widget",
        ),
        (
            "{c} loses unsaved changes",
            "{c} routes to the wrong team",
            "{c} shows stale data",
            "{c} has no dial tone",
        ),
    ),
    Domain(
        ("Database", "Data Platform", "Reporting", "Analytics", "Data Integration"),
        (
            "Power BI report",
            "Tableau dashboard",
            "Snowflake warehouse",
            "nightly ETL job",
            "SQL Server instance",
            "PostgreSQL replica",
            "data export",
            "KPI dashboard",
            "Oracle database",
            "Kafka topic",
            "report subscription",
            "data lake ingestion",
        ),
        (
            "{c} shows yesterday's figures",
            "{c} runs out of space",
            "{c} refuses new connections",
            "{c} fails overnight",
        ),
    ),
    Domain(
        (
            "Software",
            "Desktop Applications",
            "Operating System",
            "Software Distribution",
            "Licensing",
        ),
        (
            "Excel",
            "Word",
            "Adobe Acrobat",
            "Chrome",
            "Windows update",
            "macOS upgrade",
            "Company Portal",
            "Java runtime",
            "Visio",
            "AutoCAD",
            "Citrix Workspace",
            "software installation",
        ),
        (
            "{c} keeps crashing",
            "{c} will not install",
            "{c} licence not found",
            "{c} opens files read-only",
        ),
    ),
    Domain(
        ("Infrastructure", "Servers", "Storage", "Backup", "Virtualisation"),
        (
            "file server",
            "NetApp share",
            "backup job",
            "VMware host",
            "Linux server",
            "Windows server",
            "Kubernetes cluster",
            "restore request",
            "SAN volume",
            "cloud VM",
            "batch scheduler",
            "monitoring agent",
        ),
        (
            "{c} runs out of disk space",
            "{c} backup failed",
            "{c} reboots unexpectedly",
            "{c} alerts on high CPU",
        ),
    ),
    Domain(
        ("Web and Intranet", "Service Portal", "Developer Tools", "Integration", "Source Control"),
        (
            "intranet page",
            "HR portal",
            "self-service portal",
            "GitLab pipeline",
            "Jira board",
            "Confluence space",
            "API gateway",
            "MuleSoft flow",
            "SSO redirect",
            "company website",
            "Jenkins build",
            "webhook delivery",
        ),
        (
            "{c} returns a 500 error",
            "{c} loads a blank page",
            "{c} redirects in a loop",
            "{c} queues without running",
        ),
    ),
    Domain(
        ("Telephony", "Mobile Devices", "Facilities IT", "Audio Visual", "Conference Rooms"),
        (
            "desk phone",
            "mobile phone",
            "company iPhone",
            "SIM card",
            "voicemail",
            "conference speaker",
            "meeting room projector",
            "door badge reader",
            "digital signage",
            "Intune enrolment",
            "hunt group",
            "room booking panel",
        ),
        (
            "{c} has no signal",
            "{c} will not enrol",
            "{c} has no sound",
            "{c} shows the wrong time",
        ),
    ),
)

TEAMS: Final = (
    "Service Desk",
    "Desktop Support",
    "Network Operations",
    "Server Operations",
    "Database Administration",
    "Identity and Access",
    "Messaging Support",
    "Collaboration Tools",
    "ERP Support",
    "CRM Support",
    "Application Support",
    "Field Services",
    "Security Operations",
    "Storage and Backup",
    "Cloud Platform",
    "Telephony Services",
    "Print Services",
    "End User Computing",
    "Integration Services",
    "Web Services",
    "Data Platform",
    "HR Systems",
    "Finance Systems",
    "Facilities IT",
)
REGIONS: Final = ("EMEA", "Americas", "APAC", "UK", "Nordics", "DACH", "Iberia", "India")
CITIES: Final = (
    "London",
    "Manchester",
    "Leeds",
    "Glasgow",
    "Dublin",
    "Paris",
    "Lyon",
    "Madrid",
    "Barcelona",
    "Lisbon",
    "Porto",
    "Milan",
    "Rome",
    "Munich",
    "Berlin",
    "Hamburg",
    "Frankfurt",
    "Zurich",
    "Vienna",
    "Prague",
    "Warsaw",
    "Krakow",
    "Amsterdam",
    "Rotterdam",
    "Brussels",
    "Copenhagen",
    "Stockholm",
    "Oslo",
    "Helsinki",
    "Tallinn",
    "New York",
    "Boston",
    "Chicago",
    "Atlanta",
    "Dallas",
    "Austin",
    "Denver",
    "Seattle",
    "Toronto",
    "Montreal",
    "Mexico City",
    "Sao Paulo",
    "Bangalore",
    "Pune",
    "Singapore",
    "Sydney",
    "Melbourne",
    "Tokyo",
    "Seoul",
    "Johannesburg",
)
SITES: Final = ("Office", "Campus", "Data Centre", "Distribution Centre", "Branch")
SYSTEMS: Final = (
    "SAP ERP",
    "Salesforce",
    "Exchange",
    "SharePoint",
    "Workday",
    "Oracle Financials",
    "Citrix",
    "Jira",
    "Confluence",
    "Active Directory",
    "Okta",
    "Tableau",
    "Kafka",
    "PostgreSQL",
    "Jenkins",
    "GitLab",
    "Kubernetes",
    "vCenter",
    "NetApp",
    "Cisco ISE",
    "Palo Alto firewall",
    "F5 load balancer",
    "Zscaler",
    "Genesys",
    "Dynamics 365",
    "Power BI",
    "Snowflake",
    "MuleSoft",
    "Coupa",
    "Concur",
)
STAGES: Final = ("production", "staging", "disaster recovery", "EMEA cluster", "US cluster")


def _pick(seed: int, kind: str, labels: Iterable[str], names: Sequence[str]) -> dict[str, str]:
    """Each label to a distinct name: the one a keyed hash of the label points at, or the next
    free one after it; labels beyond the vocabulary get its names again, numbered."""
    if not names:
        return {}
    taken: set[str] = set()
    out: dict[str, str] = {}
    for label in sorted(set(labels), key=_natural):
        digest = hashlib.sha256(f"{seed}\x00{kind}\x00{label}".encode()).digest()
        start = int.from_bytes(digest[:8], "big")
        for step in range(len(names) * 2 + len(taken)):
            base = names[(start + step) % len(names)]
            name = base if step < len(names) else f"{base} {2 + (step - len(names)) // len(names)}"
            if name not in taken:
                break
        taken.add(name)
        out[label] = name
    return out


def _natural(label: str) -> tuple[str, int]:
    word, _, number = label.rpartition(" ")
    return (word, int(number)) if number.isdigit() else (label, -1)


def _coded(labels: Iterable[str]) -> bool:
    """Whether a kind's labels are all codes (and there is at least one)."""
    seen = list(labels)
    return bool(seen) and all(CODED.fullmatch(label) for label in seen)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True, slots=True)
class _Naming:
    """The renaming of one history: per kind, coded label -> name (empty: kept as it is)."""

    groups: dict[str, str]
    locations: dict[str, str]
    items: dict[str, str]
    categories: dict[str, str]
    subcategories: dict[str, str]
    symptoms: dict[str, str]

    @staticmethod
    def of(history: IncidentHistory, seed: int) -> _Naming:
        categories = _category_names(history, seed)
        domain_of = {label: _domain(name) for label, name in categories.items()}
        return _Naming(
            groups=_named(seed, "group", (g.name for g in history.groups.values()), _groups()),
            locations=_named(
                seed, "location", (loc.name for loc in history.locations.values()), _locations()
            ),
            items=_named(seed, "item", (i.name for i in history.cis.values()), _items()),
            categories=categories,
            subcategories=_by_domain(
                seed, "subcategory", history, lambda i: i.subcategory, domain_of, _components
            ),
            symptoms=_by_domain(
                seed, "symptom", history, lambda i: i.symptom, domain_of, _symptoms
            ),
        )


def _named(seed: int, kind: str, labels: Iterable[str], names: Sequence[str]) -> dict[str, str]:
    seen = list(labels)
    return _pick(seed, kind, seen, names) if _coded(seen) else {}


def _groups() -> list[str]:
    return [f"{team} {region}" for team in TEAMS for region in REGIONS]


def _locations() -> list[str]:
    return [f"{city} {site}" for city in CITIES for site in SITES]


def _items() -> list[str]:
    return [f"{system} {stage}" for system in SYSTEMS for stage in STAGES]


def _category_names(history: IncidentHistory, seed: int) -> dict[str, str]:
    labels = list(history.categories)
    names = [name for domain in DOMAINS for name in domain.categories]
    return _named(seed, "category", labels, names)


def _domain(category: str) -> Domain:
    """The domain a category name is from (a numbered one, past the vocabulary, too)."""
    base = category.rpartition(" ")[0]
    return next(d for d in DOMAINS if category in d.categories or base in d.categories)


ASPECTS: Final = ("", " access", " performance", " configuration", " licensing")
"""Subcategories are a domain's components, alone or with one of these."""


def _components(domain: Domain) -> list[str]:
    return [_capital(f"{c}{aspect}") for c in domain.components for aspect in ASPECTS]


def _symptoms(domain: Domain) -> list[str]:
    faults = (*domain.faults, *_GENERIC_FAULTS)
    return [_capital(fault.format(c=c)) for c in domain.components for fault in faults]


def _by_domain(
    seed: int,
    kind: str,
    history: IncidentHistory,
    value: Callable[[Incident], str | None],
    domain_of: Mapping[str, Domain],
    names: Callable[[Domain], list[str]],
) -> dict[str, str]:
    """Names for a kind filed under categories: each label from the vocabulary of the domain of
    the category its incidents most often have, spilling into the other domains' when that one
    runs out (and taking from all of them when categories are not coded), distinct overall."""
    filed: dict[str, Counter[str]] = {}
    for incident in history.incidents:
        label = value(incident)
        if label is not None:
            filed.setdefault(label, Counter())[incident.category or ""] += 1
    if not _coded(filed):
        return {}
    by_domain: dict[int, list[str]] = {}
    for label, counts in filed.items():
        domain = next((domain_of[c] for c, _ in counts.most_common() if c in domain_of), None)
        by_domain.setdefault(-1 if domain is None else DOMAINS.index(domain), []).append(label)
    everything = [name for domain in DOMAINS for name in names(domain)]
    out: dict[str, str] = {}
    spilled: list[str] = []
    for at, labels in sorted(by_domain.items()):
        if at < 0:
            spilled += labels
            continue
        pool = names(DOMAINS[at])
        ordered = sorted(labels, key=_natural)
        out |= _pick(seed, f"{kind}:{at}", ordered[: len(pool)], pool)
        spilled += ordered[len(pool) :]
    taken = set(out.values())
    rest = [name for name in everything if name not in taken]
    return out | _pick(seed, kind, spilled, rest)


def realistic_names(history: IncidentHistory, seed: int = 0) -> IncidentHistory:
    """`history` with its coded labels named realistically (see the module docstring)."""
    naming = _Naming.of(history, seed)
    people = _people(history, seed) if _coded(u.name for u in history.users.values()) else {}

    def person(user: User) -> User:
        persona = people.get(user.sys_id)
        if persona is None:
            return user
        return replace(
            user,
            name=persona.name,
            user_name=persona.user_name,
            email=persona.email,
            first_name=persona.first_name,
            last_name=persona.last_name,
        )

    return replace(
        history,
        incidents=tuple(_incident(incident, naming) for incident in history.incidents),
        users={key: person(user) for key, user in history.users.items()},
        groups={k: replace(g, name=_of(naming.groups, g.name)) for k, g in history.groups.items()},
        locations={
            k: replace(loc, name=_of(naming.locations, loc.name))
            for k, loc in history.locations.items()
        },
        cis={k: replace(ci, name=_of(naming.items, ci.name)) for k, ci in history.cis.items()},
        categories={
            _of(naming.categories, name): Category(
                _of(naming.categories, name),
                frozenset(_of(naming.subcategories, s) for s in category.subcategories),
            )
            for name, category in history.categories.items()
        },
    )


def _people(history: IncidentHistory, seed: int) -> dict[str, Persona]:
    """A Faker persona per user, by sys_id, no two with one name (an answer or a note names a
    person by name, which must tell people apart): a taken name is drawn again."""
    personas = Pseudonymiser(f"myna-itsm-names:{seed}")
    taken: set[str] = set()
    out: dict[str, Persona] = {}
    for sys_id, user in sorted(history.users.items(), key=lambda item: _natural(item[1].key)):
        persona = personas.persona(user.key)
        draw = 1
        while persona.name in taken:
            draw += 1
            persona = personas.persona(f"{user.key} #{draw}")
        taken.add(persona.name)
        out[sys_id] = persona
    return out


def _of(names: Mapping[str, str], label: str) -> str:
    return names.get(label, label)


def _maybe(names: Mapping[str, str], label: str | None) -> str | None:
    return None if label is None else names.get(label, label)


def _incident(incident: Incident, naming: _Naming) -> Incident:
    return replace(
        incident,
        category=_maybe(naming.categories, incident.category),
        subcategory=_maybe(naming.subcategories, incident.subcategory),
        symptom=_maybe(naming.symptoms, incident.symptom),
    )
