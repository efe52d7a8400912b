"""Work for the Ray pool's tests, in a module of its own so that an actor importing it imports
nothing else of the tests (what a setup names, each actor imports)."""

from __future__ import annotations

import os
from collections.abc import Callable

from myna.errors import ReplayError


def pids() -> Callable[[int], tuple[int, int]]:
    return lambda item: (item, os.getpid())


def _raises(item: int) -> int:
    if item == 5:
        raise ReplayError("episode 5 is broken", file="five.json")
    return item


def raising() -> Callable[[int], int]:
    return _raises


def _exits(item: int) -> int:
    if item == 3:
        os._exit(1)
    return item


def exiting() -> Callable[[int], int]:
    return _exits
