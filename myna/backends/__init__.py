"""Myna's built-in back ends (`itsm`, `crm`, `erp`), each a package with the same files.

A back end is an ordinary service model learned from a corpus that ships with it, plus the
protocol its extension serves (see `myna.mocks.backend` for the spec each declares and how the
mock finds it by name, and `docs/adding-a-backend.md` for the layout). This module holds what
every back end's corpus and reference-world scripts share.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from myna.mocks.backend import BACKENDS, Backend, builtin_model
from myna.traces.model import Body, Exchange, Pairs, Session

__all__ = [
    "BACKENDS",
    "Backend",
    "Reply",
    "builtin_model",
    "corpus_command",
    "json_reply",
    "record_exchange",
    "seed_file_texts",
    "write_seed_files",
    "write_world_command",
]


# -- the reference services' answers -----------------------------------------------------------

JSON_TYPE: Final = "application/json;charset=UTF-8"


@dataclass(slots=True)
class Reply:
    """A reference service's answer to one call."""

    status: int
    body: Body
    headers: Pairs = field(default_factory=list)


def json_reply(
    status: int, value: Any, headers: Pairs | None = None, media_type: str = JSON_TYPE
) -> Reply:
    """A JSON answer, its Content-Type first among the headers."""
    return Reply(
        status, Body("json", value, media_type), [("Content-Type", media_type), *(headers or [])]
    )


def seed_file_texts(world: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """The text of `<resource>.jsonl` for each resource with records, by name: one compact JSON
    record a line, in the order given (what `myna serve --seed-dir` reads)."""
    return {
        f"{name}.jsonl": "".join(
            json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            for record in records
        )
        for name, records in sorted(world.items())
        if records
    }


def write_seed_files(world: Mapping[str, Sequence[Mapping[str, Any]]], directory: Path) -> None:
    """Write `<resource>.jsonl` seed files (what `--seed-dir` reads) into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in seed_file_texts(world).items():
        (directory / name).write_text(text, encoding="utf-8")


def write_world_command(
    argv: list[str] | None, description: str | None, texts: Callable[[], dict[str, str]]
) -> None:
    """A reference world module's command line: `-o DIR` writes the seed files `texts` makes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory to write")
    arguments = parser.parse_args(argv)
    arguments.output.mkdir(parents=True, exist_ok=True)
    for name, text in texts().items():
        (arguments.output / name).write_text(text, encoding="utf-8")


def corpus_command(
    argv: list[str] | None,
    description: str | None,
    build_corpus: Callable[[], list[Session]],
    initial_records: Callable[[], Mapping[str, Sequence[Mapping[str, Any]]]] | None = None,
) -> None:
    """A corpus module's command line: `-o FILE` writes the corpus as trace JSONL, and, for a
    corpus that starts from records (`initial_records`), `--initial-seed DIR` the reference
    service's state before the corpus as seed files (what `myna conformance --seed-dir`
    replays the corpus from)."""
    from myna.traces.jsonl import write_jsonl

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-o", "--output", type=Path, help="corpus JSONL to write")
    if initial_records is not None:
        parser.add_argument(
            "--initial-seed",
            type=Path,
            metavar="DIR",
            help="write the reference service's state before the corpus as seed files into DIR",
        )
    arguments = parser.parse_args(argv)
    seed_dir = getattr(arguments, "initial_seed", None)
    if arguments.output is None and seed_dir is None:
        parser.error("give -o/--output" + (", --initial-seed, or both" if initial_records else ""))
    if arguments.output is not None:
        write_jsonl(build_corpus(), arguments.output)
    if initial_records is not None and seed_dir is not None:
        write_seed_files(initial_records(), seed_dir)


# -- recording a corpus ---------------------------------------------------------------------------

SECRET: Final = "[REDACTED]"
# What travels as [REDACTED] in a recording, as in the real ones: a token form's secrets, a
# password a user is created with, the tokens a token endpoint answers.
_FORM_SECRETS: Final = frozenset({"password", "client_secret", "refresh_token"})
_JSON_SECRETS: Final = frozenset({"user_password"})
_TOKENS: Final = frozenset({"access_token", "refresh_token"})


def record_exchange(
    session: Session,
    *,
    request: tuple[str, str, Pairs, Pairs, Body],
    reply: Reply,
    at: datetime,
    latency: tuple[float, float],
    actor: str | None = None,
) -> None:
    """Append one call to `session` as its next exchange: `request` (method, URL, query,
    headers, body) and the service's `reply`, with their secrets redacted, started at
    `at` (naive UTC) and lasting `base + size / per` ms for `latency` (base, per), a plausible
    time that grows with the answer, so durations are not all equal."""
    method, url, query, headers, sent = request
    body = reply.body
    size = len(json.dumps(body.value)) if body.kind == "json" else 0
    session.events.append(
        Exchange(
            id=f"{session.id}/{len(session.events) + 1:03d}",
            method=method,
            url=url,
            status=reply.status,
            query=query,
            request_headers=headers,
            request_body=_redacted(sent),
            response_headers=reply.headers,
            response_body=_redacted(body, _TOKENS),
            started_at=at.replace(tzinfo=UTC),
            duration_ms=round(latency[0] + size / latency[1], 1),
            actor=actor,
        )
    )


def _redacted(body: Body, names: frozenset[str] = _JSON_SECRETS) -> Body:
    if body.kind == "json" and isinstance(body.value, dict) and names & body.value.keys():
        value = {k: SECRET if k in names else v for k, v in body.value.items()}
        return Body("json", value, body.mime_type)
    if body.kind != "text" or "grant_type=" not in str(body.value):
        return body
    pairs = [pair.split("=", 1) for pair in str(body.value).split("&")]
    text = "&".join(f"{k}={SECRET if k in _FORM_SECRETS else v}" for k, v in pairs)
    return Body("text", text, body.mime_type)
