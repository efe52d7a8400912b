"""What `myna serve itsm` serves, whichever world it starts from (the reference world, generated
records, seed files): the rules of PROTOCOL.md hold in each, as a client calling the Table API
meets them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from myna.backends import BACKENDS
from myna.mocks.cli import served_mock
from myna.mocks.client import MockClient
from myna.mocks.runtime import DEFAULT_WORLD
from myna.mocks.sqlstore import SqlStore

TABLE = "/api/now/table"
BASIC = ("myna", "myna")
SERVER_CLASS = "cmdb_ci_server"


@contextmanager
def serve(**options: Any) -> Iterator[MockClient]:
    """A client of the mock `myna serve itsm` builds with these options, closed after use."""
    mock = served_mock("itsm", **options)
    assert isinstance(mock.store, SqlStore)
    try:
        yield MockClient(
            mock, auth=BASIC, world=DEFAULT_WORLD, base_url="https://example.service-now.com"
        )
    finally:
        mock.store.close()


def rows(api: MockClient, table: str, **params: str) -> list[dict[str, Any]]:
    response = api.get(
        f"{TABLE}/{table}", params={"sysparm_exclude_reference_link": "true", **params}
    )
    assert response.status == 200, response.body
    found: list[dict[str, Any]] = response.json()["result"]
    return found


def reference_rows(table: str) -> list[dict[str, Any]]:
    with BACKENDS["itsm"].reference_world() as world:
        assert world is not None
        text = (world / f"{table}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def write_seed(directory: Path, table: str, *records: dict[str, Any]) -> None:
    lines = "".join(json.dumps(record) + "\n" for record in records)
    (directory / f"{table}.jsonl").write_text(lines, encoding="utf-8")


# -- §2.6 the cmdb_ci class hierarchy -----------------------------------------------------------


@pytest.mark.parametrize("options", [{}, {"generated": True}], ids=["reference", "generated"])
def test_every_world_lists_its_servers_and_applications_under_cmdb_ci(
    options: dict[str, Any],
) -> None:
    with serve(**options) as api:
        cis = {row["sys_id"]: row for row in rows(api, "cmdb_ci")}
        for child in (SERVER_CLASS, "cmdb_ci_appl"):
            children = rows(api, child)
            assert children
            for record in children:
                assert cis[record["sys_id"]]["sys_class_name"] == child
                assert cis[record["sys_id"]]["name"] == record["name"]
        # And no configuration item claims a class whose table does not hold it.
        for record in cis.values():
            if record["sys_class_name"] != "cmdb_ci":
                held = api.get(f"{TABLE}/{record['sys_class_name']}/{record['sys_id']}")
                assert held.status == 200, record


def test_a_generated_server_is_patched_through_its_one_record() -> None:
    with serve(generated=True) as api:
        server = rows(api, SERVER_CLASS)[0]
        total = len(rows(api, "cmdb_ci"))
        patched = api.patch(f"{TABLE}/cmdb_ci/{server['sys_id']}", json={"name": "db-01"})
        assert patched.status == 200, patched.body
        assert patched.json()["result"]["sys_class_name"] == SERVER_CLASS
        assert (
            api.get(f"{TABLE}/{SERVER_CLASS}/{server['sys_id']}").json()["result"]["name"]
            == "db-01"
        )
        assert len(rows(api, "cmdb_ci")) == total


def test_a_seed_file_of_servers_alone_serves_them_under_cmdb_ci(tmp_path: Path) -> None:
    server = reference_rows(SERVER_CLASS)[0]
    write_seed(tmp_path, SERVER_CLASS, server)
    # An incident's CI may be the server: the reference resolves through the derived row.
    incident = {"sys_id": "0" * 31 + "1", "number": "INC0000001", "cmdb_ci": server["sys_id"]}
    write_seed(tmp_path, "incident", incident)
    with serve(seed_dir=tmp_path) as api:
        assert [(row["sys_id"], row["sys_class_name"]) for row in rows(api, "cmdb_ci")] == [
            (server["sys_id"], SERVER_CLASS)
        ]
        walked = rows(api, "incident", sysparm_fields="cmdb_ci.name")
        assert walked == [{"cmdb_ci.name": server["name"]}]


def test_a_seeded_ci_claiming_a_class_it_has_no_record_in_is_of_its_own_class(
    tmp_path: Path,
) -> None:
    orphan = {**reference_rows("cmdb_ci")[0], "sys_class_name": SERVER_CLASS}
    write_seed(tmp_path, "cmdb_ci", orphan)
    with serve(seed_dir=tmp_path) as api:
        assert rows(api, "cmdb_ci", sysparm_fields="sys_class_name") == [
            {"sys_class_name": "cmdb_ci"}
        ]
        assert rows(api, SERVER_CLASS) == []


# -- §2.2 dot-walked sysparm_fields ---------------------------------------------------------------


def test_a_listed_dot_walk_needs_no_reference_field_beside_it() -> None:
    with serve() as api:
        callers = rows(api, "incident", sysparm_fields="caller_id", sysparm_limit="3")
        walked = rows(api, "incident", sysparm_fields="caller_id.user_name", sysparm_limit="3")
        names = [
            api.get(f"{TABLE}/sys_user/{row['caller_id']}").json()["result"]["user_name"]
            for row in callers
        ]
        assert all(names)
        assert walked == [{"caller_id.user_name": name} for name in names]


@pytest.mark.parametrize("through", ["cmdb_ci", SERVER_CLASS])
def test_a_change_to_a_server_is_audited_under_its_class_whichever_table_it_came_through(
    through: str,
) -> None:
    with serve() as api:
        server = rows(api, SERVER_CLASS)[0]
        patched = api.patch(f"{TABLE}/{through}/{server['sys_id']}", json={"name": "db-02"})
        assert patched.status == 200, patched.body
        audit = rows(
            api,
            "sys_audit",
            sysparm_query=f"documentkey={server['sys_id']}^fieldname=name",
            sysparm_fields="tablename,oldvalue,newvalue",
        )
        assert audit == [
            {"tablename": SERVER_CLASS, "oldvalue": server["name"], "newvalue": "db-02"}
        ]
