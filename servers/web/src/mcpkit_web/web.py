"""The web as mcp-web's handlers see it: safe fetches, a body cache and robots.txt per site.

`Web` holds the one shared HTTP client (made on the first fetch, so start-up never imports
httpx), the operator's `Policy` and `Settings`, a bounded cache of bodies by URL (the next
page of a long document is cut from the cached body, not downloaded again), the robots
files of the sites fetched, and the stylesheets HTML pages link to (`linked`), fetched
with them. `page` holds the page and a `Report` of what happened, which the server logs
to the client.
"""

import hashlib
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

import anyio

from .addresses import Policy
from .cache import BodyCache
from .content import page_text
from .errors import Refused, WebError, shown
from .fetcher import Fetched, Hop, Settings, check_url, fetch
from .linked import MAX_BYTES, Linked
from .parsing import held, parsed
from .robots import MAX_ROBOTS_BYTES, Robots, Verdict, robots_text, robots_url

if TYPE_CHECKING:
    import httpx

ROBOTS_KEPT = 24 * 3600.0
"""Seconds a site's robots.txt rules are used (RFC 9309: no longer than 24 hours)."""
ROBOTS_FAILURE_KEPT = 60.0
"""Seconds an unreadable robots.txt keeps its site off limits before it is asked again."""
ROBOTS_CACHE_SITES = 256
ROBOTS_CACHE_BYTES = 32 * 1024 * 1024
"""What the sites' rules may hold in all: 256 files of 500 kB held 1.75 GB."""
CSS = {"accept": "text/css,*/*;q=0.1"}
"""What a stylesheet is asked for with, as browsers ask."""
INLINE_COST = 10_000_000
"""The most characters a verdict compares on the event loop (`Robots.cost`): 5 ms at worst."""


@dataclass(frozen=True)
class Report:
    """One fetch, as logged: what was asked, what came back, from where, and robots' word."""

    url: str
    final_url: str
    status: int
    bytes: int
    seconds: float
    cache_hit: bool
    robots: str
    stylesheets: int  # the linked ones read with the page

    def as_log(self) -> dict[str, object]:
        """Return the report as the data of a log message."""
        return {
            "event": "fetch",
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "bytes": self.bytes,
            "ms": round(self.seconds * 1000, 1),
            "cache_hit": self.cache_hit,
            "robots": self.robots,
            "stylesheets": self.stylesheets,
        }


