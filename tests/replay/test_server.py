"""The HTTP episode server keeps attempts apart: an agent reaches its own world through its own
unguessable prefix and nothing else (no other attempt's world, no root world, no admin API, no
other attempt's submit), and the verifier and reference solution never leave the server.

The attacker here knows more than any agent can learn through the API: the names of every world
in the store and the mock's admin token, so the tests show the prefix is the only capability."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from myna.mocks import MockClient
from myna.mocks.calllog import DEFAULT_CAPACITY
from myna.replay.episode import AllowedChange, Episode, ModelRef, NoCollateral
from myna.replay.mock_world import MockWorlds, Replayers, side_effect_resources
from myna.replay.server import create_app
from tests.replay.conftest import A2, U1, resolve_episode

EPISODE_TOKEN = "episode-server-token-for-tests"

ITSM = ModelRef(name="itsm")
TABLE = "/api/now/table"
RESOLVE = {
    "state": "6",
    "close_code": "Solved (Permanently)",
    "close_notes": "Restarted the VPN concentrator; tunnels hold again.",
}
NOT_FOUND = {"detail": "Not Found"}


@pytest.fixture(scope="module")
def replayers() -> Replayers:
    return Replayers()


@pytest.fixture(scope="module")
def episode(replayers: Replayers) -> Episode:
    """The shared resolve episode on the built-in ITSM back end, whose own bookkeeping (derived
    fields, audit records) the collateral guard ignores."""
    episode = resolve_episode()
    guard = NoCollateral(
        name="nothing else",
        allowed=[AllowedChange(resource="incident", record_id=A2)],
        ignore_resources=side_effect_resources(replayers.model(ITSM)),
    )
    checks = [c for c in episode.verifier.checks if c.kind != "no_collateral"] + [guard]
    return episode.model_copy(
        update={
            "environment": episode.environment.model_copy(update={"model": ITSM}),
            "verifier": episode.verifier.model_copy(update={"checks": checks}),
        }
    )


@pytest.fixture
def server(episode: Episode, replayers: Replayers) -> Iterator[TestClient]:
    app = create_app([episode], replayers, token=EPISODE_TOKEN)
    with TestClient(app, headers={"Authorization": f"Bearer {EPISODE_TOKEN}"}) as client:
        yield client


@pytest.fixture
def worlds(replayers: Replayers) -> MockWorlds:
    return replayers.worlds(ITSM)


class Attempt:
    """One reset as an agent sees it, plus (for the attacker) the name of its world."""

    def __init__(self, server: TestClient, episode: Episode, worlds: MockWorlds) -> None:
        before = _world_names(worlds)
        self.started: dict[str, Any] = server.post(f"/episodes/{episode.id}/reset").json()
        [self.world] = _world_names(worlds) - before
        self.id: str = self.started["attempt_id"]
        self.base = str(self.started["base_url"]).removeprefix("http://testserver")
        self.auth = tuple(self.started["auth"]["basic"])


def _world_names(worlds: MockWorlds) -> set[str]:
    return {info.id for info in worlds.store.worlds()}


def _batch(url: str, method: str = "GET", body: dict[str, Any] | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"id": "1", "method": method, "url": url, "headers": []}
    if body is not None:
        item["body"] = base64.b64encode(json.dumps(body).encode()).decode()
        item["headers"] = [{"name": "Content-Type", "value": "application/json"}]
    return {"batch_request_id": "1", "rest_requests": [item]}


def test_attempt_ids_are_unguessable_and_sequential_ids_reach_nothing(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    first, second = Attempt(server, episode, worlds), Attempt(server, episode, worlds)
    assert first.id != second.id
    assert min(len(first.id), len(second.id)) >= 22  # 128 random bits, URL-safe
    for attempt in (first, second):
        assert attempt.world not in attempt.started["base_url"]
        assert len(attempt.world.removeprefix("attempt-")) >= 22
    for guess in ("a1", "a2", "1", "attempt-1"):
        assert server.post(f"/attempts/{guess}/submit", json={}).status_code == 404
        assert server.delete(f"/attempts/{guess}").status_code == 404
    # Both attempts are still open: nobody else's guess closed or scored them.
    for attempt in (first, second):
        assert server.get(f"{attempt.base}{TABLE}/incident", auth=attempt.auth).status_code == 200


def test_an_attempt_cannot_read_or_write_another_world_by_any_route(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    mine, theirs = Attempt(server, episode, worlds), Attempt(server, episode, worlds)
    marked = {"short_description": "theirs"}
    assert (
        server.patch(f"{theirs.base}{TABLE}/incident/{A2}", json=marked, auth=theirs.auth)
    ).status_code == 200
    others = _world_names(worlds) - {mine.world}
    assert {theirs.world, "default"} <= others
    record = f"{TABLE}/incident/{A2}"
    attack = {"short_description": "mine"}
    for world in others:
        for path in (
            f"/mock/0/worlds/{world}{record}",
            f"/mock/0{record}",
            f"{mine.base}/worlds/{world}{record}",
            f"/attempts/{mine.id}/mock/worlds/{world}{record}",
        ):
            assert server.get(path, auth=mine.auth).status_code == 404, path
            assert server.patch(path, json=attack, auth=mine.auth).status_code == 404, path
        # The world header is not the agent's to set: the request stays in its own world.
        named = server.get(f"{mine.base}{record}", headers={"X-Myna-World": world}, auth=mine.auth)
        assert named.json()["result"]["short_description"] == "VPN drops"
        # Nor can a batch's inner requests leave the outer request's world.
        for method, body in (("GET", None), ("PATCH", attack)):
            batch = _batch(f"/worlds/{world}{record}", method, body)
            answer = server.post(f"{mine.base}/api/now/v1/batch", json=batch, auth=mine.auth)
            [served] = answer.json()["serviced_requests"]
            assert served["status_code"] == 404, (world, method)
            assert "theirs" not in base64.b64decode(served["body"]).decode()
    seen = server.get(f"{theirs.base}{record}", auth=theirs.auth).json()["result"]
    assert seen["short_description"] == "theirs"
    assert MockClient(worlds.mock, auth=worlds.auth).get(f"{TABLE}/incident").json() == {
        "result": []
    }


def test_the_admin_api_is_unreachable_even_with_its_token(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    mine = Attempt(server, episode, worlds)
    leaked = {"Authorization": f"Bearer {worlds.mock.admin_token}"}
    for path in (
        f"{mine.base}/_myna/admin/worlds",
        f"{mine.base}/_myna/admin/worlds/{mine.world}/calls",
        "/mock/0/_myna/admin/worlds",
    ):
        answer = server.get(path, headers=leaked)
        assert answer.status_code == 404, path
        assert mine.world not in answer.text
    created = server.post(f"{mine.base}/_myna/admin/worlds", json={"id": "x"}, headers=leaked)
    assert created.status_code == 404
    assert "x" not in _world_names(worlds)


def test_a_closed_attempt_answers_404_like_one_that_never_existed(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    submitted, abandoned = Attempt(server, episode, worlds), Attempt(server, episode, worlds)
    assert server.post(f"/attempts/{submitted.id}/submit", json={}).status_code == 200
    assert server.delete(f"/attempts/{abandoned.id}").status_code == 204
    for attempt in (submitted, abandoned):
        answer = server.get(f"{attempt.base}{TABLE}/incident/{A2}", auth=attempt.auth)
        assert (answer.status_code, answer.json()) == (404, NOT_FOUND)
        assert server.post(f"/attempts/{attempt.id}/submit", json={}).status_code == 404
        assert attempt.world not in _world_names(worlds)
    never = server.get(f"/attempts/never-issued/mock{TABLE}/incident", auth=submitted.auth)
    assert (never.status_code, never.json()) == (404, NOT_FOUND)


def test_links_in_answers_lead_back_into_the_attempts_own_prefix(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    mine = Attempt(server, episode, worlds)
    base_url = mine.started["base_url"]
    page = server.get(f"{mine.base}{TABLE}/incident", params={"sysparm_limit": "1"}, auth=mine.auth)
    links = httpx.Response(200, headers=page.headers).links
    assert links["next"]["url"].startswith(f"{base_url}{TABLE}/incident?")
    assert mine.world not in page.headers["link"]
    following = server.get(links["next"]["url"], auth=mine.auth)
    assert [r["number"] for r in following.json()["result"]] == ["INC0010002"]
    record = server.get(f"{mine.base}{TABLE}/incident/{A2}", auth=mine.auth).json()["result"]
    assert record["assigned_to"]["link"] == f"{base_url}{TABLE}/sys_user/{U1}"


def test_the_verifier_and_reference_never_leave_the_server(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    answers = [server.get("/episodes")]
    failing, passing = Attempt(server, episode, worlds), Attempt(server, episode, worlds)
    answers.append(server.post(f"/episodes/{episode.id}/reset"))
    patched = server.patch(f"{passing.base}{TABLE}/incident/{A2}", json=RESOLVE, auth=passing.auth)
    assert patched.status_code == 200
    answers.append(server.post(f"/attempts/{failing.id}/submit", json={}))
    answers.append(server.post(f"/attempts/{passing.id}/submit", json={"answer": "done"}))
    assert [a.json()["passed"] for a in answers[-2:]] == [False, True]
    texts = [failing.started, passing.started] + [a.json() for a in answers]
    # The expected values, the close-notes pattern (as JSON spells it), the reference's body.
    hidden = ["Solved (Permanently)", "reboot", "Restarted the VPN concentrator"]
    hidden += ["field_equals", "no_collateral"]
    for text in map(json.dumps, texts):
        assert not any(secret in text for secret in hidden), text
    for started in (failing.started, passing.started):
        assert set(started) == {"attempt_id", "base_url", "auth", "instruction", "tools"}
    for scored in answers[-2:]:
        assert all(set(check) == {"name", "passed", "weight"} for check in scored.json()["checks"])


def test_attempts_to_leave_the_world_count_against_the_policy_at_submit(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    mine = Attempt(server, episode, worlds)
    assert server.get(f"{mine.base}/_myna/admin/worlds", auth=mine.auth).status_code == 404
    scored = server.post(f"/attempts/{mine.id}/submit", json={}).json()
    assert scored["repercussion"]["kind"] == "forbidden_call"
    assert "/_myna/admin/worlds" in scored["repercussion"]["detail"]


def test_a_forbidden_call_is_not_forgotten_behind_many_later_calls(
    server: TestClient, episode: Episode, worlds: MockWorlds
) -> None:
    """The mock's own call log keeps the last thousand calls; the policy must see every one."""
    mine = Attempt(server, episode, worlds)
    assert server.delete(f"{mine.base}{TABLE}/sys_user/{U1}", auth=mine.auth).status_code == 204
    for _ in range(DEFAULT_CAPACITY):
        server.get(f"{mine.base}{TABLE}/incident/{A2}", auth=mine.auth)
    scored = server.post(f"/attempts/{mine.id}/submit", json={}).json()
    assert scored["repercussion"]["kind"] == "forbidden_call"


