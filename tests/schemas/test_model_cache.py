"""Parsed models kept between runs (`myna.schemas.model_cache`), read by `openapi.loads`."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path

import pytest

from myna.errors import ModelError
from myna.schemas import model_cache
from myna.schemas.openapi import dumps, from_openapi, loads


def _shipped(backend: str) -> str:
    return files(f"myna.backends.{backend}").joinpath("model.yaml").read_text(encoding="utf-8")


ITSM_TEXT = _shipped("itsm")
CRM_TEXT = _shipped("crm")
# Most tests cache the small ERP model (with the size floor lowered): a tenth of the parse.
ERP_TEXT = _shipped("erp")


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MYNA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(model_cache, "MIN_CACHED_BYTES", 1)
    return tmp_path / "models"


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.exists() else []


@cache
def _parsed(text: str) -> object:
    """The model as `loads` parses it without any cache."""
    import yaml

    return from_openapi(yaml.load(text, Loader=yaml.CSafeLoader))


@pytest.mark.parametrize("text", [ITSM_TEXT, CRM_TEXT], ids=["itsm", "crm"])
def test_a_cached_model_equals_the_parsed_one(cache_dir: Path, text: str) -> None:
    first = loads(text)
    assert len(_entries(cache_dir)) == 1
    second = loads(text)
    assert first == second == _parsed(text)
    assert second is not first
    assert dumps(second) == text  # what `load` then `save` reproduces, from the cache too


def test_a_second_load_reads_the_entry_not_the_text(cache_dir: Path) -> None:
    loads(ERP_TEXT)
    (entry,) = _entries(cache_dir)
    # Put another model's parse under this text's name: a load that reads the entry returns it.
    entry.write_text(loads(CRM_TEXT).model_dump_json(), encoding="utf-8")
    assert loads(ERP_TEXT).name == "crm"


def test_another_text_is_another_entry(cache_dir: Path) -> None:
    loads(ERP_TEXT)
    edited = ERP_TEXT.replace("\n  title: ", "\n  title: Edited ", 1)
    assert loads(edited).title != loads(ERP_TEXT).title
    assert len(_entries(cache_dir)) == 2


@pytest.mark.parametrize(
    "broken",
    [b"", b"{not json", b'{"name": 3}', b"\xff\xfe"],
    ids=["empty", "syntax", "shape", "bytes"],
)
def test_a_broken_entry_is_parsed_again_and_replaced(cache_dir: Path, broken: bytes) -> None:
    loads(ERP_TEXT)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(broken)
    assert loads(ERP_TEXT) == _parsed(ERP_TEXT)
    assert entry.read_bytes() != broken


def test_small_models_and_the_off_switch_leave_no_entry(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()  # the size floor as shipped
    monkeypatch.setenv("MYNA_CACHE_DIR", str(cache_dir.parent))
    assert len(ERP_TEXT) < model_cache.MIN_CACHED_BYTES
    loads(ERP_TEXT)
    assert _entries(cache_dir) == []
    monkeypatch.setenv("MYNA_CACHE_DIR", "off")
    monkeypatch.setattr(model_cache, "MIN_CACHED_BYTES", 1)
    assert loads(ERP_TEXT) == _parsed(ERP_TEXT)
    assert _entries(cache_dir) == []


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MYNA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert model_cache.cache_folder() == tmp_path / "myna" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert model_cache.cache_folder() == Path.home() / ".cache" / "myna" / "models"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_folder_that_cannot_be_written_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path.chmod(0o500)
    monkeypatch.setenv("MYNA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(model_cache, "MIN_CACHED_BYTES", 1)
    try:
        assert loads(ERP_TEXT) == _parsed(ERP_TEXT)
    finally:
        tmp_path.chmod(0o700)


def test_a_cache_path_that_is_a_file_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MYNA_CACHE_DIR", str(blocker))
    monkeypatch.setattr(model_cache, "MIN_CACHED_BYTES", 1)
    assert loads(ERP_TEXT) == _parsed(ERP_TEXT)
    assert blocker.read_text() == "not a folder"


def test_the_oldest_entries_go_beyond_the_limit(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_cache, "KEPT_ENTRIES", 2)
    texts = [ERP_TEXT.replace("\n  title: ", f"\n  title: v{n} ", 1) for n in range(3)]
    for number, text in enumerate(texts):
        loads(text)
        # Written a day apart, in order (a file system's clock may be coarse).
        entry = cache_dir / f"{model_cache._key(text)}.json"
        os.utime(entry, (86400.0 * (number + 1), 86400.0 * (number + 1)))
    kept = _entries(cache_dir)
    assert kept == sorted(cache_dir / f"{model_cache._key(t)}.json" for t in texts[1:])
    assert loads(texts[2]) == _parsed(texts[2])  # the newest still hits


def test_a_broken_model_is_refused_and_never_cached(cache_dir: Path) -> None:
    broken = ERP_TEXT.replace("openapi: 3.1.0", "openapi: [3.1.0", 1)
    with pytest.raises(ModelError, match="not valid YAML"):
        loads(broken, source="model.yaml")
    assert _entries(cache_dir) == []


def test_the_key_names_the_loader_code() -> None:
    """A development tree's edit of the loader misses the entries an older loader wrote."""
    source = model_cache._loader_source()
    assert "def from_openapi" in source
    assert "class ServiceModel" in source


def test_serving_imports_no_faker() -> None:
    """Faker is imported when a value is first drawn, not by importing the mock."""
    code = "import sys, myna.mocks, myna.mocks.cli, myna.mocks.fill; print('faker' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "False"


# -- other data kept beside the models (`cached_data`) --------------------------------------------


def _made(data: object, calls: list[object]) -> object:
    calls.append(data)
    return data


@pytest.mark.parametrize(
    "data",
    [{"a": [1, 2.5, None, True, "é"], "b": {"c": -0.0}}, [], "text"],
    ids=["records", "empty", "text"],
)
def test_kept_data_is_made_once_and_read_back_equal(cache_dir: Path, data: object) -> None:
    calls: list[object] = []
    first = model_cache.cached_data("kept", ["part"], lambda: _made(data, calls))
    second = model_cache.cached_data("kept", ["part"], lambda: _made(data, calls))
    assert first == second == data
    assert len(calls) == 1
    assert len(_entries(cache_dir.parent / "kept")) == 1


@pytest.mark.parametrize(
    "data",
    [(1, 2), {"x": float("nan")}, {1: "int key"}, {"when": Path("/tmp")}, 2**70],
    ids=["tuple", "nan", "int-key", "path", "big-int"],
)
def test_data_json_would_not_give_back_equal_is_never_kept(cache_dir: Path, data: object) -> None:
    calls: list[object] = []
    for _ in range(2):
        assert model_cache.cached_data("kept", ["part"], lambda: _made(data, calls)) is data
    assert len(calls) == 2
    assert _entries(cache_dir.parent / "kept") == []


def test_other_parts_are_another_entry_and_off_keeps_nothing(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert model_cache.cached_data("kept", ["one"], lambda: 1) == 1
    assert model_cache.cached_data("kept", ["two"], lambda: 2) == 2
    assert len(_entries(cache_dir.parent / "kept")) == 2
    monkeypatch.setenv("MYNA_CACHE_DIR", "off")
    assert model_cache.cached_data("kept", ["one"], lambda: 3) == 3
