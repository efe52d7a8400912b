"""`myna replay build|audit|run|ingest|export|serve`: failure logs to audited RL episodes."""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from myna.errors import InputError, ReplayError

if TYPE_CHECKING:
    from myna.replay.audit import Agent
    from myna.replay.build import BuildReport
    from myna.replay.episode import Episode
    from myna.replay.run import Result

replay = typer.Typer(help="Turn logged agent failures into audited, targeted RL episodes.")

EpisodesDir = Annotated[Path, typer.Argument(metavar="DIR", help="Directory of episode files.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
RayAddress = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="ADDRESS",
        help="Run on a Ray cluster (the 'ray' extra): its address, or auto (the running one, "
        "else a local one).",
    ),
]


def register(app: typer.Typer) -> None:
    app.add_typer(replay, name="replay")


def _print(rows: list[dict[str, Any]], title: str, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=title)
    for column in rows[0] if rows else ["(none)"]:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row.values()))
    Console().print(table)


def _load_all(directory: Path) -> list[tuple[Path, Episode]]:
    from myna.replay.episode import iter_episodes

    found = list(iter_episodes(directory))
    if not found:
        raise InputError("no episode files (*.json)", file=str(directory))
    return found


@replay.command("build")
def build_command(
    failures: Annotated[
        Path, typer.Argument(metavar="FAILURES", help="Failure logs (any trace format).")
    ],
    model_spec: Annotated[
        str,
        typer.Option("--model", help="Service model: an OpenAPI YAML file or a built-in back end."),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Directory to write episodes to.")],
    variants: Annotated[int, typer.Option(min=0, help="Targeted variants per episode.")] = 0,
    distractors: Annotated[
        int, typer.Option(min=0, help="Look-alike records added beside each target.")
    ] = 2,
    as_json: AsJson = False,
) -> None:
    """Build episodes (and variants) from the failure sessions in FAILURES."""
    with _output_folder(out):
        report = _build_episodes(failures, model_spec, out, variants, distractors)
    rows = [
        {
            "episode": e.id,
            "failure class": e.provenance.failure_class,
            "derived from": e.provenance.derived_from,
            "variant": e.provenance.variant or "",
        }
        for e in report.episodes
    ]
    rows += [
        {
            "episode": f"(skipped) {s.session_id}",
            "failure class": "",
            "derived from": s.reason,
            "variant": "",
        }
        for s in report.skipped
    ]
    _print(rows, f"{len(report.episodes)} episodes written to {out}", as_json)


def _build_episodes(
    failures: Path, model_spec: str, out: Path, variants: int, distractors: int
) -> BuildReport:
    from myna.replay.build import Builder, build
    from myna.replay.episode import ModelRef, save_episode
    from myna.replay.mock_world import MockWorlds, ToolboxTranslator, load_model
    from myna.traces import read
    from myna.traces.cli import with_progress

    model_path = Path(model_spec)
    # A file wins; otherwise the name of a built-in back end (`itsm`).
    ref = (
        ModelRef(path=os.path.relpath(model_path.resolve(), out.resolve()))
        if model_path.exists()
        else ModelRef(name=model_spec)
    )
    model = load_model(ref, base=out)
    builder = Builder(
        model=model,
        factory=MockWorlds(model),
        model_ref=ref,
        tools=tuple(ToolboxTranslator(model).names()),
        translate=ToolboxTranslator(model),
        source_file=str(failures),
        distractors=distractors,
    )
    report = build(with_progress(read(failures), [failures]), builder, variants=variants)
    try:
        for episode in report.episodes:
            save_episode(episode, out)
    except OSError as failed:
        raise InputError(f"cannot write episodes: {failed.strerror}", file=str(out)) from None
    return report


@contextmanager
def _output_folder(out: Path) -> Iterator[None]:
    """`out`, made if missing (never its parents), and removed again if what was to fill it
    failed or wrote nothing."""
    if not out.parent.is_dir():
        raise InputError(f"the folder {out.parent} does not exist", file=str(out))
    made = not out.exists()
    try:
        out.mkdir(exist_ok=True)
    except OSError as failed:
        raise InputError(f"cannot make the folder: {failed.strerror}", file=str(out)) from None
    try:
        yield
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise
    if made and not any(out.iterdir()):
        out.rmdir()


@replay.command("audit")
def audit_command(
    directory: EpisodesDir,
    k: Annotated[int, typer.Option(min=1, help="Tries per solver and agent.")] = 5,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            help="Agent to rate difficulty: module:factory, run in a child process. Repeatable."
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Audit every episode in DIR and write the scores and verdict into each file."""
    from rich.progress import track

    from myna.replay.audit import audit, record_audit
    from myna.replay.episode import save_episode
    from myna.replay.mock_world import Replayers

    replayers = Replayers(directory)
    agents = [_load_agent(spec) for spec in agent or []]
    rows = []
    episodes = _load_all(directory)
    for _, episode in track(
        episodes, description="auditing", console=Console(stderr=True), transient=True
    ):
        report = audit(
            replayers.runner(episode),
            replayers.model(episode.environment.model),
            agents=agents,
            k=k,
        )
        save_episode(record_audit(episode, report), directory)
        rows.append(
            {
                "episode": episode.id,
                "status": report.status,
                "correctness": f"{report.correctness:.2f}",
                "difficulty": "" if report.difficulty is None else f"{report.difficulty:.2f}",
                "reasons": "; ".join(report.reasons),
            }
        )
    _print(rows, f"audit of {directory}", as_json)


def _load_agent(spec: str) -> Agent:
    """The agent `module:factory` names, built in a child process (`myna.replay.isolation`), so
    it reaches the service and nothing of the episode that scores it."""
    from myna.replay.isolation import IsolatedAgent

    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InputError("expected module:factory", field="--agent", value=spec)
    try:
        return IsolatedAgent(spec)
    except ReplayError as refused:
        raise InputError(refused.message, field="--agent", value=spec) from None


@replay.command("run")
def run_command(
    directory: EpisodesDir,
    episode_id: Annotated[str | None, typer.Option("--episode", help="Run only this one.")] = None,
    agent: Annotated[
        str | None,
        typer.Option(help="Agent module:factory; default: the reference solution."),
    ] = None,
    k: Annotated[int, typer.Option(min=1, help="Tries per episode.")] = 1,
    ray: RayAddress = None,
    workers: Annotated[
        int, typer.Option("--workers", min=1, help="Ray actors (with --ray), one CPU each.")
    ] = 1,
    as_json: AsJson = False,
) -> None:
    """Run episodes in fresh worlds and print the reward with its per-check breakdown."""
    from myna.replay.distributed import tries
    from myna.replay.mock_world import Replayers

    if ray is None and workers > 1:
        raise InputError("more than one worker runs on Ray: add --ray", field="--workers")
    episodes = [e for _, e in _load_all(directory) if episode_id in (None, e.id)]
    if episode_id is not None and not episodes:
        raise ReplayError(f"no episode {episode_id!r}", file=str(directory))
    if ray is None:
        chosen = _load_agent(agent) if agent else None
        replayers = Replayers(directory)
        results = [tries(replayers.runner(episode), chosen, k) for episode in episodes]
    else:
        results = _run_on_ray(ray, workers, directory, episodes, agent, k)
    rows = []
    for episode, runs in zip(episodes, results, strict=True):
        for attempt, result in enumerate(runs):
            failed = [c.name for c in result.verification.checks if not c.passed]
            rows.append(
                {
                    "episode": episode.id,
                    "try": str(attempt + 1),
                    "reward": f"{result.reward:.2f}",
                    "passed": str(result.passed),
                    "failed checks": ", ".join(failed),
                    "repercussion": "" if result.repercussion is None else result.repercussion.kind,
                }
            )
    _print(rows, "runs", as_json)


def _run_on_ray(
    address: str,
    workers: int,
    directory: Path,
    episodes: list[Episode],
    agent: str | None,
    k: int,
) -> list[list[Result]]:
    """Every try of every episode on a pool of Ray actors, in the episodes' order."""
    from myna.replay.distributed import EpisodeTries, RayPool
    from myna.replay.mock_world import load_model

    refs = {(e.environment.model.path, e.environment.model.name): e for e in episodes}
    models = tuple(
        (e.environment.model, load_model(e.environment.model, base=directory))
        for e in refs.values()
    )
    with RayPool(address, actors=workers) as pool:
        return pool.map(EpisodeTries(models, agent, k, base=directory), episodes)


@replay.command("ingest")
def ingest_command(
    rollouts: Annotated[Path, typer.Argument(metavar="ROLLOUTS", help="Rollouts (JSONL).")],
    directory: Annotated[Path, typer.Option("--episodes", help="Directory of episode files.")],
    as_json: AsJson = False,
) -> None:
    """Fold rollouts into the episodes' statistics and flag broken, too easy or disputed ones."""
    from pydantic import ValidationError

    from myna.replay.audit import Rollout, ingest
    from myna.replay.episode import save_episode

    by_episode: dict[str, list[Rollout]] = defaultdict(list)
    with rollouts.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rollout = Rollout.model_validate_json(line)
            except ValidationError as invalid:
                first = invalid.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                raise InputError(
                    first["msg"], file=str(rollouts), line=number, field=where
                ) from None
            by_episode[rollout.episode_id].append(rollout)
    episodes = _load_all(directory)
    unknown = sorted(set(by_episode) - {episode.id for _, episode in episodes})
    if unknown:
        # Checked before any file is written, so a typo leaves every episode as it was.
        raise InputError(
            f"rollouts name unknown episodes: {', '.join(unknown)}", file=str(rollouts)
        )
    rows = []
    for _, episode in episodes:
        if episode.id not in by_episode:
            continue
        updated = ingest(episode, by_episode[episode.id])
        save_episode(updated, directory)
        rows.append(
            {
                "episode": episode.id,
                "tries": str(sum(s.tries for s in updated.scores.rollouts.values())),
                "difficulty": f"{updated.scores.difficulty:.2f}"
                if updated.scores.difficulty is not None
                else "",
                "flags": "; ".join(updated.scores.flags),
            }
        )
    _print(rows, f"ingested {rollouts}", as_json)


@replay.command("export")
def export_command(
    directory: EpisodesDir,
    out: Annotated[Path, typer.Option("-o", "--out", help="JSONL file to write.")],
    include_all: Annotated[
        bool, typer.Option("--all", help="Include unaudited and rejected episodes.")
    ] = False,
) -> None:
    """Write the accepted episodes as a JSONL dataset (prompt, tools, episode id, metadata)."""
    from myna.replay.export import export
    from myna.replay.mock_world import Replayers

    replayers = Replayers(directory)
    chosen = [e for _, e in _load_all(directory) if include_all or e.scores.status == "accepted"]
    models = {e.id: replayers.model(e.environment.model) for e in chosen}
    written = export(chosen, models, out)
    Console(stderr=True).print(f"{written} episodes written to {out}")


@replay.command("serve")
def serve_command(
    directory: EpisodesDir,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8100,
    db: Annotated[
        str,
        typer.Option(help="SQLAlchemy URL of the worlds' store (default: SQLite in memory)."),
    ] = "sqlite://",
    token_file: Annotated[
        Path | None,
        typer.Option(
            help="File holding the token /episodes and reset need (or set MYNA_EPISODE_TOKEN; "
            "default: random, printed). At least 16 characters."
        ),
    ] = None,
) -> None:
    """Serve the episodes in DIR: reset, call the mock, submit, get the reward."""
    import uvicorn

    from myna.mocks.auth import secret_token
    from myna.replay.mock_world import Replayers
    from myna.replay.server import create_app

    token = secret_token(token_file, "MYNA_EPISODE_TOKEN", option="--token-file")
    episodes = [episode for _, episode in _load_all(directory)]
    app = create_app(episodes, Replayers(directory, store_url=db), token=token)
    console = Console(stderr=True)
    console.print(f"serving {len(episodes)} episodes on http://{host}:{port}")
    if token_file is None and "MYNA_EPISODE_TOKEN" not in os.environ:
        console.print(f"token for /episodes and reset: {token}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
