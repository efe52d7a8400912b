"""Uploads: creates that send a file instead of JSON.

A service that takes a file (`POST /releases/{id}/assets?name=notes.txt` with the bytes as the
body, an attachment API) answers with a record made of what came beside the bytes: the query's
values, the body's size and its media type. `learn_upload` finds, from recorded uploads, which
record field each of those filled; the mock then makes the same record of an upload it never
saw (`upload_record`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from myna.schemas.model import Evidence, Upload


@dataclass(frozen=True, slots=True)
class UploadSample:
    """One recorded upload: the query it carried, its body's facts and the record answered."""

    query: Sequence[tuple[str, str]]
    size: int
    media_type: str | None
    record: Mapping[str, Any]


def learn_upload(samples: Sequence[UploadSample], evidence: Evidence) -> Upload | None:
    """Where most uploads put each query value, their size and their media type, or None when
    no sample shows any of them in its record."""
    query_votes: Counter[tuple[str, str]] = Counter()
    size_votes: Counter[str] = Counter()
    type_votes: Counter[str] = Counter()
    for sample in samples:
        for name, value in sample.query:
            query_votes.update((name, field) for field in _holding(sample.record, value))
        size_votes.update(_holding(sample.record, sample.size))
        if sample.media_type:
            type_votes.update(_holding(sample.record, sample.media_type))
    if not (query_votes or size_votes or type_votes):
        return None
    by_param: dict[str, str] = {}
    for (name, field), _ in query_votes.most_common():
        by_param.setdefault(name, field)
    return Upload(
        query_fields=by_param,
        size_field=_top(size_votes),
        type_field=_top(type_votes),
        evidence=evidence,
    )


def upload_record(
    upload: Upload, query: Sequence[tuple[str, str]], body: bytes, media_type: str | None
) -> dict[str, Any]:
    """The fields an upload sends, as the learned upload says the service filled them."""
    sent: dict[str, Any] = {
        upload.query_fields[name]: value for name, value in query if name in upload.query_fields
    }
    if upload.size_field is not None:
        sent[upload.size_field] = len(body)
    if upload.type_field is not None and media_type:
        sent[upload.type_field] = media_type.split(";")[0].strip()
    return sent


def _holding(record: Mapping[str, Any], value: str | int) -> list[str]:
    """The top-level fields of `record` equal to `value` (a bool is no size)."""
    return [
        field
        for field, held in record.items()
        if held == value and not isinstance(held, bool) and type(held) is type(value)
    ]


def _top(votes: Counter[str]) -> str | None:
    return votes.most_common(1)[0][0] if votes else None
