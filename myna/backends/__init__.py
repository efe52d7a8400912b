"""Myna's built-in back ends (`itsm`, `crm`, `erp`), each a package with the same files.

A back end is an ordinary service model learned from a corpus that ships with it, plus the
protocol its extension serves (see `myna.mocks.backend` for the spec each declares and how the
mock finds it by name, and `docs/adding-a-backend.md` for the layout). This module holds what
every back end's corpus and reference-world scripts share.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from myna.mocks.backend import BACKENDS, Backend, builtin_model
from myna.traces.model import Session

__all__ = [
    "BACKENDS",
    "Backend",
    "builtin_model",
    "corpus_command",
    "seed_file_texts",
    "write_seed_files",
    "write_world_command",
]


def seed_file_texts(world: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """The text of `<resource>.jsonl` for each resource with records, by name: one compact JSON
    record a line, in the order given (what `myna serve --seed-dir` reads)."""
    return {
        f"{name}.jsonl": "".join(
            json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            for record in records
        )
        for name, records in sorted(world.items())
        if records
    }


def write_seed_files(world: Mapping[str, Sequence[Mapping[str, Any]]], directory: Path) -> None:
    """Write `<resource>.jsonl` seed files (what `--seed-dir` reads) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in seed_file_texts(world).items():
        (directory / name).write_text(text, encoding="utf-8")


def write_world_command(
    argv: list[str] | None, description: str | None, texts: Callable[[], dict[str, str]]
) -> None:
    """A reference world module's command line: `-o DIR` writes the seed files `texts` makes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory to write")
    arguments = parser.parse_args(argv)
    arguments.output.mkdir(parents=True, exist_ok=True)
    for name, text in texts().items():
        (arguments.output / name).write_text(text, encoding="utf-8")


def corpus_command(
    argv: list[str] | None,
    description: str | None,
    build_corpus: Callable[[], list[Session]],
    initial_records: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]],
) -> None:
    """A corpus module's command line: `-o FILE` writes the corpus as trace JSONL, and
    `--initial-seed DIR` the reference service's state before the corpus as seed files (what
    `myna conformance --seed-dir` replays the corpus from)."""
    from myna.traces.jsonl import write_jsonl

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-o", "--output", type=Path, help="corpus JSONL to write")
    parser.add_argument(
        "--initial-seed",
        type=Path,
        metavar="DIR",
        help="write the reference service's state before the corpus as seed files into DIR",
    )
    arguments = parser.parse_args(argv)
    if arguments.output is None and arguments.initial_seed is None:
        parser.error("give -o/--output, --initial-seed, or both")
    if arguments.output is not None:
        write_jsonl(build_corpus(), arguments.output)
    if arguments.initial_seed is not None:
        write_seed_files(initial_records(), arguments.initial_seed)
