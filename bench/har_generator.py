"""Write a large, realistic HAR file to disk, one entry at a time (never the whole file in memory).

The traffic imitates a ServiceNow Table API client session: paged list reads with a `Link` header,
reads by sys_id, creates, updates, 404s and 401s, an OAuth token call with a form body, plus the
static assets and base64 downloads a browser recording carries. It is deterministic for a seed.

    python bench/har_generator.py bench/out/big.har --size-mb 1024
"""

from __future__ import annotations

import argparse
import json
import random
import string
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HOST = "https://dev123456.service-now.com"
TABLES = ("incident", "sys_user", "sys_user_group", "change_request", "cmdb_ci_server")
STATES = ("1", "2", "3", "6", "7")
WORDS = (
    "email",
    "vpn",
    "printer",
    "outage",
    "password",
    "reset",
    "laptop",
    "network",
    "slow",
    "login",
    "error",
    "server",
    "disk",
    "full",
    "access",
    "request",
    "database",
    "timeout",
    "certificate",
    "expired",
)


def sys_id(rng: random.Random) -> str:
    return "".join(rng.choices("0123456789abcdef", k=32))


def record(rng: random.Random, table: str) -> dict[str, Any]:
    opened = datetime(2024, 1, 1) + timedelta(minutes=rng.randrange(500_000))
    return {
        "sys_id": sys_id(rng),
        "number": f"{table[:3].upper()}{rng.randrange(10**7):07d}",
        "short_description": " ".join(rng.choices(WORDS, k=rng.randint(3, 9))),
        "state": rng.choice(STATES),
        "priority": str(rng.randint(1, 5)),
        "opened_at": opened.strftime("%Y-%m-%d %H:%M:%S"),
        "caller_id": {
            "link": f"{HOST}/api/now/table/sys_user/{sys_id(rng)}",
            "value": sys_id(rng),
        },
        "assignment_group": {
            "link": f"{HOST}/api/now/table/sys_user_group/{sys_id(rng)}",
            "value": sys_id(rng),
        },
        "sys_mod_count": str(rng.randint(0, 40)),
        "active": rng.choice(("true", "false")),
    }


def headers(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs.items()]


def entry(rng: random.Random, index: int, started: datetime) -> dict[str, Any]:
    table = rng.choice(TABLES)
    roll = rng.random()
    request_headers = {"accept": "application/json", "authorization": "Bearer " + sys_id(rng)}
    response_headers = {"content-type": "application/json;charset=UTF-8", "x-is-logged-in": "true"}
    post_data: dict[str, Any] | None = None
    query: list[dict[str, str]] = []
    if roll < 0.45:
        limit, offset = rng.choice((10, 20, 50)), rng.randrange(0, 2000, 10)
        url = f"{HOST}/api/now/table/{table}?sysparm_limit={limit}&sysparm_offset={offset}"
        query = headers({"sysparm_limit": str(limit), "sysparm_offset": str(offset)})
        method, status = "GET", 200
        body: Any = {"result": [record(rng, table) for _ in range(rng.randint(1, limit))]}
        response_headers["x-total-count"] = str(rng.randint(limit, 5000))
        response_headers["link"] = f'<{url}>;rel="next"'
    elif roll < 0.70:
        url, method, status = f"{HOST}/api/now/table/{table}/{sys_id(rng)}", "GET", 200
        body = {"result": record(rng, table)}
    elif roll < 0.80:
        url, method, status = f"{HOST}/api/now/table/{table}", "POST", 201
        created = record(rng, table)
        post_data = {"mimeType": "application/json", "text": json.dumps(created)}
        body = {"result": created}
    elif roll < 0.86:
        url, method, status = f"{HOST}/api/now/table/{table}/{sys_id(rng)}", "PATCH", 200
        post_data = {"mimeType": "application/json", "text": json.dumps({"state": "2"})}
        body = {"result": record(rng, table)}
    elif roll < 0.90:
        url, method, status = f"{HOST}/api/now/table/{table}/{sys_id(rng)}", "GET", 404
        body = {"error": {"message": "No Record found", "detail": "Record doesn't exist"}}
    elif roll < 0.92:
        url, method, status = f"{HOST}/oauth_token.do", "POST", 200
        form = f"grant_type=password&client_id={sys_id(rng)}&client_secret=s&password=p"
        post_data = {"mimeType": "application/x-www-form-urlencoded", "text": form}
        body = {"access_token": sys_id(rng), "token_type": "Bearer", "expires_in": 1799}
    elif roll < 0.97:
        name = rng.choice(("logo.png", "app.js", "styles.css", "font.woff2"))
        mime = {"png": "image/png", "js": "application/javascript", "css": "text/css"}.get(
            name.rpartition(".")[2], "font/woff2"
        )
        url, method, status = f"{HOST}/assets/{name}", "GET", 200
        content = {"mimeType": mime, "size": 2048, "text": _base64(rng, 2048)}
        return _wrap(index, started, method, url, status, request_headers, query, None,
                     {"content-type": mime}, content)  # fmt: skip
    else:
        url, method, status = f"{HOST}/api/now/attachment/{sys_id(rng)}/file", "GET", 200
        content = {"mimeType": "application/pdf", "size": 3072, "encoding": "base64",
                   "text": _base64(rng, 4096)}  # fmt: skip
        return _wrap(index, started, method, url, status, request_headers, query, None,
                     {"content-type": "application/pdf"}, content)  # fmt: skip
    text = json.dumps(body)
    content = {"mimeType": "application/json", "size": len(text), "text": text}
    return _wrap(index, started, method, url, status, request_headers, query, post_data,
                 response_headers, content)  # fmt: skip


def _base64(rng: random.Random, size: int) -> str:
    return "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=size))


def _wrap(
    index: int,
    started: datetime,
    method: str,
    url: str,
    status: int,
    request_headers: dict[str, str],
    query: list[dict[str, str]],
    post_data: dict[str, Any] | None,
    response_headers: dict[str, str],
    content: dict[str, Any],
) -> dict[str, Any]:
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": headers(request_headers),
        "queryString": query,
        "cookies": [],
        "headersSize": -1,
        "bodySize": len(post_data["text"]) if post_data else 0,
    }
    if post_data:
        request["postData"] = post_data
    return {
        "_id": f"{index:012x}",
        "pageref": f"page_{index // 5000}",
        "startedDateTime": started.isoformat().replace("+00:00", "Z"),
        "time": 87.5,
        "request": request,
        "response": {
            "status": status,
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": headers(response_headers),
            "cookies": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": content["size"],
        },
        "cache": {},
        "timings": {"send": 0.1, "wait": 87.0, "receive": 0.4},
    }


def write_har(path: Path, size_bytes: int, seed: int = 7) -> int:
    """Stream entries to `path` until it holds at least `size_bytes`; returns the entry count."""
    rng = random.Random(seed)
    started = datetime(2024, 5, 1, tzinfo=UTC)
    count = written = 0
    with path.open("w", encoding="utf-8") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "myna-bench", "version": "1"},')
        out.write(' "pages": [], "entries": [\n')
        while written < size_bytes:
            text = json.dumps(entry(rng, count, started + timedelta(milliseconds=250 * count)))
            out.write(",\n" + text if count else text)
            written += len(text) + 2
            count += 1
        out.write("\n]}}\n")
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--size-mb", type=float, default=1024)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.path.parent.mkdir(parents=True, exist_ok=True)
    count = write_har(args.path, int(args.size_mb * 1024 * 1024), args.seed)
    print(f"wrote {count} entries, {args.path.stat().st_size / 1e6:.1f} MB to {args.path}")


if __name__ == "__main__":
    main()
