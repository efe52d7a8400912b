"""Client mistakes against the served built-in back ends, over HTTP, on SQLite and PostgreSQL:
each is a 4xx in the service's own error shape, never a 5xx (issue 15's list, one case each)."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from myna.mocks.cli import served_mock
from myna.mocks.serve import serving
from myna.mocks.sqlstore import SqlStore
from tests.conftest import postgres_schema

BACKENDS = ("itsm", "crm", "erp")
TOKEN = {"Authorization": "Bearer myna-token"}
ADMIN = {"Authorization": "Bearer bad-input-admin-token"}
INCIDENTS = "/api/now/table/incident"
QUERY = "/services/data/v59.0/query"
SEARCH = "/services/data/v59.0/search"
ACCOUNTS = "/services/data/v59.0/sobjects/Account"
ERP = "/api/erp/v1"


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def urls(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """Each built-in back end served as `myna serve` serves it, over its own database."""
    with ExitStack() as stack:
        folder = tmp_path_factory.mktemp("bad-input")
        served: dict[str, str] = {}
        for name in BACKENDS:
            db = (
                f"sqlite:///{folder / name}.db"
                if request.param == "sqlite"
                else stack.enter_context(postgres_schema())
            )
            mock = served_mock(name, db=db, admin_token=ADMIN["Authorization"][7:])
            assert isinstance(mock.store, SqlStore)
            stack.callback(mock.store.close)
            served[name] = stack.enter_context(serving(mock, threadpool=True)).base_url
        yield served


def _client(urls: dict[str, str], backend: str) -> httpx.Client:
    return httpx.Client(base_url=urls[backend], headers=TOKEN, timeout=30)


def _service_error(backend: str, response: httpx.Response) -> None:
    """A 4xx in the back end's own error shape."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    body = response.json()
    if backend == "itsm":
        assert body["status"] == "failure"
        assert body["error"]["message"]
    elif backend == "crm":
        assert body[0]["errorCode"]
        assert body[0]["message"]
    else:
        assert body["error"]["code"]
        assert body["error"]["message"]


def _raw(url: str, request: bytes) -> bytes:
    """Send bytes no HTTP client would (a header that is not ASCII); the status line back."""
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=10) as connection:
        connection.sendall(request)
        return connection.recv(4096).split(b"\r\n", 1)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_basic_auth_that_is_not_ascii_is_a_401(urls: dict[str, str], backend: str) -> None:
    status = _raw(
        urls[backend],
        b"GET /api/now/table/incident HTTP/1.1\r\nHost: x\r\n"
        b"Authorization: Basic \xc3\xa9\r\nConnection: close\r\n\r\n",
    )
    assert status == b"HTTP/1.1 401 Unauthorized"


def _batch(item: dict[str, Any]) -> dict[str, Any]:
    return {"batch_request_id": "1", "rest_requests": [{"id": "1", "method": "GET", **item}]}


@pytest.mark.parametrize(
    "item",
    [
        {"url": INCIDENTS, "method": "POST", "body": "!!not base64!!"},
        {"url": INCIDENTS, "body": 5},
        {"url": INCIDENTS, "headers": {"Accept": "application/json"}},
        {"url": INCIDENTS, "headers": ["Accept"]},
        {"url": INCIDENTS, "headers": [{"name": 5, "value": "x"}]},
        {"url": "http://[::1/api"},
        {"url": 5},
    ],
    ids=[
        "body-not-base64",
        "body-not-text",
        "headers-object",
        "headers-strings",
        "header-name-number",
        "url-unparseable",
        "url-number",
    ],
)
def test_a_malformed_batch_item_is_a_400_and_serves_nothing(
    urls: dict[str, str], item: dict[str, Any]
) -> None:
    with _client(urls, "itsm") as client:
        response = client.post("/api/now/v1/batch", json=_batch(item))
    _service_error("itsm", response)


