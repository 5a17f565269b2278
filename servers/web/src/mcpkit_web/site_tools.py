"""Tools that read pages rather than show them: metadata, links, fields, robots, many pages."""

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
from typing_extensions import TypedDict

from mcpkit import Context, Param, Server
from mcpkit.work import Progress

from . import inspect
from .content import Format, decode
from .errors import WebError, shown
from .fetcher import Fetched
from .page_tools import READ_WEB, FormatArg, Selector, Timeout, Url, loaded, readable
from .pages import framed
from .parsing import parsed
from .robots import robots_url
from .web import Web
from .wildcard import MAX_PATTERN_CHARS

MAX_MANY = 20
T = TypeVar("T")


class PageMetadata(TypedDict):
    """A page's status, final URL, type and size, and what it says about itself."""

    url: str
    final_url: str
    status: int
    content_type: str
    bytes: int
    title: str
    description: str
    language: str
    canonical: str
    open_graph: dict[str, str]


class Links(TypedDict):
    """The links of a page."""

    url: str
    links: list[inspect.Link]


class Fields(TypedDict):
    """Values picked from a page by CSS selectors, by field name."""

    url: str
    fields: dict[str, list[str]]


class RobotsAnswer(TypedDict):
    """robots.txt's word on a URL for the operator's user agent."""

    url: str
    robots_url: str
    user_agent: str
    allowed: bool
    rule: str
    obeyed: bool


class ManyPage(TypedDict):
    """One page of `fetch_many`: its text (cut to max_length) or why it failed.

    `truncated`: the text goes on; fetch with start_index=max_length reads on (the body is
    cached, so it costs no download).
    """

    url: str
    ok: bool
    status: int
    title: str
    content: str
    truncated: bool
    error: str


class ManyPages(TypedDict):
    """The pages of `fetch_many`, in the order asked."""

    pages: list[ManyPage]


def html_of(page: Fetched) -> str:
    """Return the body of an HTML response as text.

    Raises:
        WebError: the response is not HTML.
    """
    if not page.is_html:
        raise WebError(f"{shown(page.url)} is {page.content_type}, not an HTML page")
    return decode(page.body, page.headers.get("content-type", ""))


def on_html(fn: Callable[..., T], page: Fetched, /, *args: Any, **kwargs: Any) -> T:
    """Return `fn(html, *args, **kwargs)` with the page's HTML, decoded here: in a parse turn.

    Raises:
        WebError: the response is not HTML.
    """
    return fn(html_of(page), *args, **kwargs)


