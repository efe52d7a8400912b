"""List calls as SQL over a world's snapshot layers: filters, sorts, counts and pages.

A snapshot never changes, so the values its records hold in the fields list calls filter or
sort by are kept in typed columns: a table per resource with a row per record a layer holds
and, per field, the columns of `evaluate.Cell` (rank, blank, number, key, raw, text), computed
by the evaluator's own rules the first time a query needs them, and indexed. Conditions and
sort keys compile to comparisons of those columns that give what the evaluator gives; one SQL
cannot express the same way (a SQL LIKE pattern, a dot-walk, a value a column cannot hold
exactly) leaves the whole query to the evaluator, which stays the reference. A world's own rows
(the few an episode writes) are evaluated in Python and merged in (`SqlTransaction`).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from myna.mocks.evaluate import MISSING, Cell, canonical_number, cell
from myna.mocks.query import And, Condition, Filter, Not, Query, SortKey
from myna.mocks.store import Record

_T = TypeVar("_T")
NEVER = "1 = 0"
ALWAYS = "1 = 1"
_PLAIN = re.compile(r"[a-z][a-z0-9_]{0,29}")
_ROWS = ""  # the `filled` entry saying a layer's rows of a resource are in its table
_FORMAT = re.compile(r"[a-z][a-z0-9_]{0,39}")


def query_fields(query: Query) -> tuple[str, ...] | None:
    """The fields a query filters or sorts by, or None when SQL cannot answer it exactly
    (a dot-walk, a SQL LIKE pattern)."""
    found: dict[str, None] = {}
    stack: list[Filter] = [] if query.where is None else [query.where]
    while stack:
        part = stack.pop()
        if isinstance(part, Condition):
            if part.op == "pattern":
                return None
            found[part.field] = None
        elif isinstance(part, Not):
            stack.append(part.part)
        else:
            stack.extend(part.parts)
    for key in query.order_by:
        found[key.field] = None
    if any("." in name for name in found):
        return None
    return tuple(found)


class Compiler:
    """A query's filter and order as SQL over a resource's table (alias `q`); its parameters
    in `params`, in the order their marks appear."""

    def __init__(self, fields: Mapping[str, FieldStats], *, mark: str, postgres: bool) -> None:
        self._columns = {name: f"q.{column_stem(name)}" for name in fields}
        self._stats = {self._columns[name]: stats for name, stats in fields.items()}
        self._mark = mark
        self._find = "strpos" if postgres else "instr"
        self.params: list[Any] = []
        # Column stems of the filter's top-level conjuncts `field = value` that compiled to one
        # lookup of the text index: two of them are worth an index on both (`QueryTables`).
        self.lookups: list[str] = []
        self._conjuncts: set[int] = set()
        self._conjunct = False

    def filter(self, where: Filter) -> str | None:
        """`where` as SQL, noting its single-lookup equalities in `lookups`."""
        parts = where.parts if isinstance(where, And) else (where,)
        self._conjuncts = {id(p) for p in parts if isinstance(p, Condition) and p.op == "="}
        return self.where(where)

    def _param(self, value: Any) -> str:
        self.params.append(value)
        return self._mark

    def where(self, where: Filter) -> str | None:
        if isinstance(where, Condition):
            return self._condition(where)
        if isinstance(where, Not):
            inner = self.where(where.part)
            return None if inner is None else f"NOT ({inner})"
        parts = [self.where(part) for part in where.parts]
        if any(part is None for part in parts):
            return None
        if not parts:
            return ALWAYS if isinstance(where, And) else NEVER
        joiner = " AND " if isinstance(where, And) else " OR "
        return "(" + joiner.join(f"({part})" for part in parts) + ")"

    def order(self, order_by: Sequence[SortKey]) -> str:
        """ORDER BY terms giving `evaluate.sort_records`' order; the place of a record in the
        world's list breaks ties, as the stable sort keeps input order."""
        terms = []
        for key in order_by:
            c = self._columns[key.field]
            way = " DESC" if key.descending else ""
            nulls_first = key.descending if key.nulls_first is None else key.nulls_first
            if nulls_first != key.descending:
                # Empty values sort last ascending and first descending by rank alone.
                terms.append(f"CASE WHEN {c}_r = 3 THEN 0 ELSE 1 END{way}")
            terms += [f"{c}_r{way}", f"{c}_n{way}", f"{c}_k{way}", f"{c}_s{way}"]
        return ", ".join([*terms, "q.place"])

    def _condition(self, condition: Condition) -> str | None:
        self._conjunct = id(condition) in self._conjuncts
        c = self._columns[condition.field]
        op, value = condition.op, condition.value
        negated = op in ("!=", "not_in", "not_like")
        positive = {"!=": "=", "not_in": "in", "not_like": "like"}.get(op, op)
        compile_ = _CONDITIONS.get(positive)
        if compile_ is None:
            return None
        sql = compile_(self, c, value)
        if sql is None or not negated:
            return sql
        return f"NOT ({sql})"

    def _equal(self, c: str, expected: Any) -> str | None:
        """`_compare` with `=` in as few index lookups as the field's values allow: equal
        texts are equal values in any two ranks (a text parses one way), and a number or
        timestamp also equals one of its rank holding the same value (`1`, `"1.0"`)."""
        if expected is None or expected == "":
            return f"{c}_b = 1"
        operand = cell(expected)
        if operand is None or operand.rank == 3:
            return self._compare(c, "=", expected)
        text = f"{c}_t = {self._param(operand.text)} AND {c}_r <> 3"
        stats = self._stats[c]
        canonical = canonical_number(operand.number)
        # Every number of the field written in its canonical form: `=` compares texts.
        plain = operand.rank == 0 and stats.plain
        if (
            operand.rank == 2
            or not stats.ranks & (1 << operand.rank)
            or (plain and canonical == operand.text)
        ):
            if self._conjunct:
                self.lookups.append(c)
            return f"({text})"
        if plain:
            return f"(({text}) OR ({c}_t = {self._param(canonical)} AND {c}_r = 0))"
        same = f"{c}_r = {operand.rank} AND {c}_n = {self._param(operand.number)}"
        return f"(({text}) OR ({same}))"

    def _compare(self, c: str, op: str, expected: Any) -> str | None:
        """`evaluate._pair`: within one rank by number or case-folded text, across ranks by
        case-folded text; never for an empty value on either side. A part that no rank of
        the field's values can take is left out."""
        operand = cell(expected)
        if operand is None:
            return None
        if operand.rank == 3:
            return NEVER
        if operand.rank == 2:
            return f"({c}_r <> 3 AND {c}_t {op} {self._param(operand.text)})"
        ranks = self._stats[c].ranks
        parts = []
        if ranks & (1 << operand.rank):
            parts.append(f"{c}_r = {operand.rank} AND {c}_n {op} {self._param(operand.number)}")
        if ranks & ~(1 << operand.rank) & 0b111:
            across = f"{c}_r NOT IN ({operand.rank}, 3) AND {c}_t {op}"
            parts.append(f"{across} {self._param(operand.text)}")
        return "(" + " OR ".join(f"({part})" for part in parts) + ")" if parts else NEVER

    def _in(self, c: str, expected: Any) -> str | None:
        options = [expected] if isinstance(expected, str) else list(expected or ())
        parts = [self._equal(c, option) for option in options]
        if any(part is None for part in parts):
            return None
        return "(" + " OR ".join(f"({part})" for part in parts) + ")" if parts else NEVER

    def _text(self, c: str, expected: Any, test: str) -> str | None:
        """A test of the case-folded text of a non-empty value against the needle's."""
        needle = _needle(expected)
        if needle is None:
            return None
        if not needle:
            return f"{c}_r <> 3"
        size = len(needle)
        checks = {
            "like": f"{self._find}({c}_t, {self._mark}) > 0",
            "starts_with": f"substr({c}_t, 1, {size}) = {self._mark}",
            "ends_with": f"length({c}_t) >= {size} "
            f"AND substr({c}_t, length({c}_t) - {size - 1}) = {self._mark}",
        }
        self.params.append(needle)
        return f"({c}_r <> 3 AND {checks[test]})"

    def _between(self, c: str, expected: Any) -> str | None:
        if not isinstance(expected, tuple | list) or len(expected) != 2:
            return None
        low = self._compare(c, ">=", expected[0])
        high = self._compare(c, "<=", expected[1])
        return None if low is None or high is None else f"({low} AND {high})"


