"""The verifier: declarative checks over what an attempt did, as small pure functions.

Each check kind is a generator `(check, outcome) -> findings` looked up in a table, in the style
of jsonschema's keywords: no findings means the check passed. `verify` runs every check of a
verifier and turns the findings into a reward (the weighted share of checks passed) with a
per-check breakdown. A check that fails, or a Python check that raises, is a result, never an
exception: the trainer always gets a reward.

Values are compared the way the services transport them: a reference `{"link", "value"}` stands
for its `value`, numbers and booleans equal their string forms (ServiceNow sends `"2"` and
`"true"`), and `None` equals the empty string.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from myna.errors import ReplayError
from myna.mocks.store import Record, RecordChange
from myna.replay.episode import (
    AllowedChange,
    AnswerCheck,
    Check,
    CountRecords,
    Environment,
    FieldChanged,
    FieldEquals,
    FieldIn,
    FieldMatches,
    FieldUnchanged,
    NoCollateral,
    Policy,
    PythonCheck,
    RecordAbsent,
    RecordExists,
    Verifier,
    Where,
)
from myna.replay.registry import Registry

WorldIndex: TypeAlias = Mapping[str, Mapping[str, Record]]
"""Records by resource, then by id."""

_Key: TypeAlias = tuple[str, str]


class Base:
    """An initial world, indexed by id and, on first use, by the value of each selected field.

    Built once per episode and shared by every attempt, so selecting a record by its number
    costs a dict lookup however large the world is.
    """

    def __init__(self, records: Mapping[str, Mapping[str, Record]]) -> None:
        self.records = records
        self._by_value: dict[_Key, dict[Any, list[str]] | None] = {}

    def candidates(self, resource: str, where: Where) -> Iterable[str]:
        """Ids that may match `where` (a superset); all ids when no field is indexable."""
        rows = self.records.get(resource, {})
        for name, wanted in where.items():
            index = self._index(resource, name)
            key = _hashable(wanted)
            if index is not None and key is not None:
                return index.get(key, ())
        return rows.keys()

    def _index(self, resource: str, name: str) -> dict[Any, list[str]] | None:
        if (resource, name) not in self._by_value:
            self._by_value[(resource, name)] = self._build_index(resource, name)
        return self._by_value[(resource, name)]

    def _build_index(self, resource: str, name: str) -> dict[Any, list[str]] | None:
        """Ids by the field's comparable value; None when some value is not text (a list)."""
        index: dict[Any, list[str]] = {}
        for record_id, record in self.records.get(resource, {}).items():
            key = _hashable(record.get(name))
            if key is None:
                return None
            index.setdefault(key, []).append(record_id)
        return index


def _hashable(value: Any) -> Any:
    key = scalar(value)
    return key if isinstance(key, str) else None


class _Rows(Mapping[str, Record]):
    """One resource's records: the base's, with the overlay's creations, updates and deletions."""

    def __init__(self, base: Mapping[str, Record], overlay: Mapping[str, Record | None]) -> None:
        self._base = base
        self._overlay = overlay

    def __getitem__(self, record_id: str) -> Record:
        if record_id in self._overlay:
            record = self._overlay[record_id]
            if record is None:
                raise KeyError(record_id)
            return record
        return self._base[record_id]

    def __iter__(self) -> Iterator[str]:
        for record_id in self._base:
            if self._overlay.get(record_id, True) is not None:
                yield record_id
        for record_id, record in self._overlay.items():
            if record is not None and record_id not in self._base:
                yield record_id

    def __len__(self) -> int:
        return sum(1 for _ in self)


