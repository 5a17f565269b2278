"""mcp-web's resources: pages (cached, crawled or subscribed to) and robots files.

`web://page/{+url}` is a page's main content as markdown (from the body cache, else
fetched); the cached pages are listed. Subscribing to one polls the page no more often
than the operator's `--min-poll-interval`, asking with `If-None-Match` /
`If-Modified-Since`, and tells subscribers only when the extracted text changed (a new
ad or timestamp in the boilerplate is not a change). `web://robots/{+origin}` is a site's
robots.txt as mcp-web read it. Page URLs complete from the cache.
"""

from collections.abc import Mapping

from mcpkit import Changed, Context, Resource, Server
from mcpkit.errors import ResourceNotFound

from .content import page_text
from .errors import WebError, shown
from .fetcher import check_url
from .pages import framed
from .parsing import parsed
from .web import PagePoller, Web

PAGE = "web://page/{+url}"
ROBOTS = "web://robots/{+origin}"


def page_uri(url: str) -> str:
    """Return the resource URI of a page."""
    return f"web://page/{url}"


def register_resources(app: Server) -> None:
    """Register the page and robots resources, the page watch and URL completion."""

    @app.resource(PAGE, mime_type="text/markdown", title="A web page as markdown")
    async def read_page(ctx: Context, web: Web, url: str) -> str:
        """A page's main content as markdown (cached for a while after each fetch)."""
        async with web.page(url) as (page, report):
            await ctx.log("info", report.as_log(), logger="mcp-web")
            if page.status >= 400:
                raise WebError(f"{shown(url)} answered status code {page.status}")
            return framed(await parsed(page_text, page), page.url)  # as tools give page text

    @app.resource(ROBOTS, mime_type="text/plain", title="A site's robots.txt")
    async def read_robots(web: Web, origin: str) -> str:
        """The robots.txt of a site (`https://host[:port]`), as mcp-web obeys it."""
        where = origin.rstrip("/") + "/"
        rules = await web.robots_for(where)
        if rules.everything is not None:  # none read: the server says why
            return f"# {rules.source}\n"
        return framed(rules.text, where + "robots.txt")

    @app.list_resources
    async def cached_pages(web: Web) -> list[Resource]:
        """The pages in the body cache, and the robots files read."""
        pages = [
            Resource(uri=page_uri(url), name=url, mime_type="text/markdown")
            for url in web.cache.urls()
        ]
        robots = [
            Resource(uri=f"web://robots/{where.removesuffix('/robots.txt')}", name=where)
            for where in web.robots
        ]
        return pages + robots

    @app.watch(PAGE)
    async def watch_page(web: Web, url: str, changed: Changed) -> None:
        """Poll the page; notify when its extracted text changes.

        Raises:
            ResourceNotFound: the URL is not one mcp-web may fetch (the subscription is
                refused, as reading it is).
        """
        try:
            check_url(url, web.policy)
        except WebError as exc:
            raise ResourceNotFound(page_uri(url), f"{page_uri(url)}: {exc}") from None
        await changed.poll(PagePoller(web, url), interval=web.min_poll_interval)

    @app.complete(resource=PAGE, argument="url")
    async def complete_url(web: Web, value: str) -> list[str]:
        """Cached page URLs that start with `value`."""
        return [url for url in web.cache.urls() if url.startswith(value)]

    @app.complete(resource=ROBOTS, argument="origin")
    async def complete_origin(web: Web, value: str) -> list[str]:
        """Origins whose robots.txt was read, that start with `value`."""
        origins = [where.removesuffix("/robots.txt") for where in web.robots]
        return [origin for origin in origins if origin.startswith(value)]


async def complete_cached(web: Web, value: str, arguments: Mapping[str, str]) -> list[str]:
    """Cached page URLs that start with `value` (for prompt arguments)."""
    del arguments
    return [url for url in web.cache.urls() if url.startswith(value)]
