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
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from myna.errors import ReplayError
from myna.mocks.store import Record, RecordChange
from myna.replay.episode import (
    GRADED_KINDS,
    GUARD_KINDS,
    AllowedChange,
    AnswerCheck,
    Check,
    CheckRole,
    CountRecords,
    Environment,
    FieldChanged,
    FieldEquals,
    FieldIn,
    FieldMatches,
    FieldRefers,
    FieldUnchanged,
    NoCollateral,
    Policy,
    PythonCheck,
    RecordAbsent,
    RecordExists,
    SideEffect,
    TextCheck,
    Verifier,
    Where,
)
from myna.replay.registry import Registry
from myna.replay.shared import Layers
from myna.replay.text import substance_problems

WorldIndex: TypeAlias = Mapping[str, Mapping[str, Record]]
"""Records by resource, then by id."""

_Key: TypeAlias = tuple[str, str]


class Base:
    """An initial world, indexed by id and, on first use, by the value of each selected field.

    Built once per episode and shared by every attempt, so selecting a record by its number
    costs a dict lookup however large the world is. Given the world's `layers`, the shared
    world's by-value indexes are built once for every episode over it, and only the episode's
    own records are indexed here.
    """

    def __init__(
        self, records: Mapping[str, Mapping[str, Record]], layers: Layers | None = None
    ) -> None:
        self.records = records
        self.layers = layers
        self._by_value: dict[_Key, _ValueIndex | None] = {}

    def candidates(self, resource: str, where: Where) -> Iterable[str]:
        """Ids that may match `where` (a superset); all ids when no field is indexable."""
        rows = self.records.get(resource, {})
        for name, wanted in where.items():
            index = self._index(resource, name)
            key = _hashable(wanted)
            if index is not None and key is not None:
                return index.ids(key)
        return rows.keys()

    def _index(self, resource: str, name: str) -> _ValueIndex | None:
        if (resource, name) not in self._by_value:
            self._by_value[(resource, name)] = self._build_index(resource, name)
        return self._by_value[(resource, name)]

    def _build_index(self, resource: str, name: str) -> _ValueIndex | None:
        if self.layers is None:
            whole = value_index(self.records.get(resource, {}), name)
            return None if whole is None else _ValueIndex(whole)
        shared = self.layers.shared.derived(
            f"by-value {resource}.{name}",
            lambda tables: value_index(tables.get(resource, {}), name),
        )
        own_rows = self.layers.own.get(resource, {})
        own = value_index(own_rows, name)
        if shared is None or own is None:
            return None
        return _ValueIndex(shared, own, own_rows.keys())


@dataclass(frozen=True, slots=True)
class _ValueIndex:
    """Ids by a field's comparable value: a shared world's index, less the ids the episode's
    own records replace, plus the own records' index."""

    shared: Mapping[Any, list[str]]
    own: Mapping[Any, list[str]] = field(default_factory=dict)
    replaced: Collection[str] = ()

    def ids(self, key: Any) -> list[str]:
        hits = self.shared.get(key, [])
        if self.replaced:
            hits = [i for i in hits if i not in self.replaced]
        return [*hits, *self.own.get(key, ())]


def value_index(rows: Mapping[str, Record], name: str) -> dict[Any, list[str]] | None:
    """Ids by the field's comparable value; None when some value is not text (a list)."""
    index: dict[Any, list[str]] = {}
    for record_id, record in rows.items():
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
    role: CheckRole = "goal"


@dataclass(frozen=True, slots=True)
class GradedResult:
    """A model-graded rubric's score, reported apart from the deterministic checks."""

    name: str
    score: float | None
    passed: bool | None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "score": self.score,
            "passed": self.passed,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class VerifierResult:
    """The deterministic verdict: `reward` is the weighted share of goal checks met, 0 when any
    guard fails; `graded` are the rubric scores, which neither the reward nor `passed` include."""

    reward: float
    passed: bool
    checks: tuple[CheckResult, ...]
    graded: tuple[GradedResult, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "reward": self.reward,
            "passed": self.passed,
            "checks": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "role": c.role,
                    "passed": c.passed,
                    "weight": c.weight,
                    "detail": c.detail,
                }
                for c in self.checks
            ],
        }
        if self.graded:
            shown["graded"] = [g.as_dict() for g in self.graded]
        return shown


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


