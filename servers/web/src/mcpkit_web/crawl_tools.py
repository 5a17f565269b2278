"""The site tools: `map_site`, `crawl` (pages become resources, returned as links), `web_search`."""

from typing import Annotated

from typing_extensions import TypedDict

from mcpkit import Context, Param, ResourceLink, Server, TextContent

from .crawl import Crawled, Scope, crawl, site_map
from .page_tools import READ_WEB, Url
from .resources import page_uri
from .search import Hit, Search
from .web import Web
from .wildcard import MAX_PATTERN_CHARS

Patterns = Annotated[
    tuple[str, ...],
    Param(
        description="URL patterns: text found in the URL, * any characters, $ the end"
        f" ({MAX_PATTERN_CHARS} characters each at most).",
        max_length=20,
    ),
]
SameSite = Annotated[bool, Param(description="Stay on the start page's host.")]


class SiteMap(TypedDict):
    """The URLs of a site, and how many came from its sitemaps."""

    url: str
    urls: list[str]
    from_sitemap: int


def register_crawl_tools(app: Server) -> None:
    """Register map_site and crawl."""

    @app.tool(title="Map a site's pages", annotations=READ_WEB)
    async def map_site(
        web: Web,
        url: Url,
        use_sitemap: Annotated[bool, Param(description="Read /sitemap.xml first.")] = True,
        max_urls: Annotated[int, Param(ge=1, le=5000)] = 500,
        include: Patterns = (),
        exclude: Patterns = (),
        same_site: SameSite = True,
    ) -> SiteMap:
        """List a site's URLs from its sitemap and the start page's links, without crawling."""
        scope = Scope.of(url, include, exclude, same_site)
        urls, from_sitemap = await site_map(web, scope, use_sitemap=use_sitemap, max_urls=max_urls)
        return SiteMap(url=url, urls=urls, from_sitemap=from_sitemap)

    @app.tool(title="Crawl a site", name="crawl", annotations=READ_WEB)
    async def crawl_site(
        ctx: Context,
        web: Web,
        url: Url,
        max_pages: Annotated[int, Param(ge=1, le=200)] = 20,
        max_depth: Annotated[int, Param(ge=0, le=5)] = 2,
        include: Patterns = (),
        exclude: Patterns = (),
        same_site: SameSite = True,
        delay_ms: Annotated[int, Param(description="Pause between pages.", ge=0, le=10_000)] = 500,
        max_seconds: Annotated[
            float, Param(description="Stop after this long with the pages so far.", ge=1, le=600)
        ] = 120,
    ) -> list[TextContent | ResourceLink]:
        """Crawl a site breadth-first; each page becomes a resource (web://page/URL), linked.

        robots.txt is obeyed for every page; progress is reported per page.
        """

        async def report(page: Crawled, count: int) -> None:
            await ctx.progress(count, max_pages, f"crawled {page.url}")

        pages, stopped = await crawl(
            web,
            Scope.of(url, include, exclude, same_site),
            max_pages=max_pages,
            max_depth=max_depth,
            delay=delay_ms / 1000,
            seconds=max_seconds,
            on_page=report,
        )
        good = [page for page in pages if not page.error and page.status < 400]
        lines = [f"Crawled {len(pages)} pages from {url}; {len(good)} readable as resources."]
        if stopped:
            lines.append(
                f"Stopped after {max_seconds:g} s (max_seconds) with pages left to visit:"
                " crawl again with more time, or from a page further in."
            )
        lines += [
            f"- {page.url}: {page.error or f'status {page.status}'}"
            for page in pages
            if page not in good
        ]
        blocks: list[TextContent | ResourceLink] = [TextContent(text="\n".join(lines))]
        blocks += [
            ResourceLink(
                uri=page_uri(page.url),
                name=page.url,
                title=page.title or None,
                description=f"depth {page.depth}",
                mime_type="text/markdown",
            )
            for page in good
        ]
        return blocks


class SearchResults(TypedDict):
    """A search's results, best first, and the backend that gave them."""

    query: str
    backend: str
    results: list[Hit]


def register_search_tool(app: Server, search: Search) -> None:
    """Register web_search on the operator's backend."""

    @app.tool(title="Search the web", annotations=READ_WEB)
    async def web_search(
        web: Web,
        query: Annotated[
            str, Param(description="What to search for.", min_length=1, max_length=500)
        ],
        max_results: Annotated[int, Param(ge=1, le=50)] = 10,
    ) -> SearchResults:
        """Search the web; results are titles, URLs and snippets (read pages with fetch)."""
        hits = await search.run(web, query, max_results)
        return SearchResults(query=query, backend=search.backend, results=hits)
