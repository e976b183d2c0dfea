"""The PostgreSQL schema of the store: one table per collection, one SQL
index per `Index` of base.py, built from those tables so the two never
disagree.

A table holds the document as `json` text (kept verbatim: what you put is
what you get) and, for every field an index reads, three sort columns that
mirror the memory store's ordering of mixed values: `<field>_t` (0 null,
1 number or boolean, 2 text), `<field>_n` (the number) and `<field>_s` (the
text, byte order: COLLATE "C"). Partitions match on the three columns,
ordered indexes sort on them, then on `id`.

MIGRATIONS is the versioned list the server applies on start (under an
advisory lock, in one transaction: several nodes starting at once apply
each version exactly once; `schema_version` records them). Tables and
indexes of collections added to base.py later are created on start too
(`IF NOT EXISTS`); a change to an existing table's fields needs a new
version.
"""

from __future__ import annotations

from typing import Any

from trackgrade.server.store.base import COLLECTIONS, INDEXES, Index, index_fields

PREFIX = "tg_"
MIGRATION_LOCK = 7_303_011      # pg_advisory_xact_lock key of the migrator


def table(collection: str) -> str:
    return PREFIX + collection


def sort_value(value: Any) -> tuple[int, float, str]:
    """(tag, number, text) of one indexed value (see the module docstring)."""
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, (bool, int, float)):
        return (1, float(value), "")
    return (2, 0.0, str(value))


def columns(field: str) -> tuple[str, str, str]:
    return (f"{field}_t", f"{field}_n", f"{field}_s")


def _fields(collection: str) -> tuple[str, ...]:
    return tuple(f for f in index_fields(collection) if f != "id")


def where_sql(index: Index) -> tuple[str, list]:
    """The partial-index predicate of `index` and its parameters."""
    if index.where is None:
        return "", []
    field, value = index.where
    return (" AND ".join(f"{c} = %s" for c in columns(field)), list(sort_value(value)))


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def _create_table(collection: str) -> str:
    cols = ['id text COLLATE "C" PRIMARY KEY', "doc json NOT NULL"]
    for field in _fields(collection):
        t, n, s = columns(field)
        cols += [f"{t} smallint NOT NULL", f"{n} double precision NOT NULL",
                 f'{s} text COLLATE "C" NOT NULL']
    return f"CREATE TABLE IF NOT EXISTS {table(collection)} ({', '.join(cols)})"


def _create_index(index: Index) -> str:
    keys = [c for f in index.partition + index.order for c in columns(f)]
    if not index.unique:
        keys.append("id")
    sql = (f"CREATE {'UNIQUE ' if index.unique else ''}INDEX IF NOT EXISTS "
           f"ix_{index.name.replace('.', '_')} ON {table(index.collection)} ({', '.join(keys)})")
    predicate, params = where_sql(index)
    if predicate:
        for value in params:
            predicate = predicate.replace("%s", _literal(value), 1)
        sql += f" WHERE {predicate}"
    return sql


def version_1() -> list[str]:
    return ([_create_table(c) for c in COLLECTIONS] + [_create_index(i) for i in INDEXES])


def add_index_field(collection: str, field: str) -> list[str]:
    """Statements giving an existing table the sort columns of a field a new
    index reads, filled from each stored document."""
    t, n, s = columns(field)
    value = f"doc->>'{field}'"
    kind = f"json_typeof(doc->'{field}')"
    return [
        f"ALTER TABLE {table(collection)} ADD COLUMN IF NOT EXISTS {t} smallint NOT NULL "
        f"DEFAULT 0, ADD COLUMN IF NOT EXISTS {n} double precision NOT NULL DEFAULT 0, "
        f'ADD COLUMN IF NOT EXISTS {s} text COLLATE "C" NOT NULL DEFAULT \'\'',
        f"UPDATE {table(collection)} SET "
        f"{t} = CASE WHEN {kind} IN ('number', 'boolean') THEN 1 "
        f"WHEN {kind} = 'string' THEN 2 ELSE 0 END, "
        f"{n} = CASE WHEN {kind} = 'number' THEN ({value})::double precision "
        f"WHEN {kind} = 'boolean' THEN CASE WHEN ({value})::boolean THEN 1 ELSE 0 END "
        f"ELSE 0 END, "
        f"{s} = CASE WHEN {kind} = 'string' THEN {value} ELSE '' END",
    ]


# (version, statements): append, never edit a released version
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, tuple(version_1())),
    # the console's delivery log: deliveries of one endpoint by event time
    (2, tuple(add_index_field("deliveries", "created"))),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def migrate(conn) -> list[int]:
    """Apply the missing versions in one transaction; returns those applied."""
    applied = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        done = {row[0] for row in conn.execute("SELECT version FROM schema_version")}
        newer = [v for v in done if v > SCHEMA_VERSION]
        if newer:
            raise RuntimeError(f"the database has schema version {max(newer)}, newer than "
                               f"this trackgrade ({SCHEMA_VERSION}); upgrade trackgrade")
        for version, statements in MIGRATIONS:
            if version in done:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
            applied.append(version)
        for statement in version_1():       # collections and indexes added since: created
            conn.execute(statement)
    return applied
