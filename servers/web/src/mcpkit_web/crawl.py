"""Walking a site: a breadth-first crawl and a site map (sitemap.xml plus the start page's links).

Every page goes through `Web.get`, so the address guards, robots.txt (unless the operator
ignores it), the caps and the body cache apply to each; crawled pages stay in the cache,
where the page resources serve them. URL patterns are `wildcard` patterns found anywhere
in the URL (`*` any characters, a final `$` the end); `include` keeps only matching URLs
(the start page always counts), `exclude` drops matching ones. Links and sitemap entries
are matched in the parse's worker thread, and only as many are kept as the walk can use:
a page of 20,000 links, or a sitemap of 240,000 entries, against 40 patterns kept the
event loop busy for seconds, and every link of every page grew the frontier.
"""

import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

import anyio

from .content import decode
from .errors import WebError
from .fetcher import MAX_URL_CHARS, Fetched
from .inspect import links, same_site
from .parsing import parsed
from .tree import UNSEEN, page_field
from .web import Web
from .wildcard import MAX_PATTERN_CHARS, Wildcard

LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.IGNORECASE)
MAX_SITEMAPS = 5
MAX_LOCATIONS = 50_000
"""Entries read of one sitemap: the most the sitemap protocol lets one hold."""


@dataclass(frozen=True)
class Scope:
    """Which URLs a walk may visit: its patterns are split once, for every URL met."""

    start: str
    include: tuple[Wildcard, ...] = ()
    exclude: tuple[Wildcard, ...] = ()
    same_site: bool = True

    @classmethod
    def of(cls, start: str, include: Sequence[str], exclude: Sequence[str], same: bool) -> "Scope":
        """Return the scope.

        Raises:
            WebError: a pattern is longer than `MAX_PATTERN_CHARS`: matched against every
                URL met, 1 MB of one held the server 22 s.
        """
        for pattern in (*include, *exclude):
            if len(pattern) > MAX_PATTERN_CHARS:
                raise WebError(f"A URL pattern holds at most {MAX_PATTERN_CHARS} characters")
        return cls(
            start,
            tuple(Wildcard.of(pattern) for pattern in include),
            tuple(Wildcard.of(pattern) for pattern in exclude),
            same,
        )

    def admits(self, url: str) -> bool:
        """Say whether `url` is inside the scope (and not too long to be fetched)."""
        if len(url) > MAX_URL_CHARS:
            return False
        if self.same_site and not same_site(self.start, url):
            return False
        if any(pattern.matches(url) for pattern in self.exclude):
            return False
        return not self.include or any(pattern.matches(url) for pattern in self.include)


@dataclass(frozen=True)
class Crawled:
    """One page of a crawl: where, how deep, its status and title, or why it failed."""

    url: str
    depth: int
    status: int
    title: str
    error: str = ""


async def crawl(
    web: Web,
    scope: Scope,
    *,
    max_pages: int,
    max_depth: int,
    delay: float,
    seconds: float,
    on_page: Callable[[Crawled, int], Awaitable[None]],
) -> tuple[list[Crawled], bool]:
    """Visit pages breadth-first from `scope.start`, at most `max_pages`, `max_depth` links deep.

    `on_page(page, count)` is awaited after each page. Failures are recorded, not raised.
    Return the pages visited, and whether the walk ran out of its `seconds` first (the
    page it was reading then is left out).
    """
    queue = deque([(scope.start, 0)])
    seen = {scope.start}
    done: list[Crawled] = []
    with anyio.move_on_after(seconds) as budget:
        while queue and len(done) < max_pages:
            url, depth = queue.popleft()
            if done and delay:
                await anyio.sleep(delay)
            try:
                status, title, found = await _read_page(
                    web, url, scope if depth < max_depth else None
                )
            except WebError as exc:
                done.append(Crawled(url, depth, 0, "", str(exc)))
                await on_page(done[-1], len(done))
                continue
            for target in found:
                if len(queue) >= max_pages - len(done) - 1:
                    break  # the pages queued already are all the walk will visit
                if target not in seen:
                    seen.add(target)
                    queue.append((target, depth + 1))
            done.append(Crawled(url, depth, status, title))
            await on_page(done[-1], len(done))
    return done, budget.cancelled_caught


