"""What the cassette fixtures recorded, and how Myna should read it back.

`fixtures/record_cassettes.py` served these answers and recorded them with vcrpy, Betamax and
nock; each reader must give back, per call, the served status and body (parsed, redacted).
"""

from __future__ import annotations

import base64
import importlib.util
from pathlib import Path
from typing import Any

from myna.traces import Exchange, read

FIXTURES = Path(__file__).parent / "fixtures"


def _recorder() -> Any:
    spec = importlib.util.spec_from_file_location(
        "record_cassettes", FIXTURES / "record_cassettes.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RECORDER = _recorder()

# (method, path, status, body kind, body value) in the order record_cassettes.calls makes them.
TICKETS = ("GET", "/api/v2/tickets.json", 200, "json", {"tickets": RECORDER.TICKETS})
CREATE = (
    "POST",
    "/api/v2/tickets.json",
    201,
    "json",
    {**RECORDER.CREATED, "api_token": "[REDACTED]"},
)
GROUPS = ("GET", "/api/v2/groups.json", 200, "json", {"groups": [{"id": 5, "name": "Network"}]})
BLOB = ("GET", "/files/blob", 200, "base64", base64.b64encode(RECORDER.BLOB).decode())
NOTE = ("GET", "/notes/1", 200, "text", RECORDER.LATIN1)
TOKEN = (
    "POST",
    "/oauth/token",
    200,
    "json",
    {"access_token": "[REDACTED]", "token_type": "bearer"},
)
DELETE = ("DELETE", "/api/v2/tickets/1.json", 204, "empty", None)

EVERY_CALL = [TICKETS, CREATE, GROUPS, BLOB, NOTE, TOKEN, DELETE]
TEXT_ONLY = [TICKETS, CREATE, GROUPS, TOKEN, DELETE]
"""vcrpy's JSON serializer and Betamax cannot hold bytes that are not UTF-8: recorded without."""

RECORDED = {
    "vcrpy.yaml": EVERY_CALL,
    "vcrpy.json": TEXT_ONLY,
    "betamax.json": TEXT_ONLY,
    "nock.json": EVERY_CALL,
}


def exchanges(name: str) -> list[Exchange]:
    return [exchange for session in read(FIXTURES / name) for exchange in session.exchanges]


def summary(exchange: Exchange) -> tuple[str, str, int, str, Any]:
    body = exchange.response_body
    return exchange.method, exchange.path, exchange.status, body.kind, body.value
