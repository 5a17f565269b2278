"""Canned queries: SQL the operator wrote, which the model runs by name with typed values.

`--queries FILE` names a TOML file of them:

    [queries.top_customers]
    database = "shop"        # which database (default: the only one)
    title = "Top customers"
    description = "The customers who spent most in a country."
    sql = '''SELECT name, sum(total) AS spent FROM orders WHERE country = :country
             GROUP BY name ORDER BY spent DESC LIMIT :limit'''
    params.country = {type = "string", description = "ISO 3166 code, such as FR"}
    params.limit = {type = "integer", default = 10}

Each becomes a tool, `query_top_customers {country, limit?}`: the model gives values,
which are bound (never formatted into the SQL), and never sees or changes the statement.
A query with `write = true` changes the database; it is offered only where the database
may be written (`--write`). Every query is checked at start, on a connection guarded as
the server's are: one statement, that compiles against the database, reads only unless
`write`, and whose named parameters (`:name`, `@name` or `$name`) are exactly those
declared. A mistake stops the start with a message that names the query.
"""

import keyword
import re
import sqlite3
import tomllib
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import quote

from .config import DatabaseSpec
from .guard import Guard, GuardedConnection

T = TypeVar("T")
TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}
"""The parameter types, by the name the file gives them (JSON Schema's)."""
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,57}")
"""A query's name: `query_` and it make a tool name of 64 characters at most."""
PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
RESERVED = frozenset(("max_rows", "offset", "format", "timeout_ms", "ctx", "catalog"))
"""Names the tool's own arguments (and the server's) take: no parameter may."""
QUERY_KEYS = frozenset(("database", "title", "description", "sql", "write", "params"))
PARAMETER_KEYS = frozenset(("type", "description", "default"))
NO_DEFAULT = object()
"""The default of a parameter the model must give."""


@dataclass(frozen=True)
class Parameter:
    """A named parameter of a canned query: its type, description, and default if any."""

    name: str
    kind: type
    description: str | None = None
    default: object = NO_DEFAULT


@dataclass(frozen=True)
class CannedQuery:
    """A statement the operator wrote, run by name on one database."""

    name: str
    database: str
    sql: str
    params: tuple[Parameter, ...] = ()
    title: str | None = None
    description: str | None = None
    write: bool = False

    @property
    def tool_name(self) -> str:
        """The name of its tool (and prompt)."""
        return f"query_{self.name}"


def load_queries(path: str, databases: Sequence[DatabaseSpec]) -> tuple[CannedQuery, ...]:
    """Return the canned queries of the TOML file at `path`, each checked (see the module).

    Raises:
        ValueError: the file cannot be read, or a query is not one the server can run.
    """
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read the canned queries of {path}: {exc}") from None
    _only(document, frozenset(("queries",)), path)
    tables: object = document.get("queries", {})
    if not isinstance(tables, dict):
        raise ValueError(f"{path}: queries must be a table of [queries.NAME] tables")
    named = cast(dict[str, object], tables)  # TOML's keys are strings
    queries = tuple(_query(name, table, databases) for name, table in named.items())
    for query in queries:
        spec = next(spec for spec in databases if spec.name == query.database)
        check_statement(query, spec.path)
    return queries


def _query(name: str, table: object, databases: Sequence[DatabaseSpec]) -> CannedQuery:
    """Return the query `name` the file's `table` describes, its values checked.

    Raises:
        ValueError: a bad name, key, value, database or parameter.
    """
    where = f"canned query {name!r}"
    if not NAME.fullmatch(name):
        raise ValueError(f"{where}: a name is a letter then letters, digits or _ (58 at most)")
    if not isinstance(table, dict):
        raise ValueError(f"{where}: give it as a table, [queries.{name}]")
    values = cast(dict[str, Any], table)
    _only(values, QUERY_KEYS, where)
    sql = _required(values, "sql", str, where)
    title = _optional(values, "title", str, where)
    description = _optional(values, "description", str, where)
    write = _optional(values, "write", bool, where) or False
    params: object = values.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params must be a table of name = {{type = ...}}")
    declared = cast(dict[str, object], params)
    return CannedQuery(
        name=name,
        database=_database(_optional(values, "database", str, where), databases, where),
        sql=sql,
        params=tuple(_parameter(n, p, where) for n, p in declared.items()),
        title=title,
        description=description,
        write=write,
    )