def register_site_tools(app: Server) -> None:
    """Register get_page_metadata, extract_links, extract_structured, check_robots, fetch_many."""

    @app.tool(title="A page's metadata", annotations=READ_WEB)
    async def get_page_metadata(
        ctx: Context, web: Web, url: Url, timeout: Timeout = None
    ) -> PageMetadata:
        """Return a page's status, final URL, type, size, title, description and more.

        Also its language, canonical URL and OpenGraph properties.
        """
        found: inspect.Metadata = inspect.Metadata(
            title="", description="", language="", canonical="", open_graph={}
        )
        async with web.page(url, timeout=timeout) as (page, report):
            await ctx.log("info", report.as_log(), logger="mcp-web")
            if page.is_html:
                found = await parsed(on_html, inspect.metadata, page, page.url)
        return PageMetadata(
            url=url,
            final_url=page.url,
            status=page.status,
            content_type=page.content_type,
            bytes=len(page.body),
            **found,
        )

    @app.tool(title="A page's links", annotations=READ_WEB)
    async def extract_links(
        ctx: Context,
        web: Web,
        url: Url,
        same_domain: Annotated[
            bool, Param(description="Only links to the page's own host.")
        ] = False,
        pattern: Annotated[
            str | None,
            Param(
                description="Text the link URL must contain (* any characters, $ the end).",
                max_length=MAX_PATTERN_CHARS,
            ),
        ] = None,
        timeout: Timeout = None,
    ) -> Links:
        """List a page's links (absolute URLs with their text, each once, in page order)."""
        async with loaded(ctx, web, url, timeout) as page:
            found = await parsed(
                on_html,
                inspect.links,
                page,
                page.url,
                same_domain=same_domain,
                pattern=pattern,
                stylesheets=page.stylesheets,
            )
        return Links(url=page.url, links=found)

    @app.tool(title="Extract fields with CSS selectors", annotations=READ_WEB)
    async def extract_structured(
        ctx: Context,
        web: Web,
        url: Url,
        fields: Annotated[
            dict[str, str],
            Param(
                description='Field name to CSS selector; "selector@attr" takes an attribute'
                ' (e.g. {"titles": "h2", "images": "img@src"}).',
                min_length=1,
                max_length=50,
            ),
        ],
        timeout: Timeout = None,
    ) -> Fields:
        """Pick fields from a page with CSS selectors, no model needed.

        Each field gets the texts (or `@attr` values) of the elements its selector matches.
        """
        tick = Progress(ctx, "fields read", total=len(fields))  # stops it once cancelled
        async with loaded(ctx, web, url, timeout) as page:
            found = await parsed(on_html, inspect.fields, page, fields, tick, page.stylesheets)
        return Fields(url=page.url, fields=found)

    @app.tool(title="Check robots.txt", annotations=READ_WEB)
    async def check_robots(web: Web, url: Url, timeout: Timeout = None) -> RobotsAnswer:
        """Say whether robots.txt lets this server fetch a URL, and which rule decides."""
        where = robots_url(url)  # first: it names what is wrong with a bad port
        verdict = await web.robots_verdict(url, timeout=timeout)  # checked as a fetch is
        return RobotsAnswer(
            url=url,
            robots_url=where,
            user_agent=web.settings.user_agent,
            allowed=verdict.allowed,
            rule=verdict.reason,
            obeyed=web.obey_robots,
        )

    @app.tool(title="Fetch several pages", annotations=READ_WEB)
    async def fetch_many(
        ctx: Context,
        web: Web,
        urls: Annotated[list[str], Param(min_length=1, max_length=MAX_MANY)],
        max_length: Annotated[
            int, Param(description="Characters per page.", ge=1, le=100_000)
        ] = 5000,
        format: FormatArg = "markdown",
        selector: Selector = None,
        concurrency: Annotated[int, Param(ge=1, le=8)] = 4,
        timeout: Timeout = None,
    ) -> ManyPages:
        """Fetch several pages at once, each as its main content cut to max_length.

        With a selector, each page keeps only the elements it matches. Progress is reported
        per page; a failed page says why and the others still come.
        """
        results: list[ManyPage | None] = [None] * len(urls)
        limiter = anyio.CapacityLimiter(concurrency)
        done = 0

        async def one(index: int, url: str) -> None:
            nonlocal done
            async with limiter:
                results[index] = await _one_page(
                    ctx, web, url, max_length, format, selector, timeout
                )
            done += 1
            await ctx.progress(done, len(urls), f"fetched {url}")

        async with anyio.create_task_group() as tasks:
            for index, url in enumerate(urls):
                tasks.start_soon(one, index, url)
        return ManyPages(pages=[page for page in results if page is not None])


async def _one_page(
    ctx: Context,
    web: Web,
    url: str,
    max_length: int,
    format: Format,
    selector: str | None,
    timeout: float | None,
) -> ManyPage:
    try:
        async with loaded(ctx, web, url, timeout) as page:
            found = await readable(page, format=format, selector=selector)
    except WebError as exc:
        return ManyPage(
            url=url, ok=False, status=0, title="", content="", truncated=False, error=str(exc)
        )
    text = found.text if found.kind != "image" else f"(an image, {found.mime})"
    return ManyPage(
        url=url,
        ok=True,
        status=page.status,
        title=found.title,
        content=framed(text[:max_length], page.url),
        truncated=len(text) > max_length,
        error="",
    )
