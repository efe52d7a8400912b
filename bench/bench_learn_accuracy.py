"""How accurately `myna learn` recovers the corpus services, beside mitmproxy2swagger.

    python bench/bench_learn_accuracy.py [--no-m2s]

Ground truth is bench/learn_expected.yaml, written by hand from the raw recordings. Measures:
- path templates: precision and recall of "METHOD /template" (parameter names ignored);
- parameter detection: recall of path parameters at the right position, and how many of those
  carry the vendor's own name;
- field types: share of listed fields whose set of JSON types matches exactly;
- required fields: F1 over the fields listed as required or optional;
- enums: share of listed enum fields learned as an enum holding every expected value;
- state-machine edges: precision and recall of (resource, field, source, target).
mitmproxy2swagger (installed under bench/out/m2s-venv, see bench_learn.py) is run on the same
HARs with its suggested templates accepted; it produces templates, parameters and field types,
so only those columns are filled for it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_learn import M2S_VENV, combined_har, prefixes  # noqa: E402

from myna.schemas import learn  # noqa: E402
from myna.schemas.model import ServiceModel  # noqa: E402
from myna.traces import read_many  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "har"
EXPECTED = ROOT / "bench" / "learn_expected.yaml"
_PARAM = re.compile(r"\{[^}]*\}")


@dataclass
class Score:
    hits: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.hits += int(hit)
        self.total += 1

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass
class Scores:
    template_precision: Score = field(default_factory=Score)
    template_recall: Score = field(default_factory=Score)
    param_recall: Score = field(default_factory=Score)
    param_names: Score = field(default_factory=Score)
    field_types: Score = field(default_factory=Score)
    required_tp: int = 0
    required_fp: int = 0
    required_fn: int = 0
    enums: Score = field(default_factory=Score)
    edge_precision: Score = field(default_factory=Score)
    edge_recall: Score = field(default_factory=Score)
    has_required: bool = False

    def required_f1(self) -> float | None:
        if not self.has_required:
            return None
        denominator = 2 * self.required_tp + self.required_fp + self.required_fn
        return 2 * self.required_tp / denominator if denominator else 1.0


def normal(operation: str) -> str:
    return _PARAM.sub("{}", operation)


def json_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema admits (integer counted as number; m2s's nullable object as null)."""
    if "anyOf" in schema:
        return set().union(*(json_types(branch) for branch in schema["anyOf"]))
    if schema.get("nullable") and schema.get("type") == "object" and "properties" not in schema:
        return {"null"}
    kinds = schema.get("type")
    found = {kinds} if isinstance(kinds, str) else set(kinds or [])
    return {"number" if kind == "integer" else kind for kind in found}


# --- Myna ---------------------------------------------------------------------------------


def score_myna(spec: dict[str, Any], model: ServiceModel, scores: Scores) -> None:
    base = spec["base"]
    learned = {f"{op.method} {op.path[len(base) :] or '/'}" for op in model.operations}
    _templates(spec["operations"], learned, scores)
    for name, expected in spec["resources"].items():
        resource = model.resources.get(name)
        for field_name, kinds in expected.get("types", {}).items():
            spec_field = resource.fields.get(field_name) if resource else None
            got = json_types(spec_field.schema_) if spec_field else set()
            scores.field_types.add(got == {"number" if k == "integer" else k for k in kinds})
        scores.has_required = True
        for field_name in expected.get("required", []):
            spec_field = resource.fields.get(field_name) if resource else None
            if spec_field is not None and spec_field.required:
                scores.required_tp += 1
            else:
                scores.required_fn += 1
        for field_name in expected.get("optional", []):
            spec_field = resource.fields.get(field_name) if resource else None
            if spec_field is not None and spec_field.required:
                scores.required_fp += 1
        for field_name, values in expected.get("enums", {}).items():
            spec_field = resource.fields.get(field_name) if resource else None
            enum = spec_field.schema_.get("enum") if spec_field else None
            scores.enums.add(enum is not None and set(values) <= set(enum))
    edges = {
        (name, machine.field, transition.source, transition.target)
        for name, resource in model.resources.items()
        for machine in resource.state_machines
        for transition in machine.transitions
    }
    expected_edges = {
        (edge["resource"], edge["field"], edge["source"], edge["target"]) for edge in spec["edges"]
    }
    for edge in edges:
        scores.edge_precision.add(edge in expected_edges)
    for edge in expected_edges:
        scores.edge_recall.add(edge in edges)


def _templates(expected: list[str], learned: set[str], scores: Scores) -> None:
    wanted = {normal(operation) for operation in expected}
    got = {normal(operation) for operation in learned}
    for operation in got:
        scores.template_precision.add(operation in wanted)
    for operation in wanted:
        scores.template_recall.add(operation in got)
    by_shape = {normal(operation): operation for operation in learned}
    for operation in expected:
        names = _PARAM.findall(operation)
        match = by_shape.get(normal(operation))
        for index, name in enumerate(names):
            scores.param_recall.add(match is not None)
            scores.param_names.add(match is not None and _PARAM.findall(match)[index] == name)


