"""Stage 4: turn logged failures into audited, targeted RL episodes.

The public API, imported lazily so that `myna --help` does not load Gymnasium or the mock:

- `Episode`, `load_episode`, `save_episode`: the versioned episode format;
- `verify`, `register_python_check`: the verifier;
- `build`, `Builder`: failure sessions to episodes and variants;
- `audit`, `record_audit`, `ingest`, `Agent`: correctness, difficulty and rollouts;
- `Env`: an episode as a Gymnasium environment (`myna/Replay-v0`);
- `Replayers`: runners on the in-process mock, one mock per model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Functions named like their modules are imported eagerly: a later `import myna.replay.verify`
# would otherwise leave the module, not the function, under the package's name.
from myna.replay.audit import Agent, audit, ingest, record_audit
from myna.replay.build import Builder, build
from myna.replay.episode import Episode, load_episode, save_episode
from myna.replay.verify import register_python_check, verify

if TYPE_CHECKING:
    from myna.replay.env import Env
    from myna.replay.mock_world import Replayers

__all__ = [
    "Agent",
    "Builder",
    "Env",
    "Episode",
    "Replayers",
    "audit",
    "build",
    "ingest",
    "load_episode",
    "record_audit",
    "register_python_check",
    "save_episode",
    "verify",
]

_LAZY = {"Env": "env", "Replayers": "mock_world"}


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'myna.replay' has no attribute {name!r}")
    return getattr(importlib.import_module(f"myna.replay.{home}"), name)
