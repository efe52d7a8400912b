"""Agents for the isolation tests, importable by a child process: standard library only."""

from __future__ import annotations

import time
from typing import Any

TARGET = "b" * 32
RESOLVE = {
    "state": "6",
    "close_code": "Solved (Permanently)",
    "close_notes": "Restarted the VPN concentrator; tunnels hold again.",
}


class HttpResolver:
    """Finds the incident the task names over HTTP, then resolves it with a tool call."""

    name = "http-resolver"

    def solve(self, task: Any, world: Any, seed: int) -> str | None:
        print("agents print; the protocol must not mind")
        number = next(w.strip(":.") for w in task.instruction.split() if w.startswith("INC"))
        found = world.http.get("/api/now/table/incident", params={"number": number}).json()
        sys_id = found["result"][0]["sys_id"]
        world.call("GET", f"/api/now/table/incident/{sys_id}")
        world.tool("update_incident", {"sys_id": sys_id, **RESOLVE})
        return f"resolved {number} in attempt {task.episode_id}"


class Crasher:
    name = "crasher"

    def solve(self, task: Any, world: Any, seed: int) -> str | None:
        world.call("PATCH", f"/api/now/table/incident/{TARGET}", None, RESOLVE)
        raise RuntimeError("the agent broke")


class Sleeper:
    name = "sleeper"

    def solve(self, task: Any, world: Any, seed: int) -> str | None:
        time.sleep(30)
        return "too late"


class Quitter:
    name = "quitter"

    def solve(self, task: Any, world: Any, seed: int) -> str | None:
        raise SystemExit(3)


class Unbuildable:
    name = "unbuildable"

    def __init__(self) -> None:
        raise ValueError("no configuration")


class NotAnAgent:
    name = "not-an-agent"
