"""Values between JSON and SQLite: bound parameters in, result cells out.

A model sends JSON, so a BLOB parameter is written `{"$base64": "..."}`. Out, a cell is
a JSON value: text, a number, null, or a `Blob` (base64, or only its size and SHA-256
when it is larger than the cap). Text longer than the cap is cut, and says so.
"""

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from typing_extensions import TypedDict

from .errors import SqliteError

Param = str | int | float | bool | None | dict[str, str]
Params = Sequence[Param] | Mapping[str, Param] | None


class Blob(TypedDict):
    """A BLOB cell: its size, its SHA-256, and its bytes in base64 unless too large."""

    bytes: int
    sha256: str
    base64: str | None


Cell = str | int | float | None | Blob
Row = tuple[Cell, ...]


def bind(params: Params) -> Sequence[Any] | Mapping[str, Any]:
    """Return `params` as sqlite3 binds them: `{"$base64": ...}` becomes bytes.

    Raises:
        SqliteError: a value is an object other than `{"$base64": ...}`, or bad base64.
    """
    if params is None:
        return ()
    if isinstance(params, Mapping):
        return {name: _value(value, name) for name, value in params.items()}
    return [_value(value, str(index + 1)) for index, value in enumerate(params)]


def _value(value: Param, where: str) -> Any:
    if not isinstance(value, dict):
        return value
    if set(value) != {"$base64"}:
        raise SqliteError(
            f'Parameter {where} is an object: only {{"$base64": "..."}} (a BLOB) is one.'
        )
    try:
        return base64.b64decode(value["$base64"], validate=True)
    except (binascii.Error, ValueError):
        raise SqliteError(f"Parameter {where} is not valid base64.") from None


def json_rows(rows: list[tuple[Any, ...]], max_bytes: int) -> list[Row]:
    """Return result rows as JSON cells, BLOBs and long text capped at `max_bytes`.

    Most results hold numbers and short text, which go out as sqlite3 gives them: the
    values are looked at a column at a time (each a few passes in C), and cell by cell only
    when some column holds a BLOB or a text over the cap.
    """
    if not rows:
        return rows
    values, width = list(chain.from_iterable(rows)), len(rows[0])
    if all(_plain(values[column::width], max_bytes) for column in range(width)):
        return rows
    return [tuple(cell(value, max_bytes) for value in row) for row in rows]


_NUMBERS = {int, float, type(None)}
_TEXTS = {str, type(None)}


def _plain(column: list[Any], max_bytes: int) -> bool:
    """Return whether a column's values are JSON as they are: no BLOB, no text over the cap."""
    kinds = set(map(type, column))
    if kinds <= _NUMBERS:
        return True
    if bytes in kinds:
        return False
    texts = column if kinds <= _TEXTS else [value for value in column if type(value) is str]
    return max(map(len, filter(None, texts)), default=0) <= max_bytes


def cell(value: object, max_bytes: int) -> Cell:
    """Return a result value as a JSON cell, BLOBs and long text capped at `max_bytes`."""
    if isinstance(value, bytes):
        data = base64.b64encode(value).decode() if len(value) <= max_bytes else None
        return Blob(bytes=len(value), sha256=hashlib.sha256(value).hexdigest(), base64=data)
    if isinstance(value, str) and len(value) > max_bytes:
        return f"{value[:max_bytes]}… ({len(value) - max_bytes} more characters)"
    return value  # pyright: ignore[reportReturnType]  # int, float or None: sqlite3 gives no other
