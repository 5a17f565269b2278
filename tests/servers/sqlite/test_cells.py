"""Result cells: rows go out as sqlite3 gives them unless a BLOB or a long text needs a cap."""

import hashlib

from mcpkit_sqlite.cells import json_rows


def test_numbers_and_short_text_go_out_as_they_are() -> None:
    rows = [(1, "a", 2.5, None), (2, "", None, "b")]
    assert json_rows(rows, 10) is rows


def test_a_long_text_is_cut_even_in_a_column_of_mixed_types() -> None:
    rows = [(1, 7), (2, "x" * 12), (3, None)]
    out = json_rows(rows, 10)
    assert out[0] == (1, 7)
    assert out[1] == (2, "xxxxxxxxxx… (2 more characters)")
    assert out[2] == (3, None)


def test_a_text_at_the_cap_is_whole() -> None:
    rows = [("x" * 10,)]
    assert json_rows(rows, 10) is rows


def test_a_blob_is_base64_or_only_its_size_and_digest() -> None:
    small, large = b"\x00\xff", bytes(11)
    out = json_rows([(small,), (large,), ("text",)], 10)
    assert out[0] == ({"bytes": 2, "sha256": hashlib.sha256(small).hexdigest(), "base64": "AP8="},)
    assert out[1] == ({"bytes": 11, "sha256": hashlib.sha256(large).hexdigest(), "base64": None},)
    assert out[2] == ("text",)


def test_no_rows() -> None:
    assert json_rows([], 10) == []
