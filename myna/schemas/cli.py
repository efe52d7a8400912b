"""`myna learn TRACES... -o MODEL.yaml` and `myna model show MODEL.yaml`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from myna.schemas.model import ServiceModel
    from myna.traces.model import Session


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
    model_app = typer.Typer(
        name="model", help="Inspect learned service models.", no_args_is_help=True
    )
    model_app.command("show")(show_command)
    app.add_typer(model_app)


def learn_command(
    traces: Annotated[
        list[Path],
        typer.Argument(metavar="TRACES...", help="Trace files (HAR, JSONL, transcripts)."),
    ],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Model file to write (OpenAPI YAML).")
    ],
    update: Annotated[
        Path | None,
        typer.Option("--update", help="Existing model to learn into; pinned facts are kept."),
    ] = None,
    service: Annotated[
        str | None,
        typer.Option("--service", help="Learn everything as one service with this name."),
    ] = None,
    trace_format: Annotated[
        str | None, typer.Option("--format", help="Trace format (default: detected per file).")
    ] = None,
    records: Annotated[
        bool,
        typer.Option(
            "--records/--no-records",
            help="Keep the records the traces showed in the model, for a served mock to start "
            "with (--no-records: generated records only).",
        ),
    ] = True,
    complete: Annotated[
        bool,
        typer.Option(
            "--complete/--no-complete",
            help="Complete each resource's operations (get, create, update, delete) by the "
            "service's own conventions, marked as inferred.",
        ),
    ] = True,
) -> None:
    """Learn a service model from traces and write it as OpenAPI 3.1 with x-myna extensions."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    from myna.schemas.learn import Options, learn
    from myna.schemas.openapi import load
    from myna.schemas.render import summary_table
    from myna.traces import read_many

    console = Console(stderr=True)
    existing = load(update) if update is not None else None
    stream = read_many(traces, format=trace_format)
    total = sum(path.stat().st_size for path in traces if path.is_file())
    sessions: list[Session] = []
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("reading traces", total=total or None)
        for session in stream:
            sessions.append(session)
            progress.update(task, completed=stream.position)
        progress.update(task, description="learning", completed=total)
        options = Options(records=records, complete=complete)
        models = learn(sessions, service=service, update=existing, options=options)
    written = _write(models, output)
    console.print(summary_table(models))
    console.print(f"learned from {stream.report.sessions} sessions in {len(traces)} file(s)")
    for model, path in zip(models, written, strict=True):
        console.print(
            f"wrote {path}: {len(model.resources)} resources, {len(model.operations)} operations",
            soft_wrap=True,
        )


def _write(models: list[ServiceModel], output: Path) -> list[Path]:
    """One model goes to OUTPUT; several go beside it as <OUTPUT stem>.<service>.yaml."""
    from myna.schemas.openapi import save

    if len(models) == 1:
        paths = [output]
    else:
        paths = [
            output.with_name(f"{output.stem}.{model.name}{output.suffix or '.yaml'}")
            for model in models
        ]
    for model, path in zip(models, paths, strict=True):
        save(model, path)
    return paths


def show_command(
    model_path: Annotated[Path, typer.Argument(metavar="MODEL", help="Model file (OpenAPI YAML).")],
) -> None:
    """Show resources, operations, state machines and the weakest inferences of a model."""
    from rich.console import Console

    from myna.schemas.openapi import load
    from myna.schemas.render import model_view

    Console().print(model_view(load(model_path)))
