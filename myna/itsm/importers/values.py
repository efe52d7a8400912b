"""Parsing of the cell values ticket exports contain, and ServiceNow's incident vocabularies.

Every parser is a small pure function that returns `None` for a missing value and raises
`ValueError` (with the expected form in its message) for a value it cannot read; the readers turn
that into an `InputError` for a required column or an `ImportIssue` for an optional one.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import IntEnum
from functools import lru_cache

# Exports mark "no value" in several ways: UCI writes `?`, spreadsheets `NULL`/`N/A`, BPIC 2014
# `#N/B` (Dutch Excel) and `NA`/`NS` ("not specified") in its impact and priority columns.
MISSING_MARKERS = frozenset({"", "?", "null", "none", "n/a", "na", "ns", "#n/b", "#n/a", "-"})

_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})

# Day-first, as the UCI log (DD/MM/YYYY HH:MM, DD-MM-YYYY HH:MM once re-saved by a spreadsheet)
# and BPIC 2014 write it; ISO as ServiceNow writes it. Month-first dates are not accepted: an
# export cannot say which it uses, and guessing would silently swap days and months.
_DAY_FIRST = re.compile(
    r"(?P<d>\d{1,2})[-/.](?P<m>\d{1,2})[-/.](?P<y>\d{4})"
    r"(?:[ T](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?)?"
)
_ISO = re.compile(
    r"(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})"
    r"(?:[ T](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.\d+)?)?)?Z?"
)
_LABEL_NUMBER = re.compile(r"\s*(?P<n>\d+)\s*(?:-\s*(?P<label>.*\S))?\s*")
_SPACES = re.compile(r"\s+")

SERVICENOW_DATETIME = "%Y-%m-%d %H:%M:%S"


def is_missing(value: str | None) -> bool:
    return value is None or _clean(value) is None


# The parsers are pure and exports repeat a handful of distinct values per column, so the small
# caches below make per-cell parsing nearly free on large logs.


def clean(value: str | None) -> str | None:
    """The value with surrounding and repeated blanks collapsed, or None when it is missing.

    UCI writes "Opened by  8" with two spaces in some columns and one in others; collapsing them
    keeps one person one key.
    """
    return None if value is None else _clean(value)


@lru_cache(maxsize=65536)
def _clean(value: str) -> str | None:
    # Exports repeat a few thousand distinct labels across every row; caching makes this free.
    if value.strip().lower() in MISSING_MARKERS:
        return None
    return _SPACES.sub(" ", value.strip())


@lru_cache(maxsize=4096)
def parse_bool(value: str | None) -> bool | None:
    if is_missing(value):
        return None
    assert value is not None
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"expected a boolean (true/false, TRUE/FALSE, yes/no, 1/0), got {value!r}")


def parse_datetime(value: str | None) -> datetime | None:
    if is_missing(value):
        return None
    assert value is not None
    return _parse_datetime(value.strip())


@lru_cache(maxsize=65536)
def _parse_datetime(text: str) -> datetime:
    # Event logs repeat the same few thousand timestamps on every row of an incident; the cache
    # makes parsing them nearly free.
    match = _ISO.fullmatch(text) or _DAY_FIRST.fullmatch(text)
    if match is None:
        raise ValueError(
            f"expected a date and time as DD-MM-YYYY HH:MM, DD/MM/YYYY HH:MM[:SS] or "
            f"YYYY-MM-DD HH:MM:SS, got {text!r}"
        )
    parts = match.groupdict()
    try:
        return datetime(
            int(parts["y"]),
            int(parts["m"]),
            int(parts["d"]),
            int(parts["H"] or 0),
            int(parts["M"] or 0),
            int(parts["S"] or 0),
        )
    except ValueError as invalid:
        raise ValueError(f"{text!r} is not a real date and time ({invalid})") from None


def format_datetime(value: datetime | None) -> str:
    """ServiceNow's wire form of a date-time, `YYYY-MM-DD HH:MM:SS`, or "" for none."""
    return value.strftime(SERVICENOW_DATETIME) if value is not None else ""


@lru_cache(maxsize=4096)
def parse_int(value: str | None) -> int | None:
    if is_missing(value):
        return None
    assert value is not None
    try:
        return int(value.strip())
    except ValueError:
        raise ValueError(f"expected a whole number, got {value!r}") from None


@lru_cache(maxsize=4096)
def parse_level(value: str | None, *, low: int, high: int) -> int | None:
    """A numbered choice such as "3 - Moderate", "3" or "3 -" as its number in [low, high]."""
    if is_missing(value):
        return None
    assert value is not None
    match = _LABEL_NUMBER.fullmatch(value)
    if match is None:
        raise ValueError(f"expected a level {low}..{high} such as '{low} - ...', got {value!r}")
    number = int(match["n"])
    if not low <= number <= high:
        raise ValueError(f"expected a level between {low} and {high}, got {value!r}")
    return number


