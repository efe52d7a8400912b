"""JSON Schemas learned from samples: a streaming accumulator, and a merge of finished schemas.

`Shape` folds JSON values in one at a time, keeping counts (types, formats, distinct strings,
numeric ranges, key presence) rather than the values, so memory stays bounded however many
samples arrive. `Shape.schema()` turns those counts into JSON Schema 2020-12. The result does not
depend on the order samples arrived in. `merge_schemas` combines two finished schemas (used when
new traces are learned into an existing model); it is commutative and idempotent.

Long arrays are sampled at evenly spaced indices: a 500-record page says little more about the
record schema than 16 of its records do, and walking all of them would dominate learning time.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from typing import Any

from myna.schemas.values import (
    ID_PATTERNS,
    JSON_SCHEMA_FORMAT,
    SPACED_DATETIME,
    Format,
    ValueClass,
    classify_segment,
    string_format,
)

JsonSchema = dict[str, Any]

ARRAY_SAMPLE = 16
"""Items looked at per array: evenly spaced, always including the first and the last."""
ENUM_MAX = 12
"""More distinct values than this is free text or an identifier, not an enumeration."""
UNSEEN_MAX = 0.1
"""Largest share of a field's values that may be values seen only once for its set of values to
count as closed (see `closed_set`)."""
SAMPLES_PER_VALUE = 3
"""Values a closed set needs per distinct value, on average (see `closed_set`)."""
SAMPLES_MIN = 10
"""Values a closed set needs at least: a value one record in five takes is missed by ten
records about one time in ten ((4/5)^10), by five records one time in three."""
TRACK_MAX = 64
"""Distinct strings counted per location before counting stops (ids would grow without end)."""
SAMPLE_MAX = 8
"""Smallest distinct strings kept per location to test id patterns on."""
IDENTITY_FIELD = re.compile(r"(?:_by|user|user_?name|e-?mail|name)$", re.IGNORECASE)
"""Keys naming who someone is (`sys_updated_by`, `user`, `email`, `name`): the few values a corpus
shows are the people and things it happened to touch, never the closed set a client may use.
An overlay pins the enum of a field such as Salesforce's `StageName` when it really is one."""
KIND_FIELD = re.compile(r"(?:class|table|type)_?name$", re.IGNORECASE)
"""Keys ending in `name` that name a kind of thing (ServiceNow's `sys_class_name`), which is a
closed set."""

_NUMERIC_FORMATS: dict[Format, str] = {
    "integer-string": "integer",
    "number-string": "number",
    "boolean-string": "boolean",
}
_PATTERN_FORMATS: dict[Format, str] = {
    "date-time-space": SPACED_DATETIME,
    "integer-string": r"-?[0-9]+",
    "number-string": r"-?[0-9]+(?:\.[0-9]+)?",
    "boolean-string": r"true|false",
}


OBSERVED = "x-myna-observed"
"""Schema keyword holding the numeric range the traces showed ({minimum, maximum}), which
seeding draws from and nothing enforces."""


def wrap_pattern(value_class: str, *, optional: bool) -> str:
    """The pattern a learned string field carries: `^(?:CLASS)$`, or `^(?:CLASS)?$` when the
    service also sends `""` for "no value"."""
    return f"^(?:{value_class}){'?' if optional else ''}$"


def unwrap_pattern(pattern: str) -> str:
    """The value class inside a pattern `wrap_pattern` made (or a plain `^CLASS$`)."""
    body = pattern.removeprefix("^").removesuffix("$")
    if body.startswith("(?:") and body.endswith((")", ")?")):
        body = body[3 : body.rindex(")")]
    return body


