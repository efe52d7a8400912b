"""A pytest plugin that runs notion-client's own test suite against a Myna mock instead of its
cassettes: every client the suite builds talks to `MYNA_NOTION_BASE_URL`, and the suite's
cassette helpers (pytest-vcr's `vcr` fixture) do nothing, as playback is off.

Loaded with `-p tests.mocks.notion_suite_plugin` by `test_notion_client_suite.py`; the suite's
own conftest and tests run unchanged. Each test's outcome per phase (setup, call, teardown) is
written as JSON to `MYNA_SUITE_REPORT`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import notion_client.client
import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vcr: a cassette the suite would replay (ignored here)")
    base_url = os.environ["MYNA_NOTION_BASE_URL"]
    original = notion_client.client.BaseClient.__init__

    def pointed_at_the_mock(self: Any, client: Any, options: Any = None, **kwargs: Any) -> None:
        if isinstance(options, dict):
            options = {"base_url": base_url, **options}
        elif options is None:
            kwargs.setdefault("base_url", base_url)
        original(self, client, options, **kwargs)

    notion_client.client.BaseClient.__init__ = pointed_at_the_mock  # type: ignore[method-assign]


class _NoCassettes:
    """What the suite's conftest asks of pytest-vcr's `vcr` fixture, with nothing replayed."""

    def register_matcher(self, name: str, matcher: Any) -> None:
        del name, matcher


@pytest.fixture(scope="module")
def vcr() -> _NoCassettes:
    return _NoCassettes()


_OUTCOMES: dict[str, dict[str, str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _OUTCOMES.setdefault(report.nodeid.rpartition("::")[2], {})[report.when] = report.outcome


def pytest_sessionfinish(session: pytest.Session) -> None:
    del session
    with open(os.environ["MYNA_SUITE_REPORT"], "w", encoding="utf-8") as out:
        json.dump(_OUTCOMES, out, indent=1, sort_keys=True)
