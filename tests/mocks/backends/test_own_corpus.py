"""Every built-in back end answers its own corpus as recorded: the corpus it was learned from,
replayed in one world (its sessions build on each other) from the reference service's state
before the corpus (as seed files) and signed in as the user the corpus was recorded as, through
the `myna conformance` command a user would run.

A back end's model is learned from this corpus, so anything short of every exchange is a
regression: in the learner, the runtime or the back end's extension.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import as_file
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from myna.cli import app
from myna.mocks.backends import BACKENDS, write_seed_files
from myna.mocks.backends.crm.corpus import ADMINISTRATOR
from myna.mocks.backends.crm.corpus import initial_records as crm_initial_records
from myna.mocks.backends.itsm.corpus import initial_records as itsm_initial_records
from myna.mocks.backends.itsm.instance import ADMIN as ITSM_ADMIN

InitialRecords = Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]]

# Who recorded each corpus, and the state it started from (None: the corpus creates all it
# uses, so the harness's own principal in an empty world will do).
RECORDED_AS: dict[str, tuple[str, InitialRecords] | None] = {
    "itsm": (ITSM_ADMIN, itsm_initial_records),
    "crm": (ADMINISTRATOR, crm_initial_records),
    "erp": None,
}


def test_every_back_end_says_how_its_corpus_was_recorded() -> None:
    assert set(RECORDED_AS) == set(BACKENDS)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_the_back_end_answers_its_own_corpus_as_recorded(name: str, tmp_path: Path) -> None:
    backend = BACKENDS[name]
    options = ["--one-world", "--json"]
    recorded_as = RECORDED_AS[name]
    if recorded_as is not None:
        user, initial_records = recorded_as
        write_seed_files(initial_records(), tmp_path)
        options += ["--seed-dir", str(tmp_path), "--user", user]
    with as_file(backend.resource(backend.corpus)) as corpus:
        result = CliRunner().invoke(app, ["conformance", name, str(corpus), *options])
    report = json.loads(result.stdout)
    assert report["total"] > 100
    assert [f"{m['exchange']}: {m['reason']}" for m in report["mismatches"]] == []
    assert result.exit_code == 0
