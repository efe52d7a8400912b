"""Rollouts on a Ray cluster: a pool of actors, each holding in-process mocks for its episodes.

`RayPool(address, actors=N)` connects to a cluster (`auto`: the running one, else a local one it
starts) and starts N actors of one CPU each. `pool.map(setup, items)` cuts the items into chunks,
hands them to the actors as they free up (two in flight each, so an actor never waits for the
driver), and returns the results in the items' order. `setup` is a picklable callable without
arguments that each actor calls once per map to build its worker, so the worker's state (its
mocks, worlds and agent) is built where it runs and never crosses the wire: only the setup, the
items and the results do. Episodes need no shared database: each runs in a world of its own
actor's store, and a world's ids come from its base snapshot and its own counter, so a result
does not depend on which actor ran it.

An actor that dies (its process killed, its node lost) is replaced, and every chunk it held runs
again, up to `retries` times each; a worker's exception is raised in the driver as the worker
raised it (a `MynaError` stays one, so the CLI still exits 2 with its line).

Ray is the `ray` extra and is imported only when a pool starts.
"""

from __future__ import annotations

import logging
import math
import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from myna.errors import ReplayError

if TYPE_CHECKING:
    from myna.replay.audit import Agent
    from myna.replay.episode import Episode, ModelRef
    from myna.replay.run import EpisodeRunner, Result
    from myna.schemas.model import ServiceModel

T = TypeVar("T")
R = TypeVar("R")

Setup = Callable[[], Callable[[T], R]]
"""Builds, inside an actor, the function that turns one item into its result."""

Progress = Callable[[int, int], None]
"""Called in the driver as chunks finish with (items done so far, items in all)."""

IN_FLIGHT = 2
"""Chunks queued on an actor at once: the next is there when the last one's result leaves."""

CHUNKS_PER_ACTOR = 16
"""Chunks an actor gets on average: few enough that a call's overhead (~1 ms) is lost in the
work, many enough that the last chunk leaves an idle actor little to wait for."""


class Actor:
    """One Ray actor's side: the worker of the current map, built on its first chunk."""

    def __init__(self) -> None:
        self._map: int | None = None
        self._worker: Callable[[Any], Any] | None = None

    def run(self, key: int, setup: list[Any], items: list[Any]) -> list[Any]:
        # `setup` arrives as an object reference in a list, which Ray passes through unresolved,
        # so it is fetched and built once per map rather than with every chunk.
        if self._map != key or self._worker is None:
            import ray

            self._worker = ray.get(setup[0])()
            self._map = key
        worker = self._worker
        return [worker(item) for item in items]


@dataclass(slots=True)
class _Slot:
    """An actor of the pool, and how many times its place has been refilled."""

    handle: Any
    generation: int = 0


@dataclass(frozen=True, slots=True)
class _Sent:
    chunk: int
    slot: int
    generation: int


