"""Values between JSON and SQLite: bound parameters in, result cells out.

A model sends JSON, so a BLOB parameter is written `{"$base64": "..."}`. Out, a cell is
a JSON value: text, a number, null, or a `Blob` (base64, or only its size and SHA-256
when it is larger than the cap). Text longer than the cap is cut, and says so.
"""

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
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


def cell(value: object, max_bytes: int) -> Cell:
    """Return a result value as a JSON cell, BLOBs and long text capped at `max_bytes`."""
    if isinstance(value, bytes):
        data = base64.b64encode(value).decode() if len(value) <= max_bytes else None
        return Blob(bytes=len(value), sha256=hashlib.sha256(value).hexdigest(), base64=data)
    if isinstance(value, str) and len(value) > max_bytes:
        return f"{value[:max_bytes]}… ({len(value) - max_bytes} more characters)"
    return value  # pyright: ignore[reportReturnType]  # int, float or None: sqlite3 gives no other
