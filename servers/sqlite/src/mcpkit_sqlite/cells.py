"""Values between JSON and SQLite: bound parameters in, result cells out.

A model sends JSON, so a BLOB parameter is written `{"$base64": "..."}`. Out, a cell is
a JSON value: text, a number, null, or a `Blob` (base64, or only its size and SHA-256
when it is larger than the cap). Text longer than the cap is cut, and says so.
"""

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson
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


class Slice(NamedTuple):
    """Consecutive result rows as JSON cells, and their size as compact JSON."""

    rows: list[Row]
    size: int


def json_slices(rows: list[tuple[Any, ...]], max_bytes: int) -> list[Slice]:
    """Return result rows as JSON cells in slices, BLOBs and long text capped at `max_bytes`.

    Each slice is first written as JSON as sqlite3 gave it. When that works and is at most
    `max_bytes` long, the slice needs no cap: orjson refuses bytes, so it holds no BLOB, and
    a JSON string is longer than its text, so no text is over the cap. Only other slices
    are made cell by cell. Slices are sized from the rows before them to about half the
    cap, so a result of numbers and short text is never looked at value by value, and its
    sizes (which the result byte cap needs) come from the same writing.
    """
    slices: list[Slice] = []
    start, step = 0, 16
    while start < len(rows):
        part = rows[start : start + step]
        start += len(part)
        try:
            size = len(orjson.dumps(part))
        except TypeError:  # a BLOB
            size = max_bytes + 1
        if size > max_bytes:
            part = [tuple(cell(value, max_bytes) for value in row) for row in part]
            size = len(orjson.dumps(part))
        slices.append(Slice(part, size))
        step = max(1, max_bytes * len(part) // (2 * size))
    return slices


def cell(value: object, max_bytes: int) -> Cell:
    """Return a result value as a JSON cell, BLOBs and long text capped at `max_bytes`."""
    if isinstance(value, bytes):
        data = base64.b64encode(value).decode() if len(value) <= max_bytes else None
        return Blob(bytes=len(value), sha256=hashlib.sha256(value).hexdigest(), base64=data)
    if isinstance(value, str) and len(value) > max_bytes:
        return f"{value[:max_bytes]}… ({len(value) - max_bytes} more characters)"
    return value  # pyright: ignore[reportReturnType]  # int, float or None: sqlite3 gives no other
