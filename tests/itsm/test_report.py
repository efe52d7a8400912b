"""The HTML report: self-contained, with the tables and the SVG charts a reader expects."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from myna.itsm import bench, report
from myna.itsm.bench import BenchResult

CHROMIUM = Path("/usr/bin/chromium")


class _Outline(HTMLParser):
    """Element ids, tag counts and every external reference in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: dict[str, int] = {}
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("src", "href") and value and not value.startswith("#"):
                self.external.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def result() -> BenchResult:
    prepared = bench.prepare(limit=20, seed=3)
    trials = bench.run(prepared, "heuristic", trials=3)
    return bench.result(prepared, "heuristic", trials, per_scenario=3, seed=3)


def _outline(page: str) -> _Outline:
    parser = _Outline()
    parser.feed(page)
    parser.close()
    return parser


def test_report_has_tables_and_charts_and_needs_nothing_else(result: BenchResult) -> None:
    outline = _outline(report.render_html(result))
    assert {"survival", "yields", "overall", "seed-issues"} <= outline.ids
    assert outline.tags["svg"] == 2
    assert outline.tags["rect"] == len(result.by_kind)
    assert outline.tags["circle"] == len(result.overall.pass_hat) == 3
    assert outline.tags["polyline"] == 1
    assert outline.external == []
    assert outline.tags.get("script", 0) == 0
    text = " ".join(outline.text)
    accepted, generated = result.survival
    assert f"{accepted} of {generated}" in text
    assert "synthetic data" in text


def test_report_escapes_what_comes_from_the_data(result: BenchResult) -> None:
    hostile = result.model_copy(update={"agent": "<script>alert(1)</script>"})
    page = report.render_html(hostile)
    assert "<script>" not in page
    assert "&lt;script&gt;" in page


def test_write_puts_results_and_page_side_by_side(result: BenchResult, tmp_path: Path) -> None:
    data, page = report.write(result, tmp_path / "out")
    assert BenchResult.model_validate_json(data.read_text()) == result
    assert page.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium to render the page")
def test_report_renders_in_headless_chromium(result: BenchResult, tmp_path: Path) -> None:
    _, page = report.write(result, tmp_path)
    browser = shutil.which(str(CHROMIUM)) or str(CHROMIUM)
    dom = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    outline = _outline(dom)
    assert {"survival", "yields", "overall"} <= outline.ids
    assert outline.tags["svg"] == 2
