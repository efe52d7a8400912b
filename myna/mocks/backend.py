"""Built-in back ends as the mock sees them: one declared spec per back end, found by name.

A built-in back end is an ordinary service model, produced the way any user's model is: `learn`
over a trace corpus that ships with the package, into a small reviewed overlay of pinned facts
(`update=`), so the facts the traces cannot show survive learning. The learned result is
committed beside them as `model.yaml`, so serving needs no learning, a person can review the
model, and a test checks that learning the corpus again reproduces it byte for byte.

The back ends themselves live in `myna.backends`, above this stage. Each declares one `Backend`
spec (its model files, the extension and query dialect its model names, the state its corpus
starts from and the user it was recorded as) as an entry point in group `myna.backends`, so
`myna serve itsm` finds it here by name. `builtin_model("itsm")` is what callers use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from myna.errors import MockError
from myna.mocks.plugins import PluginRegistry
from myna.schemas.model import ServiceModel
from myna.traces.model import Session

__all__ = [
    "BACKENDS",
    "Backend",
    "InitialRecords",
    "builtin_model",
    "named_backend",
    "resolve_model",
]

InitialRecords = Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]]
"""Records by resource name (what seed files hold)."""


@dataclass(frozen=True, slots=True)
class Backend:
    """One built-in back end: where its files live inside `package`, and what a user replaying
    its corpus needs to know.

    `extension` and `dialect` name what its model opts into (a test checks they agree);
    `initial_records` is its reference service's state before the corpus ran and `recorded_as`
    the user the corpus signs in as (both None when the corpus creates all it uses).
    """

    name: str
    title: str
    package: str
    extension: str
    dialect: str | None = None
    recorded_as: str | None = None
    initial_records: InitialRecords | None = None
    corpus: str = "corpus.jsonl"
    overlay: str = "overlay.yaml"
    model: str = "model.yaml"
    world: str = "reference_world"
    worlds: tuple[tuple[str, str], ...] = (("reference", "reference_world"),)
    """The shipped worlds' seed folders by name; `myna serve NAME` serves the first unless
    `--world` names another."""

    def resource(self, file_name: str) -> Traversable:
        return files(self.package).joinpath(file_name)

    @contextmanager
    def reference_world(self) -> Iterator[Path | None]:
        """The directory of the shipped reference world's seed files, or None when the back end
        ships none (a path on disk for as long as the context lasts)."""
        with self._folder(self.world) as path:
            yield path

    @contextmanager
    def shipped_world(self, name: str | None = None) -> Iterator[Path | None]:
        """The directory of the shipped world called `name` (the first of `worlds` when None),
        or None when the back end ships no such folder; a name it does not know is a
        `MockError` listing the ones it does."""
        folders = dict(self.worlds)
        chosen = self.worlds[0][0] if name is None else name
        if chosen not in folders:
            known = ", ".join(folders)
            raise MockError(
                f"{self.name} ships no world {chosen!r} (it ships: {known})", field="--world"
            )
        with self._folder(folders[chosen]) as path:
            yield path

    @contextmanager
    def _folder(self, folder: str) -> Iterator[Path | None]:
        with as_file(self.resource(folder)) as directory:
            path = Path(directory)
            yield path if path.is_dir() else None

    def load(self) -> ServiceModel:
        """The shipped model file, as committed."""
        from myna.schemas.openapi import loads

        model_file = self.resource(self.model)
        return loads(model_file.read_text(encoding="utf-8"), source=str(model_file))

    def learn(self) -> ServiceModel:
        """Learn the model again from the shipped corpus into the pinned overlay."""
        from myna.schemas.learn import Options, learn
        from myna.schemas.openapi import loads

        overlay_file = self.resource(self.overlay)
        overlay = loads(overlay_file.read_text(encoding="utf-8"), source=str(overlay_file))
        # A built-in back end serves its reference world, not the corpus's records; its
        # operations are the ones its corpus and overlay state, none completed by convention,
        # and its extension answers the ones the runtime cannot simulate.
        (model,) = learn(
            self.corpus_sessions(),
            service=self.name,
            update=overlay,
            options=Options(records=False, complete=False, answers=False, renderings=False),
        )
        return model

    def corpus_sessions(self) -> list[Session]:
        """The shipped corpus, read whole."""
        from myna.traces.reading import read

        with as_file(self.resource(self.corpus)) as corpus:
            return list(read(corpus))


BACKENDS: PluginRegistry[Backend] = PluginRegistry("built-in back end", "myna.backends", Backend)
"""Every built-in back end, by name (declared as entry points, or registered in code)."""


def builtin_model(name: str) -> ServiceModel:
    """The shipped model of built-in back end `name`, loaded afresh for a caller that may change
    it: reading the parsed model back from its cache entry (`model_cache`) costs half of
    deep-copying one kept in memory (0.017 s against 0.035 s for ITSM)."""
    if name not in BACKENDS:
        raise MockError(BACKENDS.unknown(name), backend=name)
    return BACKENDS.require(name).load()


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
    known = ", ".join(BACKENDS.names())
    raise MockError(
        f"{spec!r} is neither a model file nor a built-in back end (there are: {known})",
        field="MODEL",
    )
