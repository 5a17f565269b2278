"""Web search through a pluggable backend: DuckDuckGo's HTML endpoint, SearXNG or Brave.

The operator picks the backend (and its endpoint, and Brave's key from the environment);
the model gives only the query. Requests go through the same guarded fetcher as pages,
so a search endpoint on a private address needs `--allow-private-network` like any other.
"""

import json
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import parse_qs, urlencode, urlsplit

from typing_extensions import TypedDict

from .content import decode
from .errors import WebError
from .fetcher import Fetched
from .markdown import parse
from .parsing import held, parsed
from .tree import UNSEEN, page_field
from .web import Web

Backend = Literal["duckduckgo", "searxng", "brave"]
BACKENDS: tuple[Backend, ...] = ("duckduckgo", "searxng", "brave")
ENDPOINTS: dict[Backend, str] = {
    "duckduckgo": "https://html.duckduckgo.com/html/",
    "searxng": "",
    "brave": "https://api.search.brave.com/res/v1/web/search",
}


class Hit(TypedDict):
    """One search result."""

    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class Search:
    """The operator's search backend: which, where, and Brave's API key."""

    backend: Backend = "duckduckgo"
    endpoint: str = ""
    api_key: str = ""

    def url(self, query: str, count: int) -> str:
        """Return the request URL of `query`.

        Raises:
            WebError: the backend needs an endpoint the operator did not give.
        """
        base = self.endpoint or ENDPOINTS[self.backend]
        if not base:
            raise WebError("web_search with SearXNG needs --search-url (the instance's URL)")
        if self.backend == "searxng":
            return f"{base.rstrip('/')}/search?{urlencode({'q': query, 'format': 'json'})}"
        if self.backend == "brave":
            return f"{base}?{urlencode({'q': query, 'count': count})}"
        return f"{base}?{urlencode({'q': query})}"

    async def run(self, web: Web, query: str, count: int) -> list[Hit]:
        """Return up to `count` results for `query`.

        Raises:
            WebError: the backend is not configured, refused, failed or answered badly.
        """
        headers = {"accept": "application/json"} if self.backend != "duckduckgo" else {}
        if self.backend == "brave":
            if not self.api_key:
                raise WebError("web_search with Brave needs MCP_WEB_BRAVE_API_KEY")
            headers["x-subscription-token"] = self.api_key
        async with held():
            page = await web.fetch(self.url(query, count), headers=headers)
            if page.status >= 400:
                raise WebError(f"the {self.backend} search backend answered status {page.status}")
            return await parsed(self.hits, page, count)

    def hits(self, page: Fetched, count: int) -> list[Hit]:
        """Return the first `count` results of the backend's answer `page`.

        Run in a parse turn (`parsing.parsed`): read on the event loop, a results page of
        10 MB held every other call up for 2.8 s.

        Raises:
            WebError: a JSON backend did not answer JSON.
        """
        text = decode(page.body, page.headers.get("content-type", ""))
        if self.backend == "duckduckgo":
            return duckduckgo_hits(text)[:count]
        try:
            data = cast(dict[str, Any], json.loads(text))
        except ValueError as exc:
            raise WebError(f"the {self.backend} search backend did not answer JSON") from exc
        if self.backend == "searxng":
            items = cast(list[dict[str, Any]], data.get("results") or [])
            return [_hit(item, "content") for item in items][:count]
        found = cast(dict[str, Any], data.get("web") or {})
        items = cast(list[dict[str, Any]], found.get("results") or [])
        return [_hit(item, "description") for item in items][:count]


def duckduckgo_hits(html: str) -> list[Hit]:
    """Return the results of a DuckDuckGo HTML results page (its redirect links unwrapped)."""
    hits: list[Hit] = []
    soup = parse(html)
    for result in soup.select(".result"):
        anchor = result.select_one("a.result__a")
        if anchor is None:
            continue
        href = str(anchor.get("href") or "")
        parts = urlsplit(href)
        if parts.path == "/l/" and "uddg" in parse_qs(parts.query):
            href = parse_qs(parts.query)["uddg"][0]
        href = UNSEEN.sub("", href)  # as a page's links lose them
        if not href.startswith(("http://", "https://")):
            continue
        snippet = result.select_one(".result__snippet")
        hits.append(
            Hit(
                title=page_field(anchor.get_text(" ", strip=True)),
                url=href,
                snippet=page_field(snippet.get_text(" ", strip=True)) if snippet else "",
            )
        )
    return hits


def _hit(item: dict[str, Any], snippet_key: str) -> Hit:
    return Hit(
        title=page_field(str(item.get("title") or "")),
        url=UNSEEN.sub("", str(item.get("url") or "")),
        snippet=page_field(str(item.get(snippet_key) or "")),
    )
