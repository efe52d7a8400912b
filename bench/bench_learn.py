"""Learning throughput: exchanges per second on one core, and side by side with mitmproxy2swagger.

    python bench/bench_learn.py [--repeat 5] [--synthetic 20000] [--no-m2s]

Measures, in one run so the ratios are fair on a noisy machine:
- `learn` alone on the pre-loaded corpus HARs (../shared/corpus/har), per service directory;
- end to end from the HAR files (read + learn + save the model);
- `learn` on synthetic ServiceNow-style CRUD traffic (small bodies, typical of agent traces);
- mitmproxy2swagger on the same HARs (both of its passes: templates, then schemas), installed
  in its own virtualenv under bench/out/m2s-venv (its dependencies clash with ours), timed
  inside that interpreter so start-up time is not counted against it.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from myna.schemas import learn  # noqa: E402
from myna.schemas.openapi import save  # noqa: E402
from myna.traces import read_many  # noqa: E402
from myna.traces.model import Body, Exchange, Session  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "har"
M2S_VENV = ROOT / "bench" / "out" / "m2s-venv"
SETS = ("jupiterone_graph-servicenow", "jupiterone_graph-salesforce", "jupiterone_graph-jira")


def best_of(repeat: int, work: Callable[[], Any]) -> float:
    """Fastest of `repeat` runs in CPU seconds of this process (one core; other processes on a
    busy machine do not count), with the collector paused while timing (as timeit does)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
        gc.enable()
    return min(times)


def synthetic(count: int, seed: int = 0) -> list[Session]:
    """ServiceNow-style traffic: create, read, update and list incidents, in small sessions."""
    rng = random.Random(seed)
    base = "https://dev1.service-now.com/api/now/table/incident"
    sessions: list[Session] = []
    events: list[Exchange] = []
    made = 0
    while made < count:
        sys_id = f"{rng.getrandbits(128):032x}"
        record = {
            "sys_id": sys_id,
            "number": f"INC{1000 + made:07d}",
            "state": "1",
            "priority": str(rng.randint(1, 5)),
            "short_description": f"Ticket {made}",
            "caller_id": {"link": f"{base[:-9]}/sys_user/{'a' * 32}", "value": "a" * 32},
            "opened_at": "2024-04-16 17:16:27",
            "active": "true",
            "sys_mod_count": "0",
            "category": rng.choice(["network", "hardware", "software", "inquiry"]),
        }
        steps = [
            (
                "POST",
                base,
                201,
                {"result": record},
                {"short_description": record["short_description"]},
            ),
            ("GET", f"{base}/{sys_id}", 200, {"result": record}, None),
            (
                "PATCH",
                f"{base}/{sys_id}",
                200,
                {"result": {**record, "state": "2"}},
                {"state": "2"},
            ),
            (
                "GET",
                f"{base}?sysparm_limit=2",
                200,
                {"result": [record, {**record, "state": "2"}]},
                None,
            ),
        ]
        for method, url, status, response, request in steps:
            events.append(
                Exchange(
                    id=f"e{made}",
                    method=method,
                    url=url,
                    status=status,
                    query=[("sysparm_limit", "2")] if "?" in url else [],
                    request_body=Body("json", request) if request else Body(),
                    response_body=Body("json", response),
                )
            )
            made += 1
        if len(events) >= 40:
            sessions.append(Session(id=f"s{len(sessions)}", events=events))
            events = []
    if events:
        sessions.append(Session(id=f"s{len(sessions)}", events=events))
    return sessions


def combined_har(files: list[Path], target: Path) -> None:
    entries: list[Any] = []
    for path in files:
        entries.extend(json.loads(path.read_text(encoding="utf-8"))["log"]["entries"])
    log = {"version": "1.2", "creator": {"name": "bench", "version": "1"}, "entries": entries}
    target.write_text(json.dumps({"log": log}), encoding="utf-8")


def prefixes(har: Path) -> list[str]:
    """API prefixes (scheme, host and base path) to hand mitmproxy2swagger, one run each."""
    from urllib.parse import urlsplit

    from myna.schemas.paths import api_base, split_path

    found: set[str] = set()
    for entry in json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]:
        url = urlsplit(entry["request"]["url"])
        segments = split_path(url.path)
        cut = api_base(segments)
        # Auth and login endpoints have no API base; mitmproxy2swagger also fails on their
        # form-encoded bodies, and Myna folds them into the service's auth convention.
        if cut:
            found.add(f"{url.scheme}://{url.netloc}/" + "/".join(segments[:cut]))
    return sorted(found)


