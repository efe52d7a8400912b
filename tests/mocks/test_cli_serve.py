"""What `myna serve MODEL` seeds its default world with: a built-in back end's reference world,
generated records on request (`--generated`), or seed files (`--seed-dir`); built in process
exactly as the command builds it, without a server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from myna.backends import BACKENDS
from myna.cli import app as cli
from myna.errors import MockError
from myna.mocks.cli import DEFAULT_RECORDS, record_counts, served_mock
from myna.mocks.client import MockClient
from myna.mocks.example import servicenow_example
from myna.mocks.runtime import DEFAULT_WORLD, Mock
from myna.mocks.sqlstore import SqlStore
from myna.schemas.openapi import save

BASIC = {"auth": ("myna", "myna")}
BEARER = {"headers": {"Authorization": "Bearer myna-token"}}
INCIDENTS = "/api/now/table/incident"


def first_record(backend: str, resource: str) -> dict[str, Any]:
    with BACKENDS[backend].reference_world() as world:
        assert world is not None
        line = (world / f"{resource}.jsonl").read_text(encoding="utf-8").splitlines()[0]
    record: dict[str, Any] = json.loads(line)
    return record


def client(mock: Mock, credentials: dict[str, Any]) -> MockClient:
    return MockClient(mock, world=DEFAULT_WORLD, **credentials)


@pytest.fixture
def mocks() -> Iterator[list[Mock]]:
    """Mocks a test builds, closed after it."""
    made: list[Mock] = []
    yield made
    for mock in made:
        assert isinstance(mock.store, SqlStore)
        mock.store.close()


@pytest.mark.parametrize(
    ("backend", "resource", "path", "id_field", "credentials"),
    [
        pytest.param("itsm", "incident", INCIDENTS, "sys_id", BASIC, id="itsm"),
        pytest.param(
            "crm", "Account", "/services/data/v59.0/sobjects/Account", "Id", BEARER, id="crm"
        ),
        pytest.param("erp", "vendor", "/api/erp/v1/vendors", "id", BEARER, id="erp"),
    ],
)
def test_a_built_in_back_end_serves_its_reference_world_by_default(
    mocks: list[Mock],
    backend: str,
    resource: str,
    path: str,
    id_field: str,
    credentials: dict[str, Any],
) -> None:
    record = first_record(backend, resource)
    mock = served_mock(backend)
    mocks.append(mock)
    answer = client(mock, credentials).get(f"{path}/{record[id_field]}")
    assert answer.status == 200, answer.body
    body = answer.json()
    served = body.get("result", body)
    assert served[id_field] == record[id_field]


def test_the_itsm_reference_world_answers_as_the_instance_left_it(mocks: list[Mock]) -> None:
    incident = first_record("itsm", "incident")
    mock = served_mock("itsm")
    mocks.append(mock)
    served = (
        client(mock, BASIC)
        .get(f"{INCIDENTS}/{incident['sys_id']}", params={"sysparm_display_value": "true"})
        .json()["result"]
    )
    assert (served["number"], served["short_description"]) == (
        incident["number"],
        incident["short_description"],
    )
    # The assignee is a member of the assignment group, as the platform's rule requires.
    assert served["assigned_to"]["display_value"]
    members = client(mock, BASIC).get(
        "/api/now/table/sys_user_grmember",
        params={
            "sysparm_query": f"group={incident['assignment_group']}^user={incident['assigned_to']}"
        },
    )
    assert len(members.json()["result"]) == 1


def test_itsm_serves_its_demo_world_unless_the_reference_world_is_named(
    mocks: list[Mock],
) -> None:
    counts = {}
    for world in (None, "reference"):
        mock = served_mock("itsm", world=world)
        mocks.append(mock)
        counts[world] = int(client(mock, BASIC).get(INCIDENTS).header("x-total-count") or 0)
    with BACKENDS["itsm"].reference_world() as shipped:
        assert shipped is not None
        reference = len((shipped / "incident.jsonl").read_text(encoding="utf-8").splitlines())
    assert counts["reference"] == reference
    assert counts[None] >= 300


def test_a_world_for_a_model_file_is_refused(tmp_path: Path) -> None:
    model_file = tmp_path / "servicenow.yaml"
    save(servicenow_example(), model_file)
    with pytest.raises(MockError, match="--world names a built-in back end's shipped world"):
        served_mock(str(model_file), world="demo")


def test_generated_seeds_a_built_in_back_end_with_records_instead(mocks: list[Mock]) -> None:
    incident = first_record("itsm", "incident")
    mock = served_mock("itsm", generated=True, records=2)
    mocks.append(mock)
    http = client(mock, BASIC)
    assert http.get(f"{INCIDENTS}/{incident['sys_id']}").status == 404
    assert http.get(INCIDENTS).header("x-total-count") == "2"


def test_a_model_file_gets_generated_records_by_default(tmp_path: Path, mocks: list[Mock]) -> None:
    model_file = tmp_path / "servicenow.yaml"
    save(servicenow_example(), model_file)
    mock = served_mock(str(model_file))
    mocks.append(mock)
    total = client(mock, BASIC).get(INCIDENTS).header("x-total-count")
    assert total == str(DEFAULT_RECORDS)


def test_seed_files_replace_the_reference_world(tmp_path: Path, mocks: list[Mock]) -> None:
    user = first_record("itsm", "sys_user")
    (tmp_path / "sys_user.jsonl").write_text(json.dumps(user) + "\n", encoding="utf-8")
    mock = served_mock("itsm", seed_dir=tmp_path)
    mocks.append(mock)
    http = client(mock, BASIC)
    assert http.get("/api/now/table/sys_user").header("x-total-count") == "1"
    assert http.get(INCIDENTS).header("x-total-count") == "0"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"records": 5},
            r"--records counts generated records, and `myna serve itsm` serves its shipped "
            r"world: add --generated",
            id="records-without-generated",
        ),
        pytest.param(
            {"generated": True, "seed_dir": Path(".")},
            r"--seed-dir seeds from files; --generated and --records are for generated records",
            id="seed-dir-and-generated",
        ),
        pytest.param(
            {"world": "reference", "generated": True},
            r"--world names a built-in back end's shipped world",
            id="world-and-generated",
        ),
        pytest.param(
            {"world": "tiny"},
            r"itsm ships no world 'tiny' \(it ships: demo, reference\)",
            id="unknown-world",
        ),
    ],
)
def test_conflicting_seed_options_are_refused_naming_them(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MockError, match=message):
        served_mock("itsm", **options)


def test_a_model_its_extension_cannot_serve_is_refused_naming_the_file(tmp_path: Path) -> None:
    from myna.backends import builtin_model

    model = builtin_model("crm")
    (stage,) = [m for m in model.resources["Opportunity"].state_machines if m.field == "StageName"]
    won = stage.sets_on_entry["Closed Won"].values
    won["Probabilty"] = won.pop("Probability")  # a typo a person editing the model makes
    edited = tmp_path / "crm.yaml"
    save(model, edited)
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", str(edited)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 2
    assert f"file {edited}" in result.stderr
    assert "sets Probabilty, which Opportunity does not have" in result.stderr


def test_workers_over_an_in_memory_database_are_refused_naming_the_option() -> None:
    command = [sys.executable, "-c", "from myna.cli import main; main()", "serve", "itsm"]
    command += ["--workers", "2"]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 2
    assert "--workers share worlds through the database" in result.stderr


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("env-short", "MYNA_ADMIN_TOKEN has 5 characters; it needs at least 16"),
        ("file-short", "has 5 characters; it needs at least 16"),
        ("file-missing", "cannot read the token"),
    ],
)
def test_a_short_or_unreadable_admin_token_is_refused_before_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, message: str
) -> None:
    token_file = tmp_path / "token"
    args = ["serve", "itsm"]
    if given == "env-short":
        monkeypatch.setenv("MYNA_ADMIN_TOKEN", "short")
    else:
        monkeypatch.delenv("MYNA_ADMIN_TOKEN", raising=False)
        if given == "file-short":
            token_file.write_text("short\n")
        args += ["--admin-token-file", str(token_file)]

    result = CliRunner().invoke(cli, args)

    assert isinstance(result.exception, MockError)
    assert message in str(result.exception)


def test_the_admin_token_is_never_a_command_line_value() -> None:
    result = CliRunner().invoke(cli, ["serve", "itsm", "--admin-token", "a" * 32])
    assert result.exit_code == 2
    assert "No such option" in result.output


def test_records_of_a_resource_replace_the_count_for_it(mocks: list[Mock]) -> None:
    mocks.append(
        served_mock("itsm", generated=True, records=2, records_of={"incident": 7, "problem": 0})
    )
    with mocks[-1].store.transaction(DEFAULT_WORLD) as tx:
        counts = {name: len(tx.all(name)) for name in ("incident", "problem", "sys_user_group")}
    assert counts == {"incident": 7, "problem": 0, "sys_user_group": 2}


@pytest.mark.parametrize(
    "spec", ["incident", "incident=", "=5", "incident=-1", "incident=x", "incident=¹", "incident=٣"]
)
def test_a_records_of_value_that_is_not_resource_equals_count_is_refused(spec: str) -> None:
    with pytest.raises(MockError, match="is not RESOURCE=COUNT"):
        record_counts([spec])
