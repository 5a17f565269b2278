"""The stylesheets a page links to, fetched with it, so that what they hide stays hidden.

Most pages keep their rules in stylesheets of their own (`<link rel="stylesheet"
href="/site.css">`), and the text a site hides with them (its `.visually-hidden` or
`.d-none`, classes that a comment, a review or a post can be given too) reached the model
alone, as no reader sees it. So when an HTML page is fetched, the first `MAX_LINKED`
stylesheets it links to are fetched with it, at once, through every guard a page passes
(robots.txt too, where it is obeyed), each within `SECONDS` and the call's own deadline,
and read with the page's `<style>` elements (`stylesheets.Sheet`). One that fails, is
late, is larger than `MAX_BYTES` or is not CSS (`text/css`, as browsers ask) is left out,
and the page read without it. `@import` is not followed. Stylesheets are kept by URL for a
while (`cache.BodyCache`), so the pages of one site fetch theirs once.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urljoin

import anyio

from .cache import BodyCache
from .content import decode
from .errors import WebError
from .fetcher import Fetched
from .parsing import parsed

MAX_LINKED = 8
"""Stylesheets fetched for a page at most (a big site links some five)."""
MAX_BYTES = 2_000_000
"""Bytes of one stylesheet at most (a page's stylesheets are read up to 2 million characters
in all: `stylesheets.MAX_STYLE_CHARS`)."""
SECONDS = 5.0
"""Seconds a stylesheet may take, within the call's own deadline."""
CACHED = 64
CACHED_BYTES = 16_000_000

Get = Callable[[str, float], Awaitable[Fetched]]
"""Fetches a stylesheet's URL within some seconds; raises `WebError` if it cannot."""


@dataclass
class Linked:
    """Fetches the stylesheets of pages, keeping each response by URL for a while.

    A stylesheet being fetched for one page is waited for by the others that link to it
    (the pages of `fetch_many` and of a crawl share theirs), not fetched again.
    """

    cache: BodyCache = field(default_factory=partial(BodyCache, CACHED, CACHED_BYTES))
    _asked: dict[str, anyio.Event] = field(default_factory=dict[str, anyio.Event])
    """The stylesheets being fetched, each with the event set when that is done."""

    async def of(self, page: Fetched, get: Get, seconds: float) -> dict[str, str]:
        """Return the text of each stylesheet HTML `page` links to that was had, by its `href`.

        Each is fetched by `get`, given at most `seconds` (and `SECONDS`), unless cached.
        """
        hrefs = await parsed(_first_hrefs, page)  # a large page takes a while to search
        found: dict[str, str] = {}

        deadline = anyio.current_time() + min(seconds, SECONDS)

        async def one(href: str) -> None:
            with anyio.move_on_after(deadline - anyio.current_time()):
                sheet = await self._sheet(urljoin(page.url, href.strip()), get, deadline)
                if sheet is not None and sheet.status == 200 and sheet.content_type == "text/css":
                    found[href] = decode(sheet.body, sheet.headers.get("content-type", ""))

        async with anyio.create_task_group() as tasks:
            for href in hrefs:
                tasks.start_soon(one, href)
        return found

    async def _sheet(self, url: str, get: Get, deadline: float) -> Fetched | None:
        """Return the response to `url` (cached, another page's, or fetched), None if none came.

        A fetch is given until `deadline` (`anyio.current_time()`).
        """
        while (asked := self._asked.get(url)) is not None:
            await asked.wait()
        sheet = self.cache.get(url)
        if sheet is None:
            self._asked[url] = done = anyio.Event()
            try:
                sheet = await get(url, max(deadline - anyio.current_time(), 0.0))
            except WebError:
                return None  # refused, failed or late: the page is read without it
            finally:
                del self._asked[url]
                done.set()
            self.cache.put(url, sheet)
        return sheet


def _first_hrefs(page: Fetched) -> list[str]:
    """Return the first `MAX_LINKED` different stylesheet `href`s of HTML `page`."""
    from .stylesheets import linked_hrefs  # its patterns compile at the first page read

    html = decode(page.body, page.headers.get("content-type", ""))
    return list(dict.fromkeys(linked_hrefs(html)))[:MAX_LINKED]
