"""Redaction: credentials never survive import; everything else does, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from myna.traces import ReadOptions, read
from myna.traces.redact import (
    is_secret_key,
    json_may_hold_secrets,
    redact_header,
    redact_json,
    redact_multipart,
    redact_query_string,
    redact_url,
)
from tests.traces.helpers import WriteFile, entry, har


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "Bearer [REDACTED]"),
        ("authorization", "Basic YWRtaW46YWRtaW4=", "Basic [REDACTED]"),
        ("Authorization", "a-raw-token", "[REDACTED]"),
        ("Proxy-Authorization", "Digest username=x", "Digest [REDACTED]"),
        (
            "Cookie",
            "JSESSIONID=abc123; glide_user_route=xyz",
            "JSESSIONID=[REDACTED]; glide_user_route=[REDACTED]",
        ),
        (
            "Set-Cookie",
            "sid=00D5g; Path=/; Secure; HttpOnly",
            "sid=[REDACTED]; Path=/; Secure; HttpOnly",
        ),
        ("X-Api-Key", "sk-live-123", "[REDACTED]"),
        ("api-key", "123", "[REDACTED]"),
        ("X-Auth-Token", "abc", "[REDACTED]"),
        ("X-UserToken", "abc", "[REDACTED]"),
        ("Ocp-Apim-Subscription-Key", "abc", "[REDACTED]"),
        ("Authorization", "Bearer [REDACTED]", "Bearer [REDACTED]"),
        ("set-cookie", "[REDACTED]", "[REDACTED]"),
        ("Content-Type", "application/json", "application/json"),
        ("X-Total-Count", "42", "42"),
        (
            "Link",
            '<https://h/api?sysparm_offset=2>;rel="next"',
            '<https://h/api?sysparm_offset=2>;rel="next"',
        ),
    ],
    ids=lambda value: str(value)[:24],
)
def test_headers(name: str, value: str, expected: str) -> None:
    assert redact_header(name, value) == expected


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("new_password", True),
        ("access_token", True),
        ("refreshToken", True),
        ("client_secret", True),
        ("api_key", True),
        ("apiKey", True),
        ("token", True),
        ("signature", True),
        ("sessionId", True),
        ("nextPageToken", False),
        ("token_type", False),
        ("key", False),
        ("sys_id", False),
        ("grant_type", False),
        ("client_id", False),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("a=1&access_token=abc&b=2", "a=1&access_token=[REDACTED]&b=2"),
        (
            "grant_type=password&username=admin&password=s3cr%26t",
            "grant_type=password&username=admin&password=[REDACTED]",
        ),
        ("q=SELECT+Id+FROM+User&api%5Fkey=1", "q=SELECT+Id+FROM+User&api%5Fkey=[REDACTED]"),
        ("token=%5BREDACTED%5D", "token=%5BREDACTED%5D"),
        ("sysparm_limit=10", "sysparm_limit=10"),
    ],
    ids=["token", "form-password", "encoded-name", "already-redacted", "nothing"],
)
def test_query_strings_and_form_bodies(query: str, expected: str) -> None:
    assert redact_query_string(query) == expected


def test_multipart_form_fields() -> None:
    body = (
        "--XyZ\r\n"
        'Content-Disposition: form-data; name="username"\r\n\r\n'
        "admin\r\n"
        "--XyZ\r\n"
        'Content-Disposition: form-data; name="password"\r\n'
        "Content-Type: text/plain\r\n\r\n"
        "hunter2\r\n"
        "--XyZ--\r\n"
    )

    assert redact_multipart(body) == body.replace("hunter2", "[REDACTED]")


def test_urls_lose_user_info_passwords_and_secret_parameters() -> None:
    assert (
        redact_url("https://admin:hunter2@h.example/api?token=x&page=2#top")
        == "https://admin:[REDACTED]@h.example/api?token=[REDACTED]&page=2#top"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"username": "a", "password": "pw"}, {"username": "a", "password": "[REDACTED]"}),
        (
            {"access_token": "00D5g", "token_type": "Bearer", "issued_at": "1641"},
            {"access_token": "[REDACTED]", "token_type": "Bearer", "issued_at": "1641"},
        ),
        ({"auth": {"client_secret": 12345}}, {"auth": {"client_secret": "[REDACTED]"}}),
        ([{"apiKey": "k"}, {"apiKey": None}], [{"apiKey": "[REDACTED]"}, {"apiKey": None}]),
        ({"password": ""}, {"password": ""}),
        ({"token": "[REDACTED]"}, {"token": "[REDACTED]"}),
        ({"credentials": {"token": "t"}}, {"credentials": {"token": "[REDACTED]"}}),
        ({"nextPageToken": "CAoQAA"}, {"nextPageToken": "CAoQAA"}),
    ],
    ids=[
        "password",
        "oauth-response",
        "nested-number",
        "array",
        "empty",
        "already",
        "walked",
        "cursor",
    ],
)
def test_json_bodies(body: Any, expected: Any) -> None:
    assert redact_json(body) == expected


@pytest.mark.parametrize(
    ("text", "walk"),
    [
        ('{"password": "x"}', True),
        ('{"auth": {"Access_Token" : "x"}}', True),
        ('{"key": "BUG-10", "password_needs_reset": "false"}', False),
        ('{"api\\"key": 1}', True),
        ('{"pass\\"word": 1}', True),
        ('{"short_description": "password reset for the VPN"}', False),
        ('["token", "secret"]', False),
        ('{"result": [{"sys_id": "9d38", "state": "2"}]}', False),
    ],
    ids=[
        "key",
        "nested-key",
        "fragment-in-harmless-keys",
        "escaped-quote-before",
        "escaped-quote-inside",
        "in-value",
        "in-array",
        "none",
    ],
)
def test_raw_text_precheck_walks_whenever_a_key_may_be_secret(text: str, walk: bool) -> None:
    assert json_may_hold_secrets(text) is walk


def test_import_redacts_every_place_a_credential_can_hide(write_json: WriteFile) -> None:
    login = entry(
        "https://login.salesforce.com/services/oauth2/token?client_secret=abc",
        method="POST",
        headers=[
            {"name": "Authorization", "value": "Basic dXNlcjpwYXNz"},
            {"name": "Cookie", "value": "sid=00D; BrowserId=x"},
        ],
        post_data={
            "mimeType": "application/x-www-form-urlencoded",
            "text": "grant_type=password&client_id=3MVG&client_secret=7F1D"
            "&username=a%40b.c&password=pw",
        },
        response_text='{"access_token": "00D5g000004", "instance_url": "https://x.my.salesforce.com"}',
    )
    login["response"]["headers"].append({"name": "Set-Cookie", "value": "BrowserId=q1; Path=/"})
    login["request"]["queryString"] = [{"name": "client_secret", "value": "abc"}]

    (session,) = read(write_json("login.har", har([login])), options=ReadOptions())
    (exchange,) = session.exchanges

    assert exchange.url.endswith("?client_secret=[REDACTED]")
    assert exchange.query == [("client_secret", "[REDACTED]")]
    assert exchange.request_headers == [
        ("Authorization", "Basic [REDACTED]"),
        ("Cookie", "sid=[REDACTED]; BrowserId=[REDACTED]"),
    ]
    assert exchange.request_body.value == (
        "grant_type=password&client_id=3MVG&client_secret=[REDACTED]&username=a%40b.c"
        "&password=[REDACTED]"
    )
    assert exchange.response_headers[-1] == ("Set-Cookie", "BrowserId=[REDACTED]; Path=/")
    assert exchange.response_body.value == {
        "access_token": "[REDACTED]",
        "instance_url": "https://x.my.salesforce.com",
    }
