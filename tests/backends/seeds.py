"""Seed files for the built-in back ends' tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from myna.backends import write_seed_files


def initial_seed_dir(
    factory: pytest.TempPathFactory,
    initial_records: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]],
) -> Path:
    """A reference service's state before its corpus ran, written as seed files."""
    directory = factory.mktemp("initial-seed")
    write_seed_files(initial_records(), directory)
    return directory