@pytest.mark.parametrize(
    "soql",
    [
        "SELECT Id FROM Account WHERE CreatedDate = LAST_N_DAYS:1000000",
        "SELECT Id FROM Account WHERE CreatedDate = NEXT_N_YEARS:100000",
        "SELECT Id FROM Account WHERE CreatedDate = N_MONTHS_AGO:" + "9" * 40,
        "SELECT Id FROM Account WHERE " + "(" * 2000 + "Name = 'a'" + ")" * 2000,
        "SELECT Id FROM Account WHERE " + "NOT " * 2000 + "Name = 'a'",
        "SELECT Id FROM Account LIMIT " + "9" * 5000,
        "SELECT Id FROM Account LIMIT 10 OFFSET 9223372036854775807",
        "SELECT Id FROM Account WHERE AnnualRevenue > " + "9" * 5000,
    ],
    ids=[
        "last-n-days",
        "next-n-years",
        "n-months-ago-digits",
        "parentheses",
        "nots",
        "limit-digits",
        "offset-huge",
        "number-digits",
    ],
)
def test_soql_out_of_range_or_too_deep_is_malformed_query(urls: dict[str, str], soql: str) -> None:
    with _client(urls, "crm") as client:
        response = client.get(QUERY, params={"q": soql})
    _service_error("crm", response)
    assert response.json()[0]["errorCode"] == "MALFORMED_QUERY"


@pytest.mark.parametrize(
    "sosl",
    [
        "FIND {x} RETURNING Account(Id WHERE " + "(" * 2000 + "Name = 'a'" + ")" * 2000 + ")",
        "FIND {x} RETURNING Account(Id WHERE CreatedDate = LAST_N_DAYS:1000000)",
        "FIND {x} RETURNING Account LIMIT " + "9" * 5000,
    ],
    ids=["parentheses", "last-n-days", "limit-digits"],
)
def test_sosl_out_of_range_or_too_deep_is_refused(urls: dict[str, str], sosl: str) -> None:
    with _client(urls, "crm") as client:
        response = client.get(SEARCH, params={"q": sosl})
    _service_error("crm", response)


@pytest.mark.parametrize(
    "params",
    [
        {"sysparm_query": "short_description=" + "9" * 5000},
        {"sysparm_query": "priority>" + "9" * 5000},
        {"sysparm_limit": "9" * 5000},
    ],
    ids=["digits-text", "digits-compared", "limit-digits"],
)
def test_servicenow_queries_with_huge_numbers_never_fail(
    urls: dict[str, str], params: dict[str, str]
) -> None:
    with _client(urls, "itsm") as client:
        response = client.get(INCIDENTS, params=params)
    assert response.status_code in (200, 400), response.text[:300]


def _an_order(client: httpx.Client) -> str:
    first: str = client.get(f"{ERP}/purchase-orders").json()["data"][0]["id"]
    return first


@pytest.mark.parametrize(
    "body",
    [
        b'{"note": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"note": "\xff\xfe"}',
        b'{"note": ' + b"9" * 5000 + b"}",
        b'{"note": "\\u0000"}',
        b"{not json",
    ],
    ids=["deep", "invalid-utf8", "huge-integer", "nul", "malformed"],
)
def test_erp_actions_read_bodies_through_the_hardened_parser(
    urls: dict[str, str], body: bytes
) -> None:
    with _client(urls, "erp") as client:
        order = _an_order(client)
        response = client.post(
            f"{ERP}/purchase-orders/{order}/approve",
            content=body,
            headers={"Content-Type": "application/json"},
        )
    _service_error("erp", response)
    assert response.status_code == 400


NUL_PATHS = {
    "itsm": [f"{INCIDENTS}/ab%00cd", f"/worlds/ab%00cd{INCIDENTS}"],
    "crm": [f"{ACCOUNTS}/001%00x", f"/worlds/ab%00cd{ACCOUNTS}/001000000000001"],
    "erp": [f"{ERP}/vendors/VEN%00x", f"/worlds/ab%00cd{ERP}/vendors"],
}


@pytest.mark.parametrize(
    ("backend", "path"),
    [(backend, path) for backend, paths in NUL_PATHS.items() for path in paths],
)
def test_a_nul_in_an_id_or_world_names_nothing(
    urls: dict[str, str], backend: str, path: str
) -> None:
    with _client(urls, backend) as client:
        response = client.get(path)
    assert response.status_code == 404
    _service_error(backend, response)


def test_an_attachment_for_a_nul_table_id_is_refused(urls: dict[str, str]) -> None:
    with _client(urls, "itsm") as client:
        response = client.post(
            "/api/now/attachment/file",
            params={"table_name": "incident", "table_sys_id": "ab\x00cd", "file_name": "a.txt"},
            content=b"hello",
            headers={"Content-Type": "text/plain"},
        )
    _service_error("itsm", response)


