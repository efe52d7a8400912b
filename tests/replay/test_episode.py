"""The episode format: round trips, validation errors that name the field, a current schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from myna.errors import InputError
from myna.replay.episode import Episode, load_episode, parse_episode, save_episode, schema_text

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "myna" / "replay" / "episode.schema.json"


def test_the_committed_json_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "regenerate: python -c 'import myna.replay.episode as e; print(e.schema_text(), end=\"\")'"
        " > myna/replay/episode.schema.json"
    )


def test_an_episode_round_trips_through_a_file_and_validates_against_the_schema(
    episode: Episode, tmp_path: Path
) -> None:
    path = save_episode(episode, tmp_path)
    assert path.name == "resolve-inc0010002.json"
    assert load_episode(path) == episode
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "myna.episode/1"
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(format="myna.episode/2"), "format"),
        (lambda d: d["verifier"]["checks"][0].update(kind="field_guess"), "verifier.checks.0"),
        (
            lambda d: d["verifier"]["checks"][0].update(weight=0),
            "verifier.checks.0.field_equals.weight",
        ),
        (lambda d: d["environment"]["model"].update(path="m.yaml"), "environment.model"),
        (lambda d: d["problem"].update(instruction=""), "problem.instruction"),
    ],
    ids=["future-version", "unknown-check", "zero-weight", "two-model-sources", "no-instruction"],
)
def test_invalid_episodes_name_the_file_and_field(
    episode: Episode, mutate: Callable[[dict[str, Any]], None], field: str
) -> None:
    document = episode.model_dump(mode="json")
    mutate(document)
    with pytest.raises(InputError) as error:
        parse_episode(json.dumps(document), file="bad.json")
    assert error.value.file == "bad.json"
    assert error.value.field == field


def test_check_names_must_be_unique(episode: Episode) -> None:
    document = episode.model_dump(mode="json")
    document["verifier"]["checks"][1]["name"] = "resolved"
    with pytest.raises(InputError, match="two checks are named 'resolved'"):
        parse_episode(json.dumps(document))
