"""The `myna` command: one Typer app, with each stage registering its own subcommands.

This module sits above the pipeline, so it may import every stage's `cli` module. Stage CLIs keep
heavy imports inside their commands so that `myna --help` stays fast.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from myna import __version__
from myna.errors import MynaError

app = typer.Typer(
    name="myna",
    help="Learn SaaS back ends from recorded traces and serve them as stateful mocks for agents.",
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


def _register_stages() -> None:
    stages = ("traces", "schemas", "mocks", "replay", "itsm")
    for module_name in (f"myna.{stage}.cli" for stage in stages):
        try:
            module = __import__(module_name, fromlist=["register"])
        except ModuleNotFoundError as missing:
            # A stage without a CLI yet is simply absent; a broken import inside one is not.
            if missing.name != module_name:
                raise
            continue
        module.register(app)


_register_stages()


def main() -> None:
    """Console-script entry point: user errors print one clear line and exit 2.

    Click runs in standalone mode, so `--help`, `--version`, usage errors (exit 2), `typer.Exit`
    codes and Ctrl-C keep their usual behaviour; only a `MynaError` escaping a command is caught
    here: stage CLIs raise those for bad input rather than print and exit themselves.
    """
    try:
        app(prog_name="myna")
    except MynaError as error:
        Console(stderr=True).print(f"[bold red]error:[/] {error}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_USER_ERROR)
