"""Every built-in back end answers its own corpus as recorded: the corpus it was learned from,
replayed in one world (its sessions build on each other) from the reference service's state
before the corpus (as seed files) and signed in as the user the corpus was recorded as, through
the `myna conformance` command a user would run.

A back end's model is learned from this corpus, so anything short of every exchange is a
regression: in the learner, the runtime or the back end's extension.
"""

from __future__ import annotations

import json
from importlib.resources import as_file
from pathlib import Path

import pytest
from typer.testing import CliRunner

from myna.backends import BACKENDS, write_seed_files
from myna.cli import app


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_the_back_end_answers_its_own_corpus_as_recorded(name: str, tmp_path: Path) -> None:
    backend = BACKENDS[name]
    options = ["--one-world", "--json"]
    if backend.initial_records is not None:
        write_seed_files(backend.initial_records(), tmp_path)
        options += ["--seed-dir", str(tmp_path)]
    if backend.recorded_as is not None:
        options += ["--user", backend.recorded_as]
    with as_file(backend.resource(backend.corpus)) as corpus:
        result = CliRunner().invoke(app, ["conformance", name, str(corpus), *options])
    report = json.loads(result.stdout)
    assert report["total"] > 100
    assert [f"{m['exchange']}: {m['reason']}" for m in report["mismatches"]] == []
    assert result.exit_code == 0