@pytest.mark.parametrize(
    ("inner", "caught"),
    [
        pytest.param(("DELETE", f"{TABLE}/sys_user/{U1}"), "DELETE", id="delete-in-a-batch"),
        pytest.param(("GET", "/_myna/admin/worlds"), "admin", id="admin-in-a-batch"),
        pytest.param(("DELETE", f"/api/now/v2/table/sys_user/{U1}"), "DELETE", id="alias-path"),
    ],
)
def test_a_forbidden_call_inside_a_batch_breaks_the_policy(
    server: TestClient, episode: Episode, worlds: MockWorlds, inner: tuple[str, str], caught: str
) -> None:
    mine = Attempt(server, episode, worlds)
    patched = server.patch(f"{mine.base}{TABLE}/incident/{A2}", json=RESOLVE, auth=mine.auth)
    assert patched.status_code == 200
    method, path = inner
    batch = _batch(path, method)
    nested = {"batch_request_id": "2", "rest_requests": [_inner_batch(batch)]}
    for sent in (batch, nested):
        answer = server.post(f"{mine.base}/api/now/v1/batch", json=sent, auth=mine.auth)
        assert answer.status_code == 200
    scored = server.post(f"/attempts/{mine.id}/submit", json={}).json()
    assert (scored["passed"], scored["repercussion"]["kind"]) == (False, "forbidden_call")
    assert caught in scored["repercussion"]["detail"]


