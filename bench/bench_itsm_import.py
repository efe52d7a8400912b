"""Benchmark: importing ITSM operational data (issue 8's whole-pipeline budget is 60 s).

CPU time of this (single-threaded) process, median of several runs, so that other work on a
shared machine does not inflate it:
  - import of the shared UCI sample (5,998 events, 890 incidents) into an IncidentHistory,
  - its conversion to ServiceNow records,
  - the same import with pseudonymisation,
  - generating and importing the shipped synthetic export,
  - with --large N, importing a synthetic export of N incidents once (24,918 is the size of the
    whole UCI log, 141,712 events, of which the shared sample is the start).
The UCI sample is read from ../shared/corpus; the script says so and skips it when absent.

Run: PYTHONPATH=. python bench/bench_itsm_import.py [--repeat N] [--large N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from myna.itsm import synthetic
from myna.itsm.importers import import_history, to_servicenow_records

UCI = (
    Path(__file__).resolve().parents[1].parent
    / "shared/corpus/datasets/uci_incident_event_log/incident_event_log_first5998.csv"
)


def _median_seconds(work: Callable[[], object], repeat: int) -> float:
    work()  # warm caches and imports, as a long-running benchmark process would have them
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--large", type=int, default=0, metavar="N")
    arguments = parser.parse_args()
    repeat = arguments.repeat
    rows: list[tuple[str, float]] = []
    if UCI.is_file():
        history, report = import_history(UCI)
        rows.append(("import UCI sample", _median_seconds(lambda: import_history(UCI), repeat)))
        rows.append(
            (
                "records from UCI sample",
                _median_seconds(lambda: to_servicenow_records(history), repeat),
            )
        )
        rows.append(
            (
                "import UCI sample, pseudonymised",
                _median_seconds(lambda: import_history(UCI, pseudonymise_key="bench"), repeat),
            )
        )
        print(
            f"UCI sample: {report.rows} events, {report.incidents} incidents, "
            f"issues {report.by_kind()}"
        )
    else:
        print(f"UCI sample absent ({UCI}); skipping its rows")
    rows.append(("generate synthetic export", _median_seconds(synthetic.render, repeat)))
    shipped = synthetic.default_export()
    rows.append(
        ("import synthetic export", _median_seconds(lambda: import_history(shipped), repeat))
    )
    if arguments.large:
        with tempfile.TemporaryDirectory() as directory:
            path = synthetic.write(Path(directory) / "large.csv", incidents=arguments.large)
            start = time.process_time()
            _, report = import_history(path)
            seconds = time.process_time() - start
        rows.append((f"import {report.rows:,} events ({report.incidents:,} incidents)", seconds))
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:9.1f} ms CPU")


if __name__ == "__main__":
    main()
