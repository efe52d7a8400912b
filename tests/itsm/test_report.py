"""The HTML report: self-contained, with the tables and the SVG charts a reader expects."""

from __future__ import annotations

import re
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
    assert {"survival", "yields", "overall", "seed-issues", "by-kind-tier"} <= outline.ids
    assert outline.tags["svg"] == 2
    assert outline.tags["rect"] == len({(t.kind, t.tier) for t in result.trials})
    assert outline.tags["circle"] == len(result.overall.pass_hat) == 3
    assert outline.tags["polyline"] == 1
    assert outline.external == []
    assert outline.tags.get("script", 0) == 0
    text = " ".join(outline.text)
    accepted, generated = result.survival
    assert f"{accepted} of {generated}" in text
    assert "synthetic data" in text


def test_every_bar_has_its_counts_beside_it(result: BenchResult) -> None:
    text = " ".join(_outline(report.bar_chart(report.cells(result))).text)
    for cell in report.cells(result):
        played = [t for t in result.trials if (t.kind, t.tier) == (cell.kind, cell.tier)]
        passed = sum(t.passed for t in played)
        assert f"{passed}/{len(played)}" in text
        assert (cell.passed, cell.trials) == (passed, len(played))


def test_kinds_without_scenarios_are_shown(result: BenchResult) -> None:
    gone = result.trials[0].kind
    emptied = result.model_copy(
        update={"trials": [t for t in result.trials if t.kind != gone], "examples": []}
    )
    rows = {c.kind: c for c in report.cells(emptied)}
    assert set(rows) == {y.kind for y in result.yields}
    assert rows[gone].rate is None
    text = " ".join(_outline(report.render_html(emptied)).text)
    assert f"Kinds the data gave no scenario of: {gone}." in text


def test_failing_examples_show_the_instruction_and_the_failed_checks(result: BenchResult) -> None:
    failed = [t for t in result.trials if not t.passed]
    assert failed
    assert result.examples
    assert all(e.failed for e in result.examples)
    page = report.render_html(result)
    text = " ".join(_outline(page).text)
    for example in result.examples:
        assert example.instruction.split(":")[0] in text
        assert example.failed[0].split(":")[0] in text
    shown = {(e.kind, e.tier) for e in result.examples}
    assert shown == {(t.kind, t.tier) for t in failed}


def test_partial_reward_is_explained_and_counted(result: BenchResult) -> None:
    outline = _outline(report.render_html(result))
    assert "partial-reward" in outline.ids
    text = " ".join(outline.text)
    assert "0 when any guard fails" in " ".join(text.split())
    for cell in report.cells(result):
        played = [t for t in result.trials if (t.kind, t.tier) == (cell.kind, cell.tier)]
        partial = [t for t in played if not t.passed and t.reward > 0]
        assert cell.partial == len(partial)


def test_what_could_not_be_seeded_is_summed_up(result: BenchResult) -> None:
    summary = report.seed_summary(result)
    total = sum(int(str(i["count"])) for i in result.seed_issues)
    counted = sum(
        int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:values|fields|records)", summary)
    )
    assert counted == total
    assert summary in " ".join(_outline(report.render_html(result)).text)
    clean = result.model_copy(update={"seed_issues": []})
    assert report.seed_summary(clean) == "Every imported record fitted the model."


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
