"""`myna serve MODEL`: serve a service model as a stateful mock over HTTP or HTTPS."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from myna.errors import MockError
from myna.mocks.backends import resolve_model

if TYPE_CHECKING:
    from myna.mocks.sqlstore import SqlStore
    from myna.schemas.model import ServiceModel


def register(app: typer.Typer) -> None:
    from myna.mocks.tools import register_tools_command

    app.command("serve")(serve)
    register_tools_command(app)
    app.command("conformance")(conformance)


def serve(
    model_spec: Annotated[
        str,
        typer.Argument(
            metavar="MODEL",
            help="Service model (OpenAPI YAML), or the name of a built-in back end (itsm, crm).",
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
        int, typer.Option(min=0, help="Records to generate per resource (0: none).")
    ] = 20,
    seed_dir: Annotated[
        Path | None,
        typer.Option(help="Seed from files instead: one RESOURCE.jsonl or RESOURCE.csv each."),
    ] = None,
    tls: Annotated[bool, typer.Option(help="Serve HTTPS with a self-signed certificate.")] = False,
    ca_out: Annotated[
        Path | None, typer.Option(help="With --tls: write the CA certificate (PEM) here.")
    ] = None,
    admin_token: Annotated[
        str | None,
        typer.Option(envvar="MYNA_ADMIN_TOKEN", help="Token for /_myna/admin (default: random)."),
    ] = None,
    credential: Annotated[
        list[str] | None,
        typer.Option(
            help="Accepted credential: USER:PASSWORD (Basic, OAuth2) or TOKEN (Bearer, API key). "
            "Repeat for more. Default: myna:myna and myna-token."
        ),
    ] = None,
) -> None:
    """Serve MODEL as a stateful mock API, with worlds, behaviour and an admin API."""
    import tempfile

    from myna.mocks.auth import DEFAULT_CREDENTIALS, Credentials
    from myna.mocks.runtime import DEFAULT_WORLD, Mock
    from myna.mocks.serve import make_tls, server_for
    from myna.mocks.sqlstore import SqlStore

    if ca_out is not None and not tls:
        raise MockError("--ca-out needs --tls", field="--ca-out")
    model = resolve_model(model_spec)
    store = SqlStore(model, db)
    _seed_default_world(model, store, seed=seed, records=records, seed_dir=seed_dir)
    credentials = Credentials.parse(credential) if credential else DEFAULT_CREDENTIALS
    token = admin_token or secrets.token_urlsafe(24)
    mock = Mock(model, store, credentials=credentials, admin_token=token, seed=seed)
    console = Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="myna-tls-") as scratch:
        files = make_tls(Path(scratch), host) if tls else None
        if files is not None and ca_out is not None:
            ca_out.write_bytes(files.ca_pem)
        base = f"{'https' if tls else 'http'}://{host}:{port}"
        console.print(f"[bold]{model.title or model.name}[/] at {base}")
        console.print(f"worlds: {base}/worlds/{{id}}/... (default world: {DEFAULT_WORLD})")
        console.print(f"admin API: {base}/_myna/admin/ with token {token}")
        if ca_out is not None:
            console.print(f"CA certificate: {ca_out}")
        # A network database makes each request wait on I/O: keep the event loop free.
        threadpool = not db.startswith("sqlite")
        server = server_for(
            mock, host=host, port=port, tls=files, threadpool=threadpool, log_level="info"
        )
        server.run()


def _seed_default_world(
    model: ServiceModel, store: SqlStore, *, seed: int, records: int, seed_dir: Path | None
) -> None:
    from myna.mocks.runtime import DEFAULT_WORLD
    from myna.mocks.seed import seed as seed_store
    from myna.mocks.seed import seed_from_files

    if any(info.id == DEFAULT_WORLD for info in store.worlds()):
        return  # a shared database that another process already seeded
    snapshot: str | None = None
    if seed_dir is not None:
        snapshot = seed_from_files(model, store, seed_dir)
    elif records > 0:
        snapshot = seed_store(model, store, seed=seed, records=records)
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
