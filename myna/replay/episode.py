"""The episode format: one JSON document per episode, versioned as `myna.episode/1`.

An episode is the triplet an RL trainer runs (problem, environment, verifier) plus the reference
solution that proves it solvable, where it came from, and what audits and rollouts have said about
it. The JSON Schema in `episode.schema.json` is generated from these models (`schema_text()`;
see the test that keeps it current for the command).

Field by field:
- `problem.instruction`: the text the agent receives. `problem.wording` names the rewording that
  produced it (`original` for the logged task text).
- `environment`: which service model (`model.path` to an OpenAPI file, or `model.name` of a
  built-in back end), the initial world as `{resource: [records]}`, each resource's id field, and
  the tool names offered to the agent.
- `verifier.checks`: declarative checks (see `myna.replay.verify`), each with a weight.
- `reference.steps`: HTTP calls, tool calls and a final answer that pass the verifier.
- `provenance`: the source session, the index of the failing event, the failure class, how the
  verifier was derived, the logged failing calls and final answer (replayed by an audit probe),
  and for variants which episode they vary and how.
- `scores`: correctness and difficulty in [0, 1], the audit status with its reasons, pass counts
  per solver (audit) and per agent (ingested rollouts), and flags raised by `ingest`.
- `audit`: the history of audits and ingests, newest last.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from myna.errors import InputError
from myna.replay.shared import Layers, SharedWorld, Tables

FORMAT: Final = "myna.episode/1"

Record = dict[str, Any]
Where = dict[str, Any]
"""Field equality filter selecting records: `{"number": "INC0010001"}`; all pairs must match."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Problem(_Model):
    instruction: str = Field(min_length=1)
    wording: str = Field(default="original", description="rewording that produced the text")


class ModelRef(_Model):
    """Where the service model comes from: a file, or a built-in back end by name."""

    path: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ModelRef:
        if (self.path is None) == (self.name is None):
            raise ValueError("give exactly one of model.path and model.name")
        return self


class Environment(_Model):
    model: ModelRef
    initial_world: dict[str, list[Record]] = Field(default_factory=dict)
    id_fields: dict[str, str] = Field(
        default_factory=dict, description="resource -> field holding each record's id"
    )
    tools: list[str] = Field(default_factory=list, description="tool names offered to the agent")
    _layers: tuple[Layers, dict[str, list[Record]]] | None = PrivateAttr(default=None)

    @classmethod
    def layered(
        cls,
        model: ModelRef,
        shared: SharedWorld,
        own: Tables,
        id_fields: dict[str, str],
        tools: list[str],
    ) -> Environment:
        """An environment whose initial world is `own` laid over `shared` (`myna.replay.shared`):
        whole, as every reader sees it, and in layers, which the hot paths use. Not validated:
        built by a generator from records of the model's shapes (the audit judges the world)."""
        layers = Layers(shared, own)
        built = cls.model_construct(
            model=model, initial_world=layers.world(), id_fields=id_fields, tools=tools
        )
        built._layers = (layers, built.initial_world)
        return built

    @property
    def layers(self) -> Layers | None:
        """The shared world and own records the initial world was built from, if it was and
        it is still that world (a copy given another world has its whole world only, as has
        an episode read from a file: layers are never saved)."""
        if self._layers is None or self._layers[1] is not self.initial_world:
            return None
        return self._layers[0]


CheckRole = Literal["goal", "guard"]


class _Check(_Model):
    name: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    role: CheckRole | None = Field(
        default=None,
        description="goal: met, it earns its weight of the reward; guard: it earns nothing, but "
        "failing it zeroes the reward. Unset: a guard when it holds before the agent acts (or "
        "its kind only forbids), else a goal.",
    )


class RecordExists(_Check):
    """Some record of `resource` matches `where` in the final world."""

    kind: Literal["record_exists"] = "record_exists"
    resource: str
    where: Where


class RecordAbsent(_Check):
    """No record of `resource` matches `where` in the final world."""

    kind: Literal["record_absent"] = "record_absent"
    resource: str
    where: Where


class FieldEquals(_Check):
    """The records matching `where` exist and their `field` equals `value`."""

    kind: Literal["field_equals"] = "field_equals"
    resource: str
    where: Where
    field: str
    value: Any


class FieldIn(_Check):
    kind: Literal["field_in"] = "field_in"
    resource: str
    where: Where
    field: str
    values: list[Any] = Field(min_length=1)


class FieldMatches(_Check):
    """The field, as text, matches the regular expression (`re.fullmatch`)."""

    kind: Literal["field_matches"] = "field_matches"
    resource: str
    where: Where
    field: str
    pattern: str


class FieldRefers(_Check):
    """The records matching `where` hold, in `field`, the id of the one record of
    `target_resource` matching `target_where` in the final world (a record the agent may have
    created: the problem its incidents now point to)."""

    kind: Literal["field_refers"] = "field_refers"
    resource: str
    where: Where
    field: str
    target_resource: str
    target_where: Where


