"""A directory of exports imports as one history (ServiceNow exports come a table per file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from myna.errors import InputError
from myna.itsm.importers import check_records, import_history, to_servicenow_records
from tests.itsm.conftest import UCI_HEADER, uci_row


def test_incident_and_problem_exports_join_into_one_consistent_world(tmp_path: Path) -> None:
    (tmp_path / "incident.csv").write_text(
        "number,short_description,opened_at,state,problem_id,priority\n"
        "INC0000001,VPN drops,2026-01-05 09:00:00,In Progress,PRB0040001,4 - Low\n"
        "INC0000002,VPN slow,2026-01-05 09:30:00,New,PRB0040001,bad\n",
        encoding="utf-8",
    )
    (tmp_path / "problem.json").write_text(
        json.dumps(
            {
                "records": [
                    {
                        "number": "PRB0040001",
                        "sys_id": "f" * 32,
                        "short_description": "Concentrator flaps",
                        "state": "Root Cause Analysis",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "notes.txt").write_text("not an export", encoding="utf-8")
    history, report = import_history(tmp_path)
    assert history.format == "servicenow"
    assert report.files == [str(tmp_path / "incident.csv"), str(tmp_path / "problem.json")]
    assert [i.problem for i in history.incidents] == ["f" * 32, "f" * 32]
    assert [p.state for p in history.problems.values()] == ["103"]
    (issue,) = report.issues
    assert (issue.file, issue.line, issue.column, issue.value) == (
        str(tmp_path / "incident.csv"),
        3,
        "priority",
        "bad",
    )
    assert check_records(to_servicenow_records(history)) == []


def test_exports_of_different_formats_cannot_share_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(
        UCI_HEADER + "\n" + uci_row("INC1", "New", "01-03-2016 09:05", mod=0) + "\n"
    )
    (tmp_path / "b.csv").write_text("number,short_description\nINC0000002,Printer jammed\n")
    with pytest.raises(
        InputError, match=r"is a servicenow export, but a\.csv is uci_event_log"
    ) as raised:
        import_history(tmp_path)
    assert raised.value.file == str(tmp_path / "b.csv")


def test_a_directory_without_exports_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no \.csv or \.json export"):
        import_history(tmp_path)
