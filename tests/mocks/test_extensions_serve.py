"""`myna serve MODEL` takes a model file or the name of a built-in back end (`myna serve itsm`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from myna.cli import app as cli
from myna.errors import MockError
from myna.mocks.backend import resolve_model
from myna.mocks.example import servicenow_example
from myna.schemas.openapi import save


def test_a_built_in_name_serves_the_shipped_model_with_its_extensions() -> None:
    model = resolve_model("itsm")
    assert (model.name, model.extensions) == ("itsm", ["servicenow"])


def test_a_model_file_is_read_from_its_path(tmp_path: Path) -> None:
    model_file = tmp_path / "model.yaml"
    save(servicenow_example(), model_file)
    assert resolve_model(str(model_file)).name == "servicenow-test"


def test_a_file_wins_over_a_built_in_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(servicenow_example(), tmp_path / "itsm")
    monkeypatch.chdir(tmp_path)
    assert resolve_model("itsm").name == "servicenow-test"


def test_neither_a_file_nor_a_built_in_names_the_built_ins() -> None:
    with pytest.raises(MockError, match=r"'nowhere' is neither .*there are: .*itsm"):
        resolve_model("nowhere")


def test_the_command_refuses_an_unknown_model_before_serving() -> None:
    result = CliRunner().invoke(cli, ["serve", "nowhere"])
    assert isinstance(result.exception, MockError)
    assert "neither a model file nor a built-in back end" in str(result.exception)