def _needle(expected: Any) -> str | None:
    found = cell(expected)
    return None if found is None else found.text


_CONDITIONS: dict[str, Callable[[Compiler, str, Any], str | None]] = {
    "=": Compiler._equal,
    "<": lambda self, c, value: self._compare(c, "<", value),
    "<=": lambda self, c, value: self._compare(c, "<=", value),
    ">": lambda self, c, value: self._compare(c, ">", value),
    ">=": lambda self, c, value: self._compare(c, ">=", value),
    "in": Compiler._in,
    "like": lambda self, c, value: self._text(c, value, "like"),
    "starts_with": lambda self, c, value: self._text(c, value, "starts_with"),
    "ends_with": lambda self, c, value: self._text(c, value, "ends_with"),
    "is_empty": lambda _self, c, _value: f"{c}_b = 1",
    "is_not_empty": lambda _self, c, _value: f"{c}_b = 0",
    "between": Compiler._between,
}


def table_name(prefix: str, resource: str) -> str:
    """The table of a resource's query columns: its name when that is a plain identifier."""
    if _PLAIN.fullmatch(resource):
        return f"{prefix}q_{resource}"
    return f"{prefix}qh_{_digest(resource)}"


def column_stem(field: str) -> str:
    return f"f_{field}" if _FORMAT.fullmatch(field) else f"h_{_digest(field)}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class LayerRows:
    """One snapshot layer's own records of a resource, for filling its table rows."""

    snapshot: str
    records: Iterable[tuple[str, int, Record]]  # (id, place in the world's list, record)


