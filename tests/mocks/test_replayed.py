"""Replayed operations: the recorded answer most like the request, body included."""

from __future__ import annotations

from myna.mocks import Mock, MockClient
from myna.schemas import learn
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
