"""The consistent ITSM world shipped as seed files: reproduced from the reference instance after
its corpus, internally consistent (references resolve, states agree with their fields, assignees
belong to their groups), and served by the `servicenow` extension as the instance left it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from myna.backends import BACKENDS, builtin_model
from myna.backends.itsm.rules import PRIORITY, STATE_MODELS
from myna.backends.itsm.tables import TASK_TABLES
from myna.backends.itsm.world import seed_files
from myna.mocks import Mock, MockClient
from myna.mocks.seed import seed_from_files
from myna.mocks.sqlstore import SqlStore

Row = dict[str, Any]
TABLE = "/api/now/table"


@pytest.fixture(scope="module")
def shipped() -> Iterator[Path]:
    with BACKENDS["itsm"].reference_world() as directory:
        assert directory is not None
        yield directory


@pytest.fixture(scope="module")
def world(shipped: Path) -> dict[str, list[Row]]:
    return {
        path.stem: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for path in sorted(shipped.glob("*.jsonl"))
    }


@pytest.fixture(scope="module")
def api(shipped: Path) -> Iterator[MockClient]:
    """The runtime over the shipped world, loaded as `myna serve itsm` loads it."""
    model = builtin_model("itsm")
    store = SqlStore(model, "sqlite://")
    store.create_world("default", from_snapshot=seed_from_files(model, store, shipped))
    yield MockClient(Mock(model, store, seed=0), auth=("myna", "myna"), world="default")
    store.close()


def test_the_shipped_reference_world_is_what_the_reference_instance_leaves(shipped: Path) -> None:
    expected = seed_files()
    assert sorted(path.name for path in shipped.glob("*.jsonl")) == sorted(expected)
    for name, text in expected.items():
        assert (shipped / name).read_text(encoding="utf-8") == text, (
            "regenerate: python -m myna.backends.itsm.world -o myna/backends/itsm/reference_world"
        )


def test_the_world_holds_the_work_of_every_chapter(world: dict[str, list[Row]]) -> None:
    states = {row["state"] for row in world["incident"]}
    assert {"1", "2", "6", "7", "8"} <= states  # new, in progress, resolved, closed, canceled
    assert {row["state"] for row in world["change_request"]} >= {"3"}  # a change went through
    filled = ("problem", "sc_req_item", "kb_knowledge", "sys_audit", "sys_journal_field")
    assert [table for table in filled if not world.get(table)] == []
    assert len(world["task_sla"]) >= len(world["incident"])


def test_assignees_belong_to_their_assignment_groups(world: dict[str, list[Row]]) -> None:
    members = {(row["group"], row["user"]) for row in world["sys_user_grmember"]}
    assigned = [
        (table, row["number"], row["assignment_group"], row["assigned_to"])
        for table in sorted(TASK_TABLES)
        for row in world.get(table, [])
        if row.get("assigned_to") and row.get("assignment_group")
    ]
    assert assigned
    assert [entry for entry in assigned if (entry[2], entry[3]) not in members] == []


def test_priority_follows_impact_and_urgency(world: dict[str, list[Row]]) -> None:
    for row in world["incident"]:
        assert row["priority"] == PRIORITY[(row["impact"], row["urgency"])], row["number"]


def test_closed_tasks_are_inactive_and_say_who_closed_them_and_when(
    world: dict[str, list[Row]],
) -> None:
    closed = [
        row
        for table, model in STATE_MODELS.items()
        for row in world.get(table, [])
        if model.field == "state" and "closed_at" in model.stamps.get(row["state"], ())
    ]
    assert closed
    for row in closed:
        assert (row["active"], bool(row["closed_at"]), bool(row["closed_by"])) == (
            "false",
            True,
            True,
        ), row["number"]


def test_a_server_is_a_configuration_item_too(world: dict[str, list[Row]]) -> None:
    items = {row["sys_id"]: row for row in world["cmdb_ci"]}
    for server in world["cmdb_ci_server"]:
        assert items[server["sys_id"]]["sys_class_name"] == "cmdb_ci_server"
        assert items[server["sys_id"]]["name"] == server["name"]


def test_served_records_answer_as_the_instance_left_them(
    api: MockClient, world: dict[str, list[Row]]
) -> None:
    incident = next(row for row in world["incident"] if row["cmdb_ci"])
    served = api.get(
        f"{TABLE}/incident/{incident['sys_id']}", params={"sysparm_display_value": "all"}
    ).json()["result"]
    assert served["number"]["value"] == incident["number"]
    assert served["sys_domain"]["value"] == "global"
    # The incident's configuration item is a server, reachable through its base table.
    ci = api.get(f"{TABLE}/cmdb_ci/{incident['cmdb_ci']}").json()["result"]
    assert ci["sys_class_name"] == "cmdb_ci_server"
    assert served["cmdb_ci"]["display_value"] == ci["name"]


def test_the_served_world_keeps_the_platforms_rules(
    api: MockClient, world: dict[str, list[Row]]
) -> None:
    closed = next(row for row in world["incident"] if row["state"] == "7")
    refused = api.patch(f"{TABLE}/incident/{closed['sys_id']}", json={"state": "2"})
    assert refused.status == 403
    members = {(row["group"], row["user"]) for row in world["sys_user_grmember"]}
    open_incident = next(row for row in world["incident"] if row["state"] == "2")
    outsider = next(
        row["sys_id"]
        for row in world["sys_user"]
        if (open_incident["assignment_group"], row["sys_id"]) not in members
    )
    answer = api.patch(
        f"{TABLE}/incident/{open_incident['sys_id']}", json={"assigned_to": outsider}
    )
    assert answer.status == 403
