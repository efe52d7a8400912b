"""Benchmark: importing ITSM operational data (issue 8's whole-pipeline budget is 60 s).

Times, median of several runs on one core:
  - import of the shared UCI sample (5,998 events, 890 incidents) into an IncidentHistory,
  - its conversion to ServiceNow records,
  - the same import with pseudonymisation,
  - generating and importing the shipped synthetic export.
The UCI sample is read from ../shared/corpus; the script says so and skips it when absent.

Run: python bench/bench_itsm_import.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
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
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
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
            f"{report.count()} issues"
        )
    else:
        print(f"UCI sample absent ({UCI}); skipping its rows")
    rows.append(("generate synthetic export", _median_seconds(synthetic.render, repeat)))
    shipped = synthetic.default_export()
    rows.append(
        ("import synthetic export", _median_seconds(lambda: import_history(shipped), repeat))
    )
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