class TextCheck(_Check):
    """Free text of substance: the field of the records matching `where` (all of them, or with
    `quantifier` any, at least one: a work note among a record's journal entries) names what it
    must name and says something of its own.

    `mentions` are groups of alternatives (["INC0010002"], ["restart", "reboot"]): at least
    `min_mentions` groups (default: every group) must each have one alternative in the text,
    word by word and ignoring word endings. `min_words` counts informative words: not function
    words, not the filler of a low-effort note ("done", "fixed as requested"). Text that mostly
    repeats `not_copy_of` (the instruction) fails, and so does text naming any alternative of an
    `excludes` group (a cause the evidence rules out: a note naming every candidate names none).
    """

    kind: Literal["text"] = "text"
    resource: str
    where: Where
    field: str
    quantifier: Literal["all", "any"] = "all"
    mentions: list[list[str]] = Field(default_factory=list)
    min_mentions: int | None = Field(default=None, ge=0)
    min_words: int = Field(default=3, ge=0)
    not_copy_of: str = ""
    excludes: list[list[str]] = Field(default_factory=list)


class TextSource(_Model):
    """Where a rubric reads text: a field of the records matching `where` in the final world."""

    resource: str
    where: Where
    field: str


class RubricCheck(_Check):
    """A model-graded rubric (`myna.replay.rubric`): graded only when a grader is configured,
    reported apart from the deterministic checks, never part of the reward or the verdict."""

    kind: Literal["rubric"] = "rubric"
    criteria: str = Field(min_length=1)
    sources: list[TextSource] = Field(default_factory=list)
    include_answer: bool = False
    pass_score: float = Field(default=0.5, ge=0, le=1)


class FieldChanged(_Check):
    """Records matching `where` in the initial world have a different `field` at the end."""

    kind: Literal["field_changed"] = "field_changed"
    resource: str
    where: Where
    field: str


class FieldUnchanged(_Check):
    kind: Literal["field_unchanged"] = "field_unchanged"
    resource: str
    where: Where
    field: str


class CountRecords(_Check):
    kind: Literal["count"] = "count"
    resource: str
    where: Where = Field(default_factory=dict)
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)


ChangeKind = Literal["created", "updated", "deleted"]


def _updates_only() -> list[ChangeKind]:
    return ["updated"]


class AllowedChange(_Model):
    """A change the task needs, to the records it selects: one by `record_id`, those matching
    `where` (as they were before for updates and deletes, as they end for creates), or, with
    neither, any record of `resource`. `max_count` bounds how many records it covers (how many
    may be created)."""

    resource: str
    record_id: str | None = None
    where: Where | None = None
    kinds: list[ChangeKind] = Field(default_factory=_updates_only)
    fields: list[str] | None = Field(default=None, description="None: any field may change")
    max_count: int | None = Field(default=None, ge=0)


class Harmless(_Model):
    """Fields a competent agent may add to a record the task is about unasked (a work note, a
    comment): changing them there is no collateral damage."""

    resource: str
    record_id: str | None = None
    where: Where | None = None
    fields: list[str] = Field(min_length=1)


class SideEffect(_Model):
    """A resource the service writes beside a client's change (a journal entry, an audit row),
    and where its rows name the record (and field) they were written for, so a side effect is
    judged as a change to that record's field."""

    resource: str
    id_field: str
    table_field: str | None = None
    field_field: str | None = None


class NoCollateral(_Check):
    """Nothing changed outside `allowed` and `harmless`. `ignore_fields` are maintained by the
    server. Rows of a `side_effects` resource (written, changed or deleted) count as changes to
    the records they name, whether or not `ignore_resources` lists it; other rows of
    `ignore_resources` are the service's own business."""

    kind: Literal["no_collateral"] = "no_collateral"
    allowed: list[AllowedChange] = Field(default_factory=list)
    harmless: list[Harmless] = Field(default_factory=list)
    ignore_fields: list[str] = Field(default_factory=list)
    side_effects: list[SideEffect] = Field(default_factory=list)
    ignore_resources: list[str] = Field(default_factory=list)


AnswerMode = Literal["exact", "normalised", "number", "contains"]


class AnswerCheck(_Check):
    kind: Literal["answer"] = "answer"
    mode: AnswerMode = "normalised"
    expected: str
    tolerance: float = Field(default=0.0, ge=0)


class CallPattern(_Model):
    """A call shape: an HTTP method (or `*`) and a path glob (`fnmatch`, `*` spans slashes)."""

    method: str = "*"
    path: str


class Policy(_Check):
    """Calls the agent must not make. Admin and undocumented endpoints are flagged by the runner."""

    kind: Literal["policy"] = "policy"
    forbidden: list[CallPattern] = Field(default_factory=list)
    forbid_admin: bool = True
    forbid_undocumented: bool = True


class PythonCheck(_Check):
    """A check registered in Python (`myna.replay.verify.register_python_check`) by name."""

    kind: Literal["python"] = "python"
    function: str
    params: dict[str, Any] = Field(default_factory=dict)


Check = Annotated[
    RecordExists
    | RecordAbsent
    | FieldEquals
    | FieldIn
    | FieldMatches
    | FieldRefers
    | TextCheck
    | RubricCheck
    | FieldChanged
    | FieldUnchanged
    | CountRecords
    | NoCollateral
    | AnswerCheck
    | Policy
    | PythonCheck,
    Field(discriminator="kind"),
]

