"""A seeded ERP world that is internally consistent: the reference service's records after
every corpus chapter has run (vendors, items, periods, orders in every state, receipts, matched
and blocked invoices), as (resource, id, record) triples for a store's `load_base`.

Generated seeds fill each field from its schema, so an order's total need not be the sum of its
lines; this world is what the rules made, so every derived field and rule holds in it.
"""

from __future__ import annotations

import copy

from myna.mocks.backends.erp.corpus import reference_service, write_chapters
from myna.mocks.backends.erp.documents import RESOURCES, Row


def reference_world() -> list[tuple[str, str, Row]]:
    """Every record the reference service holds after the corpus, in an order whose references
    point backwards (vendors and items before orders, orders before receipts and invoices)."""
    erp = reference_service()
    write_chapters(erp)
    return [
        (RESOURCES[collection], record_id, copy.deepcopy(row))
        for collection in RESOURCES
        for record_id, row in erp.records[collection].items()
    ]