def base_of(environment: Environment) -> Base:
    """The environment's initial world as a `Base` (a layered one's shared indexes reused)."""
    return Base(index_environment(environment), environment.layers)


def index_environment(environment: Environment) -> dict[str, dict[str, Record]]:
    """The initial world by resource and id; a layered one's shared part is indexed once."""
    layers = environment.layers
    if layers is not None:
        return layers.index()
    return index_world(environment.initial_world, environment.id_fields)


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
    start = base or base_of(environment)
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
    check: FieldEquals | FieldIn | FieldMatches | FieldRefers, outcome: Outcome
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


@CHECKS.register("field_refers")
def _field_refers(check: FieldRefers, outcome: Outcome) -> Findings:
    targets = select(outcome.final, check.target_resource, check.target_where)
    target = _describe(check.target_resource, check.target_where)
    if len(targets) != 1:
        yield f"{len(targets)} records {target} in the final world, expected exactly one"
        return
    wanted = targets[0][0]
    for item in _field_values(check, outcome):
        if isinstance(item, str):
            yield item
        elif not same(item[1], wanted):
            yield f"{check.resource} {item[0]}: {check.field} is {item[1]!r}, not {target}"


@CHECKS.register("text")
def _text(check: TextCheck, outcome: Outcome) -> Findings:
    selected = select(outcome.final, check.resource, check.where)
    if not selected:
        yield f"no record {_describe(check.resource, check.where)} in the final world"
        return
    problems = {
        record_id: list(
            substance_problems(
                str(scalar(record.get(check.field))),
                mentions_of=check.mentions,
                min_mentions=check.min_mentions,
                min_words=check.min_words,
                not_copy_of=check.not_copy_of,
                excludes=check.excludes,
            )
        )
        for record_id, record in selected
    }
    failing = {record_id: found for record_id, found in problems.items() if found}
    if check.quantifier == "any" and len(failing) < len(problems):
        return
    for record_id, found in failing.items():
        yield f"{check.resource} {record_id}: {check.field} lacks substance: {'; '.join(found)}"


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


def _selects(record_id: str | None, where: Where | None, key: str, record: Record | None) -> bool:
    if record_id is not None and record_id != key:
        return False
    return where is None or (record is not None and matches(record, where))


def _subject(change: RecordChange) -> Record | None:
    """The record as the selection reads it: as it was, except for a creation."""
    return change.after if change.kind == "created" else change.before


@dataclass(slots=True)
class _Collateral:
    """One no_collateral judgement: allowances with their remaining counts."""

    check: NoCollateral
    outcome: Outcome
    left: list[int | None]
    ignored: set[str]

    def covering(self, change: RecordChange, changed: set[str]) -> int | None:
        """The index of an allowance with room left that covers the change, or None."""
        subject = _subject(change)
        for index, allowed in enumerate(self.check.allowed):
            if allowed.resource != change.resource or change.kind not in allowed.kinds:
                continue
            if not _selects(allowed.record_id, allowed.where, change.record_id, subject):
                continue
            if change.kind == "updated" and not _fields_allowed(allowed, changed):
                continue
            if self.left[index] != 0:
                return index
        return None

    def harmless(self, resource: str, record_id: str, record: Record | None) -> set[str]:
        return {
            name
            for entry in self.check.harmless
            if entry.resource == resource
            and _selects(entry.record_id, entry.where, record_id, record)
            for name in entry.fields
        }

    def owner_may_change(self, owner: tuple[str | None, str], field_name: str | None) -> bool:
        """Whether a side effect written for `owner`'s `field_name` belongs to allowed work."""
        table, owner_id = owner
        if field_name is not None and field_name in self.ignored:
            return True
        for resource, record in self._owner_records(table, owner_id):
            if field_name is not None and field_name in self.harmless(resource, owner_id, record):
                return True
            for allowed in self.check.allowed:
                if allowed.resource != resource or not _selects(
                    allowed.record_id, allowed.where, owner_id, record
                ):
                    continue
                if "created" in allowed.kinds and owner_id not in self.outcome.initial.get(
                    resource, {}
                ):
                    return True
                if field_name is None or allowed.fields is None or field_name in allowed.fields:
                    return True
        return False

    def _owner_records(self, table: str | None, owner_id: str) -> Iterator[tuple[str, Record]]:
        for world in (self.outcome.initial, self.outcome.final):
            for resource in [table] if table is not None else list(world):
                record = world.get(resource, {}).get(owner_id) if resource in world else None
                if record is not None:
                    yield resource, record


