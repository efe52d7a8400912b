"""Trace import throughput and peak memory on a generated ~1 GB HAR and large cassettes.

Generates the HAR with `bench/har_generator.py` (streamed to disk under bench/out/), then runs,
each in its own child process so that peak RSS (from `os.wait4`) is that step's alone:

1. a bare ijson pass that only builds each entry (the floor for any streaming HAR reader),
2. `myna traces import big.har -o big.jsonl` (parse, classify bodies, redact, write JSONL),
3. reading the JSONL back with `myna.traces.read` (schema-validated, redacted), the path the
   learning stage takes.

Then the same traffic as a vcrpy YAML cassette and a nock recording (`bench/cassette_generator.py`,
`--cassette-mb` each, 0 to skip), each with its own floor (libyaml's event parser alone; ijson
building each item) beside `myna traces import`.

Beside them, on a smaller vcrpy cassette (`--vcrpy-mb`, 0 to skip), the peer: vcrpy loading that
cassette as it does before a test (`vcr.serialize.deserialize`: the whole YAML document, then its
requests and responses), next to `myna traces import` of the same file. vcrpy must be importable
by the child (`PYTHONPATH=/path/to/vcrpy`); the step is skipped otherwise.

Throughput is reported in MB/s of input and in exchanges/s, and the import as a ratio to the
bare parse, since the machine's speed varies more than that ratio does. The generated files are
deleted at the end unless `--keep` is given.

    python bench/bench_trace_import.py [--size-mb 1024] [--cassette-mb 256] [--vcrpy-mb 64]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cassette_generator import write_cassette
from har_generator import write_har

OUT = Path(__file__).resolve().parent / "out"

BARE_PARSE = """
import ijson, sys
with open(sys.argv[1], "rb") as f:
    n = sum(1 for _ in ijson.items(f, "log.entries.item", use_float=True))
print(n)
"""
BARE_YAML_EVENTS = """
import sys, yaml
with open(sys.argv[1], "rb") as f:
    print(sum(1 for _ in yaml.parse(f, Loader=yaml.CSafeLoader)))
"""
BARE_NOCK_ITEMS = """
import ijson, sys
with open(sys.argv[1], "rb") as f:
    print(sum(1 for _ in ijson.items(f, "item", use_float=True)))
"""
VCRPY_LOAD = """
import sys
from vcr.serialize import deserialize
from vcr.serializers import yamlserializer
with open(sys.argv[1], encoding="utf-8") as f:
    requests, responses = deserialize(f.read(), yamlserializer)
print(len(requests))
"""
IMPORT = "from myna.cli import main; main()"
READ_BACK = """
import sys
from myna.traces import read
print(sum(len(session.events) for session in read(sys.argv[1])))
"""


@dataclass
class Step:
    name: str
    seconds: float
    peak_rss_mb: float
    stdout: str


def run_child(name: str, args: list[str]) -> Step:
    started = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stderr is not None
    stdout = child.stdout.read()
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{name} failed ({child.returncode}):\n{stderr}")
    # Linux reports ru_maxrss in KiB.
    return Step(name, seconds, usage.ru_maxrss / 1024, stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=1024, help="the HAR's size, 0 to skip")
    parser.add_argument("--cassette-mb", type=float, default=256, help="each cassette's size")
    parser.add_argument("--vcrpy-mb", type=float, default=64, help="the cassette vcrpy loads")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    results: dict[str, object] = {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }
    if args.size_mb:
        results["har"] = bench_har(args.size_mb, keep=args.keep)
    for format, floor in (("vcr", BARE_YAML_EVENTS), ("nock", BARE_NOCK_ITEMS)):
        if args.cassette_mb:
            results[format] = bench_cassette(format, floor, args.cassette_mb, keep=args.keep)
    if args.vcrpy_mb and _importable("vcr"):
        results["vcrpy_peer"] = bench_cassette("vcr", VCRPY_LOAD, args.vcrpy_mb, keep=args.keep)
    print(json.dumps(results, indent=2))


def _importable(module: str) -> bool:
    check = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return check.returncode == 0


def bench_har(size: float, *, keep: bool) -> dict[str, object]:
    """The HAR as written, the bare ijson floor, the import, and reading its JSONL back."""
    har, jsonl = OUT / "trace_import.har", OUT / "trace_import.jsonl"
    try:
        started = time.perf_counter()
        entries = write_har(har, int(size * 1024 * 1024))
        generated = time.perf_counter() - started
        size_mb = har.stat().st_size / 1e6
        print(f"generated {size_mb:,.0f} MB, {entries:,} entries in {generated:.0f} s", flush=True)

        bare = run_child("bare ijson parse", [sys.executable, "-c", BARE_PARSE, str(har)])
        imported = run_child(
            "myna traces import",
            [sys.executable, "-c", IMPORT, "traces", "import", str(har), "-o", str(jsonl)],
        )
        exchanges = sum(1 for _ in _exchange_lines(jsonl))
        jsonl_mb = jsonl.stat().st_size / 1e6
        read_back = run_child("read JSONL back", [sys.executable, "-c", READ_BACK, str(jsonl)])
    finally:
        if not keep:
            har.unlink(missing_ok=True)
            jsonl.unlink(missing_ok=True)
    return {
        "har_mb": round(size_mb, 1),
        "har_entries": entries,
        "exchanges_imported": exchanges,
        "jsonl_mb": round(jsonl_mb, 1),
        "steps": [
            _row(bare, size_mb, exchanges),
            _row(imported, size_mb, exchanges),
            _row(read_back, jsonl_mb, exchanges),
        ],
        "import_vs_bare_parse": round(bare.seconds / imported.seconds, 2),
    }


def bench_cassette(format: str, floor: str, size: float, *, keep: bool) -> dict[str, object]:
    """The cassette as written, `floor` (a bare parse, or the peer) and `myna traces import`."""
    suffix = "yaml" if format == "vcr" else "json"
    cassette, jsonl = OUT / f"trace_import.{suffix}", OUT / f"trace_import_{format}.jsonl"
    try:
        interactions = write_cassette(cassette, int(size * 1024 * 1024), format)
        size_mb = cassette.stat().st_size / 1e6
        print(f"generated {format}: {size_mb:,.0f} MB, {interactions:,} interactions", flush=True)
        label = "vcrpy load" if floor is VCRPY_LOAD else f"bare {format} parse"
        bare = run_child(label, [sys.executable, "-c", floor, str(cassette)])
        imported = run_child(
            f"myna traces import ({format})",
            [sys.executable, "-c", IMPORT, "traces", "import", str(cassette), "-o", str(jsonl)],
        )
        exchanges = sum(1 for _ in _exchange_lines(jsonl))
    finally:
        if not keep:
            cassette.unlink(missing_ok=True)
            jsonl.unlink(missing_ok=True)
    return {
        "input_mb": round(size_mb, 1),
        "interactions": interactions,
        "exchanges_imported": exchanges,
        "steps": [_row(bare, size_mb, exchanges), _row(imported, size_mb, exchanges)],
        "import_vs_bare_parse": round(bare.seconds / imported.seconds, 2),
    }


def _row(step: Step, input_mb: float, exchanges: int) -> dict[str, object]:
    return {
        "step": step.name,
        "seconds": round(step.seconds, 1),
        "input_mb_per_s": round(input_mb / step.seconds, 1),
        "exchanges_per_s": round(exchanges / step.seconds),
        "peak_rss_mb": round(step.peak_rss_mb, 1),
    }


def _exchange_lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as lines:
        for line in lines:
            if line.startswith(b'{"type":"exchange"'):
                yield line


if __name__ == "__main__":
    main()