def _database(name: str | None, databases: Sequence[DatabaseSpec], where: str) -> str:
    names = [spec.name for spec in databases]
    if name is None and len(names) == 1:
        return names[0]
    if name not in names:
        raise ValueError(f"{where}: set database to one of {', '.join(names)}")
    return name


def _parameter(name: str, table: object, where: str) -> Parameter:
    where = f"{where}, parameter {name!r}"
    if not PARAMETER.fullmatch(name) or keyword.iskeyword(name) or name in RESERVED:
        raise ValueError(
            f"{where}: a name is a letter or _ then letters, digits or _, and neither a"
            f" Python keyword nor one of {', '.join(sorted(RESERVED))}"
        )
    if not isinstance(table, dict):
        raise ValueError(f"{where}: give it as {{type = ...}}")
    values = cast(dict[str, Any], table)
    _only(values, PARAMETER_KEYS, where)
    type_name = _required(values, "type", str, where)
    kind = TYPES.get(type_name)
    if kind is None:
        raise ValueError(f"{where}: type is one of {', '.join(TYPES)}, not {type_name!r}")
    default = values.get("default", NO_DEFAULT)
    if kind is float and type(default) is int:
        default = float(default)
    if default is not NO_DEFAULT and type(default) is not kind:
        raise ValueError(f"{where}: its default must be of type {type_name}")
    return Parameter(name, kind, _optional(values, "description", str, where), default)


def _only(table: dict[Any, Any], keys: frozenset[str], where: str) -> None:
    unknown = sorted(str(key) for key in table if key not in keys)
    if unknown:
        known = ", ".join(sorted(keys))
        raise ValueError(f"{where}: unknown {', '.join(unknown)} (known: {known})")


def _optional(values: dict[str, Any], key: str, kind: type[T], where: str) -> T | None:
    """Return `values[key]`, which must be a `kind` if given.

    Raises:
        ValueError: it is something else.
    """
    return None if values.get(key) is None else _required(values, key, kind, where)


def _required(values: dict[str, Any], key: str, kind: type[T], where: str) -> T:
    """Return `values[key]`, which must be a `kind`.

    Raises:
        ValueError: it is missing or something else.
    """
    value = values.get(key)
    if type(value) is not kind:
        raise ValueError(f"{where}: {key} must be a {kind.__name__}")
    return value


def check_statement(query: CannedQuery, path: str) -> None:
    """Check that `query` is one statement SQLite can run as declared on the database `path`.

    It is compiled (never run, under EXPLAIN) on a read-only connection guarded as the
    server's, whose authorizer refuses writes unless the query is a `write` one.

    Raises:
        ValueError: it is not one statement, does not compile, writes undeclared, or its
            named parameters are not those declared.
    """
    where = f"canned query {query.name!r}"
    for parameter in query.params:
        if not re.search(rf"[:@$]{parameter.name}\b", query.sql):
            raise ValueError(f"{where}: its SQL has no :{parameter.name}, yet declares it")
    uri = f"file:{quote(path)}?mode=ro"
    guard = Guard(writes=query.write)
    values = {parameter.name: None for parameter in query.params}
    try:
        with closing(GuardedConnection(uri, uri=True, guard=guard)) as database:
            database.execute(f"EXPLAIN {query.sql}", values).fetchall()
    except sqlite3.ProgrammingError as exc:  # two statements, an undeclared parameter, ?
        raise ValueError(f"{where}: {exc} (declare each :name under params)") from None
    except sqlite3.Error as exc:
        refused = "not authorized" in str(exc) and not query.write
        hint = " (write = true, if it is a change: no query may attach or set pragmas)"
        raise ValueError(f"{where}: {exc}{hint if refused else ''}") from None
