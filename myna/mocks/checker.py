"""One conformance checker every back end must pass, in the spirit of Gymnasium's env checker.

`check_backend(model)` seeds the model (from its reference world's seed files when given, else
generated records) and runs a table of small checks over the result. Each check yields
`Finding`s: a finding is a result about the back end, never an exception, so one run reports
every problem at once. `assert_backend_ok` is the thin raising shell for tests and CI.

The record checks (schemas, references, required-on-entry fields) are pure functions of the
model and the seeded records, so a test can plant a defect in a literal list of records; the
runtime checks (responses, worlds) build their own store and mock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from myna.errors import MockError, MynaError
from myna.mocks.auth import credential_headers
from myna.mocks.seed import could_be_id, seed, seed_from_files, stored_value_schema
from myna.mocks.store import Record, Store
from myna.schemas.model import Operation, Resource, ServiceModel

if TYPE_CHECKING:
    from myna.mocks.sqlstore import SqlStore

__all__ = [
    "CHECKS",
    "BackendCheckError",
    "Finding",
    "assert_backend_ok",
    "check_backend",
    "check_references",
    "check_required_on_entry",
    "check_schemas",
]

SEED = 0
RECORDS_PER_RESOURCE = 8
CHECKED_WORLD = "myna-check"
FORKED_WORLD = "myna-check-fork"
USER = ("myna", "myna")
TOKEN = "myna-token"

Seeded = Sequence[tuple[str, str, Record]]
"""(resource, id, record) triples, as a seed loads them."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One way a back end fails the contract: which check, and what it saw."""

    check: str
    message: str


class BackendCheckError(MockError):
    """A back end failed the conformance checker; the message lists every finding."""

    kind = "backend_check"

    def __init__(self, model: str, findings: Sequence[Finding]) -> None:
        self.findings = tuple(findings)
        listed = "; ".join(f"[{f.check}] {f.message}" for f in self.findings)
        super().__init__(f"{len(self.findings)} conformance finding(s): {listed}", backend=model)


@dataclass(frozen=True, slots=True)
class Subject:
    """What the checks look at: the model, where its seed comes from, and the seeded records."""

    model: ServiceModel
    seed_dir: Path | None
    records: Seeded


Check = Callable[[Subject], Iterator[Finding]]


# --- pure record checks ------------------------------------------------------------------------


def check_schemas(model: ServiceModel, records: Seeded) -> Iterator[Finding]:
    """Every non-empty value of a seeded record fits its field's JSON Schema; a `link_value`
    reference is held as the bare id its `value` describes (the runtime renders the link), and
    a reference is not held to the ids a learned enum lists (`check_references` asks whether
    it names a seeded record)."""
    validators: dict[tuple[str, str], Draft202012Validator] = {}
    for resource_name, record_id, record in records:
        resource = model.resources.get(resource_name)
        if resource is None:
            yield Finding("schemas", f"{resource_name} {record_id}: no such resource in the model")
            continue
        for name, value in record.items():
            spec = resource.fields.get(name)
            if spec is None:
                yield Finding("schemas", f"{resource_name} {record_id}: unknown field {name!r}")
                continue
            if _empty(value, model):
                continue
            linked = spec.reference is not None and spec.reference.style == "link_value"
            if linked and isinstance(value, dict):
                yield Finding(
                    "schemas",
                    f"{resource_name} {record_id} field {name}: holds {value!r}; a reference "
                    "is stored as its target's id, from which responses render the link",
                )
                continue
            schema = stored_value_schema(model, spec)
            if not schema:
                continue
            key = (resource_name, name)
            if key not in validators:
                validators[key] = Draft202012Validator(schema)
            error = next(iter(validators[key].iter_errors(value)), None)
            if error is not None:
                yield Finding(
                    "schemas",
                    f"{resource_name} {record_id} field {name}: {value!r} does not fit the "
                    f"field's schema: {error.message}",
                )


def check_references(model: ServiceModel, records: Seeded) -> Iterator[Finding]:
    """Every reference names a seeded record of its target resource (targets the model does not
    serve are skipped: nothing could resolve them; so are values that cannot be the target's
    ids, the constants a service writes in place of a record, such as ServiceNow's `global`
    domain)."""
    ids: dict[str, set[str]] = {}
    for resource_name, record_id, _ in records:
        ids.setdefault(resource_name, set()).add(record_id)
    for resource_name, record_id, record in records:
        resource = model.resources.get(resource_name)
        if resource is None:
            continue
        for name, value in record.items():
            spec = resource.fields.get(name)
            if spec is None or spec.reference is None:
                continue
            target = spec.reference.resource
            if target not in model.resources:
                continue
            wanted = _scalar(value)
            if (
                wanted is not None
                and wanted not in ids.get(target, set())
                and could_be_id(model.resources[target], wanted)
            ):
                yield Finding(
                    "references",
                    f"{resource_name} {record_id} field {name}: references {target} "
                    f"{wanted!r}, which is not seeded",
                )


