"""The ITSM back end: ServiceNow Table API style, learned from a shipped trace corpus."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from myna.mocks.backend import Backend

ADMIN: Final = "admin"
"""The administrator the corpus is recorded as."""


def _initial_records() -> Mapping[str, Sequence[Mapping[str, Any]]]:
    from myna.backends.itsm.corpus import initial_records

    return initial_records()


BACKEND = Backend(
    name="itsm",
    title="ITSM (ServiceNow Table API)",
    package=__name__,
    extension="servicenow",
    dialect="servicenow",
    recorded_as=ADMIN,
    initial_records=_initial_records,
    # A demo-sized world by default (demo.py); the corpus's own by name.
    worlds=(("demo", "demo_world"), ("reference", "reference_world")),
)
