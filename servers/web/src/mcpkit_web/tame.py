"""HTML made safe to parse in time in proportion to its size, before any parser sees it.

The standard library's `html.parser` (which bs4 uses here too) searches to the end of the
page from every construct left open: an unclosed `<!--`, `<![`, or `<` with no `>` after
it. In the Pythons before the fix of CVE-2025-6069 (3.11.13, 3.12.11, 3.13.4), a page of
many of them took time in the square of its size: `"<!--" * 250_000`, one megabyte, took
minutes. And a tag of millions of attributes became millions of Python objects.

`tame` removes comments (an unclosed one runs to the end, as browsers read it), and writes
as text (`&lt;`) each `<` that starts a marked section, that no `>` closes, or whose tag
would be longer than `MAX_TAG`. Every search here goes forward from where the last one
ended, so the whole pass reads the page a few times at most. A page is cut after
`MAX_TAGS` tags: each becomes an object of some hundreds of bytes, and 9.6 kB of gzip made
3.3 million `<a>`, and 4 GB.
"""

MAX_TAG = 1024 * 1024
"""Characters a tag may have (an inline image's data: URL can be hundreds of kilobytes)."""
MAX_TAGS = 100_000
"""Tags a page may have (a long encyclopedia article has some 50,000); the rest is cut."""
CUT = f"<p>[mcp-web: the page was cut after its first {MAX_TAGS:,} tags]</p>"


def tame(html: str) -> str:
    """Return `html` without comments, and with the `<` of unreadable tags as text."""
    return _escape_unclosed_tags(_without_comments(html))


def _without_comments(html: str) -> str:
    parts: list[str] = []
    position = 0
    while (start := html.find("<!--", position)) >= 0:
        parts.append(html[position:start])
        end = html.find("-->", start + 4)
        if end < 0:
            return "".join(parts)  # unclosed: a comment to the end
        position = end + 3
    parts.append(html[position:])
    return "".join(parts)


def _escape_unclosed_tags(html: str) -> str:
    parts: list[str] = []
    position = 0
    close = -1  # the first ">" at or after `position`, once looked for
    tags = 0
    while (start := html.find("<", position)) >= 0:
        if close < start:
            close = html.find(">", start)
        if close < 0:  # no ">" to the end: every "<" left is text
            parts.append(html[position:].replace("<", "&lt;"))
            return "".join(parts)
        readable = close - start <= MAX_TAG and not html.startswith("<![", start)
        parts.append(html[position:start])
        tags += 1 if readable else 0
        if tags > MAX_TAGS:
            parts.append(CUT)
            return "".join(parts)
        parts.append("<" if readable else "&lt;")
        position = start + 1
    parts.append(html[position:])
    return "".join(parts)
