"""`myna learn` and `myna model show` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from myna.cli import app
from myna.errors import LearnError, ModelError
from myna.schemas.openapi import load, save
from tests.schemas.models import servicenow_model

SN = "https://dev1.service-now.com/api/now/table"


def _entry(method: str, url: str, status: int, body: Any, request: Any = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "startedDateTime": "2024-04-16T17:16:27.000Z",
        "time": 12,
        "request": {
            "method": method,
            "url": url,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Authorization", "value": "Basic dXNlcjpwYXNz"}],
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": -1,
        },
        "response": {
            "status": status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "cookies": [],
            "content": {"size": -1, "mimeType": "application/json", "text": json.dumps(body)},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 12, "receive": 0},
    }
    if request is not None:
        entry["request"]["postData"] = {"mimeType": "application/json", "text": json.dumps(request)}
    return entry


def _record(index: int, state: str) -> dict[str, Any]:
    return {"sys_id": f"{index:032x}", "number": f"INC{index:07d}", "state": state}


@pytest.fixture
def har(tmp_path: Path) -> Path:
    entries = [
        _entry(
            "POST", f"{SN}/incident", 201, {"result": _record(1, "1")}, {"short_description": "x"}
        ),
        _entry(
            "PATCH", f"{SN}/incident/{1:032x}", 200, {"result": _record(1, "2")}, {"state": "2"}
        ),
        _entry("GET", f"{SN}/incident", 200, {"result": [_record(2, "1"), _record(3, "2")]}),
    ]
    path = tmp_path / "recording.har"
    path.write_text(
        json.dumps(
            {
                "log": {
                    "version": "1.2",
                    "creator": {"name": "t", "version": "1"},
                    "entries": entries,
                }
            }
        )
    )
    return path


runner = CliRunner()


def test_learn_writes_a_model_and_prints_a_summary(har: Path, tmp_path: Path) -> None:
    output = tmp_path / "model.yaml"

    result = runner.invoke(app, ["learn", str(har), "-o", str(output)])

    assert result.exit_code == 0, result.output
    model = load(output)
    assert set(model.resources) == {"incident"}
    assert "incident" in result.output
    assert f"wrote {output}" in result.output


def test_learn_update_keeps_pinned_facts(har: Path, tmp_path: Path) -> None:
    reviewed = servicenow_model()
    reviewed.name = "servicenow"
    existing = tmp_path / "reviewed.yaml"
    save(reviewed, existing)
    output = tmp_path / "updated.yaml"

    result = runner.invoke(app, ["learn", str(har), "-o", str(output), "--update", str(existing)])

    assert result.exit_code == 0, result.output
    caller = load(output).resources["incident"].fields["caller_id"]
    assert caller == reviewed.resources["incident"].fields["caller_id"]
    assert caller.evidence.pinned


def test_learn_with_nothing_usable_fails_clearly(tmp_path: Path) -> None:
    empty = tmp_path / "empty.har"
    empty.write_text(
        json.dumps(
            {"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": []}}
        )
    )

    result = runner.invoke(app, ["learn", str(empty), "-o", str(tmp_path / "m.yaml")])

    assert isinstance(result.exception, LearnError)
    assert not (tmp_path / "m.yaml").exists()


def test_model_show_draws_state_machines_and_weakest_first(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    save(servicenow_model(), path)

    result = runner.invoke(app, ["model", "show", str(path)], env={"COLUMNS": "200"})

    assert result.exit_code == 0, result.output
    assert "incident.state" in result.output
    assert "● ─create_incident─▶ 1" in result.output
    assert "entering 6 (Resolved) sets close_code" in result.output
    assert 'entering 7 writes active="false", incident_state="7"' in result.output
    weakest = result.output.split("weakest inferences first")[1]
    assert weakest.index("get_incident") < weakest.index("list_incident")


def test_model_show_names_the_broken_field(tmp_path: Path) -> None:
    path = tmp_path / "model.yaml"
    save(servicenow_model(), path)
    path.write_text(path.read_text().replace("kind: hex32", "kind: snowflake"))

    result = runner.invoke(app, ["model", "show", str(path)])

    assert isinstance(result.exception, ModelError)
    assert "id_format.kind" in str(result.exception)
