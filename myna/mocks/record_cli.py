"""`myna record`: record a service through a reverse proxy, or an MCP server through its stdio.

Both write canonical trace JSONL as the traffic happens (see `myna.traces.recorder`), filtered,
redacted and pseudonymised as `myna traces import` would; Ctrl-C leaves a complete file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from myna.errors import InputError
from myna.traces.cli import Methods, Output, PathPrefixes, Pseudonymise, Statuses

if TYPE_CHECKING:
    from myna.traces.options import ReadOptions


def register(app: typer.Typer) -> None:
    app.command(
        "record",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(record)


def record(
    context: typer.Context,
    output: Output,
    upstream: Annotated[
        str | None,
        typer.Option(help="The real service to forward to: https://instance.example.com"),
    ] = None,
    mcp: Annotated[
        bool,
        typer.Option(
            "--mcp", help="Wrap the stdio MCP server given after `--` (COMMAND ARGS) instead."
        ),
    ] = False,
    host: Annotated[str, typer.Option(help="Address the proxy listens on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port the proxy listens on.")] = 8080,
    tls: Annotated[
        bool, typer.Option(help="Serve HTTPS to clients with a self-signed certificate.")
    ] = False,
    ca_out: Annotated[
        Path | None, typer.Option(help="With --tls: write the CA certificate (PEM) here.")
    ] = None,
    upstream_ca: Annotated[
        Path | None,
        typer.Option(help="Trust this CA (PEM) for the upstream instead of the system's store."),
    ] = None,
    path_prefix: PathPrefixes = [],  # noqa: B006  (Typer reads the default; it is never mutated)
    method: Methods = [],  # noqa: B006
    status: Statuses = [],  # noqa: B006
    pseudonymise: Pseudonymise = None,
) -> None:
    """Record a service through a reverse proxy (or an MCP server's stdio) as canonical JSONL."""
    from myna.traces.cli import read_options

    options = read_options(False, [], path_prefix, method, status, None, None, pseudonymise)
    if mcp:
        if upstream is not None or not context.args:
            raise InputError(
                "--mcp wraps a server command: myna record --mcp -o out.jsonl -- COMMAND ARGS",
                field="--mcp",
            )
        from myna.mocks.record_mcp import record_mcp

        raise typer.Exit(record_mcp(context.args, output, options))
    if upstream is None or context.args:
        raise InputError(
            "give --upstream URL (a reverse proxy) or --mcp -- COMMAND ARGS (an MCP server)",
            field="--upstream",
        )
    if ca_out is not None and not tls:
        raise InputError("--ca-out needs --tls", field="--ca-out")
    _run_proxy(
        upstream,
        output,
        options,
        listen=(host, port),
        tls=tls,
        ca_out=ca_out,
        upstream_ca=upstream_ca,
    )


def _run_proxy(
    upstream: str,
    output: Path,
    options: ReadOptions,
    *,
    listen: tuple[str, int],
    tls: bool,
    ca_out: Path | None,
    upstream_ca: Path | None,
) -> None:
    import contextlib
    import tempfile

    import uvicorn
    from rich.console import Console

    from myna.mocks.record import RecordingProxy, upstream_base, upstream_tls
    from myna.mocks.serve import make_tls, uvicorn_config
    from myna.traces.model import Session
    from myna.traces.recorder import Recorder

    base = upstream_base(upstream)
    verify = upstream_tls(str(upstream_ca) if upstream_ca else None)
    console = Console(stderr=True)
    session = Session(id=output.stem, source=base, metadata={"format": "record", "upstream": base})
    host, port = listen
    with (
        tempfile.TemporaryDirectory(prefix="myna-tls-") as scratch,
        Recorder(output, session, options) as recorder,
    ):
        files = make_tls(Path(scratch), host) if tls else None
        if files is not None and ca_out is not None:
            ca_out.write_bytes(files.ca_pem)
        proxy = RecordingProxy(base, recorder, verify=verify)
        config = uvicorn_config(proxy, host=host, port=port, tls=files, lifespan="on")
        scheme = "https" if tls else "http"
        console.print(f"recording {base} at {scheme}://{host}:{port} into {output} (Ctrl-C stops)")
        # uvicorn re-raises the Ctrl-C it handled; stopping is how a recording ends.
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(config).run()
    report = recorder.report
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items()))
    console.print(
        f"recorded {report.events} exchange(s) into {output}"
        + (f"; left out: {skipped}" if skipped else "")
        + (f"; {proxy.unreachable} unanswered by the upstream" if proxy.unreachable else "")
    )
