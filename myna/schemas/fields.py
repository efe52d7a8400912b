"""Facts about fields and resources: id formats, sequences, references, defaults, conventions
read off record shapes. Pure functions over `Shape` counts and a few samples.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from myna.schemas.model import IdFormat
from myna.schemas.paths import split_path
from myna.schemas.shape import Shape
from myna.schemas.values import ID_PATTERNS, classify_segment, key_parts, prefix_of, spells_int

BOOKKEEPING = re.compile(
    r"^(?:sys_(?:id|created_on|created_by|updated_on|updated_by|mod_count)|created(?:_at|_on|_by)?"
    r"|updated(?:_at|_on|_by)?|modified(?:_at|_on)?|CreatedDate|CreatedById|LastModifiedDate"
    r"|LastModifiedById|SystemModstamp|createdAt|updatedAt)$"
)


NO_DEFAULT = object()


def display_field(shape: Shape, id_name: str) -> str | None:
    for name in ("number", "key", "name", "Name", "title", "summary", "display_name", "user_name"):
        if name in shape.props and name != id_name:
            return name
    return None


def written_blind(shape: Shape, sent: Iterable[Shape]) -> bool:
    """Whether a field the service only ever answered blank is text clients write into: what
    ServiceNow's journal fields (`work_notes`, `comments`) are written becomes a journal entry,
    and the field reads back "". Its answers say nothing of what a client may send."""
    if not shape.strings or shape.formats.keys() != {"empty"}:
        return False
    if shape.count != shape.strings + shape.nulls:
        return False
    return any(request.strings > request.values.get("", 0) for request in sent)


def create_default(name: str, creates: list[tuple[Any, dict[str, Any]]]) -> Any:
    """The value a create answered with when the request left the field out, if always the same
    (as stored: a reference shown as `{link, value}` in one answer and bare in another is one)."""
    values = [stored_default(value) for value in _filled_in(name, creates)]
    if not values or any(value != values[0] for value in values):
        return NO_DEFAULT
    return values[0]


def stamps_caller(name: str, creates: list[tuple[Any, dict[str, Any]]]) -> bool:
    """Whether a reference the service fills on create names whoever called: it is never left
    empty, and its value differs between creates (made by different users). A constant is a
    default (or the one caller the traces had: `caller_stamps` decides by the field's name)."""
    values = [json.dumps(value, sort_keys=True) for value in _filled_in(name, creates)]
    if len(values) < 2 or any(value in _EMPTY_JSON for value in values):
        return False
    return len(set(values)) > 1


_EMPTY_JSON = frozenset({"null", '""', "[]", "{}"})


def _filled_in(name: str, creates: list[tuple[Any, dict[str, Any]]]) -> list[Any]:
    """The values creates that left the field out were answered with."""
    return [
        record[name]
        for request, record in creates
        if isinstance(request, dict) and name not in request and name in record
    ]


def stored_default(default: Any) -> Any:
    """A default as the mock stores it: a ServiceNow reference answered as `{link, value}` is
    held as its id (`global`), which the renderer links again; anything else as answered."""
    if isinstance(default, dict) and "link" in default and "value" in default:
        return default["value"]
    return default


def sequence_format(shape: Shape) -> IdFormat | None:
    """`INC0010001`-style numbering: one prefix, one width, across every sampled value."""
    if not shape.sample or (not shape.overflow and len(shape.values) < 2):
        return None
    parts = [key_parts(value) for value in shape.sample]
    if any(part is None for part in parts) or "empty" in shape.formats:
        return None
    prefixes = {part[0] for part in parts if part}
    widths = {part[2] for part in parts if part}
    if len(prefixes) != 1 or len(widths) != 1:
        return None
    top = key_parts(shape.max_string)
    if top is None:
        return None
    prefix, number, width = top
    return IdFormat(
        kind="sequence",
        prefix=prefix,
        width=width,
        start=number + 1,
        pattern=f"^{re.escape(prefix)}[0-9]{{{width}}}$",
    )


_MOSTLY = 0.9
"""Share of a resource's ids in one class that makes it the class new ids are minted in: a
few odd values (a page id spelt without its dashes in a URL) do not make the ids opaque."""


def id_format(ids: set[str], shape: Shape) -> IdFormat:
    """How the resource's ids look, so the mock can mint new ones like them."""
    values = sorted(ids) or shape.sample
    classes = Counter(classify_segment(value) for value in values)
    kind, count = classes.most_common(1)[0] if classes else ("other", 0)
    if len(classes) > 1 and kind != "integer" and count < _MOSTLY * len(values):
        kind = "other"
    if kind == "hex32":
        return IdFormat(kind="hex32", width=32, pattern=ID_PATTERNS["hex32"])
    if kind == "uuid":
        return IdFormat(kind="uuid", pattern=ID_PATTERNS["uuid"])
    if kind == "ulid":
        return IdFormat(kind="ulid", width=26, pattern=ID_PATTERNS["ulid"])
    if kind == "integer":
        numbers = [int(value) for value in values if spells_int(value)]
        return IdFormat(
            kind="integer", start=max(numbers) + 1 if numbers else 1, pattern="^[0-9]+$"
        )
    if kind == "salesforce":
        prefixes = Counter(value[:3] for value in values)
        prefix = prefixes.most_common(1)[0][0]
        width = max(len(value) for value in values)
        return IdFormat(
            kind="salesforce",
            prefix=prefix,
            width=width,
            pattern=f"^{re.escape(prefix)}[a-zA-Z0-9]{{{width - 3}}}$",
        )
    if kind == "key":
        parts = [key_parts(value) for value in values]
        found = [part for part in parts if part]
        prefix = Counter(part[0] for part in found).most_common(1)[0][0]
        width = max(part[2] for part in found)
        start = max(part[1] for part in found) + 1
        return IdFormat(kind="sequence", prefix=prefix, width=width, start=start)
    if kind == "prefixed":
        prefix = prefix_of(values[0]) or ""
        return IdFormat(
            kind="prefixed", prefix=prefix, width=max(len(value) for value in values) - len(prefix)
        )
    width = max((len(value) for value in values), default=16)
    return IdFormat(kind="opaque", width=width)


def link_target(links: list[str]) -> str | None:
    """The table a ServiceNow reference points at: `.../table/sys_user/<id>` -> `sys_user`."""
    targets: Counter[str] = Counter()
    for link in links:
        parts = split_path(urlsplit(link).path)
        if len(parts) >= 2:
            targets[parts[-2]] += 1
    return targets.most_common(1)[0][0] if targets else None


def pointer_to_state(request: Shape, states: set[str], prefix: str = "") -> str | None:
    """A JSON pointer to where action requests carry the target state."""
    for name in sorted(
        request.props, key=lambda key: (key not in ("name", "state", "status"), key)
    ):
        child = request.props[name]
        pointer = f"{prefix}/{name}"
        if child.values and set(child.values) <= states:
            return pointer
        found = pointer_to_state(child, states, pointer)
        if found is not None:
            return found
    return None


def values_as_strings(shapes: Iterable[Shape]) -> bool:
    """Numbers and booleans travel as strings when string-encoded ones outnumber real ones."""
    encoded = native = 0
    for shape in shapes:
        for child in shape.props.values():
            encoded += sum(
                child.formats.get(fmt, 0) for fmt in ("integer-string", "boolean-string")
            )
            native += child.ints + child.floats + child.bools
    return encoded > 0 and encoded > 4 * native


def datetime_format(shapes: Iterable[Shape]) -> str | None:
    space = iso = 0
    for shape in shapes:
        for child in shape.props.values():
            space += child.formats.get("date-time-space", 0)
            iso += child.formats.get("date-time", 0)
    if not space and not iso:
        return None
    return "%Y-%m-%d %H:%M:%S" if space >= iso else "%Y-%m-%dT%H:%M:%S.%f%z"


def error_message(body: Any) -> str | None:
    """The human message of an error body, wherever the service puts it."""
    if isinstance(body, str):
        return body.strip()[:200] or None
    if isinstance(body, list):
        return error_message(body[0]) if body else None
    if not isinstance(body, dict):
        return None
    for key in ("message", "errorMessage", "error_description", "detail"):
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    for key in ("error", "errors", "errorMessages"):
        value = body.get(key)
        if value:
            found = error_message(
                value if not isinstance(value, dict) or "message" in value else list(value.values())
            )
            if found:
                return found
    return None
