"""The ITSMBench report: results JSON, and one self-contained HTML page (tables, inline SVG).

The page needs no server, script or network: styles are inline and the charts are SVG written
here, so it opens from disk in any browser.
"""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template

from myna.itsm.bench import BenchResult, Score

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


def bar_chart(values: dict[str, float]) -> str:
    """Horizontal bars of shares in [0, 1], one per label."""
    row = 22
    height = row * len(values) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{BAR_WIDTH + 220}" '
        f'height="{height}" role="img" aria-label="pass^1 by kind">'
    ]
    for index, (label, value) in enumerate(values.items()):
        y = 5 + index * row
        width = max(0.0, min(1.0, value)) * BAR_WIDTH
        parts.append(f'<text x="0" y="{y + 14}">{escape(label)}</text>')
        parts.append(
            f'<rect x="130" y="{y}" width="{width:.1f}" height="16" fill="#4a7bb7">'
            f"<title>{escape(label)}: {percent(value)}</title></rect>"
        )
        parts.append(f'<text x="{136 + width:.1f}" y="{y + 13}">{percent(value)}</text>')
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


def render_html(result: BenchResult) -> str:
    template = Template(files("myna.itsm.templates").joinpath("report.html").read_text("utf-8"))
    accepted, generated = result.survival
    k = max(result.overall.pass_hat, default=1)
    yield_rows = "".join(
        f"<tr><td>{escape(y.kind)}</td><td>{y.yielded}</td><td>{y.generated}</td>"
        f"<td>{y.accepted}</td><td>"
        + escape(", ".join(f"{gate} ({n})" for gate, n in sorted(y.rejections.items())))
        + "</td></tr>"
        for y in result.yields
    )
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
        yield_rows=yield_rows,
        max_k=k,
        score_rows=score_rows,
        kind_chart=bar_chart({kind: s.pass_hat.get(1, 0.0) for kind, s in result.by_kind.items()}),
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