def _fields_allowed(allowed: AllowedChange, changed: set[str]) -> bool:
    return allowed.fields is None or changed <= set(allowed.fields)


def _owner(effect: SideEffect, change: RecordChange) -> tuple[tuple[str | None, str], str | None]:
    row = change.after if change.after is not None else change.before or {}
    table = str(scalar(row.get(effect.table_field))) if effect.table_field else None
    field_name = str(scalar(row.get(effect.field_field))) if effect.field_field else None
    return (table or None, str(scalar(row.get(effect.id_field)))), field_name


@CHECKS.register("no_collateral")
def _no_collateral(check: NoCollateral, outcome: Outcome) -> Findings:
    judge = _Collateral(
        check, outcome, [allowed.max_count for allowed in check.allowed], set(check.ignore_fields)
    )
    effects = {effect.resource: effect for effect in check.side_effects}
    skipped = set(check.ignore_resources)
    for change in outcome.changes:
        effect = effects.get(change.resource)
        if effect is not None:
            owner, field_name = _owner(effect, change)
            if not judge.owner_may_change(owner, field_name):
                what = f"{owner[0] or 'record'} {owner[1]}" + (
                    f" {field_name}" if field_name else ""
                )
                yield f"collateral change: {change.kind} {change.resource} entry for {what}"
            continue
        if change.resource in skipped:
            continue
        changed = changed_fields(change) - judge.ignored
        if change.kind == "updated":
            changed -= judge.harmless(change.resource, change.record_id, change.before)
            if not changed:
                continue
        index = judge.covering(change, changed)
        if index is None:
            yield f"collateral change: {change.kind} {change.resource} {change.record_id} " + (
                f"{sorted(changed)}"
            )
        elif judge.left[index] is not None:
            judge.left[index] = (judge.left[index] or 0) - 1


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


def run_check(check: Check, outcome: Outcome, role: CheckRole = "goal") -> CheckResult:
    function = CHECKS.get(check.kind)
    try:
        findings = list(function(check, outcome))
    # The verifier is an exception boundary: a check that breaks (a bad regular expression, a
    # user's Python check raising) fails with the reason, so the trainer still gets a reward.
    except Exception as broken:
        findings = [f"check raised {type(broken).__name__}: {broken}"]
    return CheckResult(
        check.name, check.kind, not findings, check.weight, "; ".join(findings), role
    )


def role_of(check: Check, baseline: Collection[str] = ()) -> CheckRole:
    """A check's role: as declared, else a guard when it only forbids or already held before
    the agent acted (`baseline`: the names of the checks a do-nothing attempt passes)."""
    if check.role is not None:
        return check.role
    return "guard" if check.kind in GUARD_KINDS or check.name in baseline else "goal"


def deterministic(verifier: Verifier) -> list[Check]:
    return [check for check in verifier.checks if check.kind not in GRADED_KINDS]


def verify(verifier: Verifier, outcome: Outcome, baseline: Collection[str] = ()) -> VerifierResult:
    """Run every deterministic check. The attempt passes when all pass; its reward is the
    weighted share of goal checks met, and 0 when a guard fails, so doing nothing earns 0 and
    reward rises only with verified progress. A verifier without goals rewards 1 or 0."""
    results = tuple(
        run_check(check, outcome, role_of(check, baseline)) for check in deterministic(verifier)
    )
    passed = bool(results) and all(result.passed for result in results)
    goals = [result for result in results if result.role == "goal"]
    if any(not result.passed for result in results if result.role == "guard"):
        reward = 0.0
    elif goals:
        reward = sum(r.weight for r in goals if r.passed) / sum(r.weight for r in goals)
    else:
        reward = 1.0 if passed else 0.0
    return VerifierResult(reward, passed, results)
