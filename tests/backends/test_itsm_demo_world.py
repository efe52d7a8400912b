"""The ITSM back end's demo-sized world (`myna serve itsm`'s default): what it ships is what
`demo.py` writes, it loads into the served model, and it is sized and spread like a demo
instance: hundreds of incidents in every state, problems, changes with tasks and approvals,
requests, knowledge articles, users in groups with roles, configuration items."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from myna.backends import BACKENDS, builtin_model
from myna.backends.itsm.demo import seed_files
from myna.backends.itsm.rules import STATE_MODELS
from myna.mocks.seed import read_files


@pytest.fixture(scope="module")
def shipped() -> Iterator[Path]:
    with BACKENDS["itsm"].shipped_world("demo") as directory:
        assert directory is not None
        yield directory


def rows(shipped: Path, table: str) -> list[dict[str, Any]]:
    text = (shipped / f"{table}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_the_shipped_demo_world_is_what_demo_py_writes(shipped: Path) -> None:
    written = seed_files()
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in shipped.glob("*.jsonl")}
    assert on_disk == written, (
        "regenerate: python -m myna.backends.itsm.demo -o myna/backends/itsm/demo_world"
    )


def test_it_loads_into_the_served_model(shipped: Path) -> None:
    data = read_files(builtin_model("itsm"), shipped)
    assert len(data.records) > 5000


@pytest.mark.parametrize(
    ("table", "least"),
    [
        ("incident", 300),
        ("problem", 25),
        ("change_request", 30),
        ("kb_knowledge", 50),
        ("sc_request", 50),
    ],
)
def test_every_state_of_every_workflow_is_there(shipped: Path, table: str, least: int) -> None:
    records = rows(shipped, table)
    assert len(records) >= least
    model = STATE_MODELS[table]
    held = Counter(record[model.field] for record in records)
    assert set(held) == set(model.states), held


def test_changes_have_tasks_and_approvals_and_requests_are_approved(shipped: Path) -> None:
    changes = {row["sys_id"]: row for row in rows(shipped, "change_request")}
    tasks = rows(shipped, "change_task")
    assert all(task["parent"] == task["change_request"] in changes for task in tasks)
    approvals = Counter(
        (row["source_table"], row["state"]) for row in rows(shipped, "sysapproval_approver")
    )
    for wanted in ("approved", "requested", "rejected"):
        assert approvals[("change_request", wanted)] > 0, approvals
    assert approvals[("sc_request", "approved")] > 0
    # What the approvals decided: every approved change is past Authorize.
    for change in changes.values():
        if change["approval"] == "approved":
            assert change["state"] in ("-2", "-1", "0", "3"), change["number"]


def test_users_sit_in_groups_with_the_roles_they_inherit(shipped: Path) -> None:
    members = rows(shipped, "sys_user_grmember")
    grants = rows(shipped, "sys_user_has_role")
    assert len(rows(shipped, "sys_user")) >= 60
    inherited = {(row["user"], row["granted_by"]) for row in grants if row["inherited"] == "true"}
    groups = {row["sys_id"]: row for row in rows(shipped, "sys_user_group")}
    for member in members:
        if groups[member["group"]]["roles"]:
            assert (member["user"], member["group"]) in inherited


def test_assignees_belong_to_their_groups(shipped: Path) -> None:
    pairs = {(row["group"], row["user"]) for row in rows(shipped, "sys_user_grmember")}
    for incident in rows(shipped, "incident"):
        if incident["assigned_to"]:
            assert (incident["assignment_group"], incident["assigned_to"]) in pairs
