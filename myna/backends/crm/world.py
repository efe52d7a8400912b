"""A seeded CRM world that is internally consistent: the reference org's records after every
corpus chapter has run (users, accounts, contacts, leads converted and open, opportunities in
every stage with their products, cases escalated and closed, tasks, and the recycle bin).

Generated seeds fill each field from its schema, so an opportunity's probability need not be its
stage's nor a reference name a record; this world is what the platform's rules made, so every
derived field and rule holds in it. It ships as seed files (`reference_world/<Object>.jsonl`), so
`myna serve crm --seed-dir <it>` serves it. Deterministic; regenerate with

    python -m myna.backends.crm.world -o myna/backends/crm/reference_world
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from myna.backends import seed_file_texts, write_world_command
from myna.backends.crm.corpus import reference_org, write_chapters
from myna.backends.crm.instance import Row


def reference_world() -> dict[str, list[Row]]:
    """Every record the reference org holds after the corpus, by object, in the catalogue's
    order (users before the accounts they own, accounts before their contacts)."""
    org, book = reference_org()
    write_chapters(org, book)
    return {name: [dict(row) for row in rows.values()] for name, rows in org.rows.items()}


def seed_files(world: Mapping[str, Sequence[Row]]) -> dict[str, str]:
    """The text of `<Object>.jsonl` for each object with records: one record a line."""
    return seed_file_texts(world)


def main(argv: list[str] | None = None) -> None:
    write_world_command(
        argv, __doc__.splitlines()[0] if __doc__ else None, lambda: seed_files(reference_world())
    )


if __name__ == "__main__":
    main()
