"""`myna record --upstream`: a recording reverse proxy in front of a served built-in back end.

The recording is learned and served again, and `conformance` replays it against that mock; the
command itself runs over TLS on both sides and is stopped with Ctrl-C.
"""

from __future__ import annotations

import json
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from myna.mocks.cli import served_mock
from myna.mocks.conformance import run_conformance
from myna.mocks.record import RecordingProxy
from myna.mocks.serve import Running, free_port, serving, serving_app
from myna.schemas import learn
from myna.traces import Exchange, Session, read
from myna.traces.filters import Filters
from myna.traces.options import ReadOptions
from myna.traces.recorder import Recorder
from myna.traces.redact import REDACTED

TABLE = "/api/now/table"
AUTH = ("myna", "myna")


@pytest.fixture(scope="module")
def upstream() -> Iterator[Running]:
    """The ITSM back end as `myna serve itsm` serves it (its reference world)."""
    with serving(served_mock("itsm")) as running:
        yield running


@contextmanager
def recording(
    upstream: Running, path: Path, options: ReadOptions | None = None
) -> Iterator[httpx.Client]:
    """A client talking to the upstream through a recording proxy writing `path`."""
    session = Session(id=path.stem, metadata={"format": "record"})
    with Recorder(path, session, options) as recorder:
        proxy = RecordingProxy(upstream.base_url, recorder)
        with (
            serving_app(proxy, lifespan="on") as running,
            httpx.Client(base_url=running.base_url, auth=AUTH, timeout=30) as client,
        ):
            yield client


def _help_desk_session(client: httpx.Client) -> int:
    """What an agent on a help desk does: look, open, work and close tickets. Returns the count
    of requests sent."""
    sent = 0

    def call(method: str, path: str, **kwargs: object) -> httpx.Response:
        nonlocal sent
        sent += 1
        return client.request(method, path, **kwargs)  # type: ignore[arg-type]

    users = call("GET", f"{TABLE}/sys_user", params={"sysparm_limit": "5"}).json()["result"]
    caller = users[0]["sys_id"]
    call("GET", f"{TABLE}/incident", params={"sysparm_query": "active=true", "sysparm_limit": "5"})
    created = []
    for number in range(6):
        answer = call(
            "POST",
            f"{TABLE}/incident",
            json={
                "short_description": f"VPN drops every {number + 2} minutes",
                "caller_id": caller,
                "urgency": "2",
                "impact": "2",
            },
        )
        assert answer.status_code == 201, answer.text
        created.append(answer.json()["result"]["sys_id"])
    for sys_id in created:
        call("GET", f"{TABLE}/incident/{sys_id}")
        call("PATCH", f"{TABLE}/incident/{sys_id}", json={"state": "2", "assigned_to": caller})
        call(
            "GET",
            f"{TABLE}/incident/{sys_id}",
            params={"sysparm_fields": "number,state,short_description"},
        )
    for sys_id in created[:3]:
        call(
            "PATCH",
            f"{TABLE}/incident/{sys_id}",
            json={"state": "6", "close_code": "Solved (Permanently)", "close_notes": "Fixed"},
        )
    call("GET", f"{TABLE}/incident", params={"sysparm_query": f"caller_id={caller}"})
    call("DELETE", f"{TABLE}/incident/{created[-1]}")
    assert call("GET", f"{TABLE}/incident/{created[-1]}").status_code == 404
    assert call("POST", f"{TABLE}/incident", content=b"{not json").status_code == 400
    return sent


def test_a_recording_learned_and_served_again_passes_conformance(
    upstream: Running, tmp_path: Path
) -> None:
    path = tmp_path / "helpdesk.jsonl"
    with recording(upstream, path) as client:
        sent = _help_desk_session(client)

    sessions = list(read(path))
    exchanges = [event for session in sessions for event in session.exchanges]
    assert len(exchanges) == sent
    (model,) = learn(read(path), service="itsm")
    report = run_conformance(model, read(path), one_world=True)

    assert report.total == sent
    assert report.share >= 0.98, report.mismatches


def test_the_proxy_passes_answers_through_and_records_them_redacted(
    upstream: Running, tmp_path: Path
) -> None:
    path = tmp_path / "one.jsonl"
    with recording(upstream, path) as client:
        through = client.get(f"{TABLE}/incident", params={"sysparm_limit": "2"})
    direct = httpx.get(
        f"{upstream.base_url}{TABLE}/incident", params={"sysparm_limit": "2"}, auth=AUTH
    )

    assert (through.status_code, through.json()) == (direct.status_code, direct.json())
    (exchange,) = next(iter(read(path))).exchanges
    assert isinstance(exchange, Exchange)
    assert exchange.url == f"{upstream.base_url}{TABLE}/incident?sysparm_limit=2"
    assert exchange.query == [("sysparm_limit", "2")]
    assert exchange.request_header("authorization") == f"Basic {REDACTED}"
    assert exchange.response_body.value == direct.json()


def test_filters_leave_requests_out_of_the_recording_not_out_of_the_traffic(
    upstream: Running, tmp_path: Path
) -> None:
    path = tmp_path / "gets.jsonl"
    options = ReadOptions(filters=Filters.build(methods=["GET"]))
    with recording(upstream, path, options) as client:
        created = client.post(f"{TABLE}/incident", json={"short_description": "kept out"})
        client.get(f"{TABLE}/incident/{created.json()['result']['sys_id']}")

    assert created.status_code == 201
    assert [exchange.method for exchange in next(iter(read(path))).exchanges] == ["GET"]


def test_an_unreachable_upstream_is_a_502_and_no_recorded_exchange(tmp_path: Path) -> None:
    path = tmp_path / "nothing.jsonl"
    gone = Running(base_url=f"http://127.0.0.1:{free_port()}", ca_file=None)
    with recording(gone, path) as client:
        answer = client.get("/anything")

    assert answer.status_code == 502
    assert "did not answer" in answer.json()["error"]
    assert [session.events for session in read(path)] == [[]]


def test_the_command_over_tls_both_ways_leaves_a_complete_file_on_ctrl_c(
    tmp_path: Path,
) -> None:
    output = tmp_path / "tls.jsonl"
    port = free_port()
    with serving(served_mock("itsm"), tls=True) as secure:
        assert secure.ca_file is not None
        command = [
            sys.executable, "-c", "from myna.cli import main; main()", "record",
            "--upstream", secure.base_url, "--upstream-ca", str(secure.ca_file),
            "--port", str(port), "--tls", "--ca-out", str(tmp_path / "proxy-ca.pem"),
            "-o", str(output),
        ]  # fmt: skip
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        try:
            answers = _get_when_up(
                f"https://127.0.0.1:{port}{TABLE}/incident", tmp_path / "proxy-ca.pem", count=3
            )
        finally:
            process.send_signal(signal.SIGINT)
            _, errors = process.communicate(timeout=30)

    assert process.returncode == 0, errors
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert "recorded 3 exchange(s)" in errors
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "exchange", "exchange", "exchange"]


def _get_when_up(url: str, ca_file: Path, *, count: int) -> list[httpx.Response]:
    deadline = time.monotonic() + 30
    while not ca_file.exists() or ca_file.stat().st_size == 0:
        assert time.monotonic() < deadline, "the proxy never wrote its CA"
        time.sleep(0.05)
    trust = ssl.create_default_context(cafile=str(ca_file))
    with httpx.Client(verify=trust, auth=AUTH, params={"sysparm_limit": "1"}) as client:
        while True:
            try:
                first = client.get(url)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the proxy never started"
                time.sleep(0.05)
        return [first, *(client.get(url) for _ in range(count - 1))]
