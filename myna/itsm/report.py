"""The ITSMBench report: results JSON, and one self-contained HTML page (tables, inline SVG).

The page needs no server, script or network: styles are inline and the charts are SVG written
here, so it opens from disk in any browser.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template

from myna.itsm.bench import BenchResult, Example, Score, Trial

BAR_WIDTH = 360


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _score_row(scope: str, score: Score, k: int) -> str:
    cells = [
        escape(scope),
        str(score.scenarios),
        percent(score.pass_hat.get(1)),
        percent(score.pass_hat.get(k)),
        f"{score.reward:.3f}",
        f"{score.tool_calls:.2f}",
        "-" if score.tokens is None else str(score.tokens),
    ]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


@dataclass(frozen=True, slots=True)
class Cell:
    """One kind and tier of a run: its trials, how many passed, and their rewards."""

    kind: str
    tier: int | None
    trials: int
    passed: int
    partial: int
    """Failed trials that still earned some reward (some goal checks met, no guard broken)."""
    partial_reward: float
    """Their mean reward."""
    failed_checks: Counter[str]

    @property
    def rate(self) -> float | None:
        return self.passed / self.trials if self.trials else None

    @property
    def label(self) -> str:
        return self.kind if self.tier is None else f"{self.kind} (tier {self.tier})"


def cells(result: BenchResult) -> list[Cell]:
    """Every kind and tier the run played, and every kind it had no scenario of (tier None)."""
    groups: dict[tuple[str, int], list[Trial]] = {}
    for trial in result.trials:
        groups.setdefault((trial.kind, trial.tier), []).append(trial)
    out = []
    for kind in [y.kind for y in result.yields]:
        tiers = sorted(tier for k, tier in groups if k == kind)
        if not tiers:
            out.append(Cell(kind, None, 0, 0, 0, 0.0, Counter()))
        for tier in tiers:
            played = groups[(kind, tier)]
            partial = [t.reward for t in played if not t.passed and t.reward > 0]
            failed = Counter(f.split(":", 1)[0] for t in played if not t.passed for f in t.failed)
            out.append(
                Cell(
                    kind,
                    tier,
                    len(played),
                    sum(t.passed for t in played),
                    len(partial),
                    sum(partial) / len(partial) if partial else 0.0,
                    failed,
                )
            )
    return out


def bar_chart(rows: list[Cell]) -> str:
    """Horizontal bars of pass^1, one per kind and tier, each with its counts beside it; a kind
    without scenarios gets a row saying so."""
    row, left = 22, 190
    height = row * len(rows) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{BAR_WIDTH + left + 150}" '
        f'height="{height}" role="img" aria-label="pass^1 by kind and tier">'
    ]
    for index, cell in enumerate(rows):
        y = 5 + index * row
        parts.append(f'<text x="0" y="{y + 14}">{escape(cell.label)}</text>')
        if cell.rate is None:
            parts.append(f'<text x="{left}" y="{y + 13}" fill="#888">no scenarios</text>')
            continue
        width = max(0.0, min(1.0, cell.rate)) * BAR_WIDTH
        counts = f"{cell.passed}/{cell.trials} ({percent(cell.rate)})"
        parts.append(
            f'<rect x="{left}" y="{y}" width="{width:.1f}" height="16" fill="#4a7bb7">'
            f"<title>{escape(cell.label)}: {counts}</title></rect>"
        )
        parts.append(f'<text x="{left + 6 + width:.1f}" y="{y + 13}">{counts}</text>')
    parts.append("</svg>")
    return "".join(parts)


def curve_chart(points: dict[int, float]) -> str:
    """pass^k against k, as a polyline with labelled points."""
    width, height, pad = 420, 220, 36
    ks = sorted(points)
    span = max(len(ks) - 1, 1)

    def xy(position: int, value: float) -> tuple[float, float]:
        return pad + position * (width - 2 * pad) / span, height - pad - value * (height - 2 * pad)

    coords = [xy(i, points[k]) for i, k in enumerate(ks)]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="curve" width="{width}" '
        f'height="{height}" role="img" aria-label="pass^k curve">',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#888"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
        f'<text x="4" y="{pad + 4}">100%</text><text x="12" y="{height - pad}">0%</text>',
    ]
    if coords:
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        parts.append(f'<polyline points="{line}" fill="none" stroke="#c0504d" stroke-width="2"/>')
    for (x, y), k in zip(coords, ks, strict=True):
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#c0504d">'
            f"<title>pass^{k} = {percent(points[k])}</title></circle>"
        )
        parts.append(f'<text x="{x - 4:.1f}" y="{height - pad + 16}">k={k}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _yield_rows(result: BenchResult) -> str:
    return "".join(
        f"<tr><td>{escape(y.kind)}</td><td>{y.yielded}</td><td>{y.generated}</td>"
        f"<td>{y.accepted}</td><td>"
        + escape(", ".join(f"{gate} ({n})" for gate, n in sorted(y.rejections.items())))
        + "</td></tr>"
        for y in result.yields
    )


def _cell_rows(rows: list[Cell]) -> str:
    out = []
    for cell in rows:
        if cell.rate is None:
            out.append(f"<tr><td>{escape(cell.kind)}</td><td colspan=6>no scenarios</td></tr>")
            continue
        common = ", ".join(f"{escape(name)} ({n})" for name, n in cell.failed_checks.most_common(3))
        zero = cell.trials - cell.passed - cell.partial
        out.append(
            f"<tr><td>{escape(cell.kind)}</td><td>{cell.tier}</td>"
            f"<td>{cell.passed}/{cell.trials}</td><td>{percent(cell.rate)}</td>"
            f"<td>{cell.partial} (mean {cell.partial_reward:.2f})</td><td>{zero}</td>"
            f"<td>{common or '-'}</td></tr>"
        )
    return "".join(out)


def _example(example: Example) -> str:
    failed = "".join(f"<li><code>{escape(f)}</code></li>" for f in example.failed)
    return (
        f'<div class="example"><h3>{escape(example.kind)}, tier {example.tier}: '
        f"<code>{escape(example.scenario)}</code> (reward {example.reward:.2f})</h3>"
        f"<blockquote>{escape(example.instruction)}</blockquote>"
        f"<p>Failed checks:</p><ul>{failed or '<li>none recorded</li>'}</ul></div>"
    )


def seed_summary(result: BenchResult) -> str:
    """What the data could not seed, in one sentence: records and fields per kind of issue."""
    what = {
        "table_missing": "records of tables the model lacks",
        "field_missing": "values of fields the model lacks",
        "value_outside_schema": "values the model's schema refuses",
        "filled": "fields filled with the empty value",
    }
    totals: Counter[str] = Counter()
    fields: dict[str, set[str]] = {}
    for issue in result.seed_issues:
        kind = str(issue["kind"])
        totals[kind] += int(str(issue["count"]))
        where = (
            str(issue["table"]) if kind == "table_missing" else f"{issue['table']}.{issue['field']}"
        )
        fields.setdefault(kind, set()).add(where)
    if not totals:
        return "Every imported record fitted the model."
    parts = [
        f"{totals[kind]:,} {what.get(kind, kind)} (in {', '.join(sorted(fields[kind])[:3])}"
        + (f" and {len(fields[kind]) - 3} more" if len(fields[kind]) > 3 else "")
        + ")"
        for kind in sorted(totals)
    ]
    return "Left out or changed while seeding: " + "; ".join(parts) + "."


def render_html(result: BenchResult) -> str:
    template = Template(files("myna.itsm.templates").joinpath("report.html").read_text("utf-8"))
    accepted, generated = result.survival
    k = max(result.overall.pass_hat, default=1)
    score_rows = _score_row("all", result.overall, k)
    score_rows += "".join(_score_row(kind, s, k) for kind, s in result.by_kind.items())
    score_rows += "".join(_score_row(f"tier {t}", s, k) for t, s in result.by_tier.items())
    seed_rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{escape(str(issue[key]))}</td>"
            for key in ("table", "field", "kind", "detail", "count")
        )
        + "</tr>"
        for issue in result.seed_issues
    )
    rows = cells(result)
    return template.substitute(
        agent=escape(result.agent),
        source=escape(result.source),
        source_name=escape(Path(result.source).name),
        source_format=escape(result.source_format),
        synthetic_note=", synthetic data" if result.synthetic else "",
        seed=result.seed,
        trials_per_scenario=result.trials_per_scenario,
        accepted=accepted,
        generated=generated,
        survival_pct=percent(accepted / generated if generated else None),
        trials=result.overall.trials,
        pass1=percent(result.overall.pass_hat.get(1)),
        empty_kinds=escape(", ".join(c.kind for c in rows if c.rate is None) or "none"),
        seed_summary=escape(seed_summary(result)),
        yield_rows=_yield_rows(result),
        max_k=k,
        score_rows=score_rows,
        kind_chart=bar_chart(rows),
        cell_rows=_cell_rows(rows),
        examples="".join(_example(e) for e in result.examples) or "<p>No trial failed.</p>",
        curve_chart=curve_chart(result.overall.pass_hat),
        seed_rows=seed_rows,
    )


def write(result: BenchResult, out: Path) -> tuple[Path, Path]:
    """Write `results.json` and `report.html` into `out`; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "results.json"
    data.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    page = out / "report.html"
    page.write_text(render_html(result), encoding="utf-8")
    return data, page
