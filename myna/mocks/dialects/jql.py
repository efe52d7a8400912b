"""Jira's JQL, known by name only: tools describe it to an agent, and the mock answers a JQL
query with 501 (it has no evaluator for it), never with a wrong result."""

from __future__ import annotations

from typing import Final

from myna.mocks.dialects import Dialect

JQL: Final = Dialect(
    name="jql",
    title="JQL",
    syntax="JQL, e.g. project = ABC AND status = 'In Progress' ORDER BY created DESC",
)
