"""A seeded ERP world that is internally consistent: the reference service's records after
every corpus chapter has run (vendors, items, periods, orders in every state, receipts, matched
and blocked invoices).

Generated seeds fill each field from its schema, so an order's total need not be the sum of its
lines; this world is what the rules made, so every derived field and rule holds in it. It ships
as seed files (`reference_world/<resource>.jsonl`), so `myna serve erp --seed-dir <it>` serves
it. Deterministic; regenerate with

    python -m myna.backends.erp.world -o myna/backends/erp/reference_world
"""

from __future__ import annotations

import copy

from myna.backends import seed_file_texts, write_world_command
from myna.backends.erp.corpus import reference_service, write_chapters
from myna.backends.erp.documents import RESOURCES, Row


def reference_world() -> dict[str, list[Row]]:
    """Every record the reference service holds after the corpus, by resource, vendors and items
    before the orders, receipts and invoices that name them."""
    erp = reference_service()
    write_chapters(erp)
    return {
        RESOURCES[collection]: [copy.deepcopy(row) for row in erp.records[collection].values()]
        for collection in RESOURCES
    }


def seed_files() -> dict[str, str]:
    """The text of each `reference_world/<resource>.jsonl` file."""
    return seed_file_texts(reference_world())


def main(argv: list[str] | None = None) -> None:
    write_world_command(argv, __doc__.splitlines()[0] if __doc__ else None, seed_files)


if __name__ == "__main__":
    main()
