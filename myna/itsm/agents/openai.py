"""An agent behind any OpenAI-compatible chat-completions endpoint with tool calling.

Configuration comes from the environment: `MYNA_OPENAI_BASE_URL` (else `OPENAI_BASE_URL`, else
OpenAI's), `MYNA_OPENAI_MODEL` (else `OPENAI_MODEL`) and `MYNA_OPENAI_API_KEY` (else
`OPENAI_API_KEY`; optional for local servers). The agent sends the instruction and the offered
tools, runs each tool call the model returns against the world, feeds the replies back, and takes
the first message without tool calls as the final answer. Tokens are summed from `usage`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx

from myna.errors import BenchError
from myna.replay.audit import AgentWorld, Task
from myna.replay.chat import complete

DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
SYSTEM: Final = (
    "You are an IT service desk agent working in a ServiceNow instance through tools. "
    "Do exactly what the task asks, change nothing else, and end with a short final answer "
    "(for a question, the answer alone)."
)
MAX_REPLY: Final = 8000


@dataclass(slots=True)
class OpenAIAgent:
    base_url: str
    model: str
    tools: list[dict[str, Any]]
    api_key: str | None = None
    max_turns: int = 12
    timeout: float = 60.0
    name: str = "openai"
    tokens: int | None = None

    @classmethod
    def from_env(
        cls, tools: list[dict[str, Any]], env: Mapping[str, str] | None = None
    ) -> OpenAIAgent:
        source = os.environ if env is None else env
        model = source.get("MYNA_OPENAI_MODEL") or source.get("OPENAI_MODEL")
        if not model:
            raise BenchError("the openai agent needs a model: set MYNA_OPENAI_MODEL")
        base = source.get("MYNA_OPENAI_BASE_URL") or source.get("OPENAI_BASE_URL")
        key = source.get("MYNA_OPENAI_API_KEY") or source.get("OPENAI_API_KEY")
        return cls(base or DEFAULT_BASE_URL, model, tools, key, name=f"openai:{model}")

    def _complete(
        self, http: httpx.Client, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> Any:
        body = {"model": self.model, "messages": messages, "tools": tools}
        return complete(http, body, error=BenchError, what="chat")

    def solve(self, task: Task, world: AgentWorld, seed: int) -> str | None:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        base = self.base_url.rstrip("/")
        with httpx.Client(base_url=base, headers=headers, timeout=self.timeout) as http:
            return self._converse(http, task, world)

    def _converse(self, http: httpx.Client, task: Task, world: AgentWorld) -> str | None:
        offered = set(task.tools)
        tools = [t for t in self.tools if t["function"]["name"] in offered] or self.tools
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": task.instruction},
        ]
        used = 0
        reported = False
        for _ in range(self.max_turns):
            completion = self._complete(http, messages, tools)
            usage = completion.get("usage") or {}
            if "total_tokens" in usage:
                used += int(usage["total_tokens"])
                reported = True
            message = completion["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            messages.append({k: v for k, v in message.items() if v is not None})
            if not calls:
                self.tokens = used if reported else None
                content = message.get("content")
                return str(content) if content is not None else None
            for call in calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": _run(world, call)}
                )
        self.tokens = used if reported else None
        return None


def _run(world: AgentWorld, call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError as bad:
        return json.dumps({"error": f"arguments are not JSON: {bad.msg}"})
    if not isinstance(arguments, dict):
        return json.dumps({"error": "arguments must be a JSON object"})
    reply = world.tool(str(function.get("name", "")), arguments)
    shown = {"status": reply.status, "body": reply.body}
    if reply.error is not None:
        shown["error"] = reply.error
    return json.dumps(shown, default=str)[:MAX_REPLY]