def check_required_on_entry(model: ServiceModel, records: Seeded) -> Iterator[Finding]:
    """A record in a state of an enforced state machine has that state's entry fields filled."""
    for resource_name, record_id, record in records:
        resource = model.resources.get(resource_name)
        if resource is None:
            continue
        for machine in resource.state_machines:
            if not machine.enforce:
                continue
            state = _scalar(record.get(machine.field))
            if state is None:
                continue
            for name in machine.required_on_entry.get(state, []):
                if _scalar(record.get(name)) is None:
                    yield Finding(
                        "required_on_entry",
                        f"{resource_name} {record_id} is in {machine.field}={state!r} but "
                        f"{name} is empty (required on entering that state)",
                    )


def check_required_on_create(model: ServiceModel, records: Seeded) -> Iterator[Finding]:
    """A record refers to every record a create must name (a line item its opportunity): the
    service's rules follow such references, and meet nothing where one is empty. References
    only: a record the service made itself may lack a label a client must send (Salesforce's
    role groups have no Name)."""
    for resource_name, record_id, record in records:
        resource = model.resources.get(resource_name)
        if resource is None:
            continue
        for name, spec in resource.fields.items():
            if (
                spec.required_on_create
                and spec.reference is not None
                and _scalar(record.get(name)) is None
            ):
                yield Finding(
                    "required_on_create",
                    f"{resource_name} {record_id}: {name} is empty, but a create must send it",
                )


def _empty(value: Any, model: ServiceModel) -> bool:
    return value is None or (value == "" and model.conventions.values_as_strings)


def _scalar(value: Any) -> str | None:
    """A reference or state as text; references may travel as `{"value": ...}` objects."""
    if isinstance(value, dict):
        for key in ("value", "id", "Id", "sys_id"):
            if key in value:
                return _scalar(value[key])
        return None
    if value is None or value == "":
        return None
    return str(value)


# --- checks over a seeded store and the runtime -------------------------------------------------


def _load(model: ServiceModel, store: Store, seed_dir: Path | None) -> str:
    if seed_dir is not None:
        return seed_from_files(model, store, seed_dir)
    return seed(model, store, seed=SEED, records=RECORDS_PER_RESOURCE)


def _seeded(model: ServiceModel, seed_dir: Path | None) -> tuple[SqlStore, Seeded]:
    """A fresh store holding the seed in world `CHECKED_WORLD`, and the records it holds."""
    from myna.mocks.sqlstore import SqlStore

    store = SqlStore(model, "sqlite://")
    snapshot = _load(model, store, seed_dir)
    store.create_world(CHECKED_WORLD, from_snapshot=snapshot)
    with store.transaction(CHECKED_WORLD) as tx:
        records = [
            (name, record_id, dict(record))
            for name in sorted(model.resources)
            for record_id, record in tx.all(name)
        ]
    return store, records


def _determinism(subject: Subject) -> Iterator[Finding]:
    """Seeding a second store the same way gives the same records."""
    _, again = _seeded(subject.model, subject.seed_dir)
    if list(again) == list(subject.records):
        return
    first = {(r, i): record for r, i, record in subject.records}
    second = {(r, i): record for r, i, record in again}
    differing = sorted(
        key for key in first.keys() | second.keys() if first.get(key) != second.get(key)
    )
    shown = ", ".join(f"{r} {i}" for r, i in differing[:5])
    yield Finding(
        "determinism",
        f"seeding twice gave different records ({len(differing)} differ, e.g. {shown})",
    )


def _responses(subject: Subject) -> Iterator[Finding]:
    """Through the in-process runtime in strict mode, every list's first page and every get of a
    seeded record answers 2xx with a body the model accepts."""
    from myna.mocks.client import MockClient
    from myna.mocks.runtime import Mock

    model = subject.model
    store, _ = _seeded(model, subject.seed_dir)
    client = MockClient(Mock(model, store, strict=True), world=CHECKED_WORLD, **_credentials(model))
    first_ids = _first_ids(subject.records)
    for operation in model.operations:
        if operation.resource is None or operation.resource not in model.resources:
            continue
        path_params = [p for p in operation.parameters if p.location == "path"]
        if operation.kind == "list" and not path_params:
            path = model.base_path + operation.path
        elif operation.kind == "get" and len(path_params) == 1:
            record_id = first_ids.get(operation.resource)
            if record_id is None:
                continue
            path = model.base_path + operation.path.replace(
                "{" + path_params[0].name + "}", record_id
            )
        else:
            continue
        try:
            answer = client.get(path)
        except MynaError as error:
            yield Finding("responses", f"{operation.id} GET {path}: {error}")
            continue
        if not 200 <= answer.status < 300:
            body = answer.body[:200].decode("utf-8", "replace")
            yield Finding("responses", f"{operation.id} GET {path}: {answer.status} {body}")


