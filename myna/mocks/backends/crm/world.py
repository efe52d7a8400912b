"""A seeded CRM world that is internally consistent: the reference org's records after every
corpus chapter has run (users, accounts, contacts, leads converted and open, opportunities in
every stage with their products, cases escalated and closed, tasks, and the recycle bin).

Generated seeds fill each field from its schema, so an opportunity's probability need not be its
stage's nor a reference name a record; this world is what the platform's rules made, so every
derived field and rule holds in it. It ships as seed files (`reference_world/<Object>.jsonl`), so
`myna serve crm --seed-dir <it>` serves it. Deterministic; regenerate with

    python -m myna.mocks.backends.crm.world -o myna/mocks/backends/crm/reference_world
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from myna.mocks.backends.crm.corpus import reference_org, write_chapters
from myna.mocks.backends.crm.instance import Row


def reference_world() -> dict[str, list[Row]]:
    """Every record the reference org holds after the corpus, by object, in the catalogue's
    order (users before the accounts they own, accounts before their contacts)."""
    org, book = reference_org()
    write_chapters(org, book)
    return {name: [dict(row) for row in rows.values()] for name, rows in org.rows.items()}


def seed_files(world: dict[str, list[Row]]) -> dict[str, str]:
    """The text of `<Object>.jsonl` for each object with records: one record a line."""
    return {
        f"{name}.jsonl": "".join(
            json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows
        )
        for name, rows in sorted(world.items())
        if rows
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-o", "--output", type=Path, required=True, help="directory to write")
    arguments = parser.parse_args(argv)
    arguments.output.mkdir(parents=True, exist_ok=True)
    for name, text in seed_files(reference_world()).items():
        (arguments.output / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
