"""Each reader on the real samples in ../shared/corpus, against counts taken with the csv module."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from myna.itsm.importers import (
    ImportReport,
    IncidentHistory,
    IncidentState,
    import_history,
    to_servicenow_records,
)
from tests.itsm.conftest import corpus_file

pytestmark = pytest.mark.corpus

UciSample = tuple[list[dict[str, str]], IncidentHistory, ImportReport]

UCI = "uci_incident_event_log/incident_event_log_first5998.csv"
BPIC = "bpic2014_kaggle_itsm/ITSM_data_sample.csv"
IBM = "ibm_processmining/incidents_REST.csv"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as stream:
        return list(csv.DictReader(stream))


@pytest.fixture(scope="module")
def uci() -> UciSample:
    """The UCI sample's rows as the csv module reads them, and the sample imported once."""
    path = corpus_file(UCI)
    history, report = import_history(path)
    return _rows(path), history, report


def test_uci_sample_incidents_people_and_groups_match_the_file(uci: UciSample) -> None:
    rows, history, report = uci
    assert history.format == "uci_event_log"
    assert report.rows == len(rows)
    assert [i.source_key for i in history.incidents] == list(
        dict.fromkeys(r["number"] for r in rows)
    )
    assert {g.name for g in history.groups.values()} == {
        r["assignment_group"] for r in rows if r["assignment_group"] != "?"
    }
    # Assignees and resolvers are different columns with their own anonymised ids.
    assignees = {r["assigned_to"] for r in rows if r["assigned_to"] != "?"}
    resolvers = {r["resolved_by"] for r in rows if r["resolved_by"] != "?"}
    by_role = Counter(role for user in history.users.values() for role in user.roles)
    assert by_role["assignee"] == len(assignees)
    assert by_role["resolver"] == len(resolvers)
    pairs = {
        (r["assignment_group"], r["assigned_to"])
        for r in rows
        if "?" not in (r["assignment_group"], r["assigned_to"])
    }
    group_name = {k: g.name for k, g in history.groups.items()}
    user_name = {k: u.name for k, u in history.users.items()}
    assert {(group_name[g], user_name[u]) for g, u in history.memberships} == pairs


def test_uci_sample_final_states_reopenings_and_close_codes_match_the_file(
    uci: UciSample,
) -> None:
    rows, history, report = uci
    last = {row["number"]: row for row in rows}
    by_key = {i.source_key: i for i in history.incidents}
    closed = [n for n, r in last.items() if r["incident_state"] == "Closed"]
    assert sorted(n for n, i in by_key.items() if i.state is IncidentState.CLOSED) == sorted(closed)
    assert {n: i.reopen_count for n, i in by_key.items()} == {
        n: int(r["reopen_count"]) for n, r in last.items()
    }
    # Every reopen count the column states is visible in the log itself.
    assert sum(len(i.reopenings) for i in history.incidents) == sum(
        int(r["reopen_count"]) for r in last.values()
    )
    codes = Counter(r["closed_code"] for r in last.values() if r["closed_code"] != "?")
    reported = {i.value: i.count for i in report.issues if i.column == "closed_code" and i.value}
    assert reported == dict(codes)
    unresolved = sum(
        1
        for r in last.values()
        if r["incident_state"] in ("Resolved", "Closed") and r["closed_code"] == "?"
    )
    (missing,) = [i for i in report.issues if i.column == "closed_code" and not i.value]
    assert (missing.kind, missing.count) == ("inconsistent", unresolved)


def test_uci_sample_converts_to_records_whose_references_resolve(uci: UciSample) -> None:
    _, history, _ = uci
    records = to_servicenow_records(history)
    ids = {table: {r["sys_id"] for r in rows} for table, rows in records.items()}
    for incident in records["incident"]:
        assert incident["caller_id"] in ids["sys_user"]
        assert incident["assignment_group"] in ids["sys_user_group"] | {""}
        assert incident["assigned_to"] in ids["sys_user"] | {""}
        assert incident["problem_id"] in ids["problem"] | {""}
        assert incident["rfc"] in ids["change_request"] | {""}
        assert incident["location"] in ids["cmn_location"] | {""}
    assert {a["documentkey"] for a in records["sys_audit"]} <= ids["incident"]


def test_bpic_sample_maps_grades_cis_and_reopenings() -> None:
    path = corpus_file(BPIC)
    rows = _rows(path)
    history, report = import_history(path)
    assert history.format == "bpic2014"
    assert len(history.incidents) == len({r["Incident_ID"] for r in rows})
    assert {c.name for c in history.cis.values() if c.ci_class != "cmdb_ci_service"} == {
        r["CI_Name"] for r in rows
    }
    assert sum(len(i.reopenings) for i in history.incidents) == sum(
        1 for r in rows if r["Reopen_Time"]
    )
    not_specified = sum(1 for r in rows if r["Impact"] == "NS")
    assert sum(1 for i in history.incidents if i.priority is None) == not_specified
    assert sum(i.count for i in report.issues if i.column == "impact") == not_specified
    assert all(i.number.startswith("INC") for i in history.incidents)


def test_servicenow_export_keeps_sys_ids_and_numeric_states() -> None:
    path = corpus_file(IBM)
    rows = _rows(path)
    history, _ = import_history(path)
    assert history.format == "servicenow"
    assert [i.sys_id for i in history.incidents] == [r["sys_id"] for r in rows]
    assert Counter(int(i.state) for i in history.incidents) == Counter(
        int(r["incident_state"]) for r in rows
    )
    on_hold = [i for i in history.incidents if i.state is IncidentState.ON_HOLD]
    assert {int(i.hold_reason or 0) for i in on_hold} == {
        int(r["hold_reason"]) for r in rows if r["incident_state"] == "3"
    }
    records = to_servicenow_records(history)
    assert {r["assignment_group"] for r in records["incident"]} == {
        r["assignment_group"] for r in rows
    }


def test_pseudonymised_servicenow_export_names_nobody_from_the_source() -> None:
    path = corpus_file(IBM)
    rows = _rows(path)
    history, _ = import_history(path, pseudonymise_key="corpus")
    records = to_servicenow_records(history)
    source_people = {r[c] for r in rows for c in ("sys_created_by", "sys_updated_by") if r[c]}
    written = {r[c] for r in records["incident"] for c in ("sys_created_by", "sys_updated_by")}
    assert source_people
    assert written.isdisjoint(source_people)
    assert {u["user_name"] for u in records["sys_user"]} >= written
