"""The built-in CRM back end (Salesforce REST API style): corpus, overlay and learned model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from myna.mocks.backend import Backend

ADMINISTRATOR: Final = "admin@acme.example"
"""The org's administrator, whom the corpus is recorded as."""


def _initial_records() -> Mapping[str, Sequence[Mapping[str, Any]]]:
    from myna.backends.crm.corpus import initial_records

    return initial_records()


BACKEND = Backend(
    name="crm",
    title="CRM (Salesforce REST API)",
    package=__name__,
    extension="salesforce",
    dialect="soql",
    recorded_as=ADMINISTRATOR,
    initial_records=_initial_records,
    # A demo-sized world by default (demo.py: the reference world grown to hundreds of
    # accounts, contacts, opportunities and cases); the corpus's own by name.
    worlds=(("demo", "demo_world"), ("reference", "reference_world")),
)