@dataclass
class Web:
    """The operator's web access (see the module); `close` ends the client."""

    policy: Policy = field(default_factory=Policy)
    settings: Settings = field(default_factory=Settings)
    obey_robots: bool = True
    min_poll_interval: float = 60.0
    cache: BodyCache = field(default_factory=BodyCache)
    linked: Linked = field(default_factory=Linked)
    robots: dict[str, tuple[float, Robots]] = field(default_factory=dict[str, tuple[float, Robots]])
    """Each site's rules by robots.txt URL, with the time.monotonic() until which they hold."""
    _robots_asked: dict[str, anyio.Event] = field(
        default_factory=dict[str, anyio.Event], init=False, repr=False
    )
    """The robots.txt URLs being downloaded, each with the event set when that is done."""
    _client: "httpx.AsyncClient | None" = None

    @property
    def client(self) -> "httpx.AsyncClient":
        """The shared HTTP client, made on first use."""
        if self._client is None:
            from .fetcher import make_client

            self._client = make_client(self.policy, self.settings)
        return self._client

    async def close(self) -> None:
        """Close the client if one was made."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def fetch(
        self,
        url: str,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        before_hop: Hop | None = None,
    ) -> Fetched:
        """Fetch `url` now, through every guard (no cache, no robots unless `before_hop`).

        Raises:
            WebError: see `fetcher.fetch`.
        """
        return await fetch(
            self.client,
            self.policy,
            self.settings,
            url,
            timeout=timeout,
            headers=headers,
            before_hop=before_hop,
        )

    @asynccontextmanager
    async def page(
        self, url: str, *, timeout: float | None = None, robots: bool = True
    ) -> AsyncGenerator[tuple[Fetched, Report]]:
        """Hold `url`'s response (cached or fetched) and what happened, for the block.

        The page is one of the few held at once (`parsing.held`): its turn is waited for
        first, and the deadline starts once it is given.

        Raises:
            WebError: robots.txt disallows the URL (unless ignored), or the fetch failed.
        """
        async with held():
            yield await self._get(url, timeout=timeout, robots=robots)

    async def _get(
        self, url: str, *, timeout: float | None, robots: bool
    ) -> tuple[Fetched, Report]:
        """Return `url`'s response (cached or fetched) and what happened.

        Raises:
            WebError: robots.txt disallows the URL (unless ignored), or the fetch failed.
        """
        started = time.perf_counter()
        check_url(url, self.policy)  # refusals first, before robots.txt is asked
        obeyed = robots and self.obey_robots
        # One deadline for robots.txt and the page: each had its own, so a slow robots.txt
        # then a slow page took twice the time the operator allows.
        seconds = self.settings.deadline(timeout)
        try:
            with anyio.fail_after(seconds):
                decision = await self.robots_allow(url, timeout=timeout) if obeyed else "ignored"
                cached = self.cache.get(url)
                # Each redirect's target is asked about too: an open redirect leads anywhere.
                hop = partial(self.robots_allow, timeout=timeout) if obeyed else None
                page = cached or await self.fetch(url, timeout=timeout, before_hop=hop)
        except TimeoutError:
            raise WebError(
                f"fetching {shown(url)} took longer than {seconds:g} s, robots.txt included"
            ) from None
        if cached is None:
            page = await self.styled(page, seconds - (time.perf_counter() - started))
            self.cache.put(url, page)
        report = Report(
            url=url,
            final_url=page.url,
            status=page.status,
            bytes=len(page.body),
            seconds=time.perf_counter() - started,
            cache_hit=cached is not None,
            robots=decision,
            stylesheets=len(page.stylesheets),
        )
        return page, report

    async def styled(self, page: Fetched, seconds: float) -> Fetched:
        """Return `page` with the stylesheets it links to, if an HTML page (see `linked`).

        They are fetched within `seconds`; those that fail are left out.
        """
        if not page.is_html or page.status >= 400:
            return page
        return replace(page, stylesheets=await self.linked.of(page, self._stylesheet, seconds))

    async def _stylesheet(self, url: str, seconds: float) -> Fetched:
        """Fetch the stylesheet at `url` within `seconds`, as a page is (robots.txt too).

        Raises:
            WebError: refused, disallowed, failed, or late.
        """
        obeyed = self.obey_robots
        capped = replace(self.settings, max_bytes=min(self.settings.max_bytes, MAX_BYTES))
        try:
            with anyio.fail_after(seconds):
                if obeyed:
                    await self.robots_allow(url, timeout=seconds)
                hop = partial(self.robots_allow, timeout=seconds) if obeyed else None
                return await fetch(
                    self.client, self.policy, capped, url, headers=CSS, before_hop=hop
                )
        except TimeoutError:
            raise WebError(f"{shown(url)} took longer than {seconds:g} s") from None

    async def robots_allow(self, url: str, *, timeout: float | None = None) -> str:
        """Return robots.txt's decision on `url` as a report says it, if it allows it.

        Raises:
            WebError: robots.txt disallows it, or its site is refused.
        """
        verdict = await self.robots_verdict(url, timeout=timeout)
        if not verdict.allowed:
            raise WebError(
                f"{shown(robots_url(url))} does not let {self.settings.user_agent.split(' ')[0]}"
                f" fetch {shown(url)} ({verdict.reason}). The user can fetch it with the fetch"
                " prompt, or the operator can pass --ignore-robots-txt."
            )
        return f"allowed ({verdict.reason})"

    async def robots_for(self, url: str, *, timeout: float | None = None) -> Robots:
        """Return the robots rules of `url`'s site (fetched, then kept a while).

        Rules are kept ROBOTS_KEPT seconds; a robots.txt that could not be read (no answer,
        401, 403, 429, 5xx: the site is off limits meanwhile) is asked again after
        ROBOTS_FAILURE_KEPT. A file is downloaded as a page is, up to its first 500 KiB,
        which are parsed (RFC 9309: a longer file is cut, not unreadable).

        Raises:
            WebError: the URL's port is not valid, or the operator refuses the site.
        """
        where = robots_url(url)
        # One download of a site's robots.txt at a time: eight calls to a new site each
        # asked for it, and each waited for a parse turn to read it.
        while (asked := self._robots_asked.get(where)) is not None:
            await asked.wait()
        known = self.robots.pop(where, None)
        if known is not None and time.monotonic() < known[0]:
            self.robots[where] = known  # now the most recently used
            return known[1]
        self._robots_asked[where] = asked = anyio.Event()
        try:
            return await self._download_robots(where, timeout)
        finally:
            del self._robots_asked[where]
            asked.set()

    async def _download_robots(self, where: str, timeout: float | None) -> Robots:
        """Download and parse the robots.txt at `where`, and keep its rules (see `robots_for`).

        Raises:
            WebError: the operator refuses the site.
        """
        # The part parsed and one byte more (which says whether the file goes on), whatever
        # the download cap: the RFC's 500 KiB are read even under a lower cap, and a longer
        # file is cut there, neither refused (which would close the site) nor downloaded.
        head = replace(self.settings, max_bytes=MAX_ROBOTS_BYTES + 1)
        try:
            page = await fetch(self.client, self.policy, head, where, timeout=timeout, cut=True)
            text = robots_text(page.body)
            rules = await parsed(Robots.from_response, page.status, text)  # 0.5 s for 500 KiB
        except Refused:
            raise  # the site itself is refused: say so rather than blame robots.txt
        except WebError:
            rules = Robots.from_response(None, "")
        self._make_room(rules.size)
        kept = ROBOTS_FAILURE_KEPT if rules.everything is False else ROBOTS_KEPT
        self.robots[where] = (time.monotonic() + kept, rules)
        return rules

    def _make_room(self, size: int) -> None:
        """Forget the least recently used sites' rules until `size` more bytes fit."""
        used = sum(rules.size for _, rules in self.robots.values())
        while self.robots and (
            used + size > ROBOTS_CACHE_BYTES or len(self.robots) >= ROBOTS_CACHE_SITES
        ):
            _, oldest = self.robots.pop(next(iter(self.robots)))
            used -= oldest.size

    async def robots_verdict(self, url: str, *, timeout: float | None = None) -> Verdict:
        """Return robots.txt's word on fetching `url` with the operator's user agent.

        Raises:
            WebError: the URL is refused or not valid (see `check_url`), or robots.txt's
                site is refused.
        """
        check_url(url, self.policy)  # as before a fetch: the length cap bounds the matching
        rules = await self.robots_for(url, timeout=timeout)
        if rules.cost(url) <= INLINE_COST:
            return rules.verdict(self.settings.user_agent, url)
        # Each rule may scan the whole path: 24,000 take most of a second, off the loop.
        return await parsed(rules.verdict, self.settings.user_agent, url)