# --- mitmproxy2swagger --------------------------------------------------------------------

_M2S_DRIVER = r"""
import sys, pathlib
from mitmproxy2swagger.mitmproxy2swagger import main
har, target, prefix = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
main(["-i", har, "-o", str(target), "-p", prefix, "-f", "har"])
target.write_text(target.read_text().replace("- ignore:", "- "))
main(["-i", har, "-o", str(target), "-p", prefix, "-f", "har"])
"""


def run_m2s(har: Path, work: Path) -> dict[str, Any]:
    """mitmproxy2swagger's paths for every API prefix in the HAR, keyed by prefix."""
    python = M2S_VENV / "bin" / "python"
    documents: dict[str, Any] = {}
    for index, prefix in enumerate(prefixes(har)):
        target = work / f"{har.stem}-{index}.yaml"
        subprocess.run(
            [str(python), "-c", _M2S_DRIVER, str(har), str(target), prefix],
            capture_output=True,
            check=True,
        )
        documents[prefix] = yaml.safe_load(target.read_text())
    return documents


def score_m2s(spec: dict[str, Any], documents: dict[str, Any], scores: Scores) -> None:
    paths: dict[str, Any] = {}
    for prefix, document in documents.items():
        if prefix.endswith(spec["base"]) and spec_host_matches(spec, prefix):
            paths.update(document.get("paths") or {})
    learned = {f"{method.upper()} {path}" for path, entry in paths.items() for method in entry}
    _templates(spec["operations"], learned, scores)
    for _name, expected in spec["resources"].items():
        method, path = expected["source"].split(" ", 1)
        entry = (paths.get(path) or {}).get(method.lower(), {})
        schema = (
            entry.get("responses", {})
            .get(200, entry.get("responses", {}).get("200", {}))
            .get("content", {})
            .get("application/json", {})
            .get("schema", {})
        )
        records = _m2s_records(schema, expected["records"])
        properties = records.get("properties", {})
        for field_name, kinds in expected.get("types", {}).items():
            got = json_types(properties[field_name]) if field_name in properties else set()
            scores.field_types.add(got == {"number" if k == "integer" else k for k in kinds})


def spec_host_matches(spec: dict[str, Any], prefix: str) -> bool:
    local = spec["service"].startswith("localhost")
    return ("localhost" in prefix) == local


def _m2s_records(schema: dict[str, Any], records: Any) -> dict[str, Any]:
    if records == []:
        return schema.get("items", {})
    if records == "attributes_type":
        return schema.get("properties", {}).get("records", {}).get("items", {})
    return schema.get("properties", {}).get(records, {}).get("items", {})


# --- report -------------------------------------------------------------------------------

ROWS = (
    ("path-template precision", lambda s: s.template_precision.value),
    ("path-template recall", lambda s: s.template_recall.value),
    ("path parameters detected", lambda s: s.param_recall.value),
    ("path parameters named as the vendor does", lambda s: s.param_names.value),
    ("field type accuracy", lambda s: s.field_types.value),
    ("required-field F1", lambda s: s.required_f1()),
    ("enum recovery", lambda s: s.enums.value),
    ("state-machine edge precision", lambda s: s.edge_precision.value),
    ("state-machine edge recall", lambda s: s.edge_recall.value),
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-m2s", action="store_true")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found at {CORPUS}")
    expected = yaml.safe_load(EXPECTED.read_text())
    myna, m2s = Scores(), Scores()
    use_m2s = not args.no_m2s and (M2S_VENV / "bin" / "python").exists()
    models: dict[str, dict[str, ServiceModel]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        m2s_docs: dict[str, dict[str, Any]] = {}
        for spec in expected.values():
            corpus = spec["corpus"]
            if corpus not in models:
                files = sorted((CORPUS / corpus).glob("*.har"))
                models[corpus] = {model.name: model for model in learn(read_many(files))}
                if use_m2s:
                    har = work / f"{corpus}.har"
                    combined_har(files, har)
                    m2s_docs[corpus] = run_m2s(har, work)
            score_myna(spec, models[corpus][spec["service"]], myna)
            if use_m2s:
                score_m2s(spec, m2s_docs[corpus], m2s)

    def show(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    print(f"{'measure':44} {'myna':>6} {'m2s':>6}")
    for label, measure in ROWS:
        theirs = show(measure(m2s)) if use_m2s and label in _M2S_MEASURES else "-"
        print(f"{label:44} {show(measure(myna)):>6} {theirs:>6}")
    print(json.dumps({label: measure(myna) for label, measure in ROWS}))


_M2S_MEASURES = {
    "path-template precision",
    "path-template recall",
    "path parameters detected",
    "path parameters named as the vendor does",
    "field type accuracy",
}

if __name__ == "__main__":
    main()
