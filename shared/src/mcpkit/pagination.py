"""Opaque cursors for the paginated list methods.

A cursor encodes which list it belongs to and where the next page starts. Clients must
treat it as opaque; one that does not decode, or belongs to another list, is -32602.
"""

import base64
import binascii
import contextlib
from collections.abc import Sequence
from typing import TypeVar

from .errors import InvalidParams

T = TypeVar("T")


def page(
    items: Sequence[T], cursor: object, list_name: str, size: int
) -> tuple[list[T], str | None]:
    """Return the page of `items` at `cursor` (None = first page) and the next cursor.

    Raises:
        InvalidParams: the cursor is not one this server issued for `list_name`.
    """
    start = 0 if cursor is None else _decode(cursor, list_name)
    end = start + size
    next_cursor = _encode(list_name, end) if end < len(items) else None
    return list(items[start:end]), next_cursor


def _encode(list_name: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{list_name}:{offset}".encode()).decode()


def _decode(cursor: object, list_name: str) -> int:
    name, offset = "", ""
    if isinstance(cursor, str):
        with contextlib.suppress(binascii.Error, ValueError):  # not base64, or not UTF-8
            name, _, offset = base64.urlsafe_b64decode(cursor).decode().partition(":")
    if name != list_name or not (offset.isascii() and offset.isdigit() and len(offset) < 19):
        raise InvalidParams(f"Invalid cursor for {list_name}: {cursor!r}")
    return int(offset)
