"""The seeding adapter: imported ServiceNow records in the shapes the ITSM back end's model takes.

The importers emit records as ServiceNow stores them (plain sys_id references, every column the
source had, the instance's own `u_*` fields); the built-in model was learned from a small corpus
and is narrower. `adapt` keeps what the model can hold and reports, per table and field, what it
could not: tables the model lacks, fields it lacks, values its learned JSON Schema refuses (an
enum of `admin`/`system` for `sys_created_by`, an always-empty `rfc`), and fills fields the model
always returns with ServiceNow's empty value. Nothing is dropped without a `SeedIssue` counting it.

References stay plain sys_ids: that is the mock's stored form (and ServiceNow's), which episode
worlds load directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from jsonschema import Draft202012Validator

from myna.schemas.model import FieldSpec, Resource, ServiceModel

Record = dict[str, Any]
SeedIssueKind = Literal["table_missing", "field_missing", "value_outside_schema", "filled"]


Note: TypeAlias = Callable[[str, str, "SeedIssueKind", str], None]


@dataclass(frozen=True, slots=True)
class SeedIssue:
    """One kind of thing the model could not hold, for one table and field, with a count."""

    table: str
    field: str
    kind: SeedIssueKind
    detail: str
    count: int


@dataclass(frozen=True, slots=True)
class SeededData:
    """Records by table, in the model's shapes, with what the adaptation had to change."""

    tables: dict[str, dict[str, Record]]
    """table -> sys_id -> record."""
    issues: tuple[SeedIssue, ...] = field(default=())

    def record(self, table: str, sys_id: str) -> Record | None:
        return self.tables.get(table, {}).get(sys_id)


def adapt(records: Mapping[str, Iterable[Record]], model: ServiceModel) -> SeededData:
    """`records` (as `to_servicenow_records` emits them) fitted to `model`, with the issues."""
    counts: dict[tuple[str, str, SeedIssueKind, str], int] = {}

    def note(table: str, name: str, kind: SeedIssueKind, detail: str) -> None:
        key = (table, name, kind, detail)
        counts[key] = counts.get(key, 0) + 1

    tables: dict[str, dict[str, Record]] = {}
    fits = _Fits()
    for table, rows in records.items():
        resource = model.resources.get(table)
        if resource is None:
            for _ in rows:
                note(table, "*", "table_missing", f"the model has no table {table}")
            continue
        fitted = tables.setdefault(table, {})
        for row in rows:
            record = _fit(table, row, resource, note, fits)
            fitted[str(record[resource.id_field])] = record
    issues = tuple(
        SeedIssue(table, name, kind, detail, count)
        for (table, name, kind, detail), count in sorted(counts.items())
    )
    return SeededData(tables, issues)


class _Fits:
    """Whether a value fits a field's learned schema, cached: exports repeat few values."""

    def __init__(self) -> None:
        self._validators: dict[int, Draft202012Validator] = {}
        self._answers: dict[tuple[int, str], bool] = {}

    def __call__(self, spec: FieldSpec, value: Any) -> bool:
        key = (id(spec), json.dumps(value, sort_keys=True))
        known = self._answers.get(key)
        if known is None:
            validator = self._validators.get(id(spec))
            if validator is None:
                validator = self._validators[id(spec)] = Draft202012Validator(spec.schema_)
            known = self._answers[key] = validator.is_valid(value)
        return known


def _fit(table: str, row: Mapping[str, Any], resource: Resource, note: Note, fits: _Fits) -> Record:
    record: Record = {}
    for name, value in row.items():
        spec = resource.fields.get(name)
        if spec is None:
            note(table, name, "field_missing", f"the model's {table} has no field {name}")
            continue
        # A reference holds its target's sys_id, the stored form; its schema is the wire form.
        if value != "" and spec.reference is None and not fits(spec, value):
            if spec.server_generated:
                # A value the server maintains (who created the record, a related change) is
                # not what the scenarios are about; the schema only reflects the learned corpus.
                note(table, name, "value_outside_schema", "server-maintained value left out")
                continue
            note(
                table, name, "value_outside_schema", "value emptied: the model's schema refuses it"
            )
            value = ""
        record[name] = value
    for name, spec in resource.fields.items():
        if spec.required and not spec.server_generated and name not in record and "." not in name:
            note(table, name, "filled", "always returned by the model; filled with ''")
            record[name] = ""
    return record
