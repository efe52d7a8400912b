"""Mint ids and sequence values that look like the service's own (`IdFormat`).

Seeding and the runtime's create both use these, so a record made by a client and one made by
the seeder are indistinguishable. Randomness comes from the `random.Random` the caller passes:
seeded for deterministic seeding, a fresh one at run time. Counters (integer ids, `INC0010001`
numbers) come from the caller too (`Transaction.next_sequence`), because they are per world.
"""

from __future__ import annotations

import random
import string
import time
import uuid

from myna.errors import MockError
from myna.schemas.model import IdFormat

__all__ = [
    "counter_name",
    "format_sequence",
    "mint_id",
    "needs_counter",
    "salesforce_checksum",
]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_SALESFORCE_SUFFIX = string.ascii_uppercase + "012345"
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_URL_SAFE = string.ascii_letters + string.digits + "-_"
_ALPHANUMERIC = string.ascii_lowercase + string.digits
_DEFAULT_TOKEN = 22
_DEFAULT_PREFIXED = 14


def needs_counter(fmt: IdFormat) -> bool:
    """Whether values of this format come from a per-world counter."""
    return fmt.kind in ("integer", "sequence")


def counter_name(resource: str, field: str) -> str:
    """The name of the counter behind `resource.field` (the argument to `next_sequence`)."""
    return f"{resource}.{field}"


def format_sequence(fmt: IdFormat, number: int) -> str:
    """A counter value in the format: `INC` + 7 digits -> `INC0010001`; integers as digits."""
    if fmt.kind == "integer":
        return str(number)
    return f"{fmt.prefix}{number:0{fmt.width}d}"


def mint_id(
    fmt: IdFormat, rng: random.Random, *, number: int | None = None, now_ms: int | None = None
) -> str:
    """A new value of the format.

    Counter formats (`needs_counter`) need `number`; ULIDs take their time part from `now_ms`
    (default: the clock), so seeding can pass a fixed one. Integer ids come back as decimal
    strings; convert them where the field's schema says integer.
    """
    kind = fmt.kind
    if kind in ("integer", "sequence"):
        if number is None:
            raise MockError(f"a {kind} id needs a counter value", id_kind=kind)
        return format_sequence(fmt, number)
    if kind == "hex32":
        return f"{rng.getrandbits(128):032x}"
    if kind == "uuid":
        return _uuid4(rng)
    if kind == "ulid":
        stamp = int(time.time() * 1000) if now_ms is None else now_ms
        return _ulid(stamp, rng.getrandbits(80))
    if kind == "salesforce":
        return _salesforce(fmt.prefix, rng)
    if kind == "prefixed":
        width = fmt.width or _DEFAULT_PREFIXED
        return fmt.prefix + "".join(rng.choice(_ALPHANUMERIC) for _ in range(width))
    width = fmt.width or _DEFAULT_TOKEN
    return fmt.prefix + "".join(rng.choice(_URL_SAFE) for _ in range(width))


def salesforce_checksum(id15: str) -> str:
    """The 3-character suffix that makes a 15-character Salesforce id case-insensitive: each
    character encodes which of five characters of the id are upper-case letters."""
    suffix = ""
    for start in (0, 5, 10):
        bits = sum(1 << i for i, char in enumerate(id15[start : start + 5]) if "A" <= char <= "Z")
        suffix += _SALESFORCE_SUFFIX[bits]
    return suffix


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ulid(stamp_ms: int, randomness: int) -> str:
    value = (stamp_ms & ((1 << 48) - 1)) << 80 | randomness
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _salesforce(prefix: str, rng: random.Random) -> str:
    # Key prefix (3), pod (2), reserved "0" (1), then a 9-character base-62 record number.
    key = (prefix or "a00")[:3].ljust(3, "0")
    body = key + "5g0" + "".join(rng.choice(_BASE62) for _ in range(9))
    return body + salesforce_checksum(body)