@dataclass(frozen=True, slots=True)
class FieldStats:
    """What a field's values in one or more layers are like: all held exactly, which ranks
    occur (a bit per `Cell.rank`), and whether every number's text is its canonical form
    (`evaluate.canonical_number`), which makes `=` one lookup of the text column."""

    exact: bool = True
    ranks: int = 0
    plain: bool = True

    def __and__(self, other: FieldStats) -> FieldStats:
        """Over the layers of both."""
        return FieldStats(
            self.exact and other.exact, self.ranks | other.ranks, self.plain and other.plain
        )

    @staticmethod
    def of(cells: Iterable[Cell | None]) -> FieldStats:
        exact, ranks, plain = True, 0, True
        for found in cells:
            if found is None:
                exact = False
                continue
            ranks |= 1 << found.rank
            if found.rank == 0 and plain:
                plain = found.text == canonical_number(found.number)
        return FieldStats(exact, ranks, plain)


Fact = tuple[str, str, str]
"""(snapshot, resource, field): a layer's column values of a field are in its table
(field `_ROWS`: its rows are)."""


class QueryTables:
    """The per-resource tables of typed columns, their DDL and their filling. What the
    database holds is cached once known committed (`publish`): snapshots never change."""

    def __init__(self, prefix: str, *, mark: str, postgres: bool) -> None:
        self._prefix = prefix
        self._mark = mark
        self._postgres = postgres
        self._columns: set[tuple[str, str]] = set()  # (resource, field) with columns
        self._filled: dict[Fact, FieldStats] = {}
        self._indexes: set[str] = set()  # indexes on pairs of fields
        self._lock = threading.Lock()
        text = 'TEXT COLLATE "C"' if postgres else "TEXT"
        real = "DOUBLE PRECISION" if postgres else "REAL"
        self._types = {
            "r": "SMALLINT NOT NULL DEFAULT 3",
            "b": "SMALLINT NOT NULL DEFAULT 1",
            "n": f"{real} NOT NULL DEFAULT 0",
            "k": f"{text} NOT NULL DEFAULT ''",
            "s": f"{text} NOT NULL DEFAULT ''",
            "t": f"{text} NOT NULL DEFAULT ''",
        }

    def _sql(self, text: str) -> str:
        return text.replace("?", self._mark)

    def publish(self, pending: Pending) -> None:
        """Remember what a committed transaction found or wrote."""
        with self._lock:
            self._columns.update(pending.columns)
            self._filled.update(pending.filled)
            self._indexes.update(pending.indexes)

    def paired(self, resource: str, stems: Sequence[str]) -> str | None:
        """The index on two fields filtered together by equality, if it exists (None: create
        it with `pair`)."""
        name = self._pair_name(resource, stems)
        return name if name in self._indexes else None

    def pair(self, cursor: Any, resource: str, stems: Sequence[str], pending: Pending) -> None:
        """Index two fields a filter compares by equality together (on the table's rows:
        a count of both reads one index range instead of a row per match of either)."""
        name = self._pair_name(resource, stems)
        first, second = (stem.removeprefix("q.") for stem in sorted(stems[:2]))
        columns = f"snapshot, {first}_t, {second}_t, place, {first}_r, {second}_r"
        table = table_name(self._prefix, resource)
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns})")
        pending.indexes.add(name)

    def _pair_name(self, resource: str, stems: Sequence[str]) -> str:
        table = table_name(self._prefix, resource)
        return f"{self._prefix}qi_{_digest(table + ' '.join(sorted(stems[:2])))}c"

    def forget(self, snapshot: str) -> None:
        with self._lock:
            for fact in [fact for fact in self._filled if fact[0] == snapshot]:
                del self._filled[fact]

    def known(
        self, resource: str, fields: Sequence[str], snapshots: Sequence[str]
    ) -> dict[str, FieldStats] | None:
        """The fields' stats over the layers when the cache says every layer's columns of
        every field are filled; None when something is not known yet."""
        found: dict[str, FieldStats] = {}
        for field in [_ROWS, *fields]:
            if (resource, field) not in self._columns:
                return None
            stats = FieldStats()
            for snapshot in snapshots:
                filled = self._filled.get((snapshot, resource, field))
                if filled is None:
                    return None
                stats &= filled
            found[field] = stats
        del found[_ROWS]
        return found

    def ensure(
        self,
        cursor: Any,
        resource: str,
        fields: Sequence[str],
        layers: Sequence[LayerRows],
        pending: Pending,
    ) -> dict[str, FieldStats]:
        """Make the layers' columns of the fields exist and hold their values (in this
        transaction); the fields' stats over the layers. What it learns goes to `pending`."""
        table = table_name(self._prefix, resource)
        added = []
        for field in [_ROWS, *fields]:
            if (resource, field) not in self._columns:
                if self._claim_column(cursor, resource, field):
                    self._add_columns(cursor, table, field)
                    added.append(field)
                pending.columns.add((resource, field))
        stats = {field: FieldStats() for field in fields}
        wrote = False
        for layer in layers:
            found, filled = self._fill(cursor, resource, table, fields, layer, pending)
            wrote = wrote or filled
            stats = {field: stats[field] & found[field] for field in fields}
        for field in added:  # an index built over filled columns costs one sort
            self._add_indexes(cursor, table, field)
        if wrote:
            # The planner's statistics: which index narrows a filter most, and that a
            # snapshot's rows are most of the table.
            cursor.execute(f"ANALYZE {table}")
        return stats

    def _claim(self, cursor: Any, statement: str, values: tuple[Any, ...]) -> bool:
        cursor.execute(statement, values)
        return cursor.fetchone() is not None

    def _claim_column(self, cursor: Any, resource: str, field: str) -> bool:
        claim = self._sql(
            f"INSERT INTO {self._prefix}qcols (resource, field) VALUES (?, ?) "
            "ON CONFLICT DO NOTHING RETURNING field"
        )
        return self._claim(cursor, claim, (resource, field))

    def _add_columns(self, cursor: Any, table: str, field: str) -> None:
        if field == _ROWS:
            cursor.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (snapshot VARCHAR(255) NOT NULL, "
                "record_id VARCHAR(255) NOT NULL, place BIGINT NOT NULL, "
                "PRIMARY KEY (snapshot, record_id))"
            )
            return
        stem = column_stem(field)
        for suffix, kind in self._types.items():
            cursor.execute(f"ALTER TABLE {table} ADD COLUMN {stem}_{suffix} {kind}")

    def _add_indexes(self, cursor: Any, table: str, field: str) -> None:
        if field == _ROWS:
            indexes = [(f"qi_{_digest(table)}p", "snapshot, place")]
        else:
            stem = column_stem(field)
            key = _digest(table + stem)
            indexes = [
                (f"qi_{key}t", f"snapshot, {stem}_t, place, {stem}_r"),
                (f"qi_{key}o", f"snapshot, {stem}_r, {stem}_n, {stem}_k, {stem}_s, place"),
            ]
        for name, columns in indexes:
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {self._prefix}{name} ON {table} ({columns})"
            )

    def _fill(
        self,
        cursor: Any,
        resource: str,
        table: str,
        fields: Sequence[str],
        layer: LayerRows,
        pending: Pending,
    ) -> tuple[dict[str, FieldStats], bool]:
        """Fill one layer's rows and columns where no one has; the fields' stats in the
        layer, and whether it wrote."""
        missing = [f for f in fields if (layer.snapshot, resource, f) not in self._filled]
        if missing and (layer.snapshot, resource, _ROWS) not in self._filled:
            # Filled by another process or an earlier start (a kept query file): no record
            # need be read for those.
            stored = self._stored_facts(cursor, layer.snapshot, resource)
            pending.filled.update(stored)
            missing = [f for f in missing if (layer.snapshot, resource, f) not in stored]
            if not missing and (layer.snapshot, resource, _ROWS) in stored:
                return {f: stored[(layer.snapshot, resource, f)] for f in fields}, False
        if not missing and (layer.snapshot, resource, _ROWS) in self._filled:
            return {f: self._filled[(layer.snapshot, resource, f)] for f in fields}, False
        # Only the ids, places and cells are kept: a layer's parsed records would cost memory
        # in proportion to everything they hold (gigabytes for a large seed).
        records: list[tuple[str, int]] = []
        cells: dict[str, list[Cell | None]] = {f: [] for f in missing}
        for record_id, place, record in layer.records:
            records.append((record_id, place))
            for f in missing:
                cells[f].append(cell(record.get(f, MISSING)))
        computed = {f: FieldStats.of(found) for f, found in cells.items()}
        computed[_ROWS] = FieldStats()
        claimed = self._claim_facts(cursor, (layer.snapshot, resource), computed)
        filled = sorted(claimed - {_ROWS})
        if _ROWS in claimed:
            names = "".join(f", {column_stem(f)}_{suffix}" for f in filled for suffix in "rbnkst")
            marks = ", ".join(["?"] * (3 + 6 * len(filled)))
            statement = f"INSERT INTO {table} (snapshot, record_id, place{names}) VALUES ({marks})"
            cursor.executemany(
                self._sql(statement),
                [
                    (layer.snapshot, record_id, place, *_row(cells, filled, n))
                    for n, (record_id, place) in enumerate(records)
                ],
            )
            filled = []
        for field in filled:
            stem = column_stem(field)
            sets = ", ".join(f"{stem}_{suffix} = ?" for suffix in "rbnkst")
            statement = self._sql(f"UPDATE {table} SET {sets} WHERE snapshot = ? AND record_id = ?")
            cursor.executemany(
                statement,
                [
                    (*_values(cells[field][n]), layer.snapshot, record_id)
                    for n, (record_id, _) in enumerate(records)
                ],
            )
        stats = {}
        for field in [_ROWS, *fields]:
            fact = (layer.snapshot, resource, field)
            known = self._filled.get(fact, pending.filled.get(fact))
            if known is None:
                known = computed[field] if field in claimed else self._filled_in(cursor, fact)
            pending.filled[fact] = stats[field] = known
        return stats, bool(claimed)

    def _claim_facts(
        self, cursor: Any, layer: tuple[str, str], computed: Mapping[str, FieldStats]
    ) -> set[str]:
        """The fields of a (snapshot, resource) this transaction fills: those no one had."""
        claim = self._sql(
            f"INSERT INTO {self._prefix}qfilled (snapshot, resource, field, exact, ranks, plain)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING field"
        )
        claimed = set()
        for field, stats in computed.items():
            values = (*layer, field, int(stats.exact), stats.ranks, int(stats.plain))
            if self._claim(cursor, claim, values):
                claimed.add(field)
        return claimed

    def _stored_facts(self, cursor: Any, snapshot: str, resource: str) -> dict[Fact, FieldStats]:
        """Every field of a layer's resource whose columns the database holds, with stats."""
        cursor.execute(
            self._sql(
                f"SELECT field, exact, ranks, plain FROM {self._prefix}qfilled "
                "WHERE snapshot = ? AND resource = ?"
            ),
            (snapshot, resource),
        )
        return {
            (snapshot, resource, str(field)): FieldStats(bool(exact), int(ranks), bool(plain))
            for field, exact, ranks, plain in cursor.fetchall()
        }

    def _filled_in(self, cursor: Any, fact: Fact) -> FieldStats:
        """The stats another process stored with the columns it filled."""
        cursor.execute(
            self._sql(
                f"SELECT exact, ranks, plain FROM {self._prefix}qfilled "
                "WHERE snapshot = ? AND resource = ? AND field = ?"
            ),
            fact,
        )
        exact, ranks, plain = cursor.fetchone()
        return FieldStats(bool(exact), int(ranks), bool(plain))

    def drop_snapshot(self, cursor: Any, snapshot: str) -> None:
        """Delete a dropped snapshot's rows from every query table."""
        for table in self.tables(cursor):
            cursor.execute(self._sql(f"DELETE FROM {table} WHERE snapshot = ?"), (snapshot,))
        cursor.execute(
            self._sql(f"DELETE FROM {self._prefix}qfilled WHERE snapshot = ?"), (snapshot,)
        )

    def tables(self, cursor: Any) -> list[str]:
        cursor.execute(
            self._sql(f"SELECT resource FROM {self._prefix}qcols WHERE field = ?"), (_ROWS,)
        )
        return [table_name(self._prefix, str(row[0])) for row in cursor.fetchall()]


