"""Worlds are capabilities (`myna serve`'s default): an agent holding world A's credential can
read and write A, and can neither read, write nor detect world B; without a credential no one
can tell an existing world from a missing one; a rotated credential, and every token issued
for it, stops working in every process. Over HTTP, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from myna.mocks.cli import served_mock
from myna.mocks.serve import serving
from myna.mocks.sqlstore import SqlStore

ADMIN_TOKEN = "capability-admin-token"
INCIDENTS = "/api/now/table/incident"
SHARED = {"Authorization": "Bearer myna-token"}


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    db: str
    credentials: dict[str, dict[str, str]]  # world -> what the admin API handed out

    def bearer(self, world: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.credentials[world]['token']}"}

    def basic(self, world: str) -> tuple[str, str]:
        given = self.credentials[world]
        return given["user"], given["password"]

    def get(self, path: str, headers: dict[str, str] | None = None, **kw: Any) -> httpx.Response:
        return httpx.get(self.url + path, headers=headers, timeout=30, **kw)

    def admin(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        return httpx.request(method, f"{self.url}/_myna/admin{path}", headers=headers, **kw)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    from tests.conftest import postgres_schema

    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path_factory.mktemp('capabilities') / 'myna.db'}"
        yield from _served(db)
    else:
        with postgres_schema() as db:
            yield from _served(db)


def _served(db: str) -> Iterator[Server]:
    mock = served_mock("itsm", db=db, admin_token=ADMIN_TOKEN)
    assert isinstance(mock.store, SqlStore)
    with serving(mock, threadpool=True) as running:
        server = Server(running.base_url, db, {})
        for world, body in (
            ("a", {"id": "world-a", "fork_of": "default"}),
            ("b", {"fork_of": "default"}),
        ):
            created = server.admin("POST", "/worlds", json=body)
            assert created.status_code == 201, created.text
            server.credentials[world] = created.json()["credentials"]
            server.credentials[world]["id"] = created.json()["id"]
        yield server
    mock.store.close()


def _world(server: Server, name: str) -> str:
    return server.credentials[name]["id"]


def test_a_world_credential_reaches_its_world(server: Server) -> None:
    a = _world(server, "a")
    by_bearer = server.get(f"/worlds/{a}{INCIDENTS}", server.bearer("a"))
    by_basic = httpx.get(f"{server.url}/worlds/{a}{INCIDENTS}", auth=server.basic("a"), timeout=30)
    by_header = server.get(INCIDENTS, {**server.bearer("a"), "X-Myna-World": a})

    assert [r.status_code for r in (by_bearer, by_basic, by_header)] == [200, 200, 200]
    assert by_bearer.json() == by_basic.json() == by_header.json()


def _as_missing(server: Server, response: httpx.Response, headers: dict[str, str]) -> None:
    """The answer is exactly the one for a world that does not exist."""
    missing = server.get(f"/worlds/no-such-world{INCIDENTS}", headers)
    assert response.status_code == missing.status_code == 404
    assert response.json()["error"]["detail"] == missing.json()["error"]["detail"]


def test_world_a_credential_cannot_read_world_b(server: Server) -> None:
    b = _world(server, "b")
    for headers in (server.bearer("a"), {**server.bearer("a"), "X-Myna-World": b}):
        path = f"/worlds/{b}{INCIDENTS}" if "X-Myna-World" not in headers else INCIDENTS
        _as_missing(server, server.get(path, headers), server.bearer("a"))


def test_world_a_credential_cannot_write_world_b(server: Server) -> None:
    b = _world(server, "b")
    response = httpx.post(
        f"{server.url}/worlds/{b}{INCIDENTS}",
        headers=server.bearer("a"),
        json={"short_description": "planted"},
        timeout=30,
    )
    _as_missing(server, response, server.bearer("a"))
    assert server.admin("GET", f"/worlds/{b}/diff").json()["changes"] == []


def test_a_batch_in_world_a_cannot_reach_world_b(server: Server) -> None:
    a, b = _world(server, "a"), _world(server, "b")
    item = {"id": "1", "method": "GET", "url": f"/worlds/{b}{INCIDENTS}", "headers": []}
    response = httpx.post(
        f"{server.url}/worlds/{a}/api/now/v1/batch",
        headers=server.bearer("a"),
        json={"batch_request_id": "x", "rest_requests": [item]},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.json()["serviced_requests"][0]["status_code"] == 404


def test_world_a_basic_credential_cannot_get_a_token_for_world_b(server: Server) -> None:
    user, password = server.basic("a")
    form = {"grant_type": "password", "username": user, "password": password}
    own = httpx.post(f"{server.url}/worlds/{_world(server, 'a')}/oauth_token.do", data=form)
    other = httpx.post(f"{server.url}/worlds/{_world(server, 'b')}/oauth_token.do", data=form)
    missing = httpx.post(f"{server.url}/worlds/no-such-world/oauth_token.do", data=form)

    assert own.status_code == 200
    assert (other.status_code, other.json()) == (missing.status_code, missing.json())
    token = {"Authorization": f"Bearer {own.json()['access_token']}"}
    assert server.get(f"/worlds/{_world(server, 'a')}{INCIDENTS}", token).status_code == 200
    _as_missing(server, server.get(f"/worlds/{_world(server, 'b')}{INCIDENTS}", token), token)


def test_the_shared_credential_reaches_the_default_world_only(server: Server) -> None:
    assert server.get(INCIDENTS, SHARED).status_code == 200
    _as_missing(server, server.get(f"/worlds/{_world(server, 'a')}{INCIDENTS}", SHARED), SHARED)


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer myw_d29ybGQtYQ.forged"}],
    ids=["none", "unknown-token", "forged-world-key"],
)
def test_without_a_good_credential_existing_and_missing_worlds_look_alike(
    server: Server, headers: dict[str, str]
) -> None:
    existing = server.get(f"/worlds/{_world(server, 'a')}{INCIDENTS}", headers)
    missing = server.get(f"/worlds/no-such-world{INCIDENTS}", headers)
    by_header = server.get(INCIDENTS, {**headers, "X-Myna-World": _world(server, "a")})

    assert existing.status_code == missing.status_code == by_header.status_code == 401
    assert existing.json() == missing.json() == by_header.json()


def test_world_keys_are_accepted_by_every_process_with_the_admin_token(server: Server) -> None:
    """The key is derived from the admin token: a second mock over the same store (as a second
    process would be) accepts it without being told."""
    from myna.backends import builtin_model
    from myna.mocks.auth import Authenticator, Credentials

    store = SqlStore(builtin_model("itsm"), server.db)
    auth = Authenticator(
        builtin_model("itsm").conventions.auth,
        Credentials(),
        admin_token=ADMIN_TOKEN,
        open_worlds=False,
        generation=store.key_generation,
    )
    a = _world(server, "a")
    token = server.credentials["a"]["token"]
    assert auth.principal({"authorization": f"Bearer {token}"}, a) is not None
    assert auth.principal({"authorization": f"Bearer {token}"}, _world(server, "b")) is None
    basic = base64.b64encode(f"{a}:{token}".encode()).decode()
    assert auth.principal({"authorization": f"Basic {basic}"}, a) is not None
    store.close()


# -- rotation ---------------------------------------------------------------------------------


def _fresh_world(server: Server, world: str) -> dict[str, str]:
    created = server.admin("POST", "/worlds", json={"id": world, "fork_of": "default"})
    assert created.status_code == 201, created.text
    given: dict[str, str] = created.json()["credentials"]
    return given


def _reads(server: Server, world: str, headers: dict[str, str]) -> int:
    return server.get(
        f"/worlds/{world}{INCIDENTS}", headers, params={"sysparm_limit": 1}
    ).status_code


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _basic(given: dict[str, str]) -> dict[str, str]:
    encoded = base64.b64encode(f"{given['user']}:{given['password']}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def test_a_rotated_credential_is_refused_and_its_successor_reaches_the_world(
    server: Server,
) -> None:
    old = _fresh_world(server, "rotated")
    form = {"grant_type": "password", "username": old["user"], "password": old["password"]}
    issued = httpx.post(f"{server.url}/worlds/rotated/oauth_token.do", data=form).json()
    assert _reads(server, "rotated", _bearer(issued["access_token"])) == 200

    rotated = server.admin("POST", "/worlds/rotated/credentials")
    new = rotated.json()["credentials"]

    assert rotated.status_code == 200
    assert new["token"] != old["token"]
    # The old key, Basic or bearer, and the tokens issued for it: no credential at all.
    for headers in (_bearer(old["token"]), _basic(old), _bearer(issued["access_token"])):
        assert _reads(server, "rotated", headers) == 401
    refresh = {"grant_type": "refresh_token", "refresh_token": issued["refresh_token"]}
    assert (
        httpx.post(f"{server.url}/worlds/rotated/oauth_token.do", data=refresh).status_code == 401
    )
    assert httpx.post(f"{server.url}/worlds/rotated/oauth_token.do", data=form).status_code == 401
    assert _reads(server, "rotated", _bearer(new["token"])) == 200
    assert _reads(server, "rotated", _basic(new)) == 200
    assert server.admin("GET", "/worlds/rotated").json()["credentials"] == new
    _as_missing(
        server,
        server.get(f"/worlds/{_world(server, 'a')}{INCIDENTS}", _bearer(new["token"])),
        _bearer(new["token"]),
    )


def test_a_rotation_holds_in_every_process_over_the_database(server: Server) -> None:
    """A second mock over the same database (as another `myna serve` would be) refuses the
    old key as soon as the first rotated it, without being told."""
    from myna.mocks.cli import served_mock

    old = _fresh_world(server, "rotated-elsewhere")
    other = served_mock("itsm", db=server.db, admin_token=ADMIN_TOKEN)
    try:
        assert other.auth.principal(_lower(_bearer(old["token"])), "rotated-elsewhere")
        new = server.admin("POST", "/worlds/rotated-elsewhere/credentials").json()["credentials"]
        assert other.auth.principal(_lower(_bearer(old["token"])), "rotated-elsewhere") is None
        assert other.auth.principal(_lower(_bearer(new["token"])), "rotated-elsewhere")
    finally:
        other.store.close()


def _lower(headers: dict[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def test_a_forged_generation_is_refused(server: Server) -> None:
    """The generation is signed with the world: writing the current number into an old key
    does not make it current."""
    old = _fresh_world(server, "forged-generation")["token"]
    server.admin("POST", "/worlds/forged-generation/credentials")
    named, generation, mac = old.split(".")
    assert generation == "0"
    for forged in (f"{named}.1.{mac}", f"{named}.01.{mac}", f"{named}.1", f"{named}.{mac}"):
        assert _reads(server, "forged-generation", _bearer(forged)) == 401


def test_a_deleted_world_created_again_does_not_take_its_old_credential(server: Server) -> None:
    old = _fresh_world(server, "reborn")
    assert server.admin("DELETE", "/worlds/reborn").status_code == 204
    new = _fresh_world(server, "reborn")

    assert new["token"] != old["token"]
    assert _reads(server, "reborn", _bearer(old["token"])) == 401
    assert _reads(server, "reborn", _bearer(new["token"])) == 200


def test_only_the_admin_rotates_and_only_worlds_that_exist(server: Server) -> None:
    given = _fresh_world(server, "kept")
    by_agent = httpx.post(
        f"{server.url}/_myna/admin/worlds/kept/credentials", headers=_bearer(given["token"])
    )
    missing = server.admin("POST", "/worlds/no-such-world/credentials")

    assert by_agent.status_code == 401
    assert _reads(server, "kept", _bearer(given["token"])) == 200
    assert missing.status_code == 404


def test_a_world_credential_works_at_routes_that_authenticate_in_their_transaction(
    store_url: str,
) -> None:
    """Salesforce's token endpoint and Bulk API 1.0 check the credential inside the request's
    transaction: the key's generation is read there too (on SQLite's one connection, as part
    of it), not in a second transaction that SQLite refuses."""
    from myna.mocks import MockClient

    mock = served_mock("crm", db=store_url, admin_token=ADMIN_TOKEN)
    client = MockClient(mock)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    created = client.post("/_myna/admin/worlds", json={"id": "w1"}, headers=admin)
    given = created.json()["credentials"]
    form = {"grant_type": "password", "username": given["user"], "password": given["password"]}
    body = "&".join(f"{name}={value}" for name, value in form.items()).encode()
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}

    token = client.post("/worlds/w1/services/oauth2/token", content=body, headers=form_type)
    bulk = client.get(
        "/worlds/w1/services/async/59.0/job/750000000000001",
        headers={"X-SFDC-Session": given["token"]},
    )

    assert token.status == 200, token.body
    assert bulk.status == 400  # the job is unknown: the session was taken
    assert bulk.json()["exceptionCode"] == "InvalidJob"
    client.post("/_myna/admin/worlds/w1/credentials", headers=admin)
    again = client.post("/worlds/w1/services/oauth2/token", content=body, headers=form_type)
    assert again.status in (400, 401)
    mock.store.close()
