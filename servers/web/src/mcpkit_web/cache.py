"""Recent responses by URL, kept for a while: pages, and the stylesheets they link to."""

import time
from collections import OrderedDict
from dataclasses import dataclass, field

from .fetcher import Fetched

CACHE_SECONDS = 300.0


@dataclass
class BodyCache:
    """Recent responses by URL, at most `entries` and `max_bytes` of them, each for `ttl` s."""

    entries: int = 64
    max_bytes: int = 64_000_000
    ttl: float = CACHE_SECONDS
    _items: OrderedDict[str, tuple[float, Fetched]] = field(
        default_factory=OrderedDict[str, tuple[float, Fetched]]
    )

    def get(self, url: str) -> Fetched | None:
        """Return the fresh cached response for `url`, if any."""
        item = self._items.get(url)
        if item is None or time.monotonic() - item[0] > self.ttl:
            self._items.pop(url, None)
            return None
        self._items.move_to_end(url)
        return item[1]

    def put(self, url: str, page: Fetched) -> None:
        """Keep `page` as the answer for `url`, dropping the oldest entries over the caps."""
        self._items[url] = (time.monotonic(), page)
        self._items.move_to_end(url)
        while len(self._items) > self.entries or self.size() > self.max_bytes:
            self._items.popitem(last=False)

    def size(self) -> int:
        """Return the bytes of the cached bodies, and the characters of their stylesheets."""
        return sum(page.size for _, page in self._items.values())

    def urls(self) -> list[str]:
        """Return the cached URLs, newest last."""
        return [url for url, (at, _) in self._items.items() if time.monotonic() - at <= self.ttl]
