"""Fixtures shared by the trace tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from myna.traces import jsonarray
from tests.traces.helpers import WriteFile


@pytest.fixture
def write_json(tmp_path: Path) -> WriteFile:
    """Write a JSON value (or raw text) to a file under tmp_path and return its path."""

    def write(name: str, content: Any) -> Path:
        path = tmp_path / name
        text = content if isinstance(content, str) else json.dumps(content)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(params=["whole", "streamed"])
def streamed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a test on JSON files parsed whole and again streamed (YAML is always streamed)."""
    if request.param == "streamed":
        monkeypatch.setattr(jsonarray, "WHOLE_FILE_BYTES", 0)
