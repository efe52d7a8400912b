"""Replayed operations: the recorded answer most like the request, body included."""

from __future__ import annotations

from rich.console import Console

from myna.mocks import Mock, MockClient
from myna.mocks.conformance import run_conformance
from myna.schemas import learn
from myna.schemas.render import operations_table
from myna.traces.model import Session
from tests.schemas.traffic import exchange, session

REPORTS = "https://bi.example.com/api/reports/run"


def test_a_search_sent_as_a_post_body_gets_the_answer_recorded_for_that_body() -> None:
    # A report endpoint whose answers hold no records: the mock replays what was recorded, and
    # the only thing telling the requests apart is what each one sent.
    bodies = {"sales": {"rows": [["north", 12], ["south", 7]]}, "churn": {"rows": [["q1", 0.04]]}}
    traffic = session(
        *(
            exchange("POST", REPORTS, request={"report": name, "limit": 10}, response=answer)
            for name, answer in bodies.items()
        )
    )
    (model,) = learn([traffic])
    client = MockClient(Mock(model))

    for name, answer in bodies.items():
        assert client.post("/api/reports/run", json={"report": name, "limit": 10}).json() == answer
    # Not a body it recorded: still the answer of the body most like it.
    almost = client.post("/api/reports/run", json={"report": "churn", "limit": 50})
    assert almost.json() == bodies["churn"]
    # A body that is no JSON picks by the rest of the request, as before.
    assert client.post("/api/reports/run", content=b"{not json").status < 500


TRACKER = "https://tracker.example.com"
SIGNED = {"Authorization": "Bearer [REDACTED]"}
PUBLIC_INFO = {"baseUrl": TRACKER, "version": "9.1.0", "serverTitle": "Tracker"}
SIGNED_INFO = {**PUBLIC_INFO, "serverTime": "2024-05-01T10:00:00.000+0000"}
LOGIN = "/login.jsp?os_destination=%2Frest%2Fapi%2F3%2FserverInfo"
ANONYMOUS_SESSION = {"authenticated": False, "loginUrl": "/login.jsp"}
USER_SESSION = {"authenticated": True, "name": "ann"}


def _tracker_traffic() -> Session:
    """A service that signs callers in with a bearer token, but answers its version endpoint
    to anyone (telling anonymous callers less), redirects an unsigned caller of its other API
    base to its login page, and refuses HEAD at its root."""
    return session(
        exchange("GET", f"{TRACKER}/rest/api/2/serverInfo", response=PUBLIC_INFO),
        exchange("GET", f"{TRACKER}/rest/api/2/serverInfo", response=SIGNED_INFO, headers=SIGNED),
        exchange(
            "GET",
            f"{TRACKER}/rest/api/2/issue/10001",
            response={"id": "10001", "key": "T-1", "summary": "Printer jammed"},
            headers=SIGNED,
        ),
        exchange(
            "GET",
            f"{TRACKER}/rest/api/3/serverInfo",
            status=302,
            response_headers={"Location": LOGIN},
            text="<html>login</html>",
        ),
        exchange("HEAD", f"{TRACKER}/", status=405),
        exchange("GET", f"{TRACKER}/rest/api/2/session", response=ANONYMOUS_SESSION),
        exchange("GET", f"{TRACKER}/rest/api/2/session", response=USER_SESSION, headers=SIGNED),
        # Not found for an anonymous caller: not a reason to open the records to everyone.
        exchange("GET", f"{TRACKER}/rest/api/2/issue/10002", status=404, response={"e": "none"}),
    )


def _tracker() -> Mock:
    (model,) = learn([_tracker_traffic()])
    return Mock(model, open_worlds=False)


def test_an_endpoint_answered_without_a_credential_is_public_telling_anonymous_callers_less() -> (
    None
):
    mock = _tracker()
    public = {op.path: op.public for op in mock.model.operations}
    assert public["/rest/api/2/serverInfo"] is True
    assert public["/rest/api/2/issue/{issueId}"] is False

    anonymous = MockClient(mock)
    signed_in = MockClient(mock, headers={"Authorization": "Bearer myna-token"})
    assert anonymous.get("/rest/api/2/serverInfo").json() == PUBLIC_INFO
    assert signed_in.get("/rest/api/2/serverInfo").json() == SIGNED_INFO
    # What the recording only answered to signed-in callers stays theirs.
    assert anonymous.get("/rest/api/2/issue/10001").status == 401
    # Signed in, the caller gets past the sign-in to the (empty) world: no such record.
    assert signed_in.get("/rest/api/2/issue/10001").status == 404


def test_a_wrong_credential_is_refused_even_where_no_credential_is_welcome() -> None:
    wrong = MockClient(_tracker(), headers={"Authorization": "Bearer guessed"})
    assert wrong.get("/rest/api/2/serverInfo").status == 401


def test_an_anonymous_caller_reaches_public_endpoints_of_the_default_world_only() -> None:
    # Worlds are capabilities: naming another world without its credential must not open it,
    # nor tell whether it exists, even on an endpoint that needs no credential.
    mock = _tracker()
    mock.ensure_world("episode-7")
    anonymous = MockClient(mock)
    for world in ("episode-7", "no-such-world"):
        answer = anonymous.get("/rest/api/2/serverInfo", headers={"X-Myna-World": world})
        assert answer.status == 401


def test_redirects_and_refused_methods_are_answered_as_recorded() -> None:
    # `/rest/api/3` only ever redirected to the login page: it is still part of the service.
    client = MockClient(_tracker())
    redirected = client.get("/rest/api/3/serverInfo")
    assert redirected.status == 302
    assert dict(redirected.headers)["location"] == LOGIN
    assert client.request("HEAD", "/").status == 405


def test_conformance_replays_each_request_signed_as_it_was_recorded() -> None:
    # Signing every replayed request in would get the anonymous request the signed-in answer.
    traffic = _tracker_traffic()
    (model,) = learn([traffic])
    report = run_conformance(model, [traffic])
    # All but the record an anonymous caller was told does not exist: the mock asks for a
    # credential there, as for every record the recording only showed to signed-in callers.
    assert [(m.path, m.status) for m in report.mismatches] == [("/rest/api/2/issue/10002", 401)]
    assert report.matched == report.total - 1 == 7


def test_model_show_says_which_operations_answer_callers_without_a_credential() -> None:
    console = Console(width=300, record=True)
    console.print(operations_table(_tracker().model))
    rows = {
        line.split("│")[3].strip() + " " + line.split("│")[2].strip(): line
        for line in console.export_text().splitlines()
        if line.startswith("│")
    }
    assert "without a credential too" in rows["/rest/api/2/serverInfo GET"]
    assert "without a credential" not in rows["/rest/api/2/issue/{issueId} GET"]
