"""A seeded ERP world that is internally consistent: the reference service's records after
every corpus chapter has run (vendors, items, periods, orders in every state, receipts, matched
and blocked invoices).

Generated seeds fill each field from its schema, so an order's total need not be the sum of its
lines; this world is what the rules made, so every derived field and rule holds in it. It ships
as seed files (`reference_world/<resource>.jsonl`), so `myna serve erp --seed-dir <it>` serves
it. Deterministic; regenerate with

    python -m myna.mocks.backends.erp.world -o myna/mocks/backends/erp/reference_world
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

from myna.mocks.backends.erp.corpus import reference_service, write_chapters
from myna.mocks.backends.erp.documents import RESOURCES, Row


def reference_world() -> list[tuple[str, str, Row]]:
    """Every record the reference service holds after the corpus, as (resource, id, record),
    vendors and items before the orders, receipts and invoices that name them."""
    erp = reference_service()
    write_chapters(erp)
    return [
        (RESOURCES[collection], record_id, copy.deepcopy(row))
        for collection in RESOURCES
        for record_id, row in erp.records[collection].items()
    ]


def seed_files(records: list[tuple[str, str, Row]]) -> dict[str, str]:
    """The text of `<resource>.jsonl` for each resource: one record a line, in id order."""
    lines: dict[str, list[str]] = {}
    for resource, _, record in records:
        lines.setdefault(f"{resource}.jsonl", []).append(
            json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        )
    return {name: "\n".join(rows) + "\n" for name, rows in sorted(lines.items())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory to write")
    arguments = parser.parse_args(argv)
    arguments.output.mkdir(parents=True, exist_ok=True)
    for name, text in seed_files(reference_world()).items():
        (arguments.output / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