class Shape:
    """Counts describing every value seen at one location of a JSON document."""

    __slots__ = (
        "arrays",
        "bools",
        "count",
        "floats",
        "formats",
        "ints",
        "items",
        "max_items",
        "max_num",
        "max_string",
        "min_num",
        "name",
        "nulls",
        "objects",
        "overflow",
        "props",
        "sample",
        "strings",
        "unsampled",
        "values",
    )

    def __init__(self, name: str = "") -> None:
        # The key this location is found under ("" for a document root or an unnamed input).
        self.name = name
        self.count = 0
        self.nulls = 0
        self.bools = 0
        self.ints = 0
        self.floats = 0
        self.strings = 0
        self.objects = 0
        self.arrays = 0
        self.props: dict[str, Shape] = {}
        self.items: Shape | None = None
        self.max_items = 0
        self.values: dict[str, int] = {}
        self.overflow = False
        # Counted once per distinct value while values are tracked, then once per value.
        self.formats: dict[Format | None, int] = {}
        self.sample: list[str] = []
        self.max_string = ""
        self.min_num: float | None = None
        self.max_num: float | None = None
        # Values at this location in records the learner did not walk (it samples long answers
        # to bound its time), counted for the enum decision only: counting is cheap, and whether
        # a set of values is closed needs every record's value.
        self.unsampled: Mapping[str, int] | None = None

    def add(self, value: Any) -> None:
        """Fold one JSON value into the counts."""
        self.count += 1
        kind = type(value)
        if kind is str:
            self._add_string(value)
        elif kind is dict:
            self.objects += 1
            props = self.props
            for key, item in value.items():
                child = props.get(key)
                if child is None:
                    child = props[key] = Shape(key)
                child.add(item)
        elif kind is list:
            self.arrays += 1
            length = len(value)
            self.max_items = max(self.max_items, length)
            if length:
                items = self.items
                if items is None:
                    items = self.items = Shape(self.name)
                for item in sampled(value):
                    items.add(item)
        elif kind is bool:
            self.bools += 1
        elif kind is int or kind is float:
            if kind is int:
                self.ints += 1
            else:
                self.floats += 1
            if self.min_num is None or value < self.min_num:
                self.min_num = value
            if self.max_num is None or value > self.max_num:
                self.max_num = value
        elif value is None:
            self.nulls += 1

    def _add_string(self, value: str) -> None:
        self.strings += 1
        values = self.values
        if not self.overflow:
            if value in values:
                # A repeat adds nothing to formats, the sample or the maximum.
                values[value] += 1
                return
            if len(values) < TRACK_MAX:
                values[value] = 1
            else:
                self.overflow = True
                values.clear()
        fmt = string_format(value)
        self.formats[fmt] = self.formats.get(fmt, 0) + 1
        if value > self.max_string:
            self.max_string = value
        sample = self.sample
        if value and (len(sample) < SAMPLE_MAX or value < sample[-1]):
            position = bisect.bisect_left(sample, value)
            if position == len(sample) or sample[position] != value:
                sample.insert(position, value)
                del sample[SAMPLE_MAX:]

    def at(self, path: str) -> Shape:
        """The shape at a dotted path of object keys (an empty one where nothing was seen)."""
        shape = self
        for part in path.split("."):
            shape = shape.props.get(part) or Shape()
        return shape

    def required(self) -> list[str]:
        """Keys present in every object seen here."""
        return sorted(key for key, child in self.props.items() if child.count >= self.objects)

    def may_be_categorical(self) -> bool:
        """Whether what was walked here so far leaves the values a possible category: strings
        only, few distinct ones, none shaped like a timestamp, an address or an identifier."""
        return (
            not self.overflow
            and self.strings > 0
            and not (self.ints or self.floats or self.objects or self.bools or self.arrays)
            and len(self.values) <= ENUM_MAX
            and _NOT_ENUM_FORMATS.isdisjoint(self.formats)
            and not self.identity_like()
        )

    def counts(self) -> dict[str, int]:
        """Every string value counted here, with the unsampled records' values (no more than
        what `values` tracks: nothing once the distinct values overflowed)."""
        if self.overflow:
            return {}
        if not self.unsampled:
            return self.values
        counts = dict(self.values)
        for value, count in self.unsampled.items():
            counts[value] = counts.get(value, 0) + count
        return counts

    def frequencies(self) -> dict[str, int] | None:
        """Observed values with their counts, when they look like categories: few values, and
        repeating. What seeding draws from; whether a mock may refuse any other value is
        `enum`'s stricter question."""
        if not self.may_be_categorical() or len(self.unsampled or ()) > ENUM_MAX:
            return None
        counts = self.counts()
        distinct = len(counts)
        if not 1 <= distinct <= ENUM_MAX:
            return None
        if self.unsampled and any(
            string_format(value) in _NOT_ENUM_FORMATS
            for value in self.unsampled
            if value not in self.values
        ):
            return None
        # Few values, and repeating: at least two repeats, more as the values grow in number.
        # "" is "no value": a field blank in most records and each text once is free text.
        blanks = counts.get("", 0)
        kinds = distinct - 1 if blanks and distinct > 1 else distinct
        repeats = sum(counts.values()) - (blanks if kinds < distinct else 0) - kinds
        if repeats < max(2, kinds // 2):
            return None
        return dict(sorted(counts.items()))

    def enum(self) -> dict[str, int] | None:
        """Observed values with their counts, when the evidence says they are the whole set
        (`closed_set`): a learned enum is enforced by the mock and published in its contract."""
        frequencies = self.frequencies()
        return frequencies if frequencies is not None and closed_set(frequencies) else None

    def identity_like(self) -> bool:
        """Whether the strings here name someone or something (a login, an e-mail, a host name)
        rather than pick from a closed set, judged by the key: the values cannot tell `aisha.khan`
        from a dotted event code such as `user.created`. Flags spelled as strings stay categories
        whatever their key (`internal_integration_user: "true"`)."""
        if not IDENTITY_FIELD.search(self.name) or KIND_FIELD.search(self.name):
            return False
        kinds = self.formats.keys() - {"empty"}
        return not (kinds and kinds <= _FLAG_FORMATS)

    def logical_format(self) -> Format | None:
        """The one format every non-empty string here has, if there is one."""
        formats = [fmt for fmt in self.formats if fmt != "empty"]
        if len(formats) == 1:
            return formats[0]
        if set(formats) == {"integer-string", "number-string"}:
            return "number-string"
        return None

    def id_class(self) -> ValueClass | None:
        """The id class every sampled string belongs to (hex32, uuid, salesforce ...)."""
        if not self.sample:
            return None
        classes = {classify_segment(value) for value in self.sample}
        if len(classes) == 1:
            (only,) = classes
            if only in ID_PATTERNS and only != "date":
                return only
        return None

    def schema(self) -> JsonSchema:
        """JSON Schema 2020-12 for everything seen here."""
        branches: list[JsonSchema] = []
        counts: dict[str, int] = {}
        if self.strings:
            branches.append(self._string_schema())
            counts["string"] = self.strings
        if self.ints or self.floats:
            branches.append(self._number_schema())
            counts["number" if self.floats else "integer"] = self.ints + self.floats
        if self.bools:
            branches.append({"type": "boolean"})
            counts["boolean"] = self.bools
        if self.objects:
            branches.append(self._object_schema())
            counts["object"] = self.objects
        if self.arrays:
            branches.append(self._array_schema())
            counts["array"] = self.arrays
        if not branches:
            return {"type": "null"} if self.nulls else {}
        if len(branches) == 1:
            only = branches[0]
            if self.nulls:
                only["type"] = [only["type"], "null"]
            return only
        if self.nulls:
            branches.append({"type": "null"})
            counts["null"] = self.nulls
        # Contradictory samples stay visible: every branch, with how often each type was seen.
        return {"anyOf": branches, "x-myna-types": dict(sorted(counts.items()))}

    def _string_schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": "string"}
        fmt = self.logical_format()
        pattern: str | None = None
        if fmt is not None:
            standard = JSON_SCHEMA_FORMAT.get(fmt)
            if standard is not None:
                schema["format"] = standard
            logical = _NUMERIC_FORMATS.get(fmt)
            if logical is not None:
                schema["x-myna-type"] = logical
            pattern = _PATTERN_FORMATS.get(fmt)
        if pattern is None:
            id_class = self.id_class()
            if id_class is not None:
                pattern = ID_PATTERNS[id_class][1:-1]
        if self.formats.keys() == {"empty"}:
            schema["maxLength"] = 0
        if pattern is not None:
            # Empty strings stand for "no value" in services such as ServiceNow.
            schema["pattern"] = wrap_pattern(pattern, optional="empty" in self.formats)
        enum = self.enum()
        if enum is not None:
            schema["enum"] = sorted(enum)
        return schema

    def _number_schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": "number" if self.floats else "integer"}
        if self.min_num is not None and self.max_num is not None:
            # What was seen guides seeding; it is no constraint: a service that showed
            # priorities 1-2 may well accept 4. A range is enforced only when pinned.
            schema[OBSERVED] = {"minimum": self.min_num, "maximum": self.max_num}
        return schema

    def _object_schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": "object"}
        if self.props:
            schema["properties"] = {key: self.props[key].schema() for key in sorted(self.props)}
            required = self.required()
            if required:
                schema["required"] = required
            if self.props.keys() == {"link", "value"}:
                schema["x-myna-reference"] = "link_value"
        return schema

    def _array_schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": "array"}
        if self.items is not None:
            schema["items"] = self.items.schema()
        return schema


_NOT_ENUM_FORMATS: frozenset[Format | None] = frozenset(
    {
        "date-time",
        "date-time-space",
        "date",
        "email",
        "uri",
        "uuid",
        "hex32",
        "number-string",
        "ipv4",
    }
)
_RECORD_ID_CLASSES: frozenset[ValueClass] = frozenset(
    {"uuid", "hex32", "ulid", "salesforce", "key", "prefixed"}
)
"""Value classes of ids that name records (`005...`, `VEN-000001`): the records a field can
point at come and go, so their ids never make a closed set, however often a few repeat."""


def closed_set(counts: Mapping[str, int]) -> bool:
    """Whether values observed with these counts are all the values there are, so that a mock
    may refuse any other. The evidence must show the set closed, not merely small:

    - "" is "no value" and says nothing; one value alone is a constant or a default, and shows
      no choice at all (a field seen `3` in every record may take `1` tomorrow);
    - ids of records never close (`_RECORD_ID_CLASSES`);
    - few values seen once: by Good-Turing, the share of samples that are singletons estimates
      the chance that the next record shows a value not seen yet; at most `UNSEEN_MAX`;
    - distinct values well below samples: `SAMPLES_PER_VALUE` samples per value on average, and
      `SAMPLES_MIN` in all (two values seen three times each prove little).
    """
    filled = {value: count for value, count in counts.items() if value != ""}
    if len(filled) < 2:
        return False
    samples = sum(filled.values())
    singletons = sum(1 for count in filled.values() if count == 1)
    if singletons > UNSEEN_MAX * samples or samples < max(
        SAMPLES_MIN, SAMPLES_PER_VALUE * len(filled)
    ):
        return False
    return not all(classify_segment(value) in _RECORD_ID_CLASSES for value in filled)


_FLAG_FORMATS: frozenset[Format | None] = frozenset(
    {"boolean-string", "integer-string", "number-string"}
)


def sampled(values: list[Any], limit: int = ARRAY_SAMPLE) -> list[Any]:
    """At most `limit` items at evenly spaced indices (all of them when the list is short)."""
    length = len(values)
    if length <= limit:
        return values
    if limit == 1:
        return [values[length // 2]]
    last = length - 1
    return [values[index * last // (limit - 1)] for index in range(limit)]


def schema_of(values: list[Any]) -> JsonSchema:
    """The schema of a batch of samples (a convenience over `Shape`)."""
    shape = Shape()
    for value in values:
        shape.add(value)
    return shape.schema()


# --- merging finished schemas -------------------------------------------------------------

_TYPE_ORDER = ("string", "integer", "number", "boolean", "object", "array", "null")


def merge_schemas(left: JsonSchema, right: JsonSchema) -> JsonSchema:
    """A schema accepting what either accepts, as tightly as the two allow.

    Commutative and idempotent: merging a schema with itself gives it back, and the order of the
    two arguments does not matter. `{}` (anything) absorbs everything.
    """
    if left == right:
        return left
    if not left or not right:
        return {}
    branches = _branches(left)
    for kind, branch in _branches(right).items():
        branches[kind] = _merge_branch(branches[kind], branch) if kind in branches else branch
    if "integer" in branches and "number" in branches:
        branches["number"] = _merge_branch(
            {**branches.pop("integer"), "type": "number"}, branches["number"]
        )
    return _assemble(branches)


def _branches(schema: JsonSchema) -> dict[str, JsonSchema]:
    """Split a schema into one single-typed branch per type it allows."""
    if "anyOf" in schema:
        found: dict[str, JsonSchema] = {}
        for branch in schema["anyOf"]:
            for kind, part in _branches(branch).items():
                found[kind] = _merge_branch(found[kind], part) if kind in found else part
        return found
    kinds = schema.get("type")
    if kinds is None:
        return {"any": schema}
    if isinstance(kinds, str):
        return {kinds: schema}
    rest = {key: value for key, value in schema.items() if key != "type"}
    return {
        kind: ({"type": "null"} if kind == "null" else {**rest, "type": kind}) for kind in kinds
    }


def _assemble(branches: dict[str, JsonSchema]) -> JsonSchema:
    if "any" in branches:
        return {}
    nullable = branches.pop("null", None) is not None
    ordered = [branches[kind] for kind in _TYPE_ORDER if kind in branches]
    if not ordered:
        return {"type": "null"}
    if len(ordered) == 1:
        only = dict(ordered[0])
        if nullable:
            only["type"] = [only["type"], "null"]
        return only
    if nullable:
        ordered.append({"type": "null"})
    return {"anyOf": ordered}


def _merge_branch(left: JsonSchema, right: JsonSchema) -> JsonSchema:
    if left == right:
        return left
    merged: JsonSchema = {}
    for key in sorted(left.keys() | right.keys()):
        if key not in left or key not in right:
            # Absent on one side means that side allowed anything for this keyword, except
            # `properties`, which lists what was seen and grows by union.
            if key == "properties":
                merged[key] = dict(left.get(key) or right.get(key) or {})
            continue
        mine, theirs = left[key], right[key]
        if mine == theirs:
            merged[key] = mine
        elif key == "properties":
            merged[key] = {
                name: merge_schemas(mine[name], theirs[name])
                if name in mine and name in theirs
                else mine.get(name, theirs.get(name))
                for name in sorted(mine.keys() | theirs.keys())
            }
        elif key == "required":
            common = sorted(set(mine) & set(theirs))
            if common:
                merged[key] = common
        elif key == "items":
            merged[key] = merge_schemas(mine, theirs)
        elif key == "enum":
            merged[key] = sorted(set(mine) | set(theirs), key=_enum_order)
        elif key == "minimum":
            merged[key] = min(mine, theirs)
        elif key == "maximum":
            merged[key] = max(mine, theirs)
        elif key == OBSERVED:
            merged[key] = {
                "minimum": min(mine["minimum"], theirs["minimum"]),
                "maximum": max(mine["maximum"], theirs["maximum"]),
            }
    return merged


def _enum_order(value: Any) -> tuple[str, str]:
    return (type(value).__name__, str(value))
