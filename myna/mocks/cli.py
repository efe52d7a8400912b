"""`myna serve MODEL`: serve a service model as a stateful mock over HTTP or HTTPS.

The default world is seeded, in this order of precedence, from `--seed-dir` files; from a
built-in back end's shipped world (its first, or the one `--world` names: the ITSM back end's
demo-sized world, or the reference world, the consistent records its reference service leaves
after its corpus) unless `--generated` is given; from the records a learned model's traces showed,
topped up to `--records` per resource, unless `--generated` is given; else from `--records`
generated records per resource.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer

from myna.errors import MockError, ModelError
from myna.mocks.backend import named_backend, resolve_model
from myna.mocks.http_guard import REQUEST_TIMEOUT
from myna.schemas.values import spells_int

if TYPE_CHECKING:
    import uvicorn

    from myna.mocks.auth import Credentials
    from myna.mocks.backend import Backend
    from myna.mocks.runtime import Mock
    from myna.mocks.sqlstore import SqlStore
    from myna.schemas.model import ServiceModel

DEFAULT_RECORDS = 20
ADMIN_TOKEN_ENV = "MYNA_ADMIN_TOKEN"


def register(app: typer.Typer) -> None:
    from myna.mocks import record_cli
    from myna.mocks.tools import register_tools_command

    app.command("serve")(serve)
    register_tools_command(app)
    app.command("conformance")(conformance)
    record_cli.register(app)


def serve(
    model_spec: Annotated[
        str,
        typer.Argument(
            metavar="MODEL",
            help="Service model (OpenAPI YAML), or the name of a built-in back end "
            "(itsm, crm, erp).",
        ),
    ],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    db: Annotated[
        str,
        typer.Option(
            help="SQLAlchemy URL: sqlite:// (in memory), sqlite:///file.db, postgresql+psycopg://..."
        ),
    ] = "sqlite://",
    seed: Annotated[int, typer.Option(help="Seed for generated records and minted ids.")] = 0,
    records: Annotated[
        int | None,
        typer.Option(
            min=0,
            help=f"Records to generate per resource (0: none; default {DEFAULT_RECORDS}).",
            show_default=False,
        ),
    ] = None,
    records_of: Annotated[
        list[str] | None,
        typer.Option(
            help="RESOURCE=COUNT: generate COUNT records of RESOURCE instead of --records "
            "(repeat for more; a demo world of 50,000 incidents: incident=50000).",
        ),
    ] = None,
    seed_dir: Annotated[
        Path | None,
        typer.Option(help="Seed from files instead: one RESOURCE.jsonl or RESOURCE.csv each."),
    ] = None,
    generated: Annotated[
        bool,
        typer.Option(
            "--generated",
            help="Seed a built-in back end with generated records (--records) instead of its "
            "reference world.",
        ),
    ] = False,
    world: Annotated[
        str | None,
        typer.Option(
            help="A built-in back end's shipped world to serve (itsm: demo, the default, or "
            "reference, the world its corpus leaves).",
        ),
    ] = None,
    tls: Annotated[bool, typer.Option(help="Serve HTTPS with a self-signed certificate.")] = False,
    ca_out: Annotated[
        Path | None, typer.Option(help="With --tls: write the CA certificate (PEM) here.")
    ] = None,
    admin_token_file: Annotated[
        Path | None,
        typer.Option(
            help="File holding the token for /_myna/admin (or set MYNA_ADMIN_TOKEN; default: "
            "random). At least 16 characters; never given on the command line, "
            "where ps shows it."
        ),
    ] = None,
    open_worlds: Annotated[
        bool,
        typer.Option(
            "--open-worlds",
            help="Let the shared credentials (--credential) reach every world. By default they "
            "reach the default world only, and each other world its own credential (issued by "
            "the admin API when it creates the world).",
        ),
    ] = False,
    credential: Annotated[
        list[str] | None,
        typer.Option(
            help="Accepted credential: USER:PASSWORD (Basic, OAuth2) or TOKEN (Bearer, API key). "
            "Repeat for more. Default: myna:myna and myna-token."
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(help="Benchmark results and episodes for the console's results page."),
    ] = None,
    seed_cache: Annotated[
        Path | None,
        typer.Option(
            help="Keep generated seeds in this folder and reuse them at later starts (one "
            "SQLite file per model, seed and counts).",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            help="Server processes on the port, sharing worlds through --db (a SQLite file or "
            "PostgreSQL).",
        ),
    ] = 1,
    request_timeout: Annotated[
        float,
        typer.Option(
            min=0.1,
            help="Seconds a request may take to arrive whole (request line, headers and body); "
            "a connection that is slower, or silent, is closed.",
        ),
    ] = REQUEST_TIMEOUT,
) -> None:
    """Serve MODEL as a stateful mock API, with worlds, behaviour and an admin API."""
    # The collector stays off until the server is built (`_StartUp`), its imports included;
    # what start-up made lives as long as this process, so it is frozen.
    with _StartUp(freeze=True, resume=True) as start_up:
        import os
        import tempfile

        from rich.console import Console

        from myna.mocks.auth import DEFAULT_CREDENTIALS, Credentials, secret_token
        from myna.mocks.console.app import CONSOLE_PREFIX
        from myna.mocks.runtime import DEFAULT_WORLD
        from myna.mocks.serve import make_tls, serve_workers, server_for

        if ca_out is not None and not tls:
            raise MockError("--ca-out needs --tls", field="--ca-out")
        if workers > 1 and _private_database(db):
            raise MockError(
                "--workers share worlds through the database: give --db sqlite:///FILE.db or a "
                "postgresql+psycopg:// URL (an in-memory database is one process's own)",
                field="--workers",
            )
        token = secret_token(admin_token_file, ADMIN_TOKEN_ENV, option="--admin-token-file")

        def build_mock() -> Mock:
            return served_mock(
                model_spec,
                db=db,
                seed=seed,
                records=records,
                records_of=record_counts(records_of or []),
                seed_dir=seed_dir,
                generated=generated,
                world=world,
                credentials=Credentials.parse(credential) if credential else DEFAULT_CREDENTIALS,
                admin_token=token,
                open_worlds=open_worlds,
                seed_cache=seed_cache,
            )

        mock = build_mock()  # seeds the default world once, before any worker starts
        model = mock.model
        console = Console(stderr=True)
        with tempfile.TemporaryDirectory(prefix="myna-tls-") as scratch:
            files = make_tls(Path(scratch), host) if tls else None
            if files is not None and ca_out is not None:
                try:
                    ca_out.write_bytes(files.ca_pem)
                except OSError as failed:
                    message = f"cannot write the CA certificate: {failed.strerror}"
                    raise MockError(message, file=str(ca_out), field="--ca-out") from None
            base = f"{'https' if tls else 'http'}://{host}:{port}"
            console.print(f"[bold]{model.title or model.name}[/] at {base}")
            console.print(f"worlds: {base}/worlds/{{id}}/... (default world: {DEFAULT_WORLD})")
            if admin_token_file is None and ADMIN_TOKEN_ENV not in os.environ:
                console.print(f"admin API: {base}/_myna/admin/ with token {token}")
                console.print(f"console: {base}{CONSOLE_PREFIX}/#token={token}")
            else:
                console.print(f"admin API: {base}/_myna/admin/ with the token you gave")
                console.print(f"console: {base}{CONSOLE_PREFIX}/")
            if ca_out is not None:
                console.print(f"CA certificate: {ca_out}")

            def build_server(served: Mock) -> uvicorn.Server:
                return server_for(
                    served,
                    host=host,
                    port=port,
                    tls=files,
                    # A network database makes each request wait on I/O: keep the event loop free.
                    threadpool=not db.startswith("sqlite"),
                    log_level="info",
                    # Facts pinned in the console are written to a model file, never to a built-in.
                    model_file=Path(model_spec) if named_backend(model_spec) is None else None,
                    results=results,
                    request_timeout=request_timeout,
                )

            if workers == 1:
                server = build_server(mock)
                start_up.done()
                server.run()
                return
            console.print(f"{workers} workers share the worlds in {db}")
            mock.store.close()  # each worker opens its own connections after the fork
            start_up.done()
            status = serve_workers(
                lambda: build_server(build_mock()), workers=workers, host=host, port=port
            )
            raise typer.Exit(status)


def record_counts(specs: list[str]) -> dict[str, int]:
    """`--records-of` values (RESOURCE=COUNT) as counts by resource."""
    counts: dict[str, int] = {}
    for spec in specs:
        resource, equals, count = spec.partition("=")
        if not equals or not resource or not spells_int(count):
            raise MockError(
                f"{spec!r} is not RESOURCE=COUNT (incident=50000)", field="--records-of"
            )
        counts[resource] = int(count)
    return counts


def _private_database(db: str) -> bool:
    """Whether `db` is an in-memory SQLite database, which only the process opening it sees."""
    from sqlalchemy import make_url

    url = make_url(db)
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


_Params = ParamSpec("_Params")
_Built = TypeVar("_Built")


class _StartUp:
    """A start-up without the cyclic garbage collector, then one collection, at `done` or at
    the end of the block. A large model's mock allocates about a million objects that live
    as long as the server; the collector's repeated full passes over them while they are made
    cost a fifth of a warm start (0.25 s of CPU of 1.2 s in process, 0.4 s more over HTTP:
    BENCHMARKS.md). `freeze`: what survives is frozen (`gc.freeze`), so that later collections
    skip it too; only for a process that serves until it ends (frozen objects are never
    collected, even once unreachable). A collector the caller turned off is left alone, unless
    `resume`: `myna serve`, whose entry point turned it off before its first import."""

    def __init__(self, *, freeze: bool = False, resume: bool = False) -> None:
        self._freeze = freeze
        self._resume = resume
        self._paused = False

    def __enter__(self) -> _StartUp:
        self._paused = self._resume or gc.isenabled()
        gc.disable()
        return self

    def done(self) -> None:
        if self._paused:
            self._paused = False
            gc.collect()
            if self._freeze:
                gc.freeze()
            gc.enable()

    def __exit__(self, *exc: object) -> None:
        self.done()


def _collected_once(build: Callable[_Params, _Built]) -> Callable[_Params, _Built]:
    """`build` as a `_StartUp` (nothing frozen: a test or a script builds many mocks)."""

    @functools.wraps(build)
    def built(*args: _Params.args, **kwargs: _Params.kwargs) -> _Built:
        with _StartUp():
            return build(*args, **kwargs)

    return built


@_collected_once
def served_mock(
    model_spec: str,
    *,
    db: str = "sqlite://",
    seed: int = 0,
    records: int | None = None,
    records_of: Mapping[str, int] | None = None,
    seed_dir: Path | None = None,
    generated: bool = False,
    world: str | None = None,
    credentials: Credentials | None = None,
    admin_token: str | None = None,
    open_worlds: bool = False,
    seed_cache: Path | None = None,
) -> Mock:
    """The mock `myna serve` runs: MODEL (a file or a built-in back end) over the store at `db`,
    with its default world seeded (see the module docstring for where its records come from)."""
    from myna.mocks.extensions import extensions_for
    from myna.mocks.runtime import Mock
    from myna.mocks.sqlstore import SqlStore

    counted = records is not None or bool(records_of)
    if seed_dir is not None and (generated or counted):
        raise MockError(
            "--seed-dir seeds from files; --generated and --records are for generated records: "
            "give one or the other",
            field="--seed-dir",
        )
    model = resolve_model(model_spec)
    try:
        extensions_for(model)  # an extension's check refuses a model it cannot serve
    except ModelError as refused:
        raise ModelError(refused.message, file=model_spec, **refused.context) from refused
    backend = named_backend(model_spec)
    if world is not None and (backend is None or seed_dir is not None or generated):
        raise MockError(
            "--world names a built-in back end's shipped world: give it with a back end's name "
            "and without --seed-dir or --generated",
            field="--world",
        )
    if backend is not None and seed_dir is None and not generated and counted:
        with backend.shipped_world(world) as shipped:
            if shipped is not None:
                raise MockError(
                    f"--records counts generated records, and `myna serve {backend.name}` serves "
                    "its shipped world: add --generated to seed generated records instead",
                    field="--records",
                )
    store = SqlStore(model, db)
    _seed_default_world(
        model,
        store,
        backend=backend,
        world=world,
        seed=seed,
        records=records,
        records_of=records_of or {},
        seed_dir=seed_dir,
        generated=generated,
        seed_cache=seed_cache,
    )
    try:
        return Mock(
            model,
            store,
            credentials=credentials,
            admin_token=admin_token,
            seed=seed,
            open_worlds=open_worlds,
        )
    except ModelError as refused:
        store.close()
        raise ModelError(refused.message, file=model_spec, **refused.context) from None


def _seed_default_world(
    model: ServiceModel,
    store: SqlStore,
    *,
    backend: Backend | None,
    world: str | None,
    seed: int,
    records: int | None,
    records_of: Mapping[str, int],
    seed_dir: Path | None,
    generated: bool,
    seed_cache: Path | None,
) -> None:
    from myna.mocks.runtime import DEFAULT_WORLD
    from myna.mocks.seed import has_recorded, seed_from_files, seed_recorded
    from myna.mocks.seed import seed as seed_store
    from myna.mocks.seed_cache import cached_seed
    from myna.mocks.store import NotFoundError

    try:
        store.world(DEFAULT_WORLD)
        return  # a shared database that another process already seeded
    except NotFoundError:
        pass
    with ExitStack() as stack:
        files = seed_dir
        if files is None and backend is not None and not generated:
            files = stack.enter_context(backend.shipped_world(world))
        base = DEFAULT_RECORDS if records is None else records
        count = {**dict.fromkeys(model.resources, base), **records_of} if records_of else base
        total = count if isinstance(count, int) else sum(count.values())
        snapshot: str | None = None
        if files is not None:
            # A back end's shipped world is checked against its model by the back end's tests.
            snapshot = seed_from_files(model, store, files, checked=seed_dir is not None)
        elif has_recorded(model) and not generated:
            snapshot = seed_recorded(model, store, seed=seed, top_up=records or 0)
        elif total > 0 and seed_cache is not None:
            snapshot = cached_seed(model, store, seed=seed, records=count, directory=seed_cache)
        elif total > 0:
            snapshot = seed_store(model, store, seed=seed, records=count)
    store.create_world(DEFAULT_WORLD, from_snapshot=snapshot, exist_ok=True)


def conformance(
    model_spec: Annotated[
        str, typer.Argument(metavar="MODEL", help="Service model file, or a built-in back end.")
    ],
    traces: Annotated[list[Path], typer.Argument(metavar="TRACES...", help="Recorded traces.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    db: Annotated[str, typer.Option(help="SQLAlchemy URL of the store to replay in.")] = (
        "sqlite://"
    ),
    any_host: Annotated[
        bool, typer.Option("--any-host", help="Compare recordings of any host, by path.")
    ] = False,
    one_world: Annotated[
        bool,
        typer.Option(
            "--one-world",
            help="Replay every session in order in one world (sessions recorded one after "
            "another against one instance).",
        ),
    ] = False,
    seed_dir: Annotated[
        Path | None,
        typer.Option(
            help="Seed files (RESOURCE.jsonl or RESOURCE.csv, as serve --seed-dir reads them) "
            "loaded beside the recorded records: what the instance held before the recordings."
        ),
    ] = None,
    user: Annotated[
        str, typer.Option(help="The user the replayed requests sign in as.")
    ] = "conformance",
) -> None:
    """Replay recorded requests against a world seeded from them; report what matches."""
    from myna.mocks.conformance import conformance_command

    model = resolve_model(model_spec)
    status = conformance_command(
        model,
        traces,
        json_output=json_output,
        db=db,
        any_host=any_host,
        one_world=one_world,
        seed_dir=seed_dir,
        user=user,
    )
    raise typer.Exit(status)
