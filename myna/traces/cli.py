"""`myna traces import` and `myna traces stats`.

Heavy imports stay inside the command bodies so that `myna --help` does not pay for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.console import Console
    from rich.table import Table

    from myna.traces.model import Session
    from myna.traces.options import ReadOptions
    from myna.traces.reading import SessionStream
    from myna.traces.stats import TraceStats

FILES = typer.Argument(
    help="Trace files: HAR, VCR cassettes, nock recordings, OTLP JSON, canonical JSONL, agent "
    "transcripts, MCP logs."
)
FORMAT_HELP = (
    "Input format (har, vcr, nock, otlp, jsonl, openai-chat, openai-responses, anthropic, mcp); "
    "detected from each file's first bytes when left out."
)

Files = Annotated[list[Path], FILES]
Format = Annotated[str | None, typer.Option("--format", help=FORMAT_HELP)]
IncludeStatic = Annotated[
    bool, typer.Option("--include-static", help="Keep images, fonts, scripts and styles.")
]
Hosts = Annotated[list[str], typer.Option("--host", help="Keep exchanges with this host (repeat).")]
PathPrefixes = Annotated[
    list[str], typer.Option("--path-prefix", help="Keep exchanges whose path starts so (repeat).")
]
Methods = Annotated[list[str], typer.Option("--method", help="Keep this HTTP method (repeat).")]
Statuses = Annotated[
    list[str], typer.Option("--status", help="Keep statuses: 404, 4xx or 200-299 (repeat).")
]
Since = Annotated[
    str | None, typer.Option("--since", help="Keep events at or after this ISO time.")
]
Output = Annotated[Path, typer.Option("-o", "--output", help="Canonical JSONL to write.")]
Pseudonymise = Annotated[
    str | None,
    typer.Option(
        "--pseudonymise",
        metavar="KEY",
        envvar="MYNA_PSEUDONYMISE_KEY",
        help="Replace e-mails, phones and names by consistent fakes keyed by KEY.",
    ),
]
Until = Annotated[
    str | None, typer.Option("--until", help="Keep events at or before this ISO time.")
]


def register(app: typer.Typer) -> None:
    """Add the `traces` command group to the root app."""
    traces = typer.Typer(
        name="traces",
        help="Read recorded traffic and agent transcripts into canonical trace JSONL.",
        no_args_is_help=True,
    )
    traces.command("import")(import_traces)
    traces.command("stats")(trace_stats)
    app.add_typer(traces)


def import_traces(
    files: Files,
    output: Output,
    format: Format = None,
    pseudonymise: Pseudonymise = None,
    include_static: IncludeStatic = False,
    host: Hosts = [],  # noqa: B006  (Typer reads the default; it is never mutated)
    path_prefix: PathPrefixes = [],  # noqa: B006
    method: Methods = [],  # noqa: B006
    status: Statuses = [],  # noqa: B006
    since: Since = None,
    until: Until = None,
) -> None:
    """Import trace files into one canonical JSONL file (credentials are always redacted)."""
    import time

    from rich.console import Console

    from myna.traces.jsonl import write_jsonl
    from myna.traces.reading import read_many

    options = read_options(
        include_static, host, path_prefix, method, status, since, until, pseudonymise
    )
    stream = read_many(files, format=format, options=options)
    console = Console()
    started = time.perf_counter()
    written = write_jsonl(with_progress(stream, files), output)
    elapsed = time.perf_counter() - started
    _print_import_summary(console, stream, written.sessions, output, elapsed)


def trace_stats(
    files: Files,
    format: Format = None,
    include_static: IncludeStatic = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Count sessions, exchanges per host, method and status, tool calls per tool, time span."""
    import json

    from rich.console import Console

    from myna.traces.options import ReadOptions
    from myna.traces.reading import read_many
    from myna.traces.stats import collect, finish

    stream = read_many(files, format=format, options=ReadOptions(include_static=include_static))
    stats = finish(collect(stream if as_json else with_progress(stream, files)), stream.report)
    if as_json:
        typer.echo(json.dumps(stats.as_json(), indent=2))
    else:
        _print_stats(Console(), stats)


