"""`myna bench itsm`: run ITSMBench end to end and write results JSON and an HTML report."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from myna.replay.cli import RayAddress

if TYPE_CHECKING:
    from myna.replay.distributed import RayPool


def register(app: typer.Typer) -> None:
    bench = typer.Typer(help="Benchmarks built on Myna's back ends.", no_args_is_help=True)
    bench.command("itsm")(bench_itsm)
    app.add_typer(bench, name="bench")


def bench_itsm(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data", help="ITSM export or event log (default: the shipped synthetic log)."
        ),
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            "--agent", help="oracle, noop, random, heuristic, rules, openai, or module:Class."
        ),
    ] = "heuristic",
    trials: Annotated[
        int, typer.Option("--trials", min=1, help="Trials per scenario (k for pass^k).")
    ] = 1,
    workers: Annotated[
        int,
        typer.Option("--workers", min=1, help="Scenarios run in parallel: threads, or Ray actors."),
    ] = 1,
    ray: RayAddress = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed for scenario choice, realistic names and agents.")
    ] = 0,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many scenarios.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="Directory for the results.")] = Path(
        "itsmbench-out"
    ),
    episodes: Annotated[
        bool,
        typer.Option("--episodes", help="Also write every scenario as an episode file (+ audit)."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the results JSON, not a table.")
    ] = False,
) -> None:
    """Import the data, generate and audit scenarios, run the agent, and report."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from myna.itsm import bench, report
    from myna.itsm.agents import AgentContext, make_agent

    make_agent(agent, AgentContext())  # a bad --agent fails before any import or audit
    console = Console(stderr=as_json)
    with _pool(ray, workers) as pool, Progress(console=console, transient=True) as progress:
        auditing = progress.add_task("auditing scenarios", total=None)
        prepared = bench.prepare(
            data,
            seed=seed,
            limit=limit,
            workers=workers,
            progress=lambda done, total: progress.update(auditing, completed=done, total=total),
            pool=pool,
        )
        accepted = prepared.accepted
        running = progress.add_task(f"running {agent}", total=len(accepted))
        trials_run = bench.run(
            prepared,
            agent,
            trials=trials,
            workers=workers,
            seed=seed,
            progress=lambda done, total: progress.update(running, completed=done, total=total),
            pool=pool,
        )
    result = bench.result(
        prepared,
        agent,
        trials_run,
        per_scenario=trials,
        seed=seed,
    )
    data_path, page = report.write(result, out)
    if episodes:
        bench.save_episodes(prepared, out / "episodes")
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    table = Table(title=f"ITSMBench: {agent}")
    columns = ["scope", "scenarios", "pass^1", f"pass^{trials}", "reward", "tool calls", "tokens"]
    for column in columns:
        table.add_column(column, justify="left" if column == "scope" else "right")
    rows = [("all", result.overall), *result.by_kind.items()]
    rows += [(f"tier {tier}", s) for tier, s in result.by_tier.items()]
    for scope, score in rows:
        table.add_row(
            scope,
            str(score.scenarios),
            report.percent(score.pass_hat.get(1)),
            report.percent(score.pass_hat.get(trials)),
            f"{score.reward:.3f}",
            f"{score.tool_calls:.2f}",
            "-" if score.tokens is None else str(score.tokens),
        )
    console.print(table)
    kept, made = result.survival
    console.print(f"{kept} of {made} generated scenarios survived the audit")
    console.print(f"wrote {data_path} and {page}")


def _pool(address: str | None, actors: int) -> AbstractContextManager[RayPool | None]:
    """One Ray pool for the audit and the run (its actors start once), or none."""
    if address is None:
        return nullcontext()
    from myna.replay.distributed import RayPool

    return RayPool(address, actors=actors)
