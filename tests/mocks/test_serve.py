"""The mock over real sockets: uvicorn over HTTP and HTTPS, and the `myna serve` command."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from myna.mocks import Mock, MockClient
from myna.mocks.example import servicenow_example
from myna.mocks.serve import Running, free_port, serving
from myna.schemas.openapi import save
from tests.mocks.conftest import ADMIN_TOKEN, ALICE, TABLE, USER, build_mock

INCIDENTS = f"{TABLE}/incident"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Mock, Running]]:
    mock = build_mock()
    with serving(mock) as running:
        yield mock, running


@pytest.fixture
def http(served: tuple[Mock, Running]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served[1].base_url, auth=USER) as client:
        yield client


def test_create_and_read_back_over_http(http: httpx.Client, served: tuple[Mock, Running]) -> None:
    created = http.post(INCIDENTS, json={"short_description": "over http", "caller_id": ALICE})

    assert created.status_code == 201
    record = created.json()["result"]
    # Links name the host the client called, as ServiceNow's do.
    assert record["caller_id"]["link"] == f"{served[1].base_url}{TABLE}/sys_user/{ALICE}"
    fetched = http.get(f"{INCIDENTS}/{record['sys_id']}")
    assert fetched.json() == {"result": record}
    assert fetched.headers["content-type"] == "application/json"


def test_http_and_in_process_answers_agree(
    http: httpx.Client, served: tuple[Mock, Running]
) -> None:
    mock, running = served
    in_process = MockClient(mock, auth=USER, base_url=running.base_url)
    for path, params in ((INCIDENTS, {"sysparm_limit": "1"}), (f"{INCIDENTS}/{'0' * 32}", {})):
        over_http = http.get(path, params=params)
        direct = in_process.get(path, params=params)

        assert over_http.status_code == direct.status
        assert over_http.json() == direct.json()
        assert over_http.headers.get("link") == direct.header("Link")


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"{broken", 400), (b'{"short_description": 5, "x": 1}', 400), (b"[]", 400)],
    ids=["malformed", "unknown-field", "array"],
)
def test_bad_bodies_over_http_are_400_in_the_services_shape(
    http: httpx.Client, content: bytes, expected: int
) -> None:
    response = http.post(INCIDENTS, content=content, headers={"content-type": "application/json"})

    assert response.status_code == expected
    assert response.json()["status"] == "failure"


def test_auth_and_admin_are_separate_over_http(served: tuple[Mock, Running]) -> None:
    base = served[1].base_url
    admin_headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    assert httpx.get(f"{base}{INCIDENTS}").status_code == 401
    assert httpx.get(f"{base}{INCIDENTS}", headers=admin_headers).status_code == 401
    assert httpx.get(f"{base}/_myna/admin/worlds", auth=USER).status_code == 401
    assert httpx.get(f"{base}/_myna/admin/worlds", headers=admin_headers).status_code == 200


def test_worlds_are_isolated_over_http(http: httpx.Client, served: tuple[Mock, Running]) -> None:
    base = served[1].base_url
    admin_headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    for world in ("red", "blue"):
        response = httpx.post(
            f"{base}/_myna/admin/worlds", json={"id": world}, headers=admin_headers
        )
        assert response.status_code == 201

    http.post(f"/worlds/red{INCIDENTS}", json={"short_description": "red only"})

    red = http.get(f"/worlds/red{INCIDENTS}").json()["result"]
    blue = http.get(INCIDENTS, headers={"X-Myna-World": "blue"}).json()["result"]
    assert [r["short_description"] for r in red] == ["red only"]
    assert blue == []


def test_openapi_json_is_served(http: httpx.Client) -> None:
    document = http.get("/openapi.json").json()

    assert INCIDENTS in document["paths"]


def test_https_with_the_generated_ca() -> None:
    with serving(build_mock(), tls=True) as running:
        assert running.base_url.startswith("https://")
        assert running.ca_file is not None
        trusted = ssl.create_default_context(cafile=str(running.ca_file))
        with httpx.Client(base_url=running.base_url, verify=trusted, auth=USER) as client:
            assert client.get(INCIDENTS).status_code == 200
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{running.base_url}{INCIDENTS}", verify=ssl.create_default_context())


def test_the_serve_command_serves_a_model_file_over_tls(tmp_path: Path) -> None:
    model_file = tmp_path / "servicenow.yaml"
    save(servicenow_example(), model_file)
    ca_file = tmp_path / "ca.pem"
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "from myna.cli import main; main()",
        "serve",
        str(model_file),
        "--port",
        str(port),
        "--records",
        "3",
        "--tls",
        "--ca-out",
        str(ca_file),
        "--credential",
        "agent:pw",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "MYNA_ADMIN_TOKEN": "cli-admin-token-of-the-test",
    }
    with subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as process:
        try:
            response = _wait_for(f"https://127.0.0.1:{port}{INCIDENTS}", ca_file, ("agent", "pw"))
        finally:
            process.terminate()
            _, stderr = process.communicate(timeout=10)
    assert response.status_code == 200, stderr.decode()
    assert response.headers["x-total-count"] == "3"


def _wait_for(url: str, ca_file: Path, auth: tuple[str, str]) -> httpx.Response:
    deadline = time.monotonic() + 20
    while True:
        try:
            if ca_file.exists():
                trusted = ssl.create_default_context(cafile=str(ca_file))
                return httpx.get(url, auth=auth, verify=trusted)
        except httpx.ConnectError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer within 20 s")
        time.sleep(0.1)


def test_strict_mode_answers_500_when_the_mock_breaks_its_own_model() -> None:
    mock = build_mock()
    broken = {"sys_id": "c" * 32, "short_description": "x", "state": "99"}  # not a state
    mock.store.create_world(
        "broken", from_snapshot=mock.store.load_base(iter([("incident", "c" * 32, broken)]), "bad")
    )
    with serving(mock) as running:
        response = httpx.get(f"{running.base_url}/worlds/broken{INCIDENTS}/{'c' * 32}", auth=USER)

    assert response.status_code == 500
    assert response.json()["error"]["kind"] == "response_contract"
    assert "result/state" in response.json()["error"]["message"]
