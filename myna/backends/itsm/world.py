"""A seeded ITSM world that is internally consistent: the reference instance's records after
every corpus chapter has run (users in their groups, configuration items, incidents in every
state with their SLAs, a problem, changes with their tasks, a catalog request, knowledge
articles, and the audit and journal rows all of that wrote).

Generated seeds fill each field from its schema, so an incident's priority need not follow its
impact and urgency, nor its assignee belong to its group; this world is what the platform's
rules made, so every derived field and rule holds in it. It ships as seed files
(`reference_world/<table>.jsonl`), which `myna serve itsm` serves by default. Its rows are the
mock's stored form: references as bare sys_ids, every value a string, and a record of a class
that extends another (a server is a configuration item) also a row of each parent table with
that table's columns, as the mock keeps class hierarchies (PROTOCOL.md §2.6). Secrets are
redacted as Myna redacts them in traces. Attachments are left out: their bytes are no table the
model serves, so a seeded attachment could not be downloaded.

Deterministic; run after the corpus and the model are regenerated, with

    python -m myna.backends.itsm.world -o myna/backends/itsm/reference_world
"""

from __future__ import annotations

from typing import Final

from myna.backends import seed_file_texts, write_world_command
from myna.backends.itsm.corpus import HOST, START, run_chapters
from myna.backends.itsm.instance import Instance, Row
from myna.backends.itsm.tables import ancestors, table
from myna.traces.redact import redact_json

LEFT_OUT: Final = frozenset({"sys_attachment"})


def reference_instance() -> Instance:
    """The reference instance after every corpus chapter, run in order as the corpus runs them
    (the recorded sessions are not kept)."""
    instance = Instance(HOST, START)
    run_chapters(instance)
    return instance


def reference_world() -> dict[str, list[Row]]:
    """Every record the reference instance holds after the corpus (see `world_of`)."""
    return world_of(reference_instance())


def world_of(instance: Instance) -> dict[str, list[Row]]:
    """Every record `instance` holds, by table, in the order the instance wrote them (a parent
    table's own records before its children's); secrets redacted."""
    world = {
        name: [redact_json(dict(row)) for row in rows.values()]
        for name, rows in instance.rows.items()
        if name not in LEFT_OUT
    }
    for name, rows in list(world.items()):
        for parent in ancestors(name):
            if parent in world:
                columns = table(parent).names
                world[parent] += [{c: row[c] for c in columns if c in row} for row in rows]
    return world


def seed_texts(instance: Instance) -> dict[str, str]:
    """The text of each seed file of the world `instance` holds."""
    return seed_file_texts(world_of(instance))


def seed_files() -> dict[str, str]:
    """The text of each `reference_world/<table>.jsonl` file."""
    return seed_texts(reference_instance())


def main(argv: list[str] | None = None) -> None:
    write_world_command(argv, __doc__.splitlines()[0] if __doc__ else None, seed_files)


if __name__ == "__main__":
    main()
