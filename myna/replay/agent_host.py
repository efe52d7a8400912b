"""The child side of an isolated agent (`myna.replay.isolation`): run as a script, never imported.

It builds the agent named on its command line (`module:Class`, constructed with no arguments)
and plays attempts the parent sends, one at a time, over JSON lines on stdin and stdout:

    parent -> child  {"task": {"instruction", "tools"}, "seed"}
    child -> parent  {"call": {"method", "path", "params", "body"}}  or  {"tool": {"name", ...}}
    parent -> child  {"reply": {"status", "body", "error"}}
    child -> parent  {"answer": text or null}  (or {"error": "..."} when the agent raised)

The agent gets the task text, the tool names and a world offering `call`, `tool` and `http` (an
`httpx.Client` whose requests travel this pipe): the service's API and nothing else. Episodes,
verifiers, reference solutions and call logs live in the parent process, out of its reach. It
imports only the standard library and httpx, so no part of Myna is loaded beside the agent.
What the agent prints goes to stderr; stdout carries the protocol alone.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import IO, Any

SERVICE = "http://service"
"""The base URL of the agent's HTTP client: requests to it travel the pipe to the parent."""


@dataclass(frozen=True, slots=True)
class Task:
    episode_id: str
    instruction: str
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: Any = None
    error: str | None = None


@dataclass(slots=True)
class PipeWorld:
    """The service, through the parent: each call is sent up the pipe and waits for its reply."""

    inbox: IO[str]
    outbox: IO[str]
    _http: Any = field(default=None)

    def _ask(self, message: dict[str, Any]) -> Reply:
        _send(self.outbox, message)
        line = self.inbox.readline()
        if not line:
            raise SystemExit(0)  # the parent went away: nothing left to do
        reply = json.loads(line)["reply"]
        return Reply(int(reply["status"]), reply.get("body"), reply.get("error"))

    def call(self, method: str, path: str, params: Any = None, body: Any = None) -> Reply:
        request = {"method": method, "path": path, "params": dict(params or {}), "body": body}
        return self._ask({"call": request})

    def tool(self, name: str, arguments: Any) -> Reply:
        return self._ask({"tool": {"name": name, "arguments": dict(arguments or {})}})

    @property
    def http(self) -> Any:
        """An `httpx.Client` on the service (base URL `http://service`)."""
        if self._http is None:
            import httpx

            world = self

            class Pipe(httpx.BaseTransport):
                def handle_request(self, request: httpx.Request) -> httpx.Response:
                    content = request.read()
                    body = json.loads(content) if content else None
                    params = dict(request.url.params.multi_items())
                    reply = world.call(request.method, request.url.path, params, body)
                    shown = reply.body if reply.error is None else {"error": reply.error}
                    return httpx.Response(reply.status, json=shown, request=request)

            self._http = httpx.Client(base_url=SERVICE, transport=Pipe())
        return self._http


def _send(outbox: IO[str], message: dict[str, Any]) -> None:
    outbox.write(json.dumps(message, default=str) + "\n")
    outbox.flush()


class Refused(Exception):
    """The agent cannot be built; the message says why."""


def _build(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as missing:
        raise Refused(f"cannot import {module_name!r} for agent {spec!r}: {missing}") from None
    cls = getattr(module, attribute, None)
    if cls is None:
        raise Refused(f"module {module_name!r} has no class {attribute!r}")
    agent = cls()
    if not callable(getattr(agent, "solve", None)) or not isinstance(
        getattr(agent, "name", None), str
    ):
        raise Refused(
            f"{spec} is not an agent: it needs a str `name` and `solve(task, world, seed)`"
        )
    return agent


def main(spec: str) -> None:
    outbox = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    sys.stdout = sys.stderr  # the agent's prints must not corrupt the protocol
    inbox = sys.stdin
    try:
        agent = _build(spec)
    except Refused as refused:
        _send(outbox, {"refused": str(refused)})
        return
    # A constructor is foreign code too: whatever it raises is reported to the parent.
    except Exception as failed:
        _send(outbox, {"refused": f"cannot build {spec}: {type(failed).__name__}: {failed}"})
        return
    _send(outbox, {"ready": agent.name})
    attempt = 0
    for line in inbox:
        message = json.loads(line)
        attempt += 1
        shown = message["task"]
        task = Task(f"attempt-{attempt}", shown["instruction"], tuple(shown["tools"]))
        world = PipeWorld(inbox, outbox)
        try:
            answer = agent.solve(task, world, int(message.get("seed", 0)))
        # The agent is foreign code: whatever it raises ends this attempt, not the host.
        except Exception:
            _send(outbox, {"error": traceback.format_exc(limit=5)})
            continue
        _send(outbox, {"answer": None if answer is None else str(answer)})


if __name__ == "__main__":
    main(sys.argv[1])
