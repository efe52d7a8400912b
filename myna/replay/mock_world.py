"""Episode worlds on the in-process mock (`myna.mocks`): the default `WorldFactory`.

One `Mock` (and one store) per service model serves every episode of that model. Each episode's
initial world is loaded once as an immutable base snapshot; every attempt then gets its own world
forked from it, so a reset costs a world creation, whatever the world's size. Records in an
episode are in the wire form the logs show; they are stored in the mock's plain form (a reference
holds its target's id).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from myna.errors import ReplayError
from myna.mocks import Mock, MockClient
from myna.mocks.calllog import Call
from myna.mocks.extensions import extensions_for
from myna.mocks.ids import counter_name, needs_counter
from myna.mocks.messages import MockRequest
from myna.mocks.query import Query
from myna.mocks.runtime import ADMIN_PREFIX
from myna.mocks.seed import prepared
from myna.mocks.sqlstore import SqlStore
from myna.mocks.store import Record, RecordChange
from myna.mocks.tools import Toolbox
from myna.replay.episode import Environment, Episode, ModelRef, SideEffect
from myna.replay.run import EpisodeRunner, Routes
from myna.replay.shared import Layers
from myna.replay.world import HttpRequest
from myna.schemas.model import IdFormat, Resource, ServiceModel

SERVICE_USER = ("myna", "myna")
SERVICE_TOKEN = "myna-token"


def load_model(ref: ModelRef, *, base: Path | None = None) -> ServiceModel:
    """The service model an episode names: a file (relative to `base`) or a built-in back end."""
    from myna.schemas import openapi

    if ref.path is not None:
        path = Path(ref.path)
        if not path.is_absolute() and base is not None:
            path = base / path
        return openapi.load(path)
    from myna.backends import BACKENDS, builtin_model

    if ref.name not in BACKENDS:
        known = ", ".join(sorted(BACKENDS)) or "none"
        raise ReplayError(
            f"no built-in back end named {ref.name!r} (there are: {known})",
            field="environment.model.name",
        )
    return builtin_model(str(ref.name))


def side_effect_resources(model: ServiceModel) -> list[str]:
    """Resources the service writes itself beside a client's changes (audit trails, journals):
    an episode's collateral guard does not blame the agent for them, but charges those that
    name their record (`side_effects`) to that record."""
    return sorted(extensions_for(model).side_effect_resources)


def note_fields(model: ServiceModel) -> list[str]:
    """Fields a client adds notes through (ServiceNow's work notes and comments): a note on a
    record the task is about is a harmless addition."""
    return sorted(extensions_for(model).note_fields)


def side_effects(model: ServiceModel) -> list[SideEffect]:
    """The service's own side-effect rows that name the record and field they were written for:
    the collateral guard charges each to that record."""
    return [
        SideEffect(
            resource=name,
            id_field=owner.id_field,
            table_field=owner.table_field,
            field_field=owner.field_field,
        )
        for name, owner in sorted(extensions_for(model).side_effect_owners.items())
    ]


def stored(record: Record, resource: Resource) -> Record:
    """A logged (wire) record in the mock's stored form: references hold the target's id."""
    out = dict(record)
    for name, spec in resource.fields.items():
        value = out.get(name)
        if spec.reference is not None and isinstance(value, dict) and "value" in value:
            out[name] = value["value"]
    return out


def _sequences(resource: Resource, records: list[Record]) -> Iterator[tuple[str, int]]:
    formats: list[tuple[str, IdFormat]] = [(resource.id_field, resource.id_format)]
    formats += [(n, s.generator) for n, s in resource.fields.items() if s.generator is not None]
    for name, fmt in formats:
        if not needs_counter(fmt):
            continue
        numbers = []
        for record in records:
            text = str(record.get(name) or "")
            digits = text[len(fmt.prefix) :] if text.startswith(fmt.prefix) else text
            if digits.isdigit():
                numbers.append(int(digits))
        if numbers:
            yield counter_name(resource.name, name), max(numbers)


class MockWorld:
    """One attempt's world on the shared mock; closing it deletes it."""

    def __init__(self, factory: MockWorlds, world: str) -> None:
        self._factory = factory
        self.world = world
        self.client = MockClient(
            factory.mock, world=world, headers=factory.headers, auth=factory.auth
        )

    def changes(self) -> list[RecordChange]:
        return self._factory.store.diff(self.world)

    def calls(self) -> list[Call]:
        """Every call the world answered, oldest first (from the mock's call log)."""
        return self._factory.mock.call_log(self.world).calls()

    def dump(self) -> dict[str, list[Record]]:
        out: dict[str, list[Record]] = {}
        with self._factory.store.transaction(self.world) as tx:
            for resource in self._factory.model.resources:
                records, _ = tx.list(resource, Query())
                if records:
                    out[resource] = records
        return out

    def close(self) -> None:
        self._factory.store.delete_world(self.world)
        self._factory.mock.forget_world(self.world)


class MockWorlds:
    """Opens fresh worlds on one in-process mock of `model` (SQLite in memory by default)."""

    def __init__(self, model: ServiceModel, *, store_url: str = "sqlite://") -> None:
        self.model = model
        self.store = SqlStore(model, store_url)
        self.mock = Mock(model, store=self.store, seed=0)
        self._snapshots: dict[int, tuple[Environment, str]] = {}
        self._roots: dict[str, dict[str, int]] = {}
        """Shared worlds' root snapshots loaded, with their counters' tops."""
        self._names: set[str] = set()
        scheme = model.conventions.auth.scheme
        self.auth = SERVICE_USER if scheme == "basic" else None
        self.headers: dict[str, str] = {}
        if scheme in ("bearer", "oauth2"):
            self.headers["authorization"] = f"Bearer {SERVICE_TOKEN}"
        elif scheme == "apikey":
            self.headers[model.conventions.auth.header or "x-api-key"] = SERVICE_TOKEN

    @contextmanager
    def shifted(self, seconds: float) -> Iterator[None]:
        """The mock's clock `seconds` off while entered (`myna.replay.world.Clocked`)."""
        clock = self.mock.clock
        self.mock.clock = lambda: clock() + seconds
        try:
            yield
        finally:
            self.mock.clock = clock

    @cached_property
    def routes(self) -> Routes:
        """The model's routes (built once: every runner of the model matches calls on them)."""
        return routes_for(self.model)

    @cached_property
    def translator(self) -> ToolboxTranslator:
        """The model's tools (built once: deriving them walks every operation)."""
        return ToolboxTranslator(self.model)

    def snapshot_for(self, environment: Environment) -> str:
        """The base snapshot holding the environment's initial world, loaded on first use."""
        cached = self._snapshots.get(id(environment))
        if cached is not None and cached[0] is environment:
            return cached[1]
        # Named by content, not by load order: minted ids derive from the base snapshot's name,
        # so an episode mints the same ids whichever episodes this mock loaded before (alone,
        # on a thread or on a Ray actor), and never those of the world it was built in, whose
        # records its initial world may hold.
        layers = environment.layers
        content = orjson.dumps(
            environment.model_dump(mode="json")
            if layers is None
            else {
                "shared": layers.shared.name,
                "own": layers.own,
                **environment.model_dump(mode="json", exclude={"initial_world"}),
            },
            option=orjson.OPT_SORT_KEYS,
        )
        name = f"episode-{hashlib.sha256(content).hexdigest()[:32]}"
        if name not in self._names:
            if layers is None:
                self._load(environment.initial_world, environment.id_fields, name)
            else:
                self._lay(layers, environment.id_fields, name)
            self._names.add(name)
        self._snapshots[id(environment)] = (environment, name)
        return name

    def _rows(
        self, world: Mapping[str, Iterable[Record]], id_fields: Mapping[str, str]
    ) -> tuple[list[tuple[str, str, Record]], dict[str, int]]:
        """A world's records in the stored form, as seed triples, and its counters' tops."""
        triples: list[tuple[str, str, Record]] = []
        sequences: dict[str, int] = {}
        for resource_name, records in world.items():
            resource = self.model.resources.get(resource_name)
            if resource is None:
                raise ReplayError(
                    f"the model {self.model.name} has no resource {resource_name!r}",
                    field=f"environment.initial_world.{resource_name}",
                )
            id_field = id_fields.get(resource_name, resource.id_field)
            rows = [stored(record, resource) for record in records]
            triples += [(resource_name, str(row[id_field]), row) for row in rows]
            sequences.update(_sequences(resource, rows))
        return prepared(self.model, triples), sequences

    def _load(
        self, world: Mapping[str, Iterable[Record]], id_fields: Mapping[str, str], name: str
    ) -> dict[str, int]:
        triples, sequences = self._rows(world, id_fields)
        self.store.load_base(triples, name, sequences=sequences)
        return sequences

    def _lay(self, layers: Layers, id_fields: Mapping[str, str], name: str) -> None:
        """The episode's own records written over the shared world's root snapshot (loaded
        once per shared world) and frozen as a layer on it: the world's size is paid once."""
        shared = layers.shared
        root = f"shared-{shared.name}"
        tops = self._roots.get(root)
        if tops is None:
            tables = {resource: list(rows.values()) for resource, rows in shared.tables.items()}
            tops = self._roots[root] = self._load(tables, id_fields, root)
        own = {resource: list(records.values()) for resource, records in layers.own.items()}
        triples, sequences = self._rows(own, id_fields)
        scratch = f"laying-{secrets.token_urlsafe(16)}"
        self.store.create_world(scratch, from_snapshot=root)
        try:
            with self.store.transaction(scratch) as tx:
                for resource, record_id, row in triples:
                    if tx.get(resource, record_id) is not None:
                        tx.update(resource, record_id, row)
                    else:
                        tx.insert(resource, record_id, row)
                for counter, top in sorted(sequences.items()):
                    if top > tops.get(counter, -1):
                        tx.next_sequence(counter, top)  # the next id minted is past `top`
            self.store.snapshot(scratch, name)
        finally:
            self.store.delete_world(scratch)

    def open(self, environment: Environment) -> MockWorld:
        # Unguessable: the episode server keeps attempts apart by never letting an agent name a
        # world, and a name nobody can guess keeps them apart should one ever be named anyway.
        world = f"attempt-{secrets.token_urlsafe(16)}"
        self.store.create_world(world, from_snapshot=self.snapshot_for(environment))
        self.mock.ensure_world(world)
        return MockWorld(self, world)


class ToolboxTranslator:
    """Tool calls to HTTP requests through the mock's own tool definitions (a `ToolTranslator`)."""

    def __init__(self, model: ServiceModel) -> None:
        self.toolbox = Toolbox(model)

    def __call__(self, name: str, arguments: Mapping[str, Any]) -> HttpRequest:
        call = self.toolbox.call(name, arguments)
        return HttpRequest(call.method, call.path, call.params, call.json_body)

    def names(self) -> list[str]:
        return [tool.name for tool in self.toolbox.tools]


def routes_for(model: ServiceModel) -> Routes:
    """The model's routes, with the paths and nested requests its extensions accept."""
    extensions = extensions_for(model)

    def unpack(request: HttpRequest) -> list[HttpRequest]:
        body = b"" if request.body is None else orjson.dumps(request.body)
        outer = MockRequest(request.method, request.path, list(request.params.items()), {}, body)
        return [_http_request(inner) for inner in extensions.unpack(outer)]

    return Routes.from_model(
        model,
        admin_prefixes=(ADMIN_PREFIX, "/_myna"),
        canonical=extensions.alias,
        unpack=unpack,
    )


def _http_request(request: MockRequest) -> HttpRequest:
    try:
        body = orjson.loads(request.body) if request.body else None
    except orjson.JSONDecodeError:
        body = request.body.decode("utf-8", "replace")
    return HttpRequest(request.method, request.path, dict(request.query), body)


def runner_for(
    episode: Episode, model: ServiceModel, worlds: MockWorlds | None = None
) -> EpisodeRunner:
    """An episode runner on the in-process mock (pass `worlds` to share one mock)."""
    factory = worlds if worlds is not None else MockWorlds(model)
    translate = factory.translator
    offered = set(episode.environment.tools)
    definitions = [
        tool.openai() for tool in translate.toolbox.tools if not offered or tool.name in offered
    ]
    return EpisodeRunner(episode, factory, factory.routes, translate, definitions)


class Replayers:
    """Runners for many episodes, sharing one model and one mock per model reference.

    Relative model paths in episodes are resolved against `base` (the episode directory).
    """

    def __init__(self, base: Path | None = None, *, store_url: str = "sqlite://") -> None:
        self.base = base
        self.store_url = store_url
        self._loaded: dict[tuple[str | None, str | None], tuple[ServiceModel, MockWorlds]] = {}

    def _entry(self, ref: ModelRef) -> tuple[ServiceModel, MockWorlds]:
        key = (ref.path, ref.name)
        entry = self._loaded.get(key)
        if entry is None:
            model = load_model(ref, base=self.base)
            entry = (model, MockWorlds(model, store_url=self.store_url))
            self._loaded[key] = entry
        return entry

    def add(self, ref: ModelRef, model: ServiceModel) -> None:
        """Use an already loaded model for this reference."""
        self._loaded[(ref.path, ref.name)] = (model, MockWorlds(model, store_url=self.store_url))

    def model(self, ref: ModelRef) -> ServiceModel:
        return self._entry(ref)[0]

    def worlds(self, ref: ModelRef) -> MockWorlds:
        return self._entry(ref)[1]

    def runner(self, episode: Episode) -> EpisodeRunner:
        model, worlds = self._entry(episode.environment.model)
        return runner_for(episode, model, worlds)