_M2S_DRIVER = r"""
import json, sys, time, pathlib, re
from mitmproxy2swagger.mitmproxy2swagger import main
har, out, prefixes = sys.argv[1], pathlib.Path(sys.argv[2]), json.loads(sys.argv[3])
report = pathlib.Path(sys.argv[4])
times = []
for index, prefix in enumerate(prefixes):
    target = out / f"m2s-{index}.yaml"
    if target.exists():
        target.unlink()
    started = time.process_time()
    main(["-i", har, "-o", str(target), "-p", prefix, "-f", "har"])
    # Accept every suggested template, as a user reviewing the first pass would.
    text = target.read_text()
    target.write_text(text.replace("- ignore:", "- "))
    main(["-i", har, "-o", str(target), "-p", prefix, "-f", "har"])
    times.append(time.process_time() - started)
report.write_text(json.dumps(times))
"""


def run_m2s(har: Path, out: Path, repeat: int) -> float | None:
    python = M2S_VENV / "bin" / "python"
    if not python.exists():
        return None
    found = prefixes(har)
    best = None
    report = out / "m2s-times.json"
    for _ in range(repeat):
        subprocess.run(
            [str(python), "-c", _M2S_DRIVER, str(har), str(out), json.dumps(found), str(report)],
            capture_output=True,
            check=True,
        )
        total = sum(json.loads(report.read_text()))
        best = total if best is None else min(best, total)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--synthetic", type=int, default=20_000)
    parser.add_argument("--no-m2s", action="store_true")
    args = parser.parse_args()

    rows: list[tuple[str, int, float, float | None]] = []
    if CORPUS.is_dir():
        with tempfile.TemporaryDirectory() as scratch:
            work = Path(scratch)
            all_sessions: list[Session] = []
            for name in SETS:
                files = sorted((CORPUS / name).glob("*.har"))
                sessions = list(read_many(files))
                all_sessions.extend(sessions)
                exchanges = sum(len(session.exchanges) for session in sessions)
                learn_only = best_of(args.repeat, lambda s=sessions: learn(s))
                combined = work / f"{name}.har"
                combined_har(files, combined)

                def end_to_end(path: Path = combined) -> None:
                    for index, model in enumerate(learn(read_many([path]))):
                        save(model, work / f"model-{index}.yaml")

                def learn_and_save(loaded: list[Session] = sessions) -> None:
                    for index, model in enumerate(learn(loaded)):
                        save(model, work / f"model-{index}.yaml")

                learned_saved = best_of(args.repeat, learn_and_save)
                whole = best_of(args.repeat, end_to_end)
                m2s = None if args.no_m2s else run_m2s(combined, work, max(1, args.repeat // 2))
                rows.append((f"{name} (learn only)", exchanges, learn_only, None))
                rows.append((f"{name} (learn + save YAML)", exchanges, learned_saved, m2s))
                rows.append((f"{name} (read HAR + learn + save)", exchanges, whole, m2s))
            exchanges = sum(len(session.exchanges) for session in all_sessions)
            rows.append(
                (
                    "all corpus (learn only)",
                    exchanges,
                    best_of(args.repeat, lambda: learn(all_sessions)),
                    None,
                )
            )
    traffic = synthetic(args.synthetic)
    count = sum(len(session.exchanges) for session in traffic)
    rows.append(
        ("synthetic CRUD (learn only)", count, best_of(args.repeat, lambda: learn(traffic)), None)
    )

    print(f"{'input':44} {'exchanges':>9} {'seconds':>9} {'exch/s':>9} {'m2s s':>8} {'ratio':>7}")
    for label, exchanges, seconds, m2s in rows:
        ratio = f"{m2s / seconds:7.1f}x" if m2s else ""
        m2s_text = f"{m2s:8.3f}" if m2s else ""
        print(
            f"{label:44} {exchanges:9d} {seconds:9.4f} {exchanges / seconds:9.0f}"
            f" {m2s_text:>8} {ratio:>7}"
        )


if __name__ == "__main__":
    main()
