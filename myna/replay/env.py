"""`myna.replay.Env`: an episode as a Gymnasium environment, registered as `myna/Replay-v0`.

Observations and actions are JSON text (Gymnasium `Text` spaces over printable ASCII; JSON escapes
anything else), because tool calls and API replies have no fixed shape. `step` also accepts an
action already parsed into a dict. Actions:

- `{"tool": "<name>", "arguments": {...}}`: call one of the offered tools;
- `{"http": {"method": "PATCH", "path": "/api/...", "params": {...}, "body": {...}}}`: call the
  mock's API directly;
- `{"submit": "<final answer>"}` (or `null` for none; `answer` is accepted for `submit`): end
  the episode and get the reward.

The reset observation is `{"instruction", "tools"}` (tool names; `info["tools"]` holds their
OpenAI function definitions, too large for some observations); each step's is the reply
`{"status", "body"[, "error"]}`. Rewards are 0 until the submit, whose reward is the verifier's.
A forbidden call or a crashing world ends the episode failed with `info["repercussion"]`;
running out of steps truncates it (reward 0). Malformed actions are answered with an error
observation and cost a step, like any other mistake.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium
from gymnasium import spaces

from myna.errors import ReplayError
from myna.replay.episode import Episode
from myna.replay.run import Attempt, EpisodeRunner, Repercussion, Reply, Result

ENV_ID = "myna/Replay-v0"
MAX_TEXT = 1 << 16


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, sort_keys=True, default=str)[:MAX_TEXT]


def parse_action(action: str | dict[str, Any]) -> dict[str, Any]:
    """The action as a dict with exactly one of `tool`, `http`, `submit`, or a ReplayError."""
    parsed: Any = action
    if isinstance(action, str):
        try:
            parsed = json.loads(action)
        except json.JSONDecodeError as bad:
            raise ReplayError(f"action is not JSON: {bad.msg} at character {bad.pos}") from None
    if not isinstance(parsed, dict):
        raise ReplayError("action must be a JSON object with 'tool', 'http' or 'submit'")
    kinds = [key for key in ("tool", "http", "submit", "answer") if key in parsed]
    if len(kinds) != 1:
        raise ReplayError("action must have exactly one of 'tool', 'http', 'submit'")
    if kinds[0] == "tool" and not isinstance(parsed.get("arguments", {}), dict):
        raise ReplayError("tool 'arguments' must be an object")
    if kinds[0] == "http":
        call = parsed["http"]
        if not isinstance(call, dict) or not {"method", "path"} <= call.keys():
            raise ReplayError("'http' must be an object with 'method' and 'path'")
    return parsed


class Env(gymnasium.Env[str, str]):
    """One episode; each `reset` starts a fresh attempt in a fresh world."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        episode: Episode,
        runner: EpisodeRunner | None = None,
        max_steps: int = 50,
        model_base: Path | None = None,
    ) -> None:
        """`runner` defaults to the in-process mock of the episode's model (a relative model
        path is resolved against `model_base`)."""
        if runner is None:
            from myna.replay.mock_world import Replayers

            runner = Replayers(model_base).runner(episode)
        self.episode = episode
        self.runner = runner
        self.max_steps = max_steps
        self.observation_space = spaces.Text(
            max_length=MAX_TEXT, min_length=0, charset=string.printable
        )
        self.action_space = spaces.Text(max_length=MAX_TEXT, min_length=0, charset=string.printable)
        self._attempt: Attempt | None = None
        self._steps = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.close()
        self._attempt = self.runner.start()
        self._steps = 0
        tools = self.episode.environment.tools
        observation = _text({"instruction": self.episode.problem.instruction, "tools": tools})
        info = {"episode_id": self.episode.id, "tools": self.runner.tool_definitions}
        return observation, info

    def step(
        self, action: str | dict[str, Any]
    ) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        attempt = self._attempt
        if attempt is None or attempt.done:
            raise ReplayError("the episode has ended; call reset() first", episode=self.episode.id)
        self._steps += 1
        try:
            parsed = parse_action(action)
        except ReplayError as bad_action:
            return self._reply(attempt, Reply(400, error=str(bad_action)))
        if "submit" in parsed or "answer" in parsed:
            answer = parsed.get("submit", parsed.get("answer"))
            return self._finish(attempt.submit(None if answer is None else str(answer)), False)
        if "tool" in parsed:
            reply = attempt.tool(str(parsed["tool"]), parsed.get("arguments", {}))
        else:
            call = parsed["http"]
            reply = attempt.call(
                str(call["method"]), str(call["path"]), call.get("params"), call.get("body")
            )
        return self._reply(attempt, reply)

    def _reply(
        self, attempt: Attempt, reply: Reply
    ) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if attempt.repercussion is not None:
            return self._finish(attempt.submit(None), False)
        if self._steps >= self.max_steps:
            ended = attempt.end(Repercussion("step_limit", f"{self.max_steps} steps used"))
            return self._finish(ended, True)
        return _text(reply.as_dict()), 0.0, False, False, {"status": reply.status}

    def _finish(
        self, result: Result, truncated: bool
    ) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        info: dict[str, Any] = {"verification": result.verification.as_dict()}
        if result.repercussion is not None and result.repercussion.kind != "step_limit":
            info["repercussion"] = result.repercussion.as_dict()
        observation = _text({"reward": result.reward, "passed": result.passed})
        return observation, result.reward, not truncated, truncated, info

    def close(self) -> None:
        if self._attempt is not None and not self._attempt.done:
            self._attempt.world.close()
        self._attempt = None


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="myna.replay.env:Env")
