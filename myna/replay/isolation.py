"""Agents outside the verifier's reach: a Python agent runs in a child process.

An agent constructed in the process that scores it can read what scores it: the episode's
reference solution and verifier sit in the same memory, and the attempt's call log is a Python
list it could clear. `IsolatedAgent` runs a `module:Class` agent in a child process instead
(`agent_host.py`) and relays its calls: the child receives the task text and the tool names,
and reaches the service only through the attempt's own `call` and `tool`, so the policy, the
world and the call log stay in the parent. The boundary is the process: a stronger sandbox
(no file system, no network) is the deployer's to add around the child.

One child serves one `IsolatedAgent` (one per worker thread), attempt after attempt. A child
that dies, hangs past `timeout`, or breaks the protocol fails the attempt (no answer) and is
replaced for the next one.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Final

from myna.errors import ReplayError
from myna.replay.audit import AgentWorld, Task
from myna.replay.run import Reply

HOST: Final = Path(__file__).with_name("agent_host.py")
DEFAULT_TIMEOUT: Final = 600.0
"""Seconds one attempt may take, calls included."""


class IsolatedAgent:
    """An agent (`module:Class`) in a child process, behind the replay agent interface."""

    def __init__(self, spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._child: subprocess.Popen[str] | None = None
        module, colon, attribute = spec.partition(":")
        if not (module and colon and attribute):
            raise ReplayError(f"expected module:Class for an agent, got {spec!r}")
        self.spec = spec
        self.timeout = timeout
        self.name = self._start_child()

    def _start_child(self) -> str:
        self.close()
        environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._child = subprocess.Popen(
            [sys.executable, str(HOST), self.spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            encoding="utf-8",
            env=environment,
        )
        ready = self._read(time.monotonic() + self.timeout)
        if ready is None or "ready" not in ready:
            self.close()
            why = ready.get("refused") if ready is not None else None
            raise ReplayError(str(why or f"the agent {self.spec} did not start"), agent=self.spec)
        return str(ready["ready"])

    def solve(self, task: Task, world: AgentWorld, seed: int) -> str | None:
        if self._child is None or self._child.poll() is not None:
            self._start_child()
        deadline = time.monotonic() + self.timeout
        task_shown = {"instruction": task.instruction, "tools": list(task.tools)}
        if not self._write({"task": task_shown, "seed": seed}):
            return self._fail()
        while True:
            message = self._read(deadline)
            if message is None:
                return self._fail()
            if "answer" in message:
                answer = message["answer"]
                return None if answer is None else str(answer)
            if "error" in message:
                return None
            reply = _relay(message, world)
            if reply is None or not self._write({"reply": reply.as_dict()}):
                return self._fail()

    def _fail(self) -> str | None:
        """The child broke the protocol, died or ran out of time: this attempt has no answer,
        and the next one gets a fresh child."""
        self.close()
        return None

    def _write(self, message: dict[str, Any]) -> bool:
        child = self._child
        if child is None or child.stdin is None:
            return False
        try:
            child.stdin.write(json.dumps(message, default=str) + "\n")
            child.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _read(self, deadline: float) -> dict[str, Any] | None:
        child = self._child
        if child is None or child.stdout is None:
            return None
        line = _readline(child.stdout, deadline)
        if not line:
            return None
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return None
        return message if isinstance(message, dict) else None

    def close(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()

    def __del__(self) -> None:
        self.close()


def _readline(stream: IO[str], deadline: float) -> str:
    """One line from the child, or "" once the deadline passes or the child closes it."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            return ""
    return stream.readline()


def _relay(message: dict[str, Any], world: AgentWorld) -> Reply | None:
    """Make the call the child asks for in the attempt's world; None for a malformed ask."""
    call, tool = message.get("call"), message.get("tool")
    if isinstance(call, dict) and isinstance(call.get("method"), str):
        params = call.get("params")
        return world.call(
            call["method"],
            str(call.get("path", "")),
            {str(k): str(v) for k, v in params.items()} if isinstance(params, dict) else None,
            call.get("body"),
        )
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        arguments = tool.get("arguments")
        return world.tool(tool["name"], arguments if isinstance(arguments, dict) else {})
    return None
