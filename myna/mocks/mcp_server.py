"""An MCP server (official `mcp` SDK, streamable HTTP) exposing a model's operations as tools.

The tools are the `Toolbox` of the model, so `tools/list` here and `myna tools --format mcp` agree.
A `tools/call` is checked against the tool's input schema, mapped to the HTTP request it stands
for and sent through a `Caller`: `(method, path, params, json_body, headers) -> (status, json)`.
The caller is whatever reaches the mock: `caller_for_client(MockClient(...))` in process, or
`HttpCaller(base_url)` for a mock (or the real service) in another process. A bad call
(unknown tool, arguments that break the schema) and an error status from the service both come
back as a tool result with `isError` set, so the agent sees them the way it would see a failing
API, not as a protocol failure.

Headers named in `forward_headers` (by default the world selector `X-Myna-World`) are copied from
the MCP client's HTTP request to the caller, so one MCP server can serve every world.

To mount the app inside another ASGI app, run `server.session_manager.run()` in the parent's
lifespan: Starlette does not run the lifespans of mounted apps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread
from jsonschema import Draft202012Validator
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from myna.errors import MockError, MynaError
from myna.mocks.tools import Toolbox
from myna.schemas.model import ServiceModel

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from myna.mocks.client import MockClient

__all__ = ["Caller", "HttpCaller", "build_server", "caller_for_client", "mcp_app"]

Caller = Callable[[str, str, dict[str, str], Any, dict[str, str]], tuple[int, Any]]
"""`(method, path, params, json_body, headers) -> (status, json body or None)`."""

WORLD_HEADER: Final = "x-myna-world"


def caller_for_client(client: MockClient) -> Caller:
    """A `Caller` that sends requests through the in-process client (no sockets)."""

    def call(
        method: str, path: str, params: dict[str, str], body: Any, headers: dict[str, str]
    ) -> tuple[int, Any]:
        response = client.request(method, path, params=params, json=body, headers=headers)
        return response.status, response.json() if response.body else None

    return call


class HttpCaller:
    """A `Caller` that sends requests over HTTP(S) to `base_url` on pooled connections.

    `verify` is a CA bundle path for a mock serving its self-signed certificate. Close it (or use
    it as a context manager) to release the connections.
    """

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        verify: bool | str = True,
        timeout: float = 30.0,
    ) -> None:
        import httpx

        self._client = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=dict(headers or {}),
            verify=verify,
            timeout=timeout,
        )

    def __call__(
        self, method: str, path: str, params: dict[str, str], body: Any, headers: dict[str, str]
    ) -> tuple[int, Any]:
        import httpx

        try:
            response = self._client.request(method, path, params=params, json=body, headers=headers)
        except httpx.HTTPError as error:
            raise MockError(
                f"could not reach the service: {type(error).__name__}: {error}",
                method=method,
                path=path,
            ) from error
        if not response.content:
            return response.status_code, None
        try:
            return response.status_code, response.json()
        except ValueError:
            # A body that is not JSON (an HTML error page) still reaches the agent, as text.
            return response.status_code, response.text

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpCaller:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def build_server(
    model: ServiceModel,
    caller: Caller,
    *,
    headers: Mapping[str, str] | None = None,
    forward_headers: tuple[str, ...] = (WORLD_HEADER,),
) -> Server[Any]:
    """A low-level MCP server whose tools are the model's operations.

    `headers` go with every call (the mock's credentials); `forward_headers` are copied from the
    MCP client's own HTTP request when present.
    """
    toolbox = Toolbox(model)
    tools = [Tool.model_validate(entry) for entry in toolbox.mcp()]
    validators = {tool.name: Draft202012Validator(tool.input_schema) for tool in toolbox.tools}
    fixed = {name.lower(): value for name, value in (headers or {}).items()}
    forwarded = tuple(name.lower() for name in forward_headers)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        arguments = dict(params.arguments or {})
        validator = validators.get(params.name)
        if validator is not None:
            problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
            if problems:
                where = "/".join(str(part) for part in problems[0].path) or "arguments"
                return _error_result(f"{params.name}: {where}: {problems[0].message}")
        try:
            method, path, query, body = toolbox.call(params.name, arguments)
        except MockError as error:
            return _error_result(str(error))
        request_headers = dict(fixed)
        request_headers.update(_forwarded(ctx.request, forwarded))
        try:
            status, payload = await anyio.to_thread.run_sync(
                caller, method, path, query, body, request_headers
            )
        except MynaError as error:
            # The service could not answer (unreachable, misconfigured): the agent sees a failed
            # call, as it would over a flaky network, and the session stays up.
            return _error_result(str(error))
        if toolbox.tool(params.name).answers_as_tool:
            # A mock of a tool-call service answers as the tool did: its result, or its error.
            return CallToolResult(
                content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
                structured_content=payload if isinstance(payload, dict) else None,
                is_error=status >= 400,
            )
        result = {"status": status, "body": payload}
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
            is_error=status >= 400,
        )

    return Server(
        f"myna-{model.name}",
        version=model.version,
        title=model.title,
        instructions=(
            f"Tools for the {model.title or model.name} API served by Myna. Each tool is one "
            "HTTP operation; its result is the status and the JSON body the service answered."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def mcp_app(
    model: ServiceModel,
    caller: Caller,
    *,
    path: str = "/mcp",
    headers: Mapping[str, str] | None = None,
    forward_headers: tuple[str, ...] = (WORLD_HEADER,),
    host: str = "127.0.0.1",
) -> Starlette:
    """The streamable-HTTP ASGI app (serve it with uvicorn); the endpoint is `path`.

    `host` is the address it will listen on: on loopback the SDK turns on DNS-rebinding
    protection, which only lets loopback Host and Origin headers through.
    """
    server = build_server(model, caller, headers=headers, forward_headers=forward_headers)
    return server.streamable_http_app(streamable_http_path=path, host=host)


def _forwarded(request: Any, names: tuple[str, ...]) -> dict[str, str]:
    request_headers = getattr(request, "headers", None)
    if request_headers is None:
        return {}
    return {name: request_headers[name] for name in names if name in request_headers}


def _error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
