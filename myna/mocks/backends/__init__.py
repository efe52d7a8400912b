"""Built-in back ends: service models that ship with Myna, by name.

A built-in back end is an ordinary service model, produced the way any user's model is: `learn`
over a trace corpus that ships with the package, into a small reviewed overlay of pinned facts
(`update=`), so the facts the traces cannot show survive learning. The learned result is
committed beside them as `model.yaml`, so serving needs no learning, a person can review the
model, and a test checks that learning the corpus again reproduces it byte for byte.

The registry is a dict plus `register_backend`, nothing more; `builtin_model("itsm")` is what
callers use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import as_file, files
from importlib.resources.abc import Traversable
from pathlib import Path

from myna.errors import MockError
from myna.schemas.model import ServiceModel

__all__ = ["BACKENDS", "Backend", "builtin_model", "register_backend", "resolve_model"]


@dataclass(frozen=True, slots=True)
class Backend:
    """Where a built-in back end's corpus, overlay and learned model live inside the package."""

    name: str
    title: str
    package: str
    corpus: str = "corpus.jsonl"
    overlay: str = "overlay.yaml"
    model: str = "model.yaml"

    def resource(self, file_name: str) -> Traversable:
        return files(self.package).joinpath(file_name)

    def load(self) -> ServiceModel:
        """The shipped model file, as committed."""
        from myna.schemas.openapi import loads

        model_file = self.resource(self.model)
        return loads(model_file.read_text(encoding="utf-8"), source=str(model_file))

    def learn(self) -> ServiceModel:
        """Learn the model again from the shipped corpus into the pinned overlay."""
        from myna.schemas.learn import learn
        from myna.schemas.openapi import loads
        from myna.traces.reading import read

        overlay_file = self.resource(self.overlay)
        overlay = loads(overlay_file.read_text(encoding="utf-8"), source=str(overlay_file))
        with as_file(self.resource(self.corpus)) as corpus:
            (model,) = learn(read(corpus), service=self.name, update=overlay)
        return model


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


def resolve_model(spec: str) -> ServiceModel:
    """A model file when one exists at that path, else the built-in back end of that name."""
    from myna.schemas.openapi import load

    path = Path(spec)
    if path.exists():
        return load(path)
    if spec in BACKENDS:
        return builtin_model(spec)
    known = ", ".join(sorted(BACKENDS))
    raise MockError(
        f"{spec!r} is neither a model file nor a built-in back end (there are: {known})",
        field="MODEL",
    )