class RayPool:
    """N actors on a Ray cluster; `map` runs items on them and gathers results in order."""

    def __init__(self, address: str, *, actors: int = 1, retries: int = 3) -> None:
        import ray

        if actors < 1:
            raise ReplayError("a Ray pool needs at least one actor", field="--workers")
        self._ray = ray
        self._started = connect(address)
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        cpus = int(resources.get("CPU", 0))
        if actors > cpus:
            self.close()
            raise ReplayError(
                f"the Ray cluster at {address} has {cpus} CPUs; {actors} actors need one each",
                field="--workers",
            )
        self.retries = retries
        self.lost = 0
        """Actors that died and were replaced so far."""
        self._remote = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(Actor)
        self._slots = [_Slot(self._remote.remote()) for _ in range(actors)]
        self._maps = 0

    @property
    def actors(self) -> list[Any]:
        """The live actors' handles, in slot order."""
        return [slot.handle for slot in self._slots]

    def map(
        self,
        setup: Setup[T, R],
        items: Sequence[T],
        progress: Progress | None = None,
        *,
        retries: int | None = None,
    ) -> list[R]:
        """`setup()(item)` for every item, run on the actors, in the items' order; a chunk whose
        actor dies runs again up to `retries` times (default: the pool's)."""
        self._maps += 1
        size = max(1, math.ceil(len(items) / (len(self._slots) * CHUNKS_PER_ACTOR)))
        chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
        gathered: _Gathering[R] = _Gathering(
            self,
            [self._ray.put(setup)],
            chunks,
            progress,
            self.retries if retries is None else retries,
        )
        return [result for chunk in gathered.run() for result in chunk]

    def _replace(self, index: int, generation: int) -> None:
        """The actor in slot `index` died: start another in its place (once per death)."""
        slot = self._slots[index]
        if slot.generation != generation:
            return
        self._ray.kill(slot.handle, no_restart=True)
        slot.handle = self._remote.remote()
        slot.generation += 1
        self.lost += 1

    def close(self) -> None:
        for slot in getattr(self, "_slots", []):
            self._ray.kill(slot.handle, no_restart=True)
        self._slots = []
        if self._started:
            self._ray.shutdown()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class _Gathering(Generic[R]):
    """One map's bookkeeping: chunks waiting, chunks sent and to whom, results by chunk."""

    def __init__(
        self,
        pool: RayPool,
        setup: list[Any],
        chunks: list[list[Any]],
        progress: Progress | None,
        retries: int,
    ) -> None:
        self.pool = pool
        self.retries = retries
        self.setup = setup
        self.chunks = chunks
        self.progress = progress
        self.waiting = deque(range(len(chunks)))
        self.sent: dict[Any, _Sent] = {}
        self.tries = [0] * len(chunks)
        self.results: list[list[R] | None] = [None] * len(chunks)
        self.done = 0
        self.total = sum(len(chunk) for chunk in chunks)

    def run(self) -> list[list[R]]:
        ray = self.pool._ray
        while self.waiting or self.sent:
            self._send()
            (ready,), _ = ray.wait(list(self.sent), num_returns=1)
            self._receive(ready, self.sent.pop(ready))
        return [chunk for chunk in self.results if chunk is not None]

    def _send(self) -> None:
        busy = [0] * len(self.pool._slots)
        for sent in self.sent.values():
            busy[sent.slot] += 1
        for index, slot in enumerate(self.pool._slots):
            while busy[index] < IN_FLIGHT and self.waiting:
                chunk = self.waiting.popleft()
                ref = slot.handle.run.remote(self.pool._maps, self.setup, self.chunks[chunk])
                self.sent[ref] = _Sent(chunk, index, slot.generation)
                busy[index] += 1

    def _receive(self, ref: Any, sent: _Sent) -> None:
        from ray.exceptions import ObjectLostError, RayActorError, RayTaskError

        try:
            out: list[R] = self.pool._ray.get(ref)
        except RayTaskError as failed:
            cause = failed.cause
            raise (cause if isinstance(cause, Exception) else failed) from None
        except (RayActorError, ObjectLostError):
            self._lost(sent)
            return
        self.results[sent.chunk] = out
        self.done += len(out)
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _lost(self, sent: _Sent) -> None:
        self.pool._replace(sent.slot, sent.generation)
        self.tries[sent.chunk] += 1
        if self.tries[sent.chunk] > self.retries:
            raise ReplayError(
                f"{len(self.chunks[sent.chunk])} items lost their Ray actor "
                f"{self.tries[sent.chunk]} times; giving up",
                retries=self.retries,
            )
        self.waiting.appendleft(sent.chunk)


def connect(address: str) -> bool:
    """Connect this process to Ray; whether it started Ray itself (and so shuts it down).

    `auto` is Ray's default: the cluster in RAY_ADDRESS or the last one started on this machine,
    else a new local instance (Ray's own `auto` refuses to start one). Anything else (`local`,
    `host:port`, `ray://host:10001`) goes to Ray as it is. A process already connected (a test
    session, a notebook) keeps its connection.
    """
    import ray

    if ray.is_initialized():
        return False
    # A local instance started here would run its workers at niceness 15 (Ray's default), below
    # every other process on the machine: on a shared machine the rollouts, which are the work,
    # would wait for everything else (measured: 2 actors no faster than 1 at load 20). A cluster
    # started elsewhere keeps its own setting; so does a user's RAY_worker_niceness.
    os.environ.setdefault("RAY_worker_niceness", "0")
    ray.init(
        address=None if address == "auto" else address,
        include_dashboard=False,
        logging_level=logging.WARNING,
    )
    return True


@dataclass(frozen=True, slots=True)
class EpisodeTries:
    """`myna replay run`'s setup: every try of an episode, by its reference or by an agent.

    The models travel with it (loaded once in the driver), so an actor needs Myna installed but
    not the episode directory.
    """

    models: tuple[tuple[ModelRef, ServiceModel], ...]
    agent: str | None
    tries: int
    base: Path | None = None

    def __call__(self) -> Callable[[Episode], list[Result]]:
        from myna.replay.isolation import IsolatedAgent
        from myna.replay.mock_world import Replayers

        replayers = Replayers(self.base)
        for ref, model in self.models:
            replayers.add(ref, model)
        agent = None if self.agent is None else IsolatedAgent(self.agent)
        return lambda episode: tries(replayers.runner(episode), agent, self.tries)


def tries(runner: EpisodeRunner, agent: Agent | None, count: int) -> list[Result]:
    """`count` attempts of the runner's episode: the reference solution, or `agent` seeded with
    the attempt's number."""
    from myna.replay.audit import attempt_with
    from myna.replay.run import run_steps

    if agent is None:
        return [run_steps(runner, runner.episode.reference.steps) for _ in range(count)]
    return [attempt_with(runner, agent, attempt) for attempt in range(count)]
