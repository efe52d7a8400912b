"""What a single value looks like: id classes for path segments and formats for string fields.

Everything here is a pure function of one string, called once per path segment and once per
string leaf of every sampled body, so each check dispatches on cheap facts (length, a character
at a fixed position) before it touches a regular expression.
"""

from __future__ import annotations

import re
from typing import Literal

ValueClass = Literal[
    "integer",  # 10010
    "uuid",  # any version, with dashes
    "hex32",  # ServiceNow sys_id
    "ulid",  # 26 Crockford base32 characters
    "salesforce",  # 15 or 18 characters starting with a 3-character key prefix
    "key",  # PROJ-123, INC0010001
    "prefixed",  # cus_9s8d7f6g5h
    "date",  # 2024-04-16
    "version",  # v50.0, v2
    "word",  # incident, sys_user, transitions, Account
    "other",
]

ID_CLASSES: frozenset[ValueClass] = frozenset(
    {"integer", "uuid", "hex32", "ulid", "salesforce", "key", "prefixed", "date"}
)
"""Classes that on their own say "this segment is an identifier, not a route literal"."""

_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_SALESFORCE = re.compile(r"[a-zA-Z0-9]{15}(?:[A-Z0-5]{3})?")
_SALESFORCE_SUFFIX = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
_KEY = re.compile(r"([A-Z][A-Z0-9_]*-)([0-9]+)|([A-Z]{2,6})([0-9]{4,})")
_PREFIXED = re.compile(r"([a-z]{2,8}_)[A-Za-z0-9]{6,}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_VERSION = re.compile(r"v[0-9]+(?:\.[0-9]+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z_.\-]*")


def spells_int(text: str) -> bool:
    """Whether `text` is a non-negative integer written in ASCII digits (`str.isdigit` also
    takes `¹` and `٣`, which `int` refuses)."""
    return text.isascii() and text.isdigit()


def classify_segment(value: str) -> ValueClass:
    """The class of one path segment (or any id-like string)."""
    length = len(value)
    if not length:
        return "other"
    if value.isdigit():
        return "integer"
    if length == 32 and _HEX32.fullmatch(value):
        return "hex32"
    if length == 36 and value[8] == "-" and _UUID.fullmatch(value):
        return "uuid"
    if length == 26 and _ULID.fullmatch(value):
        return "ulid"
    if length == 10 and value[4] == "-" and _DATE.fullmatch(value):
        return "date"
    if value[0] == "v" and _VERSION.fullmatch(value):
        return "version"
    if _KEY.fullmatch(value):
        return "key"
    if (length in (15, 18)) and _is_salesforce_id(value):
        return "salesforce"
    if "_" in value and _PREFIXED.fullmatch(value) and _mixes_digits(value[value.index("_") :]):
        return "prefixed"
    if _WORD.fullmatch(value):
        return "word"
    return "other"


def _is_salesforce_id(value: str) -> bool:
    """15 alphanumerics with some digits; an 18-character id must carry its case checksum."""
    if not _SALESFORCE.fullmatch(value) or sum(char.isdigit() for char in value) < 4:
        return False
    if len(value) == 15:
        return True
    suffix = ""
    for chunk in (value[0:5], value[5:10], value[10:15]):
        bits = sum(1 << index for index, char in enumerate(chunk) if "A" <= char <= "Z")
        suffix += _SALESFORCE_SUFFIX[bits]
    return suffix == value[15:]


def _mixes_digits(value: str) -> bool:
    return any(char.isdigit() for char in value) and any(char.isalpha() for char in value)


Format = Literal[
    "date-time",  # ISO 8601 with T
    "date-time-space",  # YYYY-MM-DD HH:MM:SS (ServiceNow)
    "date",
    "email",
    "uri",
    "uuid",
    "ipv4",
    "hex32",
    "integer-string",
    "number-string",
    "boolean-string",
    "empty",
]

_ISO_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
)
SPACED_DATETIME = r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}"
"""ServiceNow's timestamps (`2024-04-14 19:29:09`), as a regular expression."""
_SPACE_DATETIME = re.compile(SPACED_DATETIME)
_EMAIL = re.compile(r"[^@\s:/]+@[^@\s:/]+\.[A-Za-z]{2,}")
_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"
)
_NUMBER = re.compile(r"-?[0-9]+\.[0-9]+")
_INTEGER = re.compile(r"-?[0-9]+")


def string_format(value: str) -> Format | None:
    """The format of a string leaf, or None for free text."""
    length = len(value)
    if not length:
        return "empty"
    first = value[0]
    if first.isdigit() or first == "-":
        if length == 19 and value[10] == " " and _SPACE_DATETIME.fullmatch(value):
            return "date-time-space"
        if length >= 16 and value[10:11] == "T" and _ISO_DATETIME.fullmatch(value):
            return "date-time"
        if length == 10 and value[4] == "-" and _DATE.fullmatch(value):
            return "date"
        if length == 32 and _HEX32.fullmatch(value):
            return "hex32"
        if length == 36 and value[8] == "-" and _UUID.fullmatch(value):
            return "uuid"
        if length <= 18 and _INTEGER.fullmatch(value):
            return "integer-string"
        if _NUMBER.fullmatch(value):
            return "number-string"
        if length <= 15 and value.count(".") == 3 and _IPV4.fullmatch(value):
            return "ipv4"
    if value == "true" or value == "false":
        return "boolean-string"
    if length == 32 and _HEX32.fullmatch(value):
        return "hex32"
    if length == 36 and value[8:9] == "-" and _UUID.fullmatch(value):
        return "uuid"
    if (
        first == "h"
        and (value.startswith("https://") or value.startswith("http://"))
        and "{" not in value
        and " " not in value
    ):
        # `https://api.github.com/users/x/following{/other_user}` is a URL template, no URI.
        return "uri"
    if "@" in value and " " not in value and _EMAIL.fullmatch(value):
        return "email"
    return None


JSON_SCHEMA_FORMAT: dict[Format, str] = {
    "date-time": "date-time",
    "date-time-space": "date-time",
    "date": "date",
    "email": "email",
    "uri": "uri",
    "uuid": "uuid",
    "ipv4": "ipv4",
}
"""The standard JSON Schema `format` for each detected string format that has one."""

ID_PATTERNS: dict[ValueClass, str] = {
    "integer": "^[0-9]+$",
    "uuid": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "hex32": "^[0-9a-f]{32}$",
    "ulid": "^[0-7][0-9A-HJKMNP-TV-Z]{25}$",
    "salesforce": "^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$",
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
}


def key_parts(value: str) -> tuple[str, int, int] | None:
    """Split a sequence key into (prefix, number, digits): `INC0010001` -> ("INC", 10001, 7)."""
    match = _KEY.fullmatch(value)
    if match is None:
        return None
    prefix = match.group(1) or match.group(3)
    digits = match.group(2) or match.group(4)
    return prefix, int(digits), len(digits)


def prefix_of(value: str) -> str | None:
    """The literal prefix of a prefixed id: `cus_9s8d7f6g` -> `cus_`."""
    match = _PREFIXED.fullmatch(value)
    return match.group(1) if match else None