def _credentials(model: ServiceModel) -> dict[str, Any]:
    user, password = USER
    return {
        "headers": credential_headers(
            model.conventions.auth, user=user, password=password, token=TOKEN
        )
    }


def _first_ids(records: Seeded) -> dict[str, str]:
    first: dict[str, str] = {}
    for resource_name, record_id, _ in records:
        first.setdefault(resource_name, record_id)
    return first


def _worlds(subject: Subject) -> Iterator[Finding]:
    """Fork the seeded world, create one record in the fork, reset it twice: the original never
    changes and each reset leaves the fork equal to its base."""
    from myna.mocks.client import MockClient
    from myna.mocks.runtime import Mock

    model = subject.model
    store, _ = _seeded(model, subject.seed_dir)
    store.fork_world(CHECKED_WORLD, FORKED_WORLD)
    client = MockClient(Mock(model, store), world=FORKED_WORLD, **_credentials(model))
    examples = _examples(subject.records)
    written = False
    for operation in model.operations:
        body = _create_body(model, operation, examples)
        if body is None:
            continue
        answer = client.post(model.base_path + operation.path, json=body)
        if 200 <= answer.status < 300:
            written = True
            break
    if not written:
        return
    if not store.diff(FORKED_WORLD):
        yield Finding("worlds", "a create answered 2xx but the fork's diff shows no change")
    if changed := store.diff(CHECKED_WORLD):
        yield Finding(
            "worlds",
            f"writing in a fork changed the world it was forked from ({len(changed)} records)",
        )
    for attempt in ("first", "second"):
        store.reset_world(FORKED_WORLD)
        if left := store.diff(FORKED_WORLD):
            yield Finding(
                "worlds", f"after the {attempt} reset the fork still differs ({len(left)} records)"
            )


def _examples(records: Seeded) -> dict[str, Record]:
    examples: dict[str, Record] = {}
    for resource_name, _, record in records:
        examples.setdefault(resource_name, record)
    return examples


def _create_body(
    model: ServiceModel, operation: Operation, examples: Mapping[str, Record]
) -> Record | None:
    """A request body that fills the resource's required fields from a seeded record of it, or
    None when the operation is not a plain create or a required field cannot be filled (it is
    unique, so a copy would conflict, or no seeded record has it)."""
    if operation.kind != "create" or operation.resource is None:
        return None
    if any(p.location == "path" for p in operation.parameters):
        return None
    resource: Resource | None = model.resources.get(operation.resource)
    example = examples.get(operation.resource)
    if resource is None or example is None:
        return None
    body: Record = {}
    for spec in resource.fields.values():
        if not spec.required_on_create or spec.server_generated:
            continue
        value = example.get(spec.name)
        if spec.name in resource.unique or _empty(value, model):
            return None
        body[spec.name] = value
    return body


def _pure(check: Callable[[ServiceModel, Seeded], Iterator[Finding]]) -> Check:
    def run(subject: Subject) -> Iterator[Finding]:
        return check(subject.model, subject.records)

    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


CHECKS: dict[str, Check] = {
    "determinism": _determinism,
    "schemas": _pure(check_schemas),
    "references": _pure(check_references),
    "required_on_entry": _pure(check_required_on_entry),
    "required_on_create": _pure(check_required_on_create),
    "responses": _responses,
    "worlds": _worlds,
}
"""Every check, by name, in the order they run."""


def check_backend(model: ServiceModel, *, seed_dir: Path | None = None) -> list[Finding]:
    """Every finding of every check over `model`, seeded from `seed_dir` (seed files) when given,
    else generated. A seed that cannot be loaded at all is itself the only finding."""
    try:
        _, records = _seeded(model, seed_dir)
    except MynaError as error:
        return [Finding("seeding", str(error))]
    subject = Subject(model, seed_dir, records)
    return [finding for check in CHECKS.values() for finding in check(subject)]


def assert_backend_ok(model: ServiceModel, *, seed_dir: Path | None = None) -> None:
    """Raise `BackendCheckError` listing every finding, if there is any."""
    findings = check_backend(model, seed_dir=seed_dir)
    if findings:
        raise BackendCheckError(model.name, findings)
