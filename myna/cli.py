"""The `myna` command: one Typer app whose stage commands load when they are used.

This module sits above the pipeline, so it may import every stage's `cli` module. It imports none
of them until a command runs: `COMMANDS` names each top-level command's module and the one-line
help that `myna --help` shows, so the root help costs Typer alone (tests check that the lines match
the commands' own help and that every command a stage registers is listed). Stage CLIs keep their
heavy imports inside the command bodies too, so that `myna traces --help` stays fast as well.
"""

from __future__ import annotations

import gc
import re
import sys
from functools import cache
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

from myna import __version__
from myna.errors import MynaError

COMMANDS: dict[str, tuple[str, str]] = {
    "traces": (
        "myna.traces.cli",
        "Read recorded traffic and agent transcripts into canonical trace JSONL.",
    ),
    "learn": (
        "myna.schemas.cli",
        "Learn a service model from traces and write it as OpenAPI 3.1 with x-myna extensions.",
    ),
    "model": ("myna.schemas.cli", "Inspect learned service models."),
    "serve": (
        "myna.mocks.cli",
        "Serve MODEL as a stateful mock API, with worlds, behaviour and an admin API.",
    ),
    "tools": (
        "myna.mocks.cli",
        "Print function-calling tool definitions, one per operation of the model.",
    ),
    "conformance": (
        "myna.mocks.cli",
        "Replay recorded requests against a world seeded from them; report what matches.",
    ),
    "record": (
        "myna.mocks.cli",
        "Record a service through a reverse proxy (or an MCP server's stdio) as canonical JSONL.",
    ),
    "replay": ("myna.replay.cli", "Turn logged agent failures into audited, targeted RL episodes."),
    "bench": ("myna.itsm.cli", "Benchmarks built on Myna's back ends."),
}
"""Top-level command -> (the stage `cli` module whose `register` adds it, its one-line help)."""


@cache
def stage_commands(module_name: str) -> TyperGroup:
    """Every command one stage's `register` adds, as a Click group (loaded once)."""
    stage = typer.Typer()
    import_module(module_name).register(stage)
    group = typer.main.get_group(stage)
    assert isinstance(group, TyperGroup)
    return group


class LazyStages(TyperGroup):
    """The root group: lists `COMMANDS` without importing them; loads a stage to run one.

    Its help is Click's plain text: Rich's help renderer alone costs more CPU than the rest of
    `myna --help` together (BENCHMARKS.md); every stage's own help stays Rich.
    """

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        return stage_commands(COMMANDS[cmd_name][0]).get_command(ctx, cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_line) for name, (_, help_line) in COMMANDS.items()])


app = typer.Typer(
    name="myna",
    help="Learn SaaS back ends from recorded traces and serve them as stateful mocks for agents.",
    cls=LazyStages,
    rich_markup_mode=None,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

EXIT_USER_ERROR = 2


def _version(value: bool) -> None:
    if value:
        typer.echo(f"myna {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Myna: traces -> schemas -> mocks -> replay -> itsm."""


def main() -> None:
    """Console-script entry point: user errors print one clear line and exit 2.

    Click runs in standalone mode, so `--help`, `--version`, usage errors (exit 2), `typer.Exit`
    codes and Ctrl-C keep their usual behaviour; only a `MynaError` escaping a command is caught
    here (stage CLIs raise those for bad input rather than print and exit themselves), and a
    missing optional dependency, which names the extra that installs it.
    """
    if sys.argv[1:2] == ["serve"]:
        # Off from the first import: the server's start-up (`myna.mocks.cli._StartUp`) turns
        # it on again once built; its passes over the imports' objects cost 0.1-0.4 s.
        gc.disable()
    try:
        app(prog_name="myna")
    except MynaError as error:
        _fail(str(error))
    except ModuleNotFoundError as missing:
        extra = extra_providing(missing.name or "")
        if extra is None:
            raise
        _fail(
            f"this command needs {missing.name}, which the {extra!r} extra installs: "
            f"pip install 'myna[{extra}]'"
        )


def extra_providing(module: str) -> str | None:
    """The first extra of Myna's own metadata that requires the distribution `module` is in."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        requirements = requires("myna") or []
    except PackageNotFoundError:
        return None
    wanted = _normalised(module.partition(".")[0])
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        if name and extra and _normalised(name.group()) == wanted:
            return extra.group(1)
    return None


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _fail(message: str) -> None:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True).print(
        f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(EXIT_USER_ERROR)
