"""Built-in back ends: service models that ship with Myna, by name.

A built-in back end is an ordinary service model, produced the way any user's model is: `learn`
over a trace corpus that ships with the package, into a small reviewed overlay of pinned facts
(`update=`), so the facts the traces cannot show survive learning. The learned result is
committed beside them as `model.yaml`, so serving needs no learning, a person can review the
model, and a test checks that learning the corpus again reproduces it byte for byte.

A back end may also ship a *reference world*: seed files (`reference_world/<resource>.jsonl`)
of the records its reference service holds after its corpus has run, so every derived field and
rule holds in them. `myna serve <name>` serves it unless told otherwise.

The registry is a dict plus `register_backend`, nothing more; `builtin_model("itsm")` is what
callers use.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from myna.errors import MockError
from myna.schemas.model import ServiceModel
from myna.traces.model import Session

__all__ = [
    "BACKENDS",
    "Backend",
    "builtin_model",
    "named_backend",
    "register_backend",
    "resolve_model",
    "seed_file_texts",
    "write_world_command",
]


@dataclass(frozen=True, slots=True)
class Backend:
    """Where a built-in back end's corpus, overlay, learned model and reference world live
    inside the package."""

    name: str
    title: str
    package: str
    corpus: str = "corpus.jsonl"
    overlay: str = "overlay.yaml"
    model: str = "model.yaml"
    world: str = "reference_world"

    def resource(self, file_name: str) -> Traversable:
        return files(self.package).joinpath(file_name)

    @contextmanager
    def reference_world(self) -> Iterator[Path | None]:
        """The directory of the shipped reference world's seed files, or None when the back end
        ships none (a path on disk for as long as the context lasts)."""
        with as_file(self.resource(self.world)) as directory:
            path = Path(directory)
            yield path if path.is_dir() else None

    def load(self) -> ServiceModel:
        """The shipped model file, as committed."""
        from myna.schemas.openapi import loads

        model_file = self.resource(self.model)
        return loads(model_file.read_text(encoding="utf-8"), source=str(model_file))

    def learn(self) -> ServiceModel:
        """Learn the model again from the shipped corpus into the pinned overlay."""
        from myna.schemas.learn import learn
        from myna.schemas.openapi import loads

        overlay_file = self.resource(self.overlay)
        overlay = loads(overlay_file.read_text(encoding="utf-8"), source=str(overlay_file))
        (model,) = learn(self.corpus_sessions(), service=self.name, update=overlay)
        return model

    def corpus_sessions(self) -> list[Session]:
        """The shipped corpus, read whole."""
        from myna.traces.reading import read

        with as_file(self.resource(self.corpus)) as corpus:
            return list(read(corpus))


BACKENDS: dict[str, Backend] = {}
"""Every registered built-in back end, by name."""


def register_backend(backend: Backend) -> None:
    """Add a built-in back end; a second one with the same name is a mistake and raises."""
    if backend.name in BACKENDS:
        raise MockError(f"a built-in back end named {backend.name!r} is already registered")
    BACKENDS[backend.name] = backend


def builtin_model(name: str) -> ServiceModel:
    """The shipped model of built-in back end `name` (a fresh copy the caller may change)."""
    if name not in BACKENDS:
        known = ", ".join(sorted(BACKENDS)) or "none"
        raise MockError(f"no built-in back end {name!r}; there are: {known}", backend=name)
    return _loaded(name).model_copy(deep=True)


@cache
def _loaded(name: str) -> ServiceModel:
    return BACKENDS[name].load()


register_backend(
    Backend(
        name="itsm",
        title="ITSM (ServiceNow Table API)",
        package="myna.mocks.backends.itsm",
    )
)

register_backend(
    Backend(
        name="crm",
        title="CRM (Salesforce REST API)",
        package="myna.mocks.backends.crm",
    )
)

register_backend(
    Backend(
        name="erp",
        title="ERP (procure to pay, REST JSON)",
        package="myna.mocks.backends.erp",
    )
)


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


def named_backend(spec: str) -> Backend | None:
    """The built-in back end a MODEL argument names, or None when it names a file (a file at
    that path wins over a back end of the same name) or nothing known."""
    return None if Path(spec).exists() else BACKENDS.get(spec)


def resolve_model(spec: str) -> ServiceModel:
    """A model file when one exists at that path, else the built-in back end of that name."""
    from myna.schemas.openapi import load

    backend = named_backend(spec)
    if backend is not None:
        return builtin_model(backend.name)
    path = Path(spec)
    if path.exists():
        return load(path)
    known = ", ".join(sorted(BACKENDS))
    raise MockError(
        f"{spec!r} is neither a model file nor a built-in back end (there are: {known})",
        field="MODEL",
    )