@dataclass
class PagePoller:
    """A subscribed page's fingerprint: the hash of its text, asked for conditionally.

    Each call sends the last ETag / Last-Modified; a 304 keeps the last fingerprint, and a
    new body counts only if its extracted text differs, so boilerplate churn is no change.
    """

    web: Web
    url: str
    validators: dict[str, str] = field(default_factory=dict[str, str])
    last: str = ""

    async def __call__(self) -> str:
        """Return the page's current fingerprint.

        A new watch starts from the cached page, if any (what a read shows): subscribing
        and unsubscribing in a loop fetched the page each time, past the poll interval.

        Raises:
            WebError: robots.txt disallows the page, or the fetch failed.
        """
        async with held():
            return await self._fingerprint()

    async def _fingerprint(self) -> str:
        """Return the page's current fingerprint (see `__call__`), its turn to be held given."""
        if not self.last and (cached := self.web.cache.get(self.url)) is not None:
            return await self._take(cached)
        hop = None
        if self.web.obey_robots:  # as for a read: the page and every redirect's target
            await self.web.robots_allow(self.url)
            hop = self.web.robots_allow
        page = await self.web.fetch(self.url, headers=self.validators, before_hop=hop)
        if page.status == 304 and self.last:
            return self.last
        page = await self.web.styled(page, self.web.settings.timeout)
        self.web.cache.put(self.url, page)
        return await self._take(page)

    async def _take(self, page: Fetched) -> str:
        """Keep `page`'s validators, and return (and keep) its text's fingerprint."""
        self.validators.clear()
        for sent, asked in (("etag", "if-none-match"), ("last-modified", "if-modified-since")):
            value = page.headers.get(sent, "")
            if value.isascii() and value.isprintable() and value:
                # Only what a header may carry back: a non-ASCII ETag, sent again, failed
                # every poll of the page, so its subscriber heard of no change again.
                self.validators[asked] = value
        text = await parsed(page_text, page)
        # surrogatepass: a JSON page's lone "\ud800" is in its text, which UTF-8 cannot hold.
        self.last = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return self.last