def _inner_batch(batch: dict[str, Any]) -> dict[str, Any]:
    body = base64.b64encode(json.dumps(batch).encode()).decode()
    return {"id": "b", "method": "POST", "url": "/api/now/v1/batch", "body": body}


def test_in_process_a_batch_hiding_a_forbidden_call_is_never_sent(
    episode: Episode, replayers: Replayers
) -> None:
    attempt = replayers.runner(episode).start()
    hidden = _batch(f"{TABLE}/sys_user/{U1}", "DELETE")
    reply = attempt.call("POST", "/api/now/v1/batch", body=hidden)
    assert reply.status == 403
    assert attempt.repercussion is not None
    assert "DELETE" in attempt.repercussion.detail
    assert attempt.world.changes() == []
    assert [call.nested for call in attempt.calls] == [False, True]


def test_listing_and_reset_need_the_servers_token(episode: Episode, replayers: Replayers) -> None:
    app = create_app([episode], replayers, token=EPISODE_TOKEN)
    with TestClient(app) as anyone:
        wrong = {"Authorization": "Bearer not-the-token"}
        for headers in ({}, wrong):
            assert anyone.get("/episodes", headers=headers).status_code == 401
            assert anyone.post(f"/episodes/{episode.id}/reset", headers=headers).status_code == 401
        right = {"Authorization": f"Bearer {EPISODE_TOKEN}"}
        assert anyone.get("/episodes", headers=right).status_code == 200