class WorldView(Mapping[str, Mapping[str, Record]]):
    """A world state as `{resource: {id: record}}`: a shared `Base` plus this attempt's changes."""

    def __init__(
        self, base: Base, overlay: Mapping[str, Mapping[str, Record | None]] | None = None
    ) -> None:
        self.base = base
        self.overlay: Mapping[str, Mapping[str, Record | None]] = overlay or {}

    def __getitem__(self, resource: str) -> Mapping[str, Record]:
        if resource not in self.base.records and resource not in self.overlay:
            raise KeyError(resource)
        return _Rows(self.base.records.get(resource, {}), self.overlay.get(resource, {}))

    def __iter__(self) -> Iterator[str]:
        yield from self.base.records
        yield from (name for name in self.overlay if name not in self.base.records)

    def __len__(self) -> int:
        return len(set(self.base.records) | set(self.overlay))

    def select(self, resource: str, where: Where) -> list[tuple[str, Record]]:
        overlay = self.overlay.get(resource, {})
        rows = self.base.records.get(resource, {})
        found = [
            (rid, rows[rid])
            for rid in self.base.candidates(resource, where)
            if rid not in overlay and matches(rows[rid], where)
        ]
        found += [
            (rid, rec) for rid, rec in overlay.items() if rec is not None and matches(rec, where)
        ]
        return found


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call the agent made, as the runner saw it; `nested` ones were carried inside another
    call (a batch's inner requests), and their status is the outer call's business."""

    method: str
    path: str
    status: int
    params: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    documented: bool = True
    admin: bool = False
    nested: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """Everything a verifier may read about one attempt."""

    initial: WorldView
    final: WorldView
    changes: tuple[RecordChange, ...] = ()
    calls: tuple[CallRecord, ...] = ()
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    kind: str
    passed: bool
    weight: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class VerifierResult:
    reward: float
    passed: bool
    checks: tuple[CheckResult, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "passed": self.passed,
            "checks": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "passed": c.passed,
                    "weight": c.weight,
                    "detail": c.detail,
                }
                for c in self.checks
            ],
        }


def index_world(
    world: Mapping[str, Iterable[Record]], id_fields: Mapping[str, str]
) -> dict[str, dict[str, Record]]:
    """`{resource: [records]}` keyed by each record's id field (`id` unless named)."""
    indexed: dict[str, dict[str, Record]] = {}
    for resource, records in world.items():
        id_field = id_fields.get(resource, "id")
        by_id: dict[str, Record] = {}
        for position, record in enumerate(records):
            if id_field not in record:
                raise ReplayError(
                    f"record has no id field {id_field!r}",
                    path=f"environment.initial_world.{resource}[{position}]",
                )
            by_id[str(scalar(record[id_field]))] = record
        indexed[resource] = by_id
    return indexed


def apply_changes(base: Base, changes: Iterable[RecordChange]) -> WorldView:
    """The final world: the base with the changes laid over it (nothing is copied)."""
    overlay: dict[str, dict[str, Record | None]] = {}
    for change in changes:
        overlay.setdefault(change.resource, {})[change.record_id] = change.after
    return WorldView(base, overlay)


def make_outcome(
    environment: Environment,
    changes: Iterable[RecordChange] = (),
    calls: Iterable[CallRecord] = (),
    answer: str | None = None,
    *,
    base: Base | None = None,
) -> Outcome:
    """An outcome from an environment's initial world (pass `base` to reuse its index)."""
    start = base or Base(index_world(environment.initial_world, environment.id_fields))
    change_list = tuple(changes)
    return Outcome(
        WorldView(start), apply_changes(start, change_list), change_list, tuple(calls), answer
    )


def scalar(value: Any) -> Any:
    """The comparable form of a field value (see the module docstring)."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return value


def same(left: Any, right: Any) -> bool:
    return bool(scalar(left) == scalar(right))


def matches(record: Record, where: Where) -> bool:
    return all(same(record.get(name), wanted) for name, wanted in where.items())


def select(world: WorldView, resource: str, where: Where) -> list[tuple[str, Record]]:
    return world.select(resource, where)


def _describe(resource: str, where: Where) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in where.items())
    return f"{resource}[{shown}]"


Findings: TypeAlias = Iterator[str]
CheckFunction: TypeAlias = Callable[[Any, Outcome], Findings]
CHECKS: Registry[CheckFunction] = Registry("check kind")


@CHECKS.register("record_exists")
def _record_exists(check: RecordExists, outcome: Outcome) -> Findings:
    if not select(outcome.final, check.resource, check.where):
        yield f"no record {_describe(check.resource, check.where)} in the final world"


@CHECKS.register("record_absent")
def _record_absent(check: RecordAbsent, outcome: Outcome) -> Findings:
    for record_id, _ in select(outcome.final, check.resource, check.where):
        yield f"{_describe(check.resource, check.where)} still exists (id {record_id})"


def _field_values(
    check: FieldEquals | FieldIn | FieldMatches, outcome: Outcome
) -> Iterator[tuple[str, Any] | str]:
    """(record id, value) per selected record, or a finding when nothing is selected."""
    selected = select(outcome.final, check.resource, check.where)
    if not selected:
        yield f"no record {_describe(check.resource, check.where)} in the final world"
    for record_id, record in selected:
        yield record_id, record.get(check.field)


@CHECKS.register("field_equals")
def _field_equals(check: FieldEquals, outcome: Outcome) -> Findings:
    for item in _field_values(check, outcome):
        if isinstance(item, str):
            yield item
        elif not same(item[1], check.value):
            yield f"{check.resource} {item[0]}: {check.field} is {item[1]!r}, not {check.value!r}"


@CHECKS.register("field_in")
def _field_in(check: FieldIn, outcome: Outcome) -> Findings:
    for item in _field_values(check, outcome):
        if isinstance(item, str):
            yield item
        elif not any(same(item[1], allowed) for allowed in check.values):
            where = f"{check.resource} {item[0]}"
            yield f"{where}: {check.field} is {item[1]!r}, not in {check.values!r}"


@CHECKS.register("field_matches")
def _field_matches(check: FieldMatches, outcome: Outcome) -> Findings:
    pattern = re.compile(check.pattern)
    for item in _field_values(check, outcome):
        if isinstance(item, str):
            yield item
        elif not pattern.fullmatch(str(scalar(item[1]))):
            where = f"{check.resource} {item[0]}"
            yield f"{where}: {check.field}={item[1]!r} does not match {check.pattern!r}"


def _before_after(
    check: FieldChanged | FieldUnchanged, outcome: Outcome
) -> Iterator[tuple[str, Any, Any] | str]:
    selected = select(outcome.initial, check.resource, check.where)
    if not selected:
        yield f"no record {_describe(check.resource, check.where)} in the initial world"
    for record_id, before in selected:
        after = outcome.final.get(check.resource, {}).get(record_id)
        if after is None:
            yield f"{check.resource} {record_id} was deleted"
        else:
            yield record_id, before.get(check.field), after.get(check.field)


@CHECKS.register("field_changed")
def _field_changed(check: FieldChanged, outcome: Outcome) -> Findings:
    for item in _before_after(check, outcome):
        if isinstance(item, str):
            yield item
        elif same(item[1], item[2]):
            yield f"{check.resource} {item[0]}: {check.field} is still {item[1]!r}"


@CHECKS.register("field_unchanged")
def _field_unchanged(check: FieldUnchanged, outcome: Outcome) -> Findings:
    for item in _before_after(check, outcome):
        if isinstance(item, str):
            yield item
        elif not same(item[1], item[2]):
            yield f"{check.resource} {item[0]}: {check.field} changed {item[1]!r} -> {item[2]!r}"


@CHECKS.register("count")
def _count(check: CountRecords, outcome: Outcome) -> Findings:
    found = len(select(outcome.final, check.resource, check.where))
    if check.min is not None and found < check.min:
        yield f"{found} {_describe(check.resource, check.where)} records, expected >= {check.min}"
    if check.max is not None and found > check.max:
        yield f"{found} {_describe(check.resource, check.where)} records, expected <= {check.max}"


def changed_fields(change: RecordChange) -> set[str]:
    before, after = change.before or {}, change.after or {}
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def _allows(allowed: AllowedChange, change: RecordChange, ignored: set[str]) -> bool:
    if allowed.resource != change.resource or change.kind not in allowed.kinds:
        return False
    if allowed.record_id is not None and allowed.record_id != change.record_id:
        return False
    if change.kind != "updated" or allowed.fields is None:
        return True
    return changed_fields(change) - ignored <= set(allowed.fields)


@CHECKS.register("no_collateral")
def _no_collateral(check: NoCollateral, outcome: Outcome) -> Findings:
    ignored = set(check.ignore_fields)
    side_effects = set(check.ignore_resources)
    for change in outcome.changes:
        if change.resource in side_effects:
            continue
        if change.kind == "updated" and not changed_fields(change) - ignored:
            continue
        if not any(_allows(allowed, change, ignored) for allowed in check.allowed):
            touched = sorted(changed_fields(change) - ignored)
            yield f"collateral change: {change.kind} {change.resource} {change.record_id} {touched}"


_PUNCTUATION = re.compile(r"[^\w\s.%-]+")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,]\d+)*(?:\.\d+)?|\.\d+)")


def normalise(text: str) -> str:
    """Case-folded, punctuation-free, single-spaced text, without a trailing full stop."""
    folded = _SPACE.sub(" ", _PUNCTUATION.sub(" ", text.casefold())).strip()
    return folded.rstrip(".").strip()


def first_number(text: str) -> float | None:
    found = _NUMBER.search(text)
    return float(found.group().replace(",", "")) if found else None


@CHECKS.register("answer")
def _answer(check: AnswerCheck, outcome: Outcome) -> Findings:
    if outcome.answer is None:
        yield "no final answer was given"
        return
    given = outcome.answer
    if check.mode == "exact":
        ok = given.strip() == check.expected.strip()
    elif check.mode == "normalised":
        ok = normalise(given) == normalise(check.expected)
    elif check.mode == "contains":
        ok = normalise(check.expected) in normalise(given)
    else:
        got, want = first_number(given), first_number(check.expected)
        ok = (
            got is not None
            and want is not None
            and math.isclose(got, want, abs_tol=check.tolerance)
        )
    if not ok:
        yield f"answer {given!r} does not match {check.expected!r} ({check.mode})"


def forbidden_reason(policy: Policy, call: CallRecord) -> str | None:
    """Why a call breaks the policy, or None; the runner asks this before sending a call."""
    if policy.forbid_admin and call.admin:
        return f"{call.method} {call.path} is an admin endpoint"
    if policy.forbid_undocumented and not call.documented:
        return f"{call.method} {call.path} is not a documented operation"
    for pattern in policy.forbidden:
        if pattern.method in ("*", call.method.upper()) and fnmatch.fnmatchcase(
            call.path, pattern.path
        ):
            return f"{call.method} {call.path} is forbidden ({pattern.method} {pattern.path})"
    return None


@CHECKS.register("policy")
def _policy(check: Policy, outcome: Outcome) -> Findings:
    for call in outcome.calls:
        reason = forbidden_reason(check, call)
        if reason is not None:
            yield reason


PythonFunction: TypeAlias = Callable[[Mapping[str, Any], Outcome], Iterable[str]]
PYTHON_CHECKS: Registry[PythonFunction] = Registry("Python check")


def register_python_check(name: str) -> Callable[[PythonFunction], PythonFunction]:
    """Register `function(params, outcome) -> findings` as the Python check `name`."""
    return PYTHON_CHECKS.register(name)


@CHECKS.register("python")
def _python(check: PythonCheck, outcome: Outcome) -> Findings:
    function = PYTHON_CHECKS.get(check.function)
    yield from function(check.params, outcome)


def run_check(check: Check, outcome: Outcome) -> CheckResult:
    function = CHECKS.get(check.kind)
    try:
        findings = list(function(check, outcome))
    # The verifier is an exception boundary: a check that breaks (a bad regular expression, a
    # user's Python check raising) fails with the reason, so the trainer still gets a reward.
    except Exception as broken:
        findings = [f"check raised {type(broken).__name__}: {broken}"]
    return CheckResult(check.name, check.kind, not findings, check.weight, "; ".join(findings))


def verify(verifier: Verifier, outcome: Outcome) -> VerifierResult:
    """Run every check; reward is the weighted share passed (0 for a verifier with no checks)."""
    results = tuple(run_check(check, outcome) for check in verifier.checks)
    total = sum(result.weight for result in results)
    earned = sum(result.weight for result in results if result.passed)
    reward = earned / total if total else 0.0
    return VerifierResult(reward, bool(results) and all(r.passed for r in results), results)
