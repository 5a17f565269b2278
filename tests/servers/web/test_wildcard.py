"""URL patterns: text found in order, `*` any characters, a final `$` the end; no regex.

A pattern is split once (`Wildcard.of`) and matched against URL after URL.
"""

import time

import pytest

from mcpkit_web.wildcard import Wildcard, matches


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("blog", "https://s.test/blog/1", True),
        ("blog", "https://s.test/news/1", False),
        ("/blog/*/comments", "https://s.test/blog/7/comments?p=2", True),
        ("/blog/*/comments", "https://s.test/comments/blog/7", False),
        (".pdf$", "https://s.test/a.pdf", True),
        (".pdf$", "https://s.test/a.pdf?x=1", False),
        ("/a$", "https://s.test/a/b/a", True),
        ("s.test/*$", "https://s.test/", True),
        ("(.|.)*!", "https://s.test/(.|.)abc!", True),  # each character as written
        ("(.|.)*!", "https://s.test/xyz!", False),
        ("/blog/**/comments", "https://s.test/blog/7/comments", True),  # as one star
        ("**", "https://s.test/", True),
        ("/a/**$", "https://s.test/a/", True),
    ],
)
def test_pieces_are_found_in_order(pattern: str, url: str, expected: bool) -> None:
    assert matches(pattern, url) is expected
    split = Wildcard.of(pattern)  # once, for any number of URLs
    assert [split.matches(url), split.matches(url)] == [expected, expected]


def test_a_pattern_a_regex_would_backtrack_on_answers_at_once() -> None:
    # As a regular expression, (.|.)* tries two ways per character: 2**60 for this URL.
    started = time.monotonic()
    assert matches("(.|.)*(.|.)*(.|.)*!", "https://s.test/" + "a" * 60) is False
    assert time.monotonic() - started < 0.1
