"""What every back end's differential test shares: the served side, its worlds, the run.

Each test sends the same random calls to its back end's reference service and to the served
mock (`test_{itsm,crm,erp}_differential.py`); the served mock serves the reference world, one
forked world per example, at the reference service's moment, so stamps agree too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import count
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine

from myna.mocks import Mock
from myna.mocks.auth import Credentials
from myna.mocks.cli import served_mock
from myna.mocks.runtime import DEFAULT_WORLD

_WORLDS = count()


@contextmanager
def serving(backend: str, token: str) -> Iterator[Mock]:
    """The built-in back end `backend` serving its reference world to `token`'s bearer."""
    credentials = Credentials(tokens=frozenset({token}))
    mock = served_mock(backend, world="reference", credentials=credentials, open_worlds=True)
    try:
        yield mock
    finally:
        mock.store.close()


def fresh_world(mock: Mock, now: datetime) -> str:
    """A new world holding the reference world's records, its clock stopped at `now` (the
    reference service's moment, naive UTC)."""
    world = f"differential-{next(_WORLDS)}"
    mock.store.fork_world(DEFAULT_WORLD, world)
    moment = now.replace(tzinfo=UTC).timestamp()
    mock.clock = lambda: moment
    return world


Answer = tuple[int, Any]


class Paired(Protocol):
    """A reference service and a served world in the same state."""

    def send(
        self, method: str, path: str, body: Any, params: dict[str, str] | None
    ) -> tuple[Answer, Answer]:
        """One call to each side: what must agree of the reference's answer, then the mock's."""
        ...


P = TypeVar("P", bound=Paired)


class SameAnswers(RuleBasedStateMachine, Generic[P]):
    """Random calls, sent to both sides; every answer compared. A back end's test sets `sides`
    (its reference service after the corpus, and the mock) and says how to pair them."""

    sides: ClassVar[tuple[Any, Mock]]

    def __init__(self) -> None:
        super().__init__()
        self.pair = self.paired()

    def paired(self) -> P:
        """A fresh pair of `sides`, in the same state."""
        raise NotImplementedError

    def check(self, method: str, path: str, body: Any = None, **params: str) -> Answer:
        reference, served = self.pair.send(method, path, body, params or None)
        assert served == reference, (method, path, body, params)
        return reference


def run(machine: type[RuleBasedStateMachine]) -> None:
    """Run a differential state machine: 60 random call sequences of up to 15 calls each."""
    case = machine.TestCase
    case.settings = settings(
        max_examples=60,
        stateful_step_count=15,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    case().runTest()
