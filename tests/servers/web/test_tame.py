"""Pages that made html.parser take time in the square of their size, or build millions of
objects, are read in time in proportion to them."""

import time
import tracemalloc

import pytest

from mcpkit_web.tame import CUT, MAX_TAGS, tame
from mcpkit_web.tree import read


def test_comments_go_and_unreadable_tags_become_text() -> None:
    assert tame("a<!-- x -->b<!-- y") == "ab"
    assert tame("<p>1 < 2</p>") == "<p>1 < 2</p>"  # a > follows: the parser copes
    assert tame("<p>x</p><a<a") == "<p>x</p>&lt;a&lt;a"
    assert tame("<![CDATA[x]]>") == "&lt;![CDATA[x]]>"
    image = '<img src="data:image/png;base64,' + "A" * 300_000 + '">'
    assert tame(image) == image  # a long tag is fine up to a megabyte


@pytest.mark.parametrize(
    "html",
    [
        "<!--" * 40_000,
        "<a" * 40_000,
        "<![ >" * 40_000,
    ],
    ids=["open-comments", "open-tags", "marked-sections"],
)
def test_a_page_of_open_constructs_is_read_in_time(html: str) -> None:
    started = time.monotonic()
    read(html)
    assert time.monotonic() - started < 2.0  # seconds to minutes before


def test_a_tag_of_a_million_attributes_is_text_not_a_million_objects() -> None:
    html = "<p" + " a" * 1_000_000 + ">x</p>"
    tracemalloc.start()
    try:
        page = read(html)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000
    assert page.root.text().endswith("x")


def test_a_page_of_millions_of_tags_is_cut_after_max_tags() -> None:
    # 9.6 kB of gzip made 3.3 million <a>, and 4 GB of parsed objects.
    tamed = tame("<a>" * 3_300_000)
    assert tamed.count("<a>") == MAX_TAGS
    assert tamed.endswith(CUT)
    assert tame("<a>" * MAX_TAGS) == "<a>" * MAX_TAGS  # up to the bound, nothing is cut
    tracemalloc.start()
    read(tamed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * 1024 * 1024