@pytest.mark.parametrize("how", ["query", "multipart"])
def test_an_attachment_named_with_a_nul_is_refused_as_a_body_would_be(
    urls: dict[str, str], how: str
) -> None:
    """A file's name reaches the record as a JSON body's strings do, and is held to the same
    rule: a NUL is refused on every store, not stored on one and a 500 on another."""
    with _client(urls, "itsm") as client:
        incident = client.get(INCIDENTS, params={"sysparm_limit": 1}).json()["result"][0]
        target = {"table_name": "incident", "table_sys_id": incident["sys_id"]}
        if how == "query":
            response = client.post(
                "/api/now/attachment/file",
                params={**target, "file_name": "a\x00.txt"},
                content=b"hello",
                headers={"Content-Type": "text/plain"},
            )
        else:
            # By hand: httpx would percent-encode the NUL in the file name.
            parts = [
                f'--b\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
                for name, value in target.items()
            ]
            parts.append(
                '--b\r\nContent-Disposition: form-data; name="uploadFile"; filename="a\x00.txt"'
                "\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n"
            )
            response = client.post(
                "/api/now/attachment/upload",
                content="".join(parts).encode(),
                headers={"Content-Type": "multipart/form-data; boundary=b"},
            )
        attached = client.get(
            "/api/now/attachment", params={"sysparm_query": f"table_sys_id={incident['sys_id']}"}
        )
    assert response.status_code == 400, response.text[:300]
    _service_error("itsm", response)
    assert "NUL" in response.json()["error"]["detail"]
    assert all("\x00" not in a["file_name"] for a in attached.json()["result"])


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/_myna/admin/worlds", {"fork_of": "de\x00fault"}),
        ("POST", "/_myna/admin/worlds", {"from_snapshot": "s\x00"}),
        ("GET", "/_myna/admin/worlds/default/diff?against=s%00", None),
        ("POST", "/_myna/admin/worlds/de%00fault/reset", None),
        ("POST", "/_myna/admin/worlds/de%00fault/snapshot", None),
    ],
    ids=["fork-source", "from-snapshot", "diff-against", "reset", "snapshot"],
)
def test_admin_names_with_a_nul_are_404(
    urls: dict[str, str], method: str, path: str, body: Any
) -> None:
    with httpx.Client(base_url=urls["itsm"], headers=ADMIN, timeout=30) as client:
        response = client.request(method, path, json=body)
    assert response.status_code == 404
    assert response.json()["error"]["kind"] == "not_found"


WRITES = {
    "itsm": ("POST", INCIDENTS, b'{"short_description": "x"}'),
    "crm": ("POST", ACCOUNTS, b'{"Name": "x"}'),
    "erp": ("POST", f"{ERP}/vendors", b'{"name": "x", "tax_id": "1"}'),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_body_of_another_media_type_is_415(urls: dict[str, str], backend: str) -> None:
    method, path, body = WRITES[backend]
    with _client(urls, backend) as client:
        response = client.request(
            method, path, content=body, headers={"Content-Type": "text/plain"}
        )
    assert response.status_code == 415
    _service_error(backend, response)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nul_character_in_a_body_is_refused_everywhere(
    urls: dict[str, str], backend: str
) -> None:
    method, path, body = WRITES[backend]
    with _client(urls, backend) as client:
        response = client.request(
            method,
            path,
            content=body.replace(b'"x"', b'"x\\u0000y"'),
            headers={"Content-Type": "application/json"},
        )
    _service_error(backend, response)  # 400, or the ERP's 422 for a value it refuses


def test_credentials_in_basic_auth_still_work(urls: dict[str, str]) -> None:
    basic = "Basic " + base64.b64encode(b"myna:myna").decode()
    response = httpx.get(urls["itsm"] + INCIDENTS, headers={"Authorization": basic}, timeout=30)
    assert response.status_code == 200


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_without_a_body_is_refused_everywhere(urls: dict[str, str], backend: str) -> None:
    method, path, _ = WRITES[backend]
    with _client(urls, backend) as client:
        response = client.request(method, path, headers={"Content-Type": "application/json"})
    _service_error(backend, response)
