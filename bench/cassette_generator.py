"""Write a large vcrpy YAML cassette or nock recording to disk, one interaction at a time.

The traffic is `har_generator`'s ServiceNow session (paged lists, reads, creates, updates, 404s,
OAuth form posts, static assets, base64 downloads), written as vcrpy 9 (`yaml.dump`, headers as
lists, downloads as `!!binary`) or nock's recorder (`output_objects`: parsed JSON bodies,
`rawHeaders`, downloads as hex with `responseIsBinary`) would record it.

    python bench/cassette_generator.py bench/out/big.yaml --size-mb 256 --format vcr
"""

from __future__ import annotations

import argparse
import base64
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from har_generator import entry

Dumper: type[yaml.Dumper] = getattr(yaml, "CDumper", yaml.Dumper)


def _parts(item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str | None, Any]:
    request, response = item["request"], item["response"]
    post = request.get("postData", {}).get("text")
    content = response["content"]
    body: Any = content.get("text")
    if content.get("encoding") == "base64":
        body = base64.b64decode(body)
    return request, response, post, body


def vcr_interaction(item: dict[str, Any]) -> dict[str, Any]:
    request, response, post, body = _parts(item)
    return {
        "request": {
            "body": post,
            "headers": {h["name"]: [h["value"]] for h in request["headers"]},
            "method": request["method"],
            "uri": request["url"],
        },
        "response": {
            "body": {"string": body},
            "headers": {h["name"]: [h["value"]] for h in response["headers"]},
            "status": {"code": response["status"], "message": "OK"},
        },
    }


def nock_definition(item: dict[str, Any]) -> dict[str, Any]:
    request, response, post, body = _parts(item)
    url = urlsplit(request["url"])
    binary = isinstance(body, bytes)
    if binary:
        body = body.hex()
    elif body and response["content"]["mimeType"] == "application/json":
        body = json.loads(body)
    if post and post.startswith("{"):
        post = json.loads(post)
    return {
        "scope": f"{url.scheme}://{url.netloc}:443",
        "method": request["method"],
        "path": f"{url.path}?{url.query}" if url.query else url.path,
        "body": post or "",
        "status": response["status"],
        "response": body or "",
        "rawHeaders": [part for h in response["headers"] for part in (h["name"], h["value"])],
        "reqheaders": {h["name"]: h["value"] for h in request["headers"]},
        "responseIsBinary": binary,
    }


def write_cassette(path: Path, size_bytes: int, format: str, seed: int = 7) -> int:
    """Stream interactions to `path` until it holds `size_bytes`; returns how many."""
    rng = random.Random(seed)
    started = datetime(2024, 5, 1, tzinfo=UTC)
    count = written = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("interactions:\n" if format == "vcr" else "[\n")
        while written < size_bytes:
            item = entry(rng, count, started + timedelta(milliseconds=250 * count))
            if format == "vcr":
                text = yaml.dump([vcr_interaction(item)], Dumper=Dumper)
            else:
                text = ("" if count == 0 else ",\n") + json.dumps(nock_definition(item))
            out.write(text)
            written += len(text)
            count += 1
        out.write("version: 1\n" if format == "vcr" else "\n]\n")
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--size-mb", type=float, default=256)
    parser.add_argument("--format", choices=["vcr", "nock"], default="vcr")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    args.path.parent.mkdir(parents=True, exist_ok=True)
    count = write_cassette(args.path, int(args.size_mb * 1024 * 1024), args.format, args.seed)
    print(f"wrote {count} interactions, {args.path.stat().st_size / 1e6:.1f} MB to {args.path}")


if __name__ == "__main__":
    main()
