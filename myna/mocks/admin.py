"""The admin API under `/_myna/admin/`: worlds, seeding, faults and call logs.

It needs the admin token (`Authorization: Bearer <token>` or `X-Myna-Admin-Token`), which no
service credential matches, and answers in its own shape, `{"error": {"kind", "message"}}`,
because it is Myna's API, not the service's.

    GET    /_myna/admin/worlds                      list worlds
    POST   /_myna/admin/worlds                      {"id"?, "from_snapshot"?, "fork_of"?}
    GET    /_myna/admin/worlds/{world}              one world

A world's description carries `credentials`, the credential that reaches that world and no
other (`Authenticator.world_credentials`): what the admin hands the agent the world is for.
    POST   /_myna/admin/worlds/{world}/credentials  a new credential; the old one, and the
                                                    access tokens issued for it, stop working
    DELETE /_myna/admin/worlds/{world}              (its credential stops working too)
    POST   /_myna/admin/worlds/{world}/reset
    POST   /_myna/admin/worlds/{world}/snapshot     {"name"?} -> {"snapshot": id}
    GET    /_myna/admin/worlds/{world}/diff         ?against=SNAPSHOT
    GET    /_myna/admin/worlds/{world}/faults       PUT a FaultConfig, DELETE to clear
    GET    /_myna/admin/worlds/{world}/calls        canonical trace JSONL; DELETE to clear
    POST   /_myna/admin/seed                        {"seed", "records", "name"?, "world"?}
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from myna.errors import MynaError
from myna.mocks.auth import admin_allowed
from myna.mocks.calllog import session_jsonl, to_session
from myna.mocks.faults import FaultConfig
from myna.mocks.messages import MockRequest, MockResponse
from myna.mocks.router import Match, MethodMismatch, Router
from myna.mocks.store import ConflictError, NotFoundError, StoreFullError, WorldInfo

if TYPE_CHECKING:
    from myna.mocks.runtime import Mock

ADMIN_PREFIX = "/_myna/admin"
_JSON = ("Content-Type", "application/json")
_WORLD_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"


class AdminError(MynaError):
    kind = "admin_error"

    def __init__(self, status: int, kind: str, message: str) -> None:
        self.status = status
        self.error_kind = kind
        super().__init__(message)


class _NewWorld(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, pattern=f"^{_WORLD_ID}$")
    from_snapshot: str | None = None
    fork_of: str | None = None


class _SnapshotRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, pattern=f"^{_WORLD_ID}$")


class _SeedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    records: int = Field(default=10, ge=0, le=100_000)
    name: str | None = Field(default=None, pattern=f"^{_WORLD_ID}$")
    world: str | None = Field(default=None, pattern=f"^{_WORLD_ID}$")


_M = TypeVar("_M", bound=BaseModel)
Handler = Callable[["AdminApi", dict[str, str], MockRequest], MockResponse]


class AdminApi:
    def __init__(self, mock: Mock) -> None:
        self.mock = mock
        self.router: Router[Handler] = Router()
        for method, path, handler in _ROUTES:
            self.router.add(method, ADMIN_PREFIX + path, handler)

    def handle(self, request: MockRequest) -> MockResponse:
        try:
            if not admin_allowed(request.headers, self.mock.admin_token):
                raise AdminError(401, "unauthorized", "the admin API needs the admin token")
            matched = self.router.match(request.method, request.path)
            if matched is None:
                raise AdminError(404, "not_found", f"no admin route {request.path}")
            if isinstance(matched, MethodMismatch):
                raise AdminError(
                    405, "method_not_allowed", f"allowed: {', '.join(matched.allowed)}"
                )
            assert isinstance(matched, Match)
            return matched.target(self, matched.params, request)
        except AdminError as error:
            payload = {"error": {"kind": error.error_kind, "message": error.message}}
            return MockResponse(error.status, [_JSON], payload=payload)
        except NotFoundError as error:
            payload = {"error": {"kind": "not_found", "message": str(error)}}
            return MockResponse(404, [_JSON], payload=payload)
        except ConflictError as error:
            payload = {"error": {"kind": "conflict", "message": str(error)}}
            return MockResponse(409, [_JSON], payload=payload)
        except StoreFullError as error:
            payload = {"error": {"kind": error.kind, "message": str(error)}}
            return MockResponse(503, [_JSON], payload=payload)

    # -- worlds -------------------------------------------------------------------------------

    def list_worlds(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        worlds = [self._world_json(info) for info in self.mock.store.worlds()]
        return _ok({"worlds": worlds})

    def create_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        body = _parse(_NewWorld, request)
        world = body.id or uuid.uuid4().hex[:16]
        store = self.mock.store
        if body.fork_of is not None and body.from_snapshot is not None:
            raise AdminError(400, "invalid_request", "give fork_of or from_snapshot, not both")
        if body.fork_of is not None:
            info = store.fork_world(body.fork_of, world)
        else:
            info = store.create_world(world, from_snapshot=body.from_snapshot)
        self.mock.note_world(world)
        return _ok(self._world_json(info), status=201)

    def get_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        return _ok(self._world_json(self.mock.store.world(params["world"])))

    def delete_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        self.mock.store.delete_world(params["world"])
        self.mock.forget_world(params["world"])
        return MockResponse(204, [])

    def rotate_credentials(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        world = params["world"]
        self.mock.store.rotate_key(world)
        return _ok(self._world_json(self.mock.store.world(world)))

    def reset_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        self.mock.store.reset_world(params["world"])
        return _ok({"world": params["world"], "reset": True})

    def snapshot_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        body = _parse(_SnapshotRequest, request)
        snapshot = self.mock.store.snapshot(params["world"], body.name)
        return _ok({"snapshot": snapshot}, status=201)

    def diff_world(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        against = dict(request.query).get("against")
        changes = self.mock.store.diff(params["world"], against)
        return _ok({"changes": [asdict(change) for change in changes]})

    # -- seeding ------------------------------------------------------------------------------

    def seed(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        from myna.mocks.seed import seed as seed_store

        body = _parse(_SeedRequest, request)
        store = self.mock.store
        snapshot = seed_store(
            self.mock.model, store, seed=body.seed, records=body.records, name=body.name
        )
        result: dict[str, Any] = {"snapshot": snapshot}
        if body.world is not None:
            info = store.create_world(body.world, from_snapshot=snapshot)
            self.mock.note_world(body.world)
            result["world"] = self._world_json(info)
        return _ok(result, status=201)

    # -- faults -------------------------------------------------------------------------------

    def get_faults(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        world = self._existing(params)
        config = self.mock.faults(world)
        return _ok({"world": world, "faults": None if config is None else config.model_dump()})

    def put_faults(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        world = self._existing(params)
        config = _parse(FaultConfig, request)
        self.mock.set_faults(world, config)
        return _ok({"world": world, "faults": config.model_dump()})

    def delete_faults(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        self.mock.set_faults(self._existing(params), None)
        return MockResponse(204, [])

    # -- call logs ----------------------------------------------------------------------------

    def get_calls(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        world = self._existing(params)
        session = to_session(world, self.mock.call_log(world).calls())
        return MockResponse(
            200, [("Content-Type", "application/x-ndjson")], body=session_jsonl(session)
        )

    def delete_calls(self, params: dict[str, str], request: MockRequest) -> MockResponse:
        self.mock.call_log(self._existing(params)).clear()
        return MockResponse(204, [])

    def _world_json(self, info: WorldInfo) -> dict[str, Any]:
        return {
            "id": info.id,
            "base_snapshot": info.base_snapshot,
            "created_at": info.created_at,
            "credentials": self.mock.auth.world_credentials(info.id),
        }

    def _existing(self, params: dict[str, str]) -> str:
        world = params["world"]
        if not self.mock.world_exists(world):
            raise AdminError(404, "not_found", f"world {world!r} does not exist")
        return world


_ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/worlds", AdminApi.list_worlds),
    ("POST", "/worlds", AdminApi.create_world),
    ("GET", "/worlds/{world}", AdminApi.get_world),
    ("DELETE", "/worlds/{world}", AdminApi.delete_world),
    ("POST", "/worlds/{world}/credentials", AdminApi.rotate_credentials),
    ("POST", "/worlds/{world}/reset", AdminApi.reset_world),
    ("POST", "/worlds/{world}/snapshot", AdminApi.snapshot_world),
    ("GET", "/worlds/{world}/diff", AdminApi.diff_world),
    ("GET", "/worlds/{world}/faults", AdminApi.get_faults),
    ("PUT", "/worlds/{world}/faults", AdminApi.put_faults),
    ("DELETE", "/worlds/{world}/faults", AdminApi.delete_faults),
    ("GET", "/worlds/{world}/calls", AdminApi.get_calls),
    ("DELETE", "/worlds/{world}/calls", AdminApi.delete_calls),
    ("POST", "/seed", AdminApi.seed),
]


def _parse(kind: type[_M], request: MockRequest) -> _M:
    raw = request.body.strip() or b"{}"
    try:
        return kind.model_validate_json(raw)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise AdminError(400, "invalid_request", f"{where}: {first['msg']}") from None


def _ok(payload: Any, *, status: int = 200) -> MockResponse:
    return MockResponse(status, [_JSON], payload=orjson.loads(orjson.dumps(payload)))
