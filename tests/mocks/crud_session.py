"""A scripted agent's CRUD session against one resource of a learned mock, as an agent new to
the service would run it: list, get one, create one like it (in the service's envelope), get it
back, change it, see it in the list, delete it, and get a 404."""

from __future__ import annotations

import random
import re
from typing import Any

from faker import Faker

from myna.mocks import Mock, MockClient
from myna.mocks.contract import compile_resource
from myna.mocks.runtime import DEFAULT_WORLD
from myna.mocks.seed import seed_recorded, value_from_schema
from myna.mocks.sqlstore import SqlStore
from myna.schemas.model import Envelope, Operation, Resource, ServiceModel

CHANGED = "Changed by the agent"


def recorded_mock(model: ServiceModel, **options: Any) -> Mock:
    """The model's mock as `myna serve` starts it: its default world holds the records the
    traces showed (`seed_recorded`). `options` go to `Mock` (credentials...)."""
    store = SqlStore(model, "sqlite://")
    store.create_world(DEFAULT_WORLD, from_snapshot=seed_recorded(model, store, seed=0))
    return Mock(model, store, **options)


def seeded_client(model: ServiceModel) -> MockClient:
    """An in-process client of the model's recorded mock, with the default credential the
    model's auth scheme takes."""
    mock = recorded_mock(model)
    auth = model.conventions.auth
    if auth.scheme == "basic":
        return MockClient(mock, auth=("myna", "myna"))
    if auth.scheme == "none":
        return MockClient(mock)
    value = "myna-token" if auth.scheme == "apikey" else "Bearer myna-token"
    return MockClient(mock, headers={auth.header or "Authorization": value})


def crud_session(
    client: MockClient, model: ServiceModel, resource: Resource, kinds: dict[str, Operation]
) -> str | None:
    """Why the session failed, or None when every step answered as a service would."""
    envelope = resource.envelope or model.conventions.envelope
    listed = _listed(client, kinds, envelope)
    sample = listed[0] if listed else (resource.records[0] if resource.records else {})
    body = writable(resource, sample)
    body.update(_required_missing(model, resource, body))
    sent = {envelope.request_key: body} if envelope.request_key else body
    made = client.post(_path(kinds["create"]), json=sent)
    if made.status >= 300:
        return f"create answered {made.status}: {str(made.json())[:200]}"
    record = _item(made.json(), envelope)
    record_id = record.get(resource.id_field) if isinstance(record, dict) else None
    if record_id is None:
        return f"the created record has no {resource.id_field}"
    return _after_create(client, resource, kinds, envelope, record_id, body)


def _after_create(
    client: MockClient,
    resource: Resource,
    kinds: dict[str, Operation],
    envelope: Envelope,
    record_id: Any,
    body: dict[str, Any],
) -> str | None:
    item = _path(kinds["get"], record_id)
    fetched = client.get(item).status
    if fetched != 200:
        return f"GET {item} of the created record answered {fetched}"
    update = kinds.get("update") or kinds.get("replace")
    text = next((name for name, value in body.items() if _free_text(resource, name, value)), None)
    if update is not None:
        change = {text: CHANGED} if text else {}
        sent = {envelope.request_key: change} if envelope.request_key else change
        changed = client.request(update.method, _path(update, record_id), json=sent)
        if changed.status >= 300:
            return f"update answered {changed.status}: {str(changed.json())[:200]}"
        if text and _item(client.get(item).json(), envelope).get(text) != CHANGED:
            return f"the update of {text} did not show in a GET"
    if "list" in kinds and record_id not in _ids(_listed(client, kinds, envelope), resource):
        return "the created record is not in the list"
    deleted = client.delete(_path(kinds["delete"], record_id))
    if deleted.status >= 300:
        return f"delete answered {deleted.status}"
    gone = client.get(item).status
    return None if gone == 404 else f"GET after delete answered {gone}"


def writable(resource: Resource, sample: dict[str, Any]) -> dict[str, Any]:
    """What an agent sends to create a record like `sample`: the fields clients write, less
    those the service numbers, keeps unique or moves through states itself."""
    owned = {machine.field for machine in resource.state_machines} | set(resource.unique)
    return {
        name: value
        for name, value in sample.items()
        if name in resource.fields
        and name != resource.id_field
        and name not in owned
        and not resource.fields[name].server_generated
        and not resource.fields[name].read_only
        and resource.fields[name].generator is None
    }


def _required_missing(
    model: ServiceModel, resource: Resource, body: dict[str, Any]
) -> dict[str, Any]:
    """Values for what the published create schema requires and the sample lacked, as an
    agent reading the OpenAPI document would fill them in."""
    schema = compile_resource(resource, model.conventions).create_schema
    rng = random.Random(resource.name)
    fake = Faker("en_US")
    fake.seed_instance(0)
    return {
        name: value_from_schema(schema["properties"][name], name, rng, fake, 0)
        for name in schema.get("required", ())
        if name not in body
    }


def _free_text(resource: Resource, name: str, value: Any) -> bool:
    spec = resource.fields[name]
    schema = spec.schema_
    return (
        isinstance(value, str)
        and spec.reference is None
        and "enum" not in schema
        and "format" not in schema
        and "pattern" not in schema
    )


def _listed(client: MockClient, kinds: dict[str, Operation], envelope: Envelope) -> list[Any]:
    if "list" not in kinds:
        return []
    answer = client.get(_path(kinds["list"])).json()
    envelope = kinds["list"].envelope or envelope
    records = answer.get(envelope.list_key) if isinstance(answer, dict) else answer
    return [record for record in records or [] if isinstance(record, dict)]


def _ids(records: list[Any], resource: Resource) -> list[Any]:
    return [record.get(resource.id_field) for record in records]


def _item(answer: Any, envelope: Envelope) -> Any:
    if isinstance(answer, dict) and envelope.item_key and envelope.item_key in answer:
        return answer[envelope.item_key]
    return answer


def _path(operation: Operation, record_id: Any = None) -> str:
    """The operation's path with its last parameter the record's id (when given) and any
    other (a parent's) 1."""
    path = operation.path
    if record_id is not None:
        path = re.sub(r"\{[^}]+\}(?=[^{]*$)", str(record_id), path)
    return re.sub(r"\{[^}]+\}", "1", path)
