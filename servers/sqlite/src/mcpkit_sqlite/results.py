"""The typed results of mcp-sqlite's tools: what `structuredContent` carries.

TypedDicts of JSON types only, so that a result of ten thousand rows goes out as it is,
without a copy (see `mcpkit.tools`). Rows are tuples of cells in the order of `columns`.
"""

from typing import Literal

from typing_extensions import TypedDict

from .cells import Row

Format = Literal["json", "csv", "markdown"]


class Rows(TypedDict):
    """The rows a reading statement gave, one page of them, and the form of their text."""

    database: str
    format: Format
    columns: list[str]
    rows: list[Row]
    row_count: int
    truncated: bool
    next_offset: int | None
    elapsed_ms: float


class Returned(TypedDict):
    """The rows a writing statement returned (RETURNING), or a reading one read: one page."""

    statement: int  # its number in the call, from 1
    columns: list[str]
    rows: list[Row]
    truncated: bool


class Changed(TypedDict):
    """What writing statements did, in one transaction, and the rows they returned."""

    database: str
    rows_affected: int
    last_insert_rowid: int
    statements: int
    returned: list[Returned]


class Column(TypedDict):
    """A column of a table or view."""

    name: str
    type: str
    not_null: bool
    default: str | None
    primary_key: int


class Index(TypedDict):
    """An index of a table."""

    name: str
    unique: bool
    columns: list[str]


class ForeignKey(TypedDict):
    """A foreign key of a table."""

    columns: list[str]
    table: str
    references: list[str]


class TableSummary(TypedDict):
    """A table or view, as list_tables shows it."""

    name: str
    type: Literal["table", "view"]
    rows: int | None


class Tables(TypedDict):
    """The tables (and views) of a database, and whether more were left out (narrow pattern)."""

    database: str
    tables: list[TableSummary]
    truncated: bool


class Table(TypedDict):
    """A table or view described: columns, keys, indexes, and the SQL that made it."""

    database: str
    name: str
    type: Literal["table", "view"]
    sql: str | None
    columns: list[Column]
    indexes: list[Index]
    foreign_keys: list[ForeignKey]
    rows: int | None
    truncated: bool  # indexes or foreign keys left out (see schema.MAX_LISTED)


class DatabaseInfo(TypedDict):
    """A database: where it is, how it is stored, and what may be done with it."""

    name: str
    path: str
    writable: bool
    size_bytes: int
    page_size: int
    page_count: int
    journal_mode: str
    encoding: str
    sqlite_version: str
    tables: int
    views: int


class Databases(TypedDict):
    """The databases described."""

    databases: list[DatabaseInfo]


ObjectType = Literal["table", "view", "index", "trigger", "column"]
DetailLevel = Literal["names", "summary", "full"]


class SchemaObject(TypedDict):
    """An object found by search_objects; what it carries grows with the detail level."""

    name: str
    type: ObjectType
    table: str | None  # the table a column, index or trigger belongs to
    declared_type: str | None  # a column's type (summary and full)
    sql: str | None  # the SQL that made it (full)


class SchemaObjects(TypedDict):
    """What search_objects found."""

    database: str
    objects: list[SchemaObject]
    truncated: bool
