"""Whole UCI files with messy optional cells: every value is imported or reported, never lost."""

from __future__ import annotations

import csv
import io
import tempfile
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myna.itsm.importers import import_history
from tests.itsm.conftest import UCI_HEADER

COLUMNS = UCI_HEADER.split(",")
missing = st.sampled_from(["?", "", "NULL", "n/a"])
booleans = st.sampled_from(["TRUE", "FALSE", "true", "false", "yes", "0"]) | missing
dates = (
    st.datetimes(
        min_value=datetime(2015, 1, 1),
        max_value=datetime(2017, 12, 31),
    ).flatmap(
        lambda t: st.sampled_from(
            [
                t.strftime("%d-%m-%Y %H:%M"),
                t.strftime("%d/%m/%Y %H:%M"),
                t.strftime("%Y-%m-%d %H:%M:%S"),
            ]
        )
    )
    | missing
)
garbage = st.sampled_from(["soon", "31-02-2016 10:00", "maybe", "7 - Huge"])
row = st.fixed_dictionaries(
    {
        "number": st.sampled_from(["INC1", "INC2", "INC3"]),
        "incident_state": st.sampled_from(
            ["New", "Active", "Awaiting User Info", "Resolved", "Closed"]
        ),
        "active": booleans | garbage,
        "made_sla": booleans | garbage,
        "knowledge": booleans,
        "resolved_at": dates | garbage,
        "closed_at": dates,
        "impact": st.sampled_from(["1 - High", "2 - Medium", "3 - Low"]) | missing | garbage,
        "assignment_group": st.sampled_from(["Group 1", "Group 2"]) | missing,
        "assigned_to": st.sampled_from(["Resolver 1", "Resolver  1", "Resolver 2"]) | missing,
    }
)


def _file(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, restval="?", lineterminator="\n")
    writer.writeheader()
    for position, values in enumerate(rows):
        writer.writerow(
            {
                **values,
                "sys_mod_count": str(position),
                "opened_at": "01-03-2016 09:00",
                "sys_updated_at": f"01-03-2016 {10 + position % 10}:00",
            }
        )
    return out.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(row, min_size=1, max_size=12))
def test_every_row_lands_in_an_incident_and_every_unreadable_value_is_reported(
    rows: list[dict[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "log.csv"
        path.write_text(_file(rows), encoding="utf-8")
        history, report = import_history(path)
    assert report.rows == len(rows)
    assert [i.source_key for i in history.incidents] == list(
        dict.fromkeys(r["number"] for r in rows)
    )
    unreadable = sum(
        1
        for r in rows
        for column in ("active", "made_sla", "resolved_at", "impact")
        if r[column] in ("soon", "31-02-2016 10:00", "maybe", "7 - Huge")
    )
    assert report.count("invalid") == unreadable
    # "Resolver  1" and "Resolver 1" are one person.
    assert len({u.name for u in history.users.values() if "assignee" in u.roles}) == len(
        {
            " ".join(r["assigned_to"].split())
            for r in rows
            if r["assigned_to"].startswith("Resolver")
        }
    )
