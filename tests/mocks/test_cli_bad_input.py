"""The commands given a bad file or folder: exit 2 with one line that names the file and where,
no traceback, and nothing left behind (issue 15's CLI list, run as a user runs `myna`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from myna.backends import BACKENDS

REPO = Path(__file__).resolve().parents[2]


def _myna(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from myna.cli import main; main()", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _one_line_error(result: subprocess.CompletedProcess[str], *names: str) -> str:
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def _enum_as_mapping(folder: Path) -> Path:
    text = BACKENDS["itsm"].resource("model.yaml").read_text(encoding="utf-8")
    broken = text.replace(
        "enum:\n          - '1'\n          - '3'\n", "enum:\n            a: '1'\n", 1
    )
    assert broken != text
    path = folder / "enum.yaml"
    path.write_text(broken, encoding="utf-8")
    return path


def _bad_models(folder: Path) -> dict[str, tuple[Path, str]]:
    binary = folder / "binary.yaml"
    binary.write_bytes(b"openapi: 3.1.0\n" + bytes(range(128, 256)))
    latin = folder / "latin.yaml"
    latin.write_bytes("openapi: 3.1.0\ninfo: {title: caf\u00e9}\n".encode("latin-1"))
    yaml = folder / "broken.yaml"
    yaml.write_text("openapi: 3.1.0\ninfo: {title: x\n  version: 1\n", encoding="utf-8")
    trace = folder / "trace.jsonl"
    corpus = BACKENDS["itsm"].resource("corpus.jsonl").read_text(encoding="utf-8")
    trace.write_text("".join(corpus.splitlines(keepends=True)[:20]), encoding="utf-8")
    return {
        "binary": (binary, "byte"),
        "not-utf8": (latin, "byte"),
        "yaml": (yaml, "line 3"),
        "trace": (trace, "jsonl trace"),
        "enum-mapping": (_enum_as_mapping(folder), "operational_status.enum"),
    }


MODEL_KINDS = ["binary", "not-utf8", "yaml", "trace", "enum-mapping"]


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_serve_refuses_a_file_that_is_no_model_in_one_line(tmp_path: Path, kind: str) -> None:
    path, where = _bad_models(tmp_path)[kind]
    _one_line_error(_myna(tmp_path, "serve", path.name, "--port", "1"), path.name, where)


@pytest.mark.parametrize("kind", ["binary", "yaml", "trace", "enum-mapping"])
def test_conformance_and_learn_update_refuse_it_too(tmp_path: Path, kind: str) -> None:
    path, where = _bad_models(tmp_path)[kind]
    traces = _bad_models(tmp_path)["trace"][0]
    _one_line_error(_myna(tmp_path, "conformance", path.name, traces.name), path.name, where)
    learned = _myna(tmp_path, "learn", traces.name, "--update", path.name, "-o", "out.yaml")
    _one_line_error(learned, path.name, where)
    assert not (tmp_path / "out.yaml").exists()


def test_learn_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    traces = _bad_models(tmp_path)["trace"][0]
    result = _myna(tmp_path, "learn", traces.name, "-o", "missing/model.yaml")
    _one_line_error(result, "missing/model.yaml", "No such file or directory")
    assert not (tmp_path / "missing").exists()


def test_serve_ca_out_into_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    result = _myna(tmp_path, "serve", "itsm", "--tls", "--ca-out", "missing/ca.pem", "--port", "1")
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1
    assert "missing/ca.pem" in lines[0]


def test_replay_build_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    binary = _bad_models(tmp_path)["binary"][0]
    failed = _myna(tmp_path, "replay", "build", binary.name, "--model", "itsm", "-o", "episodes")
    _one_line_error(failed, binary.name)
    assert not (tmp_path / "episodes").exists()


def test_replay_build_does_not_invent_missing_parents(tmp_path: Path) -> None:
    traces = _bad_models(tmp_path)["trace"][0]
    result = _myna(tmp_path, "replay", "build", traces.name, "--model", "itsm", "-o", "a/b/out")
    _one_line_error(result, "a/b/out", "does not exist")
    assert not (tmp_path / "a").exists()
