"""The introspector: an agent that reads the answer out of the process it runs in.

It walks the world object it is handed, then every live object, for an episode whose
instruction is its task and whose reference solution it can replay; it also tries to clear the
attempt's call log. In process it would pass every episode; in the child process that
`myna.replay.isolation` runs it in there is nothing to find. It imports only the standard
library, as an agent shipped by someone else would.
"""

from __future__ import annotations

import gc
from typing import Any


def _reference_in(candidate: Any, instruction: str) -> Any:
    problem = getattr(candidate, "problem", None)
    if getattr(problem, "instruction", None) == instruction:
        return getattr(candidate, "reference", None)
    return None


def _walk(start: Any, instruction: str, depth: int = 4) -> Any:
    seen: set[int] = set()
    frontier = [start]
    for _ in range(depth):
        following = []
        for item in frontier:
            if id(item) in seen:
                continue
            seen.add(id(item))
            found = _reference_in(item, instruction)
            if found is not None:
                return found
            for name in dir(item):
                if not name.startswith("__"):
                    try:
                        following.append(getattr(item, name))
                    # Properties of foreign objects may raise anything: skip them.
                    except Exception:
                        continue
        frontier = following
    return None


class Introspector:
    name = "introspector"

    def solve(self, task: Any, world: Any, seed: int) -> str | None:
        reference = _walk(world, task.instruction)
        if reference is None:
            for candidate in gc.get_objects():
                reference = _reference_in(candidate, task.instruction)
                if reference is not None:
                    break
        if reference is None:
            return None
        answer = None
        for step in reference.steps:
            if step.kind == "http":
                world.call(step.method, step.path, step.params, step.body)
            elif step.kind == "tool":
                world.tool(step.tool, step.arguments)
            else:
                answer = step.text
        calls = getattr(world, "calls", None)
        if isinstance(calls, list):
            calls.clear()
        return answer
