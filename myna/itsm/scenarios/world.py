"""The seeding adapter: imported ServiceNow records in the shapes the ITSM back end's model takes.

The importers emit records as ServiceNow stores them (plain sys_id references, every column the
source had, the instance's own `u_*` fields); the built-in model was learned from a small corpus
and is narrower. `adapt` keeps what the model can hold and reports, per table and field, what it
could not: tables the model lacks, fields it lacks, server-maintained values outside the enum it
learned (`sys_created_by` is `admin`/`system` there), and fills fields the model always returns
with ServiceNow's empty value. Nothing is dropped without a `SeedIssue` counting it.

References stay plain sys_ids: that is the mock's stored form (and ServiceNow's), which episode
worlds load directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from myna.schemas.model import Resource, ServiceModel

Record = dict[str, Any]
SeedIssueKind = Literal["table_missing", "field_missing", "value_outside_enum", "filled"]


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
    for table, rows in records.items():
        resource = model.resources.get(table)
        if resource is None:
            for _ in rows:
                note(table, "*", "table_missing", f"the model has no table {table}")
            continue
        fitted = tables.setdefault(table, {})
        for row in rows:
            record = _fit(table, row, resource, note)
            fitted[str(record[resource.id_field])] = record
    issues = tuple(
        SeedIssue(table, name, kind, detail, count)
        for (table, name, kind, detail), count in sorted(counts.items())
    )
    return SeededData(tables, issues)


def _fit(table: str, row: Mapping[str, Any], resource: Resource, note: Any) -> Record:
    record: Record = {}
    for name, value in row.items():
        spec = resource.fields.get(name)
        if spec is None:
            note(table, name, "field_missing", f"the model's {table} has no field {name}")
            continue
        enum = spec.schema_.get("enum")
        if enum and value != "" and value not in enum:
            if spec.server_generated:
                # A value the server maintains (who created the record) is not the data the
                # scenarios are about; the model's enum only reflects the corpus it learned from.
                note(table, name, "value_outside_enum", "server-maintained value left out")
                continue
            note(table, name, "value_outside_enum", "value emptied: not in the model's enum")
            value = ""
        record[name] = value
    for name, spec in resource.fields.items():
        if spec.required and not spec.server_generated and name not in record and "." not in name:
            note(table, name, "filled", "always returned by the model; filled with ''")
            record[name] = ""
    return record
