"""The HTTP episode server (`myna replay serve`): agents reset an episode, call the mock directly,
submit, and get the reward.

- `GET /episodes`: the episodes offered (id, instruction, tool names);
- `POST /episodes/{id}/reset`: a fresh world for one attempt: `attempt_id`, the mock's
  `base_url` for that world (`/attempts/{attempt_id}/mock`), the service credentials, the
  instruction and the tool definitions (OpenAI function format);
- any method on `/attempts/{attempt_id}/mock/...`: the mock, in that attempt's world only;
- `POST /attempts/{attempt_id}/submit` with `{"answer": ...}`: the reward, whether it passed,
  and the per-check breakdown (names, weights, pass or fail);
- `DELETE /attempts/{attempt_id}`: abandon an attempt.

`/episodes` and reset need the server's own token (`Authorization: Bearer <token>`): who may
start attempts is the operator's choice, not anyone's who can reach the port. An attempt's own
endpoints need only its id.

Attempts are kept apart because agents try to hack what they run in and may share a server. The
attempt id is 128 random bits and the only capability: its prefix reaches its own world and
nothing else. The agent never learns a world's name (they are unguessable too), cannot name one
(`/worlds/...` paths and the `_myna` admin prefix answer 404 like an attempt that does not exist,
and its `X-Myna-World` header is replaced by the attempt's), and a closed attempt's prefix answers
the same 404. The service credentials are the same for every attempt on purpose: they are part of
the service's shape (real clients send them), and without an open attempt's id they reach
nothing, so a per-attempt credential would be handed out beside the id and add no secret.

The verifier and the reference solution never travel over this API, and the breakdown carries
no check details (they could quote expected values). Calls go straight to the mock, so a
forbidden call cannot be stopped before it lands: the policy is applied at submit, from the
calls the server forwarded (refused attempts to leave the world included), and the world is
discarded either way. An attempt's calls and its submit take turns, so no call lands between
the server reading the call list and reading the world.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

import orjson
from fastapi import Depends, FastAPI, Header, HTTPException, Request, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from myna.mocks import Mock
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.runtime import WORLD_HEADER
from myna.mocks.tools import Toolbox
from myna.replay.episode import Episode
from myna.replay.mock_world import SERVICE_TOKEN, SERVICE_USER, MockWorld, Replayers
from myna.replay.run import EpisodeRunner, Repercussion, Result
from myna.replay.verify import CallRecord, forbidden_reason

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
# First path segments the mock reads as "another world" or "the admin API": never forwarded.
_OUTSIDE_THE_WORLD = frozenset({"worlds", "_myna"})


class Submission(BaseModel):
    answer: str | None = None


@dataclass(slots=True)
class _Attempt:
    runner: EpisodeRunner
    world: MockWorld
    mock: Mock
    base_url: str
    calls: list[CallRecord] = field(default_factory=list)
    closed: bool = False
    # Held by each call while the mock answers it and by the submit or abandon that closes
    # the attempt, so scoring sees every call that changed the world.
    turn: threading.Lock = field(default_factory=threading.Lock)

    def call(self, request: MockRequest) -> MockResponse | None:
        """The mock's answer in this attempt's world; None (a 404) once the attempt is closed or
        when the path leaves the world, which is still recorded for the policy to see."""
        with self.turn:
            if self.closed:
                return None
            first = request.path.lstrip("/").partition("/")[0]
            if first in _OUTSIDE_THE_WORLD:
                self.calls += self._records(request, 404)
                return None
            response = self.mock.handle(request)
            self.calls += self._records(request, response.status)
            return response

    def _records(self, request: MockRequest, status: int) -> list[CallRecord]:
        """The call and the requests nested in it, as the policy will judge them at submit."""
        try:
            body = orjson.loads(request.body) if request.body else None
        except orjson.JSONDecodeError:
            body = None
        outer, *nested = self.runner.routes.expand(
            request.method, request.path, dict(request.query), body
        )
        return [replace(outer, status=status), *nested]

    def submit(self, answer: str | None) -> Result:
        with self.turn:
            self.closed = True
            try:
                return score_http_attempt(self.runner, self.world, self.calls, answer)
            finally:
                self.world.close()

    def abandon(self) -> None:
        with self.turn:
            self.closed = True
            self.world.close()


def _bearer(token: str) -> Callable[[str | None], None]:
    expected = f"Bearer {token}".encode()

    def check(authorization: Annotated[str | None, Header()] = None) -> None:
        if authorization is None or not hmac.compare_digest(authorization.encode(), expected):
            raise HTTPException(
                401,
                "this endpoint needs the episode server's token",
                {"WWW-Authenticate": "Bearer"},
            )

    return check


def score_http_attempt(
    runner: EpisodeRunner, world: MockWorld, calls: Sequence[CallRecord], answer: str | None
) -> Result:
    """Verify an attempt whose calls went straight to the mock (as the server forwarded them)."""
    outcome = runner.outcome(world, calls, answer)
    verification = runner.verify(outcome)
    for call in calls:
        for policy in runner.policies:
            reason = forbidden_reason(policy, call)
            if reason is not None:
                return Result(0.0, False, verification, Repercussion("forbidden_call", reason))
    return Result(verification.reward, verification.passed, verification)


def _public(result: Result) -> dict[str, Any]:
    return {
        "reward": result.reward,
        "passed": result.passed,
        "checks": [
            {"name": c.name, "passed": c.passed, "weight": c.weight}
            for c in result.verification.checks
        ],
        "repercussion": None if result.repercussion is None else result.repercussion.as_dict(),
    }


def create_app(episodes: Sequence[Episode], replayers: Replayers, *, token: str) -> FastAPI:
    """The episode server; `token` guards `/episodes` and reset."""
    app = FastAPI(title="Myna episode server", docs_url=None, redoc_url=None)
    operator = [Depends(_bearer(token))]
    by_id = {episode.id: episode for episode in episodes}
    runners: dict[str, EpisodeRunner] = {}
    attempts: dict[str, _Attempt] = {}
    lock = threading.Lock()

    def runner_of(episode_id: str) -> EpisodeRunner:
        episode = by_id.get(episode_id)
        if episode is None:
            raise HTTPException(404, f"no episode {episode_id!r}")
        with lock:
            runner = runners.get(episode_id)
            if runner is None:
                runner = runners[episode_id] = replayers.runner(episode)
        return runner

    def take(attempt_id: str) -> _Attempt:
        with lock:
            attempt = attempts.pop(attempt_id, None)
        if attempt is None:
            raise HTTPException(404, f"no open attempt {attempt_id!r}")
        return attempt

    @app.get("/episodes", dependencies=operator)
    def list_episodes() -> list[dict[str, Any]]:
        return [
            {"id": e.id, "instruction": e.problem.instruction, "tools": e.environment.tools}
            for e in episodes
        ]

    @app.post("/episodes/{episode_id}/reset", dependencies=operator)
    def reset(episode_id: str, request: Request) -> dict[str, Any]:
        runner = runner_of(episode_id)
        episode = runner.episode
        worlds = replayers.worlds(episode.environment.model)
        world = runner.factory.open(episode.environment)
        if not isinstance(world, MockWorld):
            raise HTTPException(500, "the episode server needs worlds on the in-process mock")
        attempt_id = secrets.token_urlsafe(16)
        base_url = f"{str(request.base_url).rstrip('/')}/attempts/{attempt_id}/mock"
        with lock:
            attempts[attempt_id] = _Attempt(runner, world, worlds.mock, base_url)
        offered = set(episode.environment.tools)
        tools = [
            tool.openai()
            for tool in Toolbox(worlds.model).tools
            if not offered or tool.name in offered
        ]
        return {
            "attempt_id": attempt_id,
            "base_url": base_url,
            "auth": {"basic": list(SERVICE_USER), "bearer": SERVICE_TOKEN},
            "instruction": episode.problem.instruction,
            "tools": tools,
        }

    @app.post("/attempts/{attempt_id}/submit")
    def submit(attempt_id: str, submission: Submission) -> dict[str, Any]:
        return _public(take(attempt_id).submit(submission.answer))

    @app.delete("/attempts/{attempt_id}", status_code=204)
    def abandon(attempt_id: str) -> Response:
        take(attempt_id).abandon()
        return Response(status_code=204)

    @app.api_route(
        "/attempts/{attempt_id}/mock/{path:path}", methods=_METHODS, include_in_schema=False
    )
    async def mock(attempt_id: str, path: str, request: Request) -> Response:
        with lock:
            attempt = attempts.get(attempt_id)
        if attempt is None:
            raise HTTPException(404)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.scope["headers"]}
        # The attempt's world, whatever the agent named: the header is the server's to set.
        headers[WORLD_HEADER] = attempt.world.world
        forwarded = MockRequest(
            method=request.method,
            path="/" + path,
            query=request.query_params.multi_items(),
            headers=headers,
            body=await request.body(),
            base_url=attempt.base_url,
        )
        # In a worker thread: the call may wait for the attempt's turn (a submit in progress).
        reply = await run_in_threadpool(attempt.call, forwarded)
        if reply is None:
            raise HTTPException(404)
        out = Response(content=reply.body, status_code=reply.status)
        for name, value in reply.headers:
            out.headers.append(name, value)
        return out

    return app
