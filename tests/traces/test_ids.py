"""Session and event ids: unique across the files of one import, the same on every run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myna.traces import read, read_many, write_jsonl
from myna.traces.reading import file_keys
from tests.traces.helpers import HAR_CORPUS, WriteFile, corpus_hars, entry, har


def test_a_file_is_named_by_its_stem_when_no_other_input_shares_it() -> None:
    assert file_keys([Path("a/x.har"), Path("b/y.har")]) == ["x", "y"]


def test_files_sharing_a_stem_are_named_by_their_folders(tmp_path: Path) -> None:
    paths = [
        tmp_path / "gitlab" / "fetch-users.har",
        tmp_path / "snipe-it" / "fetch-users.har",
        tmp_path / "gitlab" / "groups.har",
    ]

    assert file_keys(paths) == ["gitlab/fetch-users", "snipe-it/fetch-users", "groups"]


def test_only_the_suffix_tells_two_files_apart(tmp_path: Path) -> None:
    assert file_keys([tmp_path / "c.yaml", tmp_path / "c.json"]) == ["c.yaml", "c.json"]


def test_the_same_file_twice_is_numbered(tmp_path: Path) -> None:
    path = tmp_path / "a.har"

    assert file_keys([path, path, tmp_path / "a~2.har"]) == ["a", "a~2", "a~2~2"]


@settings(deadline=None)  # resolving paths touches the file system: slow on a loaded machine
@given(
    st.lists(
        st.tuples(st.sampled_from(["x", "y", "x/y", "z/x"]), st.sampled_from(["a", "b", "a~2"])),
        max_size=8,
    ),
    st.sampled_from([".har", ".json"]),
)
def test_names_are_unique_and_stable(parts: list[tuple[str, str]], suffix: str) -> None:
    paths = [Path("/corpus") / folder / f"{stem}{suffix}" for folder, stem in parts]

    keys = file_keys(paths)

    assert len(set(keys)) == len(keys)
    assert keys == file_keys(list(paths))


def test_same_stem_hars_in_two_folders_keep_apart(tmp_path: Path, write_json: WriteFile) -> None:
    paths = [write_json(f"{vendor}.har", har([entry(), entry()])) for vendor in ("g", "s")]
    for vendor, path in zip(("gitlab", "snipe-it"), paths, strict=True):
        (tmp_path / vendor).mkdir()
        path.rename(tmp_path / vendor / "fetch-users.har")
    moved = [tmp_path / vendor / "fetch-users.har" for vendor in ("gitlab", "snipe-it")]

    sessions = list(read_many(moved))

    assert [(s.id, [e.id for e in s.events]) for s in sessions] == [
        ("gitlab/fetch-users", ["gitlab/fetch-users#0", "gitlab/fetch-users#1"]),
        ("snipe-it/fetch-users", ["snipe-it/fetch-users#0", "snipe-it/fetch-users#1"]),
    ]


def test_ids_read_from_two_canonical_files_are_kept_apart(
    tmp_path: Path, write_json: WriteFile
) -> None:
    """Canonical JSONL carries its own ids: a later file repeating one is qualified by its key."""
    source = write_json("rec.har", har([entry(), entry()]))
    first, second = tmp_path / "monday.jsonl", tmp_path / "tuesday.jsonl"
    write_jsonl(read(source), first)
    write_jsonl(read(source), second)

    sessions = list(read_many([first, second]))

    assert [(s.id, [e.id for e in s.events]) for s in sessions] == [
        ("rec", ["rec#0", "rec#1"]),
        ("tuesday/rec", ["tuesday/rec#0", "tuesday/rec#1"]),
    ]


@pytest.mark.corpus
@pytest.mark.skipif(not HAR_CORPUS.is_dir(), reason=f"corpus not present at {HAR_CORPUS}")
def test_the_whole_har_corpus_has_unique_session_and_exchange_ids_on_every_run() -> None:
    def ids() -> tuple[list[str], list[str]]:
        sessions = list(read_many(corpus_hars()))
        return [s.id for s in sessions], [e.id for s in sessions for e in s.exchanges]

    sessions, exchanges = ids()

    assert len(set(sessions)) == len(sessions) == len(corpus_hars())
    assert len(set(exchanges)) == len(exchanges)
    assert "jupiterone_graph-gitlab/fetch-users_2464296442" in sessions
    assert ids() == (sessions, exchanges)
