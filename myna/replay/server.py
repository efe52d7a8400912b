"""The HTTP episode server (`myna replay serve`): agents reset an episode, call the mock directly,
submit, and get the reward.

- `GET /episodes`: the episodes offered (id, instruction, tool names);
- `POST /episodes/{id}/reset`: a fresh world for one attempt: `attempt_id`, the mock's
  `base_url` for that world, the service credentials, the instruction and the tool definitions
  (OpenAI function format);
- any method on `/mock/{model}/...`: the mock itself (`base_url` points into it);
- `POST /attempts/{attempt_id}/submit` with `{"answer": ...}`: the reward, whether it passed,
  and the per-check breakdown (names, weights, pass or fail);
- `DELETE /attempts/{attempt_id}`: abandon an attempt.

The verifier and the reference solution never travel over this API, and the breakdown carries
no check details (they could quote expected values). Calls go straight to the mock, so a
forbidden call cannot be stopped before it lands: the policy is applied at submit, from the
world's call log, and the world is discarded either way.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import BaseModel

from myna.mocks.calllog import to_session
from myna.mocks.messages import MockRequest
from myna.mocks.tools import Toolbox
from myna.replay.episode import Episode
from myna.replay.mock_world import SERVICE_TOKEN, SERVICE_USER, MockWorld, Replayers
from myna.replay.run import EpisodeRunner, Repercussion, Result
from myna.replay.verify import CallRecord, forbidden_reason

_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class Submission(BaseModel):
    answer: str | None = None


@dataclass(slots=True)
class _Attempt:
    runner: EpisodeRunner
    world: MockWorld
    model_key: str


def _world_calls(runner: EpisodeRunner, world: MockWorld) -> list[CallRecord]:
    """The world's call log as call records, paths relative to the world."""
    marker = f"/worlds/{world.world}"
    records = []
    for exchange in to_session(world.world, world.calls()).exchanges:
        path = exchange.path.partition(marker)[2] or "/"
        shape = runner.routes.classify(exchange.method, path)
        body = exchange.request_body.value if exchange.request_body.is_json else None
        records.append(
            CallRecord(
                shape.method,
                shape.path,
                exchange.status,
                dict(exchange.query),
                body,
                shape.documented,
                shape.admin,
            )
        )
    return records


def score_http_attempt(runner: EpisodeRunner, world: MockWorld, answer: str | None) -> Result:
    """Verify an attempt whose calls went straight to the mock (read back from its call log)."""
    calls = _world_calls(runner, world)
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


def create_app(episodes: Sequence[Episode], replayers: Replayers) -> FastAPI:
    app = FastAPI(title="Myna episode server", docs_url=None, redoc_url=None)
    by_id = {episode.id: episode for episode in episodes}
    # One mock per model, under /mock/<key>/, shared by every episode of that model.
    model_keys: dict[tuple[str | None, str | None], str] = {}
    worlds_by_key = {}
    for episode in episodes:
        ref = episode.environment.model
        key = model_keys.setdefault((ref.path, ref.name), str(len(model_keys)))
        worlds_by_key[key] = replayers.worlds(ref)
    runners: dict[str, EpisodeRunner] = {}
    attempts: dict[str, _Attempt] = {}
    counter = itertools.count(1)
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

    def attempt_of(attempt_id: str) -> _Attempt:
        with lock:
            attempt = attempts.pop(attempt_id, None)
        if attempt is None:
            raise HTTPException(404, f"no open attempt {attempt_id!r}")
        return attempt

    @app.get("/episodes")
    def list_episodes() -> list[dict[str, Any]]:
        return [
            {"id": e.id, "instruction": e.problem.instruction, "tools": e.environment.tools}
            for e in episodes
        ]

    @app.post("/episodes/{episode_id}/reset")
    def reset(episode_id: str, request: Request) -> dict[str, Any]:
        runner = runner_of(episode_id)
        episode = runner.episode
        ref = episode.environment.model
        key = model_keys[(ref.path, ref.name)]
        world = runner.factory.open(episode.environment)
        if not isinstance(world, MockWorld):
            raise HTTPException(500, "the episode server needs worlds on the in-process mock")
        attempt_id = f"a{next(counter)}"
        with lock:
            attempts[attempt_id] = _Attempt(runner, world, key)
        offered = set(episode.environment.tools)
        tools = [
            tool.openai()
            for tool in Toolbox(worlds_by_key[key].model).tools
            if not offered or tool.name in offered
        ]
        return {
            "attempt_id": attempt_id,
            "base_url": f"{str(request.base_url).rstrip('/')}/mock/{key}/worlds/{world.world}",
            "auth": {"basic": list(SERVICE_USER), "bearer": SERVICE_TOKEN},
            "instruction": episode.problem.instruction,
            "tools": tools,
        }

    @app.post("/attempts/{attempt_id}/submit")
    def submit(attempt_id: str, submission: Submission) -> dict[str, Any]:
        attempt = attempt_of(attempt_id)
        try:
            result = score_http_attempt(attempt.runner, attempt.world, submission.answer)
        finally:
            attempt.world.close()
        return _public(result)

    @app.delete("/attempts/{attempt_id}", status_code=204)
    def abandon(attempt_id: str) -> Response:
        attempt_of(attempt_id).world.close()
        return Response(status_code=204)

    @app.api_route("/mock/{key}/{path:path}", methods=_METHODS, include_in_schema=False)
    async def mock(key: str, path: str, request: Request) -> Response:
        worlds = worlds_by_key.get(key)
        if worlds is None:
            raise HTTPException(404, f"no mock {key!r}")
        reply = worlds.mock.handle(
            MockRequest(
                method=request.method,
                path="/" + path,
                query=request.query_params.multi_items(),
                headers={
                    k.decode("latin-1"): v.decode("latin-1") for k, v in request.scope["headers"]
                },
                body=await request.body(),
                base_url=f"{str(request.base_url).rstrip('/')}/mock/{key}",
            )
        )
        out = Response(content=reply.body, status_code=reply.status)
        for name, value in reply.headers:
            out.headers.append(name, value)
        return out

    return app
