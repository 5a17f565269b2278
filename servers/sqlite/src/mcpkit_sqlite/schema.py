"""What a database holds: its tables and views, their columns, keys and indexes, its state.

The server's own statements, on the reader. A table's name is first looked up in
`sqlite_schema`, then bound (`pragma_table_xinfo(?)`) or quoted as an identifier taken from
the schema itself: a name never becomes SQL as it was given (the reference server's
`describe_table` was injectable so).
"""

import re
from time import monotonic
from typing import Any, Literal, cast

from orjson import dumps

from .database import Database
from .errors import SqliteError
from .page import MAX_NAME_SHOWN
from .results import (
    Column,
    DatabaseInfo,
    DetailLevel,
    ForeignKey,
    Index,
    ObjectType,
    SchemaObject,
    SchemaObjects,
    Table,
    Tables,
    TableSummary,
)

GAP = r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?(?:\*/|$))*"  # spaces and comments, as SQLite skips them
_VIRTUAL = re.compile(rf"{GAP}CREATE{GAP}VIRTUAL\b", re.IGNORECASE | re.DOTALL)
_OWN = "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"  # not SQLite's internal tables
_LISTED = f"type IN ('table', 'view') AND {_OWN}"
_NAMED = f"{_LISTED} AND name = ? COLLATE NOCASE ORDER BY name = ? DESC LIMIT 1"
"""The table or view a name means, as SQL finds it: whatever the case of its ASCII letters
(a hostile file may hold two that differ only so: the exact one is taken)."""


MAX_NAMED = 50
"""Tables an error names: one typo in a file of 30,000 tables gave 6 MB of names."""
MAX_LISTED = 200
"""Indexes, and foreign keys, a table's description lists at most: a hostile file's 6,000
indexes of 2,000-character names made 12 MB, a statement each."""
MAX_SQL_SHOWN = 16 * 1024
"""Characters of one object's SQL that search_objects and the schema resource show: a
file's comments made one CREATE statement of megabytes, forty tables 36 MB of schema."""
_SHOWN_SQL = (
    f"CASE WHEN NOT ? THEN NULL WHEN length(sql) <= {MAX_SQL_SHOWN} THEN sql"
    f" ELSE substr(sql, 1, {MAX_SQL_SHOWN}) || char(10) || '-- cut here: ' || length(sql)"
    " || ' characters in all' END"
)
"""An object's SQL as shown (given: whether to show it)."""


async def schema_sql(database: Database, max_bytes: int) -> str:
    """Return the SQL that makes the database's objects, at most `max_bytes` of it.

    Each object's is cut at MAX_SQL_SHOWN characters; past `max_bytes`, a last line says
    how many objects are left out.
    """
    rows = await database.values(
        f"SELECT {_SHOWN_SQL} FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type DESC, name",
        (True,),
    )
    parts: list[str] = []
    size = 0
    for index, (sql,) in enumerate(rows):
        part = f"{sql};\n\n"
        size += len(part.encode())
        if size > max_bytes:
            parts.append(f"-- cut here: {len(rows) - index} more objects (see search_objects)\n")
            break
        parts.append(part)
    return "".join(parts)