GUARD_KINDS = frozenset({"no_collateral", "policy", "field_unchanged"})
"""Checks that forbid rather than require: a do-nothing agent passes them by construction."""
GRADED_KINDS = frozenset({"rubric"})
"""Checks a model grades, reported apart: never part of the reward or the verdict."""


class Verifier(_Model):
    checks: list[Check] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> Verifier:
        seen: set[str] = set()
        for check in self.checks:
            if check.name in seen:
                raise ValueError(f"two checks are named {check.name!r}; names must be unique")
            seen.add(check.name)
        return self


class HttpStep(_Model):
    kind: Literal["http"] = "http"
    method: str
    path: str
    params: dict[str, str] = Field(default_factory=dict)
    body: Any = None


class ToolStep(_Model):
    kind: Literal["tool"] = "tool"
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class AnswerStep(_Model):
    kind: Literal["answer"] = "answer"
    text: str


Step = Annotated[HttpStep | ToolStep | AnswerStep, Field(discriminator="kind")]


class Solution(_Model):
    steps: list[Step] = Field(default_factory=list)

    @property
    def answer(self) -> str | None:
        answers = [step.text for step in self.steps if isinstance(step, AnswerStep)]
        return answers[-1] if answers else None


FailureClass = Literal[
    "constraint_violation",  # the service refused a call (4xx)
    "wrong_record",  # the right change on the wrong record
    "missing_step",  # a needed change was never made
    "invented_value",  # a field or value the service does not have
    "wrong_answer",  # the final answer text was wrong
    "policy_breach",  # a forbidden action, per feedback or the policy
]
FAILURE_CLASSES: tuple[FailureClass, ...] = (
    "constraint_violation",
    "wrong_record",
    "missing_step",
    "invented_value",
    "wrong_answer",
    "policy_breach",
)
Derivation = Literal["successful_session", "corrected_outcome", "feedback", "model", "manual"]


class Provenance(_Model):
    source_session: str | None = None
    source_file: str | None = None
    step_index: int | None = Field(default=None, description="index of the failing event")
    failure_class: FailureClass | None = None
    failure_detail: str = ""
    derived_from: Derivation = "manual"
    failing_calls: list[Step] = Field(
        default_factory=list, description="the logged calls from the failure point on"
    )
    failing_answer: str | None = Field(default=None, description="the logged final answer")
    variant_of: str | None = None
    variant: str | None = Field(default=None, description="other_record, other_value, wording")


class PassStats(_Model):
    tries: int = Field(default=0, ge=0)
    passes: int = Field(default=0, ge=0)

    @property
    def rate(self) -> float | None:
        return self.passes / self.tries if self.tries else None


AuditStatus = Literal["unaudited", "accepted", "rejected"]


class Scores(_Model):
    correctness: float | None = Field(default=None, ge=0, le=1)
    difficulty: float | None = Field(default=None, ge=0, le=1)
    status: AuditStatus = "unaudited"
    reasons: list[str] = Field(default_factory=list)
    solvers: dict[str, PassStats] = Field(default_factory=dict)
    rollouts: dict[str, PassStats] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)


class AuditEntry(_Model):
    at: str = Field(description="ISO 8601 UTC time")
    kind: Literal["audit", "ingest"]
    status: AuditStatus
    reasons: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class Episode(_Model):
    format: Literal["myna.episode/1"] = FORMAT
    id: str = Field(min_length=1)
    problem: Problem
    environment: Environment
    verifier: Verifier
    reference: Solution
    provenance: Provenance = Field(default_factory=Provenance)
    scores: Scores = Field(default_factory=Scores)
    audit: list[AuditEntry] = Field(default_factory=list)


def schema() -> dict[str, Any]:
    """The JSON Schema of the episode format, as committed in `episode.schema.json`."""
    document = Episode.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["$id"] = "https://myna.dev/schemas/episode-1.json"
    return document


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def parse_episode(text: str, *, file: str | None = None) -> Episode:
    """An episode from its JSON text; errors name the file and the first offending field."""
    try:
        return Episode.model_validate_json(text)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputError(
            f"not a {FORMAT} episode: {first['msg']}", file=file, field=where or None
        ) from None


def load_episode(path: Path) -> Episode:
    return parse_episode(path.read_text(encoding="utf-8"), file=str(path))


def dump_episode(episode: Episode) -> str:
    return episode.model_dump_json(indent=2, exclude_none=False) + "\n"


def save_episode(episode: Episode, directory: Path) -> Path:
    """Write `<directory>/<id>.json` (ids are made filename-safe by the builder)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{episode.id}.json"
    path.write_text(dump_episode(episode), encoding="utf-8")
    return path


def episode_paths(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise InputError("expected a directory of episode JSON files", file=str(directory))
    return sorted(directory.glob("*.json"))


def iter_episodes(directory: Path) -> Iterator[tuple[Path, Episode]]:
    for path in episode_paths(directory):
        yield path, load_episode(path)
