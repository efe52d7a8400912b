"""`myna replay export`: episodes as a JSONL dataset RL trainers read.

One line per episode: `episode_id`, `prompt` (chat messages), `instruction`, `tools` (OpenAI
function definitions of the tools offered) and `metadata` (model, failure class, variant,
scores). Only what an agent may see, plus scores; the verifier stays with the episode files and
rewards come from `myna.replay.Env` or the episode server.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from myna.mocks.tools import Toolbox
from myna.replay.episode import Episode
from myna.schemas.model import ServiceModel


def dataset_row(episode: Episode, toolbox: Toolbox) -> dict[str, Any]:
    offered = set(episode.environment.tools)
    tools = [tool.openai() for tool in toolbox.tools if not offered or tool.name in offered]
    provenance, scores = episode.provenance, episode.scores
    return {
        "episode_id": episode.id,
        "prompt": [{"role": "user", "content": episode.problem.instruction}],
        "instruction": episode.problem.instruction,
        "tools": tools,
        "metadata": {
            "model": episode.environment.model.model_dump(exclude_none=True),
            "failure_class": provenance.failure_class,
            "source_session": provenance.source_session,
            "variant_of": provenance.variant_of,
            "variant": provenance.variant,
            "status": scores.status,
            "correctness": scores.correctness,
            "difficulty": scores.difficulty,
            "flags": scores.flags,
        },
    }


def export(episodes: Iterable[Episode], models: dict[str, ServiceModel], path: Path) -> int:
    """Write one row per episode; `models` maps each episode id to its service model."""
    toolboxes: dict[int, Toolbox] = {}
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for episode in episodes:
            model = models[episode.id]
            toolbox = toolboxes.setdefault(id(model), Toolbox(model))
            out.write(json.dumps(dataset_row(episode, toolbox), sort_keys=True) + "\n")
            written += 1
    return written