def read_options(
    include_static: bool,
    hosts: list[str],
    path_prefixes: list[str],
    methods: list[str],
    statuses: list[str],
    since: str | None,
    until: str | None,
    pseudonymise: str | None,
) -> ReadOptions:
    from myna.traces.filters import Filters
    from myna.traces.options import ReadOptions

    filters = Filters.build(
        hosts=hosts,
        path_prefixes=path_prefixes,
        methods=methods,
        statuses=statuses,
        since=since,
        until=until,
    )
    return ReadOptions(
        include_static=include_static, filters=filters, pseudonymise_key=pseudonymise or None
    )


def with_progress(stream: SessionStream, files: list[Path]) -> Iterator[Session]:
    """Pass sessions through while a progress bar on stderr follows the bytes read."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    total = sum(path.stat().st_size for path in files if path.is_file())
    columns = (
        TextColumn("[bold]reading"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("reading", total=total or None)
        for session in stream:
            progress.update(task, completed=stream.position)
            yield session
        progress.update(task, completed=total)


def _print_import_summary(
    console: Console, stream: SessionStream, sessions: int, output: Path, elapsed: float
) -> None:
    from rich.table import Table

    report = stream.report
    table = Table(title=f"Imported into {output}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("count", justify="right")
    table.add_row("files", str(report.files))
    table.add_row("sessions", str(sessions))
    table.add_row("events", str(report.events))
    for reason, count in sorted(report.skipped.items()):
        table.add_row(f"skipped ({reason.replace('_', ' ')})", str(count))
    if report.queries_without_question_mark:
        table.add_row("queries written without ?", str(report.queries_without_question_mark))
    megabytes = stream.bytes_read / 1e6
    rate = megabytes / elapsed if elapsed > 0 else 0.0
    table.add_row("read", f"{megabytes:,.1f} MB in {elapsed:,.1f} s ({rate:,.1f} MB/s)")
    console.print(table)


def _print_stats(console: Console, stats: TraceStats) -> None:
    from rich.table import Table

    overview = Table(title="Traces", show_header=False, title_justify="left")
    overview.add_column("what", style="bold")
    overview.add_column("value", justify="right")
    for name, value in (
        ("files", stats.files),
        ("sessions", stats.sessions),
        ("exchanges", stats.exchanges),
        ("tool calls", stats.tool_calls),
        ("messages", stats.messages),
        ("queries written without ?", stats.queries_without_question_mark),
        ("first event", stats.first_event_at.isoformat() if stats.first_event_at else "-"),
        ("last event", stats.last_event_at.isoformat() if stats.last_event_at else "-"),
    ):
        overview.add_row(name, str(value))
    for reason, count in sorted(stats.skipped.items()):
        overview.add_row(f"skipped ({reason.replace('_', ' ')})", str(count))
    console.print(overview)
    data = stats.as_json()
    for title, key in (
        ("Exchanges per host", "exchanges_per_host"),
        ("Exchanges per method", "exchanges_per_method"),
        ("Exchanges per status", "exchanges_per_status"),
    ):
        if data[key]:
            console.print(_counts_table(title, data[key]))
    if stats.tools:
        table = Table(title="Tool calls per tool", title_justify="left")
        table.add_column("tool")
        table.add_column("calls", justify="right")
        table.add_column("errors", justify="right")
        for tool, count in data["tool_calls_per_tool"].items():
            table.add_row(tool, str(count), str(stats.tool_errors.get(tool, 0)))
        console.print(table)


def _counts_table(title: str, counts: dict[str, int]) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column(title.split()[-1])
    table.add_column("exchanges", justify="right")
    for name, count in counts.items():
        table.add_row(name, str(count))
    return table