def quoted(name: str) -> str:
    """Return `name` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


async def list_tables(
    database: Database, *, include_views: bool, pattern: str | None, limit: int, max_bytes: int
) -> Tables:
    """Return the first `limit` tables (and views) whose name matches the LIKE `pattern`.

    With the row counts of tables (a file of 30,000 tables gave 7 MB of text at once),
    counted while the server's own time budget lasts: tables past it have none. No more
    tables once their names pass `max_bytes` (a hostile file's names may be megabytes each).
    """
    kinds = "" if include_views else " AND type = 'table'"
    like = " AND name LIKE ?" if pattern else ""
    found = await database.values(
        f"SELECT name, type, sql FROM sqlite_schema WHERE {_LISTED}{kinds}{like}"
        " ORDER BY name LIMIT ?",
        (*((pattern,) if pattern else ()), limit + 1),
    )
    deadline = monotonic() + database.own_seconds  # for all counts together
    tables: list[TableSummary] = []
    size = 0
    for name, kind, sql in found[:limit]:
        size += len(dumps(name))  # as JSON: a control character takes six bytes
        if size > max_bytes:
            return Tables(database=database.name, tables=tables, truncated=True)
        counted = _counted(kind, sql) and monotonic() < deadline
        tables.append(
            TableSummary(
                name=name,
                type=cast(Literal["table", "view"], kind),
                rows=await _count(database, name) if counted else None,
            )
        )
    return Tables(database=database.name, tables=tables, truncated=len(found) > limit)


async def table_names(database: Database) -> list[str]:
    """Return the names of the tables and views, sorted."""
    rows = await database.values(f"SELECT name FROM sqlite_schema WHERE {_LISTED} ORDER BY name")
    return [name for (name,) in rows]


async def named_tables(database: Database) -> list[str]:
    """Return the names of the tables and views a URI, a completion or a message may carry.

    Sorted. Not '', nor longer than `MAX_NAME_SHOWN` characters, nor other than UTF-8 (read
    with U+FFFD): a hostile file's sixty names of 400,000 characters made resources/list
    216 MB, and an unknown table's error 120 MB.
    """
    rows = await database.values(
        f"SELECT name FROM sqlite_schema WHERE {_LISTED} AND length(name) BETWEEN 1 AND ?"
        " ORDER BY name",
        (MAX_NAME_SHOWN,),
    )
    return [name for (name,) in rows if "\ufffd" not in name]


async def exists(database: Database, name: str) -> bool:
    """Return whether the database has a table or view `name`."""
    found = await database.values(f"SELECT 1 FROM sqlite_schema WHERE {_NAMED}", (name, name))
    return bool(found)


async def describe(database: Database, name: str) -> Table:
    """Describe the table or view `name`.

    Raises:
        SqliteError: there is no such table or view.
    """
    found = await database.values(
        f"SELECT name, type, sql, {_SHOWN_SQL} FROM sqlite_schema WHERE {_NAMED}",
        (True, name, name),
    )
    if not found:
        names = await named_tables(database)
        known = ", ".join(names[:MAX_NAMED]) or "none"
        more = f" and {len(names) - MAX_NAMED} more (list_tables)" if len(names) > MAX_NAMED else ""
        raise SqliteError(f"No table or view {name!r} in {database.name}. Tables: {known}{more}.")
    [(name, kind, sql, shown)] = found
    columns = [
        Column(name=c, type=t, not_null=bool(n), default=d, primary_key=p)
        for c, t, n, d, p in await database.values(
            'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_xinfo(?)'
            " WHERE hidden != 1",  # generated columns too (2, 3): table_info leaves them out
            (name,),
        )
    ]
    indexes = await _indexes(database, name)
    keys: dict[int, ForeignKey] = {}
    for key, table, source, target in await database.values(
        'SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?)'
        " WHERE id < ? ORDER BY id, seq",
        (name, MAX_LISTED),
    ):
        entry = keys.setdefault(key, ForeignKey(columns=[], table=table, references=[]))
        entry["columns"].append(source)
        entry["references"].append(target)
    [(index_count, key_count)] = await database.values(
        "SELECT (SELECT count(*) FROM pragma_index_list(?)),"
        " (SELECT count(DISTINCT id) FROM pragma_foreign_key_list(?))",
        (name, name),
    )
    return Table(
        database=database.name,
        name=name,
        type=kind,
        sql=shown,
        columns=columns,
        indexes=indexes,
        foreign_keys=list(keys.values()),
        rows=await _count(database, name) if _counted(kind, sql) else None,
        truncated=len(indexes) < index_count or len(keys) < key_count,
    )


async def _indexes(database: Database, table: str) -> list[Index]:
    """Return the first `MAX_LISTED` indexes of `table` (by name) with their columns.

    An index whose name is over `MAX_NAME_SHOWN` characters is left out.
    """
    indexes: dict[str, Index] = {}
    for index, unique, column in await database.values(
        'SELECT l.name, l."unique", i.name FROM (SELECT name, "unique" FROM pragma_index_list(?)'
        " WHERE length(name) <= ? ORDER BY name LIMIT ?) AS l"
        " LEFT JOIN pragma_index_info(l.name) AS i ORDER BY l.name, i.seqno",
        (table, MAX_NAME_SHOWN, MAX_LISTED),
    ):
        entry = indexes.setdefault(index, Index(name=index, unique=bool(unique), columns=[]))
        if column is not None:  # None: an expression, or no column at all
            entry["columns"].append(column)
    return list(indexes.values())


async def info(database: Database) -> DatabaseInfo:
    """Describe the database: its file, how it is stored, what it holds."""
    [(page_size, page_count, journal, encoding, version)] = await database.values(
        "SELECT (SELECT page_size FROM pragma_page_size), (SELECT page_count FROM"
        " pragma_page_count), (SELECT journal_mode FROM pragma_journal_mode), (SELECT encoding"
        " FROM pragma_encoding), sqlite_version()"
    )
    [(tables, views)] = await database.values(
        f"SELECT count(*) FILTER (WHERE type = 'table'), count(*) FILTER (WHERE type = 'view')"
        f" FROM sqlite_schema WHERE {_LISTED}"
    )
    return DatabaseInfo(
        name=database.name,
        path=database.spec.path,
        writable=database.writer is not None,
        size_bytes=page_size * page_count,
        page_size=page_size,
        page_count=page_count,
        journal_mode=journal,
        encoding=encoding,
        sqlite_version=version,
        tables=tables,
        views=views,
    )


async def search(
    database: Database,
    kind: ObjectType,
    pattern: str,
    detail: DetailLevel,
    limit: int,
    max_bytes: int,
) -> SchemaObjects:
    """Return up to `limit` objects of `kind` whose name matches the LIKE `pattern`.

    Progressive disclosure: `names` gives names (and the table of a column, index or
    trigger), `summary` adds a column's declared type, `full` adds the SQL that made it
    (each cut at MAX_SQL_SHOWN characters, and no more objects once past `max_bytes`).
    Columns are looked for while the server's own time budget lasts (20,000 tables took
    5.7 s): tables past it are not looked into, and the result says `truncated`.
    """
    searched_all = True
    if kind == "column":
        rows, searched_all = await _columns(database, pattern, limit + 1)
    else:
        rows = await database.values(
            f"SELECT name, tbl_name, NULL, {_SHOWN_SQL} FROM sqlite_schema WHERE type = ? AND"
            f" {_OWN} AND name LIKE ? ORDER BY name LIMIT ?",
            (detail == "full", kind, pattern, limit + 1),
        )
    found: list[SchemaObject] = []
    size = 0
    for name, table, declared, sql in rows[:limit]:
        size += len(dumps((name, table, declared, sql)))
        if size > max_bytes:
            return SchemaObjects(database=database.name, objects=found, truncated=True)
        found.append(
            SchemaObject(
                name=name,
                type=kind,
                table=None if kind in ("table", "view") else table,
                declared_type=declared if detail != "names" else None,
                sql=sql,
            )
        )
    truncated = len(rows) > limit or not searched_all
    return SchemaObjects(database=database.name, objects=found, truncated=truncated)


async def _columns(
    database: Database, pattern: str, limit: int
) -> tuple[list[tuple[Any, ...]], bool]:
    """Return up to `limit` columns whose name matches, and whether every table was asked.

    Columns come as (name, table, type, NULL) rows. Tables are asked until the server's
    own time budget runs out, each on its own, by its name as a bound value. One join of
    `sqlite_schema` with `pragma_table_xinfo(s.name)` handed every table's name to the
    authorizer, and sqlite3 denies a statement whose name is not UTF-8 there: one such
    table (a hostile database's) failed every column search. A table whose columns cannot
    be read (a view of a table dropped since) is passed over: one failed every search.
    """
    found: list[tuple[Any, ...]] = []
    deadline = monotonic() + database.own_seconds  # for all tables together
    for table in await table_names(database):
        if monotonic() >= deadline:
            return found, False
        try:
            columns = await database.values(
                "SELECT name, type FROM pragma_table_xinfo(?) WHERE hidden != 1 AND name LIKE ?"
                " ORDER BY cid LIMIT ?",
                (table, pattern, limit - len(found)),
            )
        except SqliteError:  # a view whose table is gone: it has no columns to find
            continue
        found += [(name, table, declared, None) for name, declared in columns]
        if len(found) == limit:
            break
    return found, True


async def versions(database: Database) -> tuple[int, int]:
    """Return the schema version and the data version: they change with the database.

    The data version changes when another connection (another process, or the server's
    own writer) commits; the schema version when tables, views or indexes change.
    """
    [(schema, data)] = await database.values(
        "SELECT (SELECT schema_version FROM pragma_schema_version),"
        " (SELECT data_version FROM pragma_data_version)"
    )
    return schema, data


def _counted(kind: str, sql: str | None) -> bool:
    """Whether the rows of a schema object are counted: a table's, not a view's nor a virtual's.

    Counting a virtual table runs its module on what the file says: an FTS table whose
    content was a view computed for hours (a hostile file's first list_tables). Its SQL is
    read as SQLite reads it: a hostile file's `CREATE  VIRTUAL` (two spaces, or a comment
    between) is one too.
    """
    return kind == "table" and not _VIRTUAL.match(sql or "")


async def _count(database: Database, table: str) -> int | None:
    """Return the rows of `table` (a name from the schema), or None if it cannot count."""
    try:
        [(rows,)] = await database.values(f"SELECT count(*) FROM {quoted(table)}")
    except SqliteError:  # a table of a module this SQLite lacks, say
        return None
    return rows