async def site_map(
    web: Web, scope: Scope, *, use_sitemap: bool, max_urls: int
) -> tuple[list[str], int]:
    """Return up to `max_urls` URLs of the site, and how many came from sitemaps.

    Sitemaps are read from `/sitemap.xml` (and the sitemaps an index names, a few, on the
    same site), as robots.txt allows, for as long as one fetch may take; the start page's
    links follow. Nothing here is crawled further.
    """
    found: dict[str, None] = {}
    pending = [urljoin(scope.start, "/sitemap.xml")] if use_sitemap else []
    # All sitemaps together get the time one fetch may take: slow ones each had it.
    with anyio.move_on_after(web.settings.deadline(None)):
        for _ in range(MAX_SITEMAPS):
            if not pending:
                break
            try:
                async with web.page(pending.pop(0)) as (page, _):
                    if page.status >= 400:
                        continue
                    left = max_urls - len(found)
                    sitemaps, urls = await parsed(_locations, page.body, scope, left)
            except WebError:  # robots.txt disallows it too
                continue
            pending += sitemaps
            found.update(dict.fromkeys(urls))
    from_sitemap = len(found)
    _, _, urls = await _read_page(web, scope.start, scope)
    found.update(dict.fromkeys(urls))
    return list(found)[:max_urls], min(from_sitemap, max_urls)


async def _read_page(web: Web, url: str, scope: Scope | None) -> tuple[int, str, list[str]]:
    """Return `url`'s status, its title, and its links within `scope` (none without one).

    A page that is not HTML, or answered an error status, has no title and no links.

    Raises:
        WebError: the page could not be fetched (robots.txt disallows it too).
    """
    async with web.page(url) as (page, _):
        if not page.is_html or page.status >= 400:
            return page.status, "", []
        title, links = await parsed(_read, page, scope)
        return page.status, title, links


def _locations(sitemap: bytes, scope: Scope, room: int) -> tuple[list[str], list[str]]:
    """Return the sitemaps a sitemap names, and up to `room` of its URLs that `scope` admits."""
    sitemaps: list[str] = []
    urls: list[str] = []
    for number, match in enumerate(LOC.finditer(sitemap.decode("utf-8", "replace"))):
        if number >= MAX_LOCATIONS:
            break
        loc = UNSEEN.sub("", match.group(1))  # as a page's links lose them
        if loc.endswith(".xml") and "sitemap" in loc.lower():
            if len(sitemaps) < MAX_SITEMAPS and same_site(scope.start, loc):
                sitemaps.append(loc)
        elif len(urls) < room and scope.admits(loc):
            urls.append(loc)
        elif len(urls) >= room and len(sitemaps) >= MAX_SITEMAPS:
            break
    return sitemaps, urls


def _read(page: Fetched, scope: Scope | None) -> tuple[str, list[str]]:
    """Return an HTML page's title and the URLs of its links that `scope` admits (if any)."""
    html = decode(page.body, page.headers.get("content-type", ""))
    if scope is None:
        return _title(html), []
    return _title(html), [
        link["url"]
        for link in links(html, page.url, stylesheets=page.stylesheets)
        if scope.admits(link["url"])
    ]


def _title(html: str) -> str:
    """Return the text of the first `<title>`.

    Found with `str.find`: a lazy regex took time in the square of the page's size on a
    page of many unclosed `<title>` tags.
    """
    lowered = html.lower()
    start = lowered.find("<title")
    opened = lowered.find(">", start) if start >= 0 else -1
    end = lowered.find("</title>", opened) if opened >= 0 else -1
    return page_field(html[opened + 1 : end]) if end >= 0 else ""
