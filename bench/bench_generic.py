"""Any vendor's recordings, learned from scratch and replayed: `myna learn` + `myna conformance`.

    python bench/bench_generic.py [--only NAME,...] [--json] [--mismatches N]

One row per vendor of `../shared/corpus` (every HAR vendor, the octokit nock fixtures, the
notion-sdk-py VCR cassettes) and one for the README's main job (the ITSM corpus that ships with
Myna, learned as `--service itsm`). Each is learned with default options and no overlay, exactly
as a new user would, and replayed with `myna conformance` as the issue measures it: `--one-world`
for the write-rich recordings (nock, VCR: sessions recorded one after another), a world per
session for the HARs and the README job (each recording stands alone). Columns: models learned,
resources, operations (inferred by convention in brackets), exchanges answered as recorded, and
the most common mismatch reasons.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.errors import MynaError  # noqa: E402
from myna.mocks.conformance import run_conformance  # noqa: E402
from myna.schemas import learn  # noqa: E402
from myna.traces import read_many  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass(frozen=True)
class Vendor:
    name: str
    files: tuple[Path, ...]
    one_world: bool
    service: str | None = None


@dataclass
class Row:
    vendor: str
    files: int
    models: int = 0
    resources: int = 0
    operations: int = 0
    inferred: int = 0
    total: int = 0
    matched: int = 0
    seconds: float = 0.0
    error: str | None = None
    reasons: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.matched / self.total if self.total else 0.0


def vendors() -> list[Vendor]:
    found: list[Vendor] = []
    for folder in sorted((CORPUS / "har").glob("*")):
        files = tuple(sorted(folder.glob("*.har")))
        if files:
            found.append(Vendor(folder.name.removeprefix("jupiterone_graph-"), files, False))
    nock = tuple(sorted((CORPUS / "nock" / "octokit_fixtures").rglob("*.json")))
    if nock:
        found.append(Vendor("github (nock)", nock, True))
    vcr = tuple(sorted((CORPUS / "vcr" / "notion-sdk-py").glob("*.yaml")))
    if vcr:
        found.append(Vendor("notion (vcr)", vcr, True))
    itsm = ROOT / "myna" / "backends" / "itsm" / "corpus.jsonl"
    found.append(Vendor("README main job (itsm)", (itsm,), False, service="itsm"))
    return found


def measure(vendor: Vendor, *, keep: int) -> Row:
    row = Row(vendor.name, len(vendor.files))
    started = time.perf_counter()
    try:
        sessions = list(read_many(list(vendor.files)))
        models = learn(sessions, service=vendor.service)
        row.models = len(models)
        for model in models:
            row.resources += len(model.resources)
            row.operations += len(model.operations)
            row.inferred += sum(1 for op in model.operations if op.inferred is not None)
            report = run_conformance(model, sessions, one_world=vendor.one_world)
            row.total += report.total
            row.matched += report.matched
            for mismatch in report.mismatches:
                row.reasons[_reason_kind(mismatch.reason)] += 1
                if len(row.examples) < keep:
                    row.examples.append(
                        f"{mismatch.method} {mismatch.path} -> {mismatch.status} "
                        f"(recorded {mismatch.recorded_status}): {mismatch.reason}"
                    )
    except MynaError as error:
        row.error = str(error)
    row.seconds = time.perf_counter() - started
    return row


def _reason_kind(reason: str) -> str:
    """A mismatch reason without its values, so that alike ones count together."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "_", reason)
    text = re.sub(r"\[\d+\]", "[n]", text)
    return text[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated vendor names (substring match)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--mismatches", type=int, default=0, help="mismatches shown per vendor")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"the shared corpus is not at {CORPUS}")
    wanted = [part.strip() for part in (args.only or "").split(",") if part.strip()]
    rows = [
        measure(vendor, keep=args.mismatches)
        for vendor in vendors()
        if not wanted or any(part in vendor.name for part in wanted)
    ]
    if args.json:
        print(json.dumps([_as_dict(row) for row in rows], indent=2))
        return
    print(
        f"{'vendor':26} {'files':>5} {'models':>6} {'res':>4} {'ops (inferred)':>14} "
        f"{'answered as recorded':>22} {'time':>6}"
    )
    for row in rows:
        ops = f"{row.operations} ({row.inferred})"
        answered = (
            f"{row.matched}/{row.total} {row.share:6.1%}" if row.error is None else "load error"
        )
        print(
            f"{row.vendor:26} {row.files:>5} {row.models:>6} {row.resources:>4} {ops:>14} "
            f"{answered:>22} {row.seconds:5.1f}s"
        )
        if row.error:
            print(f"    error: {row.error}")
        for reason, count in row.reasons.most_common(args.mismatches and 6):
            print(f"    {count:4} x {reason}")
        for example in row.examples:
            print(f"    e.g. {example[:220]}")
    total = sum(row.total for row in rows)
    matched = sum(row.matched for row in rows)
    share = matched / (total or 1)
    print(f"{'all':26} {'':>5} {'':>6} {'':>4} {'':>14} {matched:>8}/{total} {share:6.1%}")


def _as_dict(row: Row) -> dict[str, object]:
    return {
        "vendor": row.vendor,
        "files": row.files,
        "models": row.models,
        "resources": row.resources,
        "operations": row.operations,
        "inferred_operations": row.inferred,
        "exchanges": row.total,
        "answered_as_recorded": row.matched,
        "share": round(row.share, 4),
        "seconds": round(row.seconds, 2),
        "error": row.error,
        "reasons": dict(row.reasons.most_common()),
    }


if __name__ == "__main__":
    main()