def _row(cells: Mapping[str, list[Cell | None]], fields: Sequence[str], n: int) -> list[Any]:
    return [value for field in fields for value in _values(cells[field][n])]


def _values(found: Cell | None) -> tuple[Any, ...]:
    if found is None:  # not held exactly: the field's queries go to the evaluator
        return (3, 1, 0.0, "", "", "")
    return (found.rank, int(found.blank), found.number, found.key, found.raw, found.text)


@dataclass(slots=True)
class Pending:
    """What one transaction learned about the query tables, cached once it commits."""

    columns: set[tuple[str, str]]
    filled: dict[Fact, FieldStats]
    indexes: set[str]


class QueryFile:
    """The query tables of one immutable root snapshot in a SQLite file of their own (beside a
    seed cache, `SqlStore.mount_snapshot`): a field's columns and indexes are filled once, by
    whichever process first filters or sorts by it, and every later start reads them without
    parsing a record. WAL lets readers run beside a process filling another field."""

    def __init__(self, path: Path, prefix: str) -> None:
        self._path = path
        self._prefix = prefix
        self._connection: sqlite3.Connection | None = None  # opened when first needed
        self._lock = threading.Lock()
        self.tables = QueryTables(prefix, mark="?", postgres=False)

    def _open(self) -> sqlite3.Connection:
        """The file's connection (under the lock), made with its tables on first use."""
        if self._connection is None:
            connection = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False, timeout=30
            )
            p = self._prefix
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(
                f"CREATE TABLE IF NOT EXISTS {p}qcols (resource TEXT NOT NULL, "
                "field TEXT NOT NULL, PRIMARY KEY (resource, field));"
                f"CREATE TABLE IF NOT EXISTS {p}qfilled (snapshot TEXT NOT NULL, "
                "resource TEXT NOT NULL, field TEXT NOT NULL, exact SMALLINT NOT NULL, "
                "ranks SMALLINT NOT NULL, plain SMALLINT NOT NULL, "
                "PRIMARY KEY (snapshot, resource, field));"
            )
            self._connection = connection
        return self._connection

    def ready(
        self, resource: str, fields: Sequence[str], layer: LayerRows
    ) -> dict[str, FieldStats]:
        """`QueryTables.ensure` of the root's layer, in a transaction of its own."""
        known = self.tables.known(resource, fields, [layer.snapshot])
        if known is not None:
            return known
        return self._write(
            lambda cursor, pending: self.tables.ensure(cursor, resource, fields, [layer], pending)
        )

    def pair(self, resource: str, stems: Sequence[str]) -> None:
        if self.tables.paired(resource, stems) is None:
            self._write(lambda cursor, pending: self.tables.pair(cursor, resource, stems, pending))

    def rows(self, statement: str, params: Sequence[Any]) -> Sequence[tuple[Any, ...]]:
        with self._lock:
            cursor = self._open().execute(statement, params)
            found: Sequence[tuple[Any, ...]] = cursor.fetchall()
            return found

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()

    def _write(self, step: Callable[[Any, Pending], _T]) -> _T:
        with self._lock:
            cursor = self._open().cursor()
            cursor.execute("BEGIN IMMEDIATE")
            pending = Pending(set(), {}, set())
            try:
                done = step(cursor, pending)
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")
        self.tables.publish(pending)
        return done
