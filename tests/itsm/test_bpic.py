"""BPIC 2014 incident rows under the published column names and the Kaggle renames."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from myna.itsm.importers import IncidentState, import_history

PUBLISHED = (
    "CI Name (aff),CI Type (aff),CI Subtype (aff),Service Component WBS (aff),Incident ID,Status,"
    "Impact,Urgency,Priority,Category,KM number,Open Time,Reopen Time,Resolved Time,Close Time,"
    "Handle Time (Hours),Closure Code,# Related Interactions,Related Interaction,"
    "# Related Incidents,# Related Changes,Related Change,# Reassignments"
)
KAGGLE = (
    "CI_Name,CI_Cat,CI_Subcat,WBS,Incident_ID,Status,Impact,Urgency,Priority,Category,KB_number,"
    "Open_Time,Reopen_Time,Resolved_Time,Close_Time,Handle_Time_hrs,Closure_Code,"
    "No_of_Related_Interactions,Related_Interaction,No_of_Related_Incidents,"
    "No_of_Related_Changes,Related_Change,No_of_Reassignments"
)
ROW = (
    "SBA000263,application,Server Based Application,WBS000073,IM0000047,Closed,2,3,2,incident,"
    'KM0000315,07/01/2013 08:17,10/01/2013 09:00,12/01/2013 10:00,13/01/2013 10:05,"1,5",'
    "Hardware,1,SD0000080,,1,C00000123,4"
)


@pytest.mark.parametrize("header", [PUBLISHED, KAGGLE], ids=["published", "kaggle"])
def test_both_namings_read_to_the_same_incident(
    write_csv: Callable[..., Path], header: str
) -> None:
    history, _ = import_history(write_csv(header, ROW))
    assert history.format == "bpic2014"
    (incident,) = history.incidents
    assert (incident.number, incident.source_key) == ("INC0000047", "IM0000047")
    # Grades 2 and 3 of five are High and Medium of three; the matrix gives High (2).
    assert (incident.impact, incident.urgency, incident.priority) == (1, 2, 2)
    assert incident.reassignment_count == 4
    assert [(c.state, c.at.isoformat(" ")) for c in incident.state_changes] == [
        (IncidentState.NEW, "2013-01-07 08:17:00"),
        (IncidentState.RESOLVED, "2013-01-10 09:00:00"),
        (IncidentState.IN_PROGRESS, "2013-01-10 09:00:00"),
        (IncidentState.RESOLVED, "2013-01-12 10:00:00"),
        (IncidentState.CLOSED, "2013-01-13 10:05:00"),
    ]
    assert len(incident.reopenings) == 1
    assert incident.resolution is not None
    assert (incident.resolution.code, incident.resolution.source_code) == (
        "Solution provided",
        "Hardware",
    )
    ci = history.cis[incident.cmdb_ci or ""]
    assert (ci.name, ci.ci_class) == ("SBA000263", "cmdb_ci_appl")
    assert history.cis[incident.business_service or ""].ci_class == "cmdb_ci_service"
    assert [c.number for c in history.changes.values()] == ["CHG0000123"]


@pytest.mark.parametrize(
    ("impact", "why"),
    [("NS", "not specified"), ("7", "between 1 and 5"), ("high", "expected a level")],
    ids=["not-specified", "out-of-range", "word"],
)
def test_an_unusable_grade_leaves_priority_empty_and_is_reported_once(
    write_csv: Callable[..., Path], impact: str, why: str
) -> None:
    row = ROW.replace("Closed,2,3,2,", f"Closed,{impact},3,2,")
    history, report = import_history(write_csv(KAGGLE, row))
    (incident,) = history.incidents
    assert (incident.impact, incident.priority) == (None, None)
    (issue,) = [i for i in report.issues if i.column == "impact"]
    assert (issue.line, issue.value, issue.kind, issue.count) == (2, impact, "unmapped", 1)
    assert why in issue.reason
