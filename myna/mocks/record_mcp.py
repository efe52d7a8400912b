"""`myna record --mcp -- COMMAND ARGS`: wrap a stdio MCP server and record its tool calls.

The wrapper sits between an MCP client and the server it starts: every line the client writes
goes to the server's stdin, every line the server writes goes to the client's stdout, byte for
byte and in order, while a tap reads the same JSON-RPC messages. A `tools/call` answered by the
server is written as a `ToolCall` (the result read as `myna.traces.mcp` reads MCP logs); the
tools a `tools/list` answer offers (name, description, input schema) and the `initialize`
handshake's server and client go to the session metadata, in a repeated session header line,
since they arrive after the recording started. The server's stderr passes through untouched.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from myna.errors import InputError
from myna.traces import strictjson
from myna.traces.mcp import answer_call, message_key
from myna.traces.model import Session, ToolCall
from myna.traces.options import ReadOptions
from myna.traces.recorder import Recorder


class McpTap:
    """Reads the JSON-RPC traffic in both directions and records what it means."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._calls: dict[str, ToolCall] = {}
        self._lists: set[str] = set()
        self._tools: dict[str, Any] = {}
        self._lock = threading.Lock()

    def from_client(self, line: bytes) -> None:
        for message in _messages(line):
            key = message_key(message.get("id"))
            method = message.get("method")
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            if key is None or not isinstance(method, str):
                continue
            with self._lock:
                if method == "tools/call" and isinstance(params.get("name"), str):
                    self._calls[key] = ToolCall(
                        key, params["name"], params.get("arguments"), started_at=datetime.now(UTC)
                    )
                elif method == "tools/list":
                    self._lists.add(key)
                elif method == "initialize" and isinstance(params.get("clientInfo"), dict):
                    self.recorder.update_metadata(client=params["clientInfo"])

    def from_server(self, line: bytes) -> None:
        for message in _messages(line):
            key = message_key(message.get("id"))
            if key is None or "method" in message:
                continue
            with self._lock:
                call = self._calls.pop(key, None)
                listed = key in self._lists
                self._lists.discard(key)
            result = message.get("result")
            if call is not None:
                answer_call(call, message)
                self.recorder.record(call)
            elif listed and isinstance(result, dict) and isinstance(result.get("tools"), list):
                self._tools.update(
                    (tool["name"], tool)
                    for tool in result["tools"]
                    if isinstance(tool, dict) and isinstance(tool.get("name"), str)
                )
                self.recorder.update_metadata(tools=list(self._tools.values()))
            elif isinstance(result, dict) and isinstance(result.get("serverInfo"), dict):
                self.recorder.update_metadata(server=result["serverInfo"])


def record_mcp(command: list[str], output: Path, options: ReadOptions) -> int:
    """Run `command` as a stdio MCP server between our stdin/stdout and it; its exit code."""
    session = Session(
        id=output.stem,
        source=" ".join(command),
        metadata={"format": "mcp", "command": command},
    )
    try:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as error:
        raise InputError(
            f"cannot start the MCP server {command[0]!r}: {error.strerror or error}",
            field="COMMAND",
        ) from None
    assert server.stdin is not None
    assert server.stdout is not None
    with Recorder(output, session, options) as recorder:
        tap = McpTap(recorder)
        feeding = threading.Thread(
            target=_pump, args=(sys.stdin.buffer, server.stdin, tap.from_client), daemon=True
        )
        feeding.start()
        try:
            _pump(server.stdout, sys.stdout.buffer, tap.from_server)
            return server.wait()
        except KeyboardInterrupt:
            server.terminate()
            return server.wait()


def _pump(source: IO[bytes], target: IO[bytes], tap: Any) -> None:
    """Copy lines from `source` to `target` as they come, showing each to `tap` after."""
    # BrokenPipeError or ValueError (a closed file): the other side went, nothing more can pass.
    with contextlib.suppress(BrokenPipeError, ValueError):
        for line in iter(source.readline, b""):
            target.write(line)
            target.flush()
            tap(line)
    with contextlib.suppress(BrokenPipeError, ValueError):
        target.close()


def _messages(line: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch is an array); anything else is not ours."""
    try:
        value = strictjson.loads(line)
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]
