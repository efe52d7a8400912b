"""Malformed input fails with an InputError that names the file, line and column."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from myna.errors import InputError
from myna.itsm.importers import import_history
from tests.itsm.conftest import UCI_HEADER, uci_row


def test_an_unrecognised_header_names_what_each_format_needs(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv("id,title,status", "1,Printer jammed,open")
    with pytest.raises(InputError) as raised:
        import_history(path)
    assert raised.value.file == str(path)
    assert raised.value.line == 1
    message = str(raised.value)
    assert "uci_event_log needs" in message
    assert "bpic2014 needs" in message
    assert "servicenow needs" in message


def test_naming_a_format_the_header_does_not_fit_lists_the_missing_columns(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv("number,short_description", "INC0000001,Printer jammed")
    with pytest.raises(
        InputError, match=r"lacks incident_state, opened_at, sys_mod_count, sys_updated_at"
    ):
        import_history(path, format="uci_event_log")


def test_an_unknown_format_name_is_refused(write_csv: Callable[..., Path]) -> None:
    path = write_csv(UCI_HEADER)
    with pytest.raises(InputError, match="unknown format 'jira'"):
        import_history(path, format="jira")


def test_an_unparsable_required_date_names_line_and_column(write_csv: Callable[..., Path]) -> None:
    good = uci_row("INC1", "New", "01-03-2016 09:05", mod=0)
    bad = uci_row("INC1", "Active", "2016.03.01 at noon", mod=1)
    path = write_csv(UCI_HEADER, good, bad)
    with pytest.raises(InputError) as raised:
        import_history(path)
    assert (raised.value.file, raised.value.line, raised.value.field) == (
        str(path),
        3,
        "sys_updated_at",
    )
    assert "DD-MM-YYYY" in str(raised.value)


def test_a_missing_required_value_names_line_and_column(write_csv: Callable[..., Path]) -> None:
    path = write_csv(UCI_HEADER, uci_row("?", "New", "01-03-2016 09:05", mod=0))
    with pytest.raises(InputError) as raised:
        import_history(path)
    assert (raised.value.line, raised.value.field) == (2, "number")


def test_an_unparsable_optional_date_is_reported_not_fatal(write_csv: Callable[..., Path]) -> None:
    path = write_csv(
        UCI_HEADER, uci_row("INC1", "Resolved", "01-03-2016 09:05", mod=0, resolved_at="soon")
    )
    history, report = import_history(path)
    resolution = history.incidents[0].resolution
    assert resolution is not None
    # The log itself says when the incident became Resolved; that time stands in.
    assert resolution.resolved_at is not None
    assert resolution.resolved_at.isoformat(" ") == "2016-03-01 09:05:00"
    issues = [(i.line, i.value, i.kind) for i in report.issues if i.column == "resolved_at"]
    assert issues == [(2, "soon", "invalid"), (2, "", "inconsistent")]


def test_an_unknown_state_is_reported_and_read_as_in_progress(
    write_csv: Callable[..., Path],
) -> None:
    path = write_csv(UCI_HEADER, uci_row("INC1", "Pending Approval", "01-03-2016 09:05", mod=0))
    history, report = import_history(path)
    assert history.incidents[0].state.label == "In Progress"
    (issue,) = [i for i in report.issues if i.column == "incident_state"]
    assert (issue.kind, issue.value, issue.line) == ("unmapped", "Pending Approval", 2)


@pytest.mark.parametrize(
    ("content", "match"),
    [(b"", "empty"), (b"\xff\xfenumber\n", "not UTF-8")],
    ids=["empty", "utf16-bom"],
)
def test_unreadable_files_are_input_errors(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=match):
        import_history(path)


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        import_history(tmp_path / "absent.csv")


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ('{"records": [1, 2]}', "expected a record object, got int"),
        ('{"rows": []}', 'expected a list of records, or an object with a "records"'),
        ('{"records": [', "not valid JSON"),
    ],
    ids=["scalar-records", "wrong-key", "truncated"],
)
def test_malformed_json_exports_are_input_errors(tmp_path: Path, document: str, match: str) -> None:
    path = tmp_path / "incident.json"
    path.write_text(document, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        import_history(path)


def test_a_json_record_without_an_opening_time_names_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "incident.json"
    path.write_text('{"result": [{"number": "INC0000001", "short_description": "x"}]}')
    with pytest.raises(InputError) as raised:
        import_history(path)
    assert (raised.value.entry, raised.value.field) == (0, "opened_at")
