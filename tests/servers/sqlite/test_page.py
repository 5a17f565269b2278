"""A page of a result: rows go out as sqlite3 makes them unless a BLOB or long text needs a cap,
and only the page's rows are ever held."""

import base64
import hashlib
import sqlite3
from typing import Any

import orjson
import pytest

from mcpkit_sqlite.page import Full, Page


def page_of(
    rows: list[tuple[Any, ...]],
    *,
    offset: int = 0,
    max_rows: int = 1_000_000,
    max_cell: int = 10,
    max_bytes: int = 1 << 30,
) -> Page:
    """The page `take` makes of `rows`, fed to it as sqlite3 would until it is full."""
    page = Page([], offset=offset, max_rows=max_rows, max_cell=max_cell, max_bytes=max_bytes)
    try:
        for row in rows:
            page.take(None, row)
    except Full:
        pass
    return page


def test_numbers_and_short_text_go_out_as_they_are() -> None:
    rows = [(1, "a", 2.5, None), (2, "", None, "b")]
    page = page_of(rows, max_cell=100)
    assert page.rows == rows
    assert all(a is b for a, b in zip(page.rows, rows, strict=True))  # not rebuilt
    assert page.more is False


def test_a_long_text_is_cut_even_in_a_column_of_mixed_types() -> None:
    page = page_of([(1, 7), (2, "x" * 12), (3, None)])
    assert page.rows == [(1, 7), (2, "xxxxxxxxxx… (2 more characters)"), (3, None)]


def test_a_text_at_the_cap_is_whole() -> None:
    assert page_of([("x" * 10,)]).rows == [("x" * 10,)]


def test_a_blob_is_base64_or_only_its_size_and_digest() -> None:
    small, large = b"\x00\xff", bytes(11)
    page = page_of([(small,), (large,), ("text",)])
    assert page.rows[0] == (
        {"bytes": 2, "sha256": hashlib.sha256(small).hexdigest(), "base64": "AP8="},
    )
    assert page.rows[1] == (
        {"bytes": 11, "sha256": hashlib.sha256(large).hexdigest(), "base64": None},
    )
    assert page.rows[2] == ("text",)


def test_a_blob_far_into_a_large_result_is_still_summarised() -> None:
    rows: list[tuple[Any, ...]] = [(n, f"n{n}") for n in range(10_000)]
    rows[7_777] = (7_777, b"\x01" * 5)
    page = page_of(rows)
    blob = base64.b64encode(b"\x01" * 5).decode()
    assert page.rows[7_777][1] == {
        "bytes": 5,
        "sha256": hashlib.sha256(b"\x01" * 5).hexdigest(),
        "base64": blob,
    }
    assert page.rows[:7_777] == rows[:7_777]
    assert page.rows[7_778:] == rows[7_778:]


def test_offset_skips_rows_and_max_rows_ends_the_page() -> None:
    rows = [(n,) for n in range(10)]
    page = page_of(rows, offset=3, max_rows=4)
    assert page.rows == [(3,), (4,), (5,), (6,)]
    assert page.more is True
    assert page_of(rows, offset=6, max_rows=4).more is False  # exactly the last four


def test_the_byte_cap_ends_the_page_but_never_before_the_first_row() -> None:
    rows = [("abcdefgh",)] * 10  # 14 bytes of JSON each, 15 with the comma
    page = page_of(rows, max_bytes=50)
    assert len(page.rows) == 3
    assert page.more is True
    alone = page_of([("abcdefgh",), ("b",)], max_bytes=1)
    assert alone.rows == [("abcdefgh",)]
    assert alone.more is True


@pytest.mark.parametrize("character", ["x", "\x01"])  # \x01 takes six bytes of JSON
def test_a_first_row_alone_over_the_byte_cap_has_its_cells_cut_to_fit(character: str) -> None:
    wide = tuple(character * 1000 for _ in range(50))  # each cell at the cap
    page = page_of([wide, wide], max_cell=1000, max_bytes=30_000)
    first = page.rows[0]
    assert len(first) == 50
    assert all(str(value).startswith(character * 64) for value in first)
    assert all(str(value).endswith(" more characters)") for value in first)
    assert len(orjson.dumps(first)) <= 30_000
    assert page.more is True


def test_sqlite3_feeds_a_page_and_stops_when_it_is_full() -> None:
    connection = sqlite3.connect(":memory:")
    cursor = connection.execute(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"
    )  # endless: only the page stops it
    page = Page([], offset=5, max_rows=3, max_cell=10, max_bytes=1000)
    cursor.row_factory = page.take
    with pytest.raises(Full):
        cursor.fetchmany(1_000_000)
    assert page.rows == [(6,), (7,), (8,)]
    assert page.more is True
