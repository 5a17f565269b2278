"""Result cells: rows go out as sqlite3 gives them unless a BLOB or a long text needs a cap."""

import base64
import hashlib
from typing import Any

import orjson

from mcpkit_sqlite.cells import Row, json_slices


def json_rows(rows: list[tuple[Any, ...]], max_bytes: int) -> list[Row]:
    """The rows of every slice, in order."""
    return [row for part in json_slices(rows, max_bytes) for row in part.rows]


def test_numbers_and_short_text_go_out_as_they_are() -> None:
    rows = [(1, "a", 2.5, None), (2, "", None, "b")]
    [part] = json_slices(rows, 100)
    assert part.rows == rows
    assert all(a is b for a, b in zip(part.rows, rows, strict=True))  # not rebuilt
    assert part.size == len(orjson.dumps(rows))


def test_a_long_text_is_cut_even_in_a_column_of_mixed_types() -> None:
    rows = [(1, 7), (2, "x" * 12), (3, None)]
    out = json_rows(rows, 10)
    assert out == [(1, 7), (2, "xxxxxxxxxx… (2 more characters)"), (3, None)]


def test_a_text_at_the_cap_is_whole() -> None:
    rows = [("x" * 10,)]
    assert json_rows(rows, 10) == rows


def test_a_blob_is_base64_or_only_its_size_and_digest() -> None:
    small, large = b"\x00\xff", bytes(11)
    out = json_rows([(small,), (large,), ("text",)], 10)
    assert out[0] == ({"bytes": 2, "sha256": hashlib.sha256(small).hexdigest(), "base64": "AP8="},)
    assert out[1] == ({"bytes": 11, "sha256": hashlib.sha256(large).hexdigest(), "base64": None},)
    assert out[2] == ("text",)


def test_a_blob_or_long_text_far_into_a_large_result_is_still_capped() -> None:
    rows: list[tuple[Any, ...]] = [(n, f"name {n}") for n in range(10_000)]
    rows[7_777] = (7_777, b"\x01" * 100)
    rows[9_999] = (9_999, "y" * 5_000)
    out = json_rows(rows, 1_000)
    assert len(out) == 10_000
    assert out[7_777][1] == {
        "bytes": 100,
        "sha256": hashlib.sha256(b"\x01" * 100).hexdigest(),
        "base64": base64.b64encode(b"\x01" * 100).decode(),
    }
    assert out[9_999][1] == "y" * 1_000 + "… (4000 more characters)"
    assert out[:7_777] == rows[:7_777]
    assert out[7_778:9_999] == rows[7_778:9_999]


def test_slices_are_sized_as_json_and_stay_near_half_the_cap() -> None:
    rows: list[tuple[Any, ...]] = [(n, "w" * 40) for n in range(5_000)]
    slices = json_slices(rows, 4_096)
    assert all(part.size == len(orjson.dumps(part.rows)) for part in slices)
    assert max(part.size for part in slices) <= 4_096
    assert len(slices) < 5_000 // 20  # whole slices, not row by row


def test_no_rows() -> None:
    assert json_slices([], 10) == []