class IncidentState(IntEnum):
    """ServiceNow's incident state model (the `state` and `incident_state` choice values)."""

    NEW = 1
    IN_PROGRESS = 2
    ON_HOLD = 3
    RESOLVED = 6
    CLOSED = 7
    CANCELED = 8

    @property
    def label(self) -> str:
        return _STATE_LABELS[self]


_STATE_LABELS = {
    IncidentState.NEW: "New",
    IncidentState.IN_PROGRESS: "In Progress",
    IncidentState.ON_HOLD: "On Hold",
    IncidentState.RESOLVED: "Resolved",
    IncidentState.CLOSED: "Closed",
    IncidentState.CANCELED: "Canceled",
}


class HoldReason(IntEnum):
    """ServiceNow's `hold_reason` choices; 2 (Awaiting Evidence) survives in older instances."""

    AWAITING_CALLER = 1
    AWAITING_EVIDENCE = 2
    AWAITING_PROBLEM = 3
    AWAITING_VENDOR = 4
    AWAITING_CHANGE = 5

    @property
    def label(self) -> str:
        return self.name.replace("_", " ").title()


# How source state labels map onto ServiceNow's model. The UCI log comes from a ServiceNow
# instance of 2016 whose on-hold sub-states were states of their own ("Awaiting User Info" and
# so on); today they are On Hold with a hold reason. "Active" was that instance's In Progress.
# BPIC 2014 (HP Service Manager) only exports "Closed"; its other labels are HPSM's own.
STATE_TABLE: dict[str, tuple[IncidentState, HoldReason | None]] = {
    "new": (IncidentState.NEW, None),
    "open": (IncidentState.NEW, None),
    "active": (IncidentState.IN_PROGRESS, None),
    "in progress": (IncidentState.IN_PROGRESS, None),
    "work in progress": (IncidentState.IN_PROGRESS, None),
    "assigned": (IncidentState.IN_PROGRESS, None),
    "reopened": (IncidentState.IN_PROGRESS, None),
    "on hold": (IncidentState.ON_HOLD, None),
    "awaiting user info": (IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
    "awaiting caller": (IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
    # Today's choice list has no Awaiting Evidence; the evidence an agent waits for comes from
    # the caller. An export giving the old code 2 itself still reads as AWAITING_EVIDENCE.
    "awaiting evidence": (IncidentState.ON_HOLD, HoldReason.AWAITING_CALLER),
    "awaiting problem": (IncidentState.ON_HOLD, HoldReason.AWAITING_PROBLEM),
    "awaiting vendor": (IncidentState.ON_HOLD, HoldReason.AWAITING_VENDOR),
    "awaiting change": (IncidentState.ON_HOLD, HoldReason.AWAITING_CHANGE),
    "suspended": (IncidentState.ON_HOLD, None),
    "resolved": (IncidentState.RESOLVED, None),
    "closed": (IncidentState.CLOSED, None),
    "canceled": (IncidentState.CANCELED, None),
    "cancelled": (IncidentState.CANCELED, None),
}


def parse_state(value: str | None) -> tuple[IncidentState, HoldReason | None] | None:
    """A state given as a label ("Awaiting User Info") or a ServiceNow code ("3")."""
    if is_missing(value):
        return None
    assert value is not None
    text = _SPACES.sub(" ", value.strip().lower())
    if text in STATE_TABLE:
        return STATE_TABLE[text]
    if text.isdigit() and int(text) in IncidentState._value2member_map_:
        return IncidentState(int(text)), None
    raise ValueError(
        f"expected an incident state (a ServiceNow code 1, 2, 3, 6, 7, 8 or one of "
        f"{', '.join(sorted(STATE_TABLE))}), got {value!r}"
    )


def parse_hold_reason(value: str | None) -> HoldReason | None:
    if is_missing(value):
        return None
    assert value is not None
    text = value.strip()
    if text.isdigit() and int(text) in HoldReason._value2member_map_:
        return HoldReason(int(text))
    by_label = {reason.label.lower(): reason for reason in HoldReason}
    if text.lower() in by_label:
        return by_label[text.lower()]
    raise ValueError(f"expected a hold reason 1..5 or one of {sorted(by_label)}, got {value!r}")


IMPACT_LABELS = {1: "1 - High", 2: "2 - Medium", 3: "3 - Low"}
URGENCY_LABELS = IMPACT_LABELS
PRIORITY_LABELS = {
    1: "1 - Critical",
    2: "2 - High",
    3: "3 - Moderate",
    4: "4 - Low",
    5: "5 - Planning",
}

# ServiceNow's default priority lookup (dl_u_priority): rows are impact, columns urgency.
PRIORITY_MATRIX = {
    (1, 1): 1,
    (1, 2): 2,
    (1, 3): 3,
    (2, 1): 2,
    (2, 2): 3,
    (2, 3): 4,
    (3, 1): 3,
    (3, 2): 4,
    (3, 3): 5,
}


def priority_of(impact: int, urgency: int) -> int:
    return PRIORITY_MATRIX[(impact, urgency)]


# BPIC 2014 (HP Service Manager) grades impact and urgency 1..5; ServiceNow 1..3. Grades 1-2 are
# enterprise- and site-wide (High), 3 department-wide (Medium), 4-5 a person or less (Low).
FIVE_TO_THREE = {1: 1, 2: 1, 3: 2, 4: 3, 5: 3}

# ServiceNow's incident close codes (the choice list since the Utah release).
SERVICENOW_CLOSE_CODES = (
    "Duplicate",
    "Known error",
    "No resolution provided",
    "Resolved by caller",
    "Resolved by change",
    "Resolved by problem",
    "Resolved by request",
    "Solution provided",
    "Workaround provided",
    "User error",
)
_CLOSE_CODE_BY_FOLDED = {code.lower(): code for code in SERVICENOW_CLOSE_CODES}

# The close codes of earlier releases, which exports of older instances carry, onto today's.
LEGACY_CLOSE_CODES = {
    "solved (work around)": "Workaround provided",
    "solved remotely (work around)": "Workaround provided",
    "solved (permanently)": "Solution provided",
    "solved remotely (permanently)": "Solution provided",
    "not solved (not reproducible)": "No resolution provided",
    "not solved (too costly)": "No resolution provided",
    "closed/resolved by caller": "Resolved by caller",
}

# BPIC 2014 closure codes, by what each says happened, onto today's ServiceNow close codes.
# Codes naming the failing component (Software, Hardware, Data...) mean a fix was made.
BPIC_CLOSE_CODES = {
    "software": "Solution provided",
    "hardware": "Solution provided",
    "data": "Solution provided",
    "other": "Solution provided",
    "unknown": "No resolution provided",
    "no error - works as designed": "No resolution provided",
    "operator error": "User error",
    "user error": "User error",
    "user manual not used": "User error",
    "referred": "Resolved by request",
    "questions": "Solution provided",
    "inquiry": "Solution provided",
    "enhancement": "Resolved by change",
    "kerberos error": "Solution provided",
    "wrong registration": "User error",
}


MISSING_CLOSE_CODE = "resolved without a close code, which ServiceNow requires to resolve"


def close_code(value: str | None) -> tuple[str | None, bool]:
    """The close code in today's ServiceNow vocabulary, and whether it could be put in it.

    Codes of earlier releases and of BPIC 2014 are translated; unknown codes come back unchanged.
    """
    text = clean(value)
    if text is None:
        return None, True
    folded = text.lower()
    if folded in _CLOSE_CODE_BY_FOLDED:
        return _CLOSE_CODE_BY_FOLDED[folded], True
    translated = LEGACY_CLOSE_CODES.get(folded) or BPIC_CLOSE_CODES.get(folded)
    if translated is not None:
        return translated, True
    return text, False


# ServiceNow's default incident categories: export label -> stored value.
SERVICENOW_CATEGORIES = {
    "inquiry / help": "inquiry",
    "software": "software",
    "hardware": "hardware",
    "network": "network",
    "database": "database",
}


# Problem and change request states: export label -> stored value. Problems list both the state
# model of Madrid and later (101..107) and the legacy one (1..4), as instances keep either.
PROBLEM_STATES = {
    "new": "101",
    "assess": "102",
    "root cause analysis": "103",
    "fix in progress": "104",
    "resolved": "106",
    "closed": "107",
    "open": "1",
    "known error": "2",
    "pending change": "3",
    "closed/resolved": "4",
}
CHANGE_STATES = {
    "new": "-5",
    "assess": "-4",
    "authorize": "-3",
    "scheduled": "-2",
    "implement": "-1",
    "review": "0",
    "closed": "3",
    "canceled": "4",
    "cancelled": "4",
}


def stored_choice(value: str | None, labels: dict[str, str]) -> tuple[str | None, bool]:
    """A choice given as its stored value or its label, as the stored value; and if it is known."""
    text = clean(value)
    if text is None:
        return None, True
    if text in labels.values():
        return text, True
    folded = text.lower()
    if folded in labels:
        return labels[folded], True
    return text, False
