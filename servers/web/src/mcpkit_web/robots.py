"""robots.txt per RFC 9309: groups by user agent, longest match wins, allow wins a tie.

`Robots.from_response` applies the RFC's rules for an unusable file: a 2xx body is
parsed; 404 and other 4xx allow everything; 401, 403, 429, 5xx or no answer at all
disallow everything (the site is unreachable, so nothing is assumed allowed). Only the
first 500 KiB of a file are read (`robots_text`), and rule and URL paths are compared
percent-encoded one way (`normalised`), so `/%73ecret` is `/secret`.
"""

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from . import wildcard
from .errors import WebError, shown
from .fetcher import MAX_URL_CHARS
from .tree import page_field

MAX_ROBOTS_BYTES = 500 * 1024
"""The part of a robots.txt that is parsed (RFC 9309 2.5: at least 500 KiB)."""
MAX_RULE_SHOWN = 200
"""Characters of the rule a verdict quotes: a 400,000-character rule was quoted whole."""
RULE_BYTES = 150
"""What one parsed rule holds in memory, about: for the cache's budget (`Robots.size`)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One `Allow` or `Disallow` line."""

    allow: bool
    pattern: str

    def matches(self, path: str) -> bool:
        """Say whether the rule's pattern (with `*` and a final `$`) matches `path`."""
        return wildcard.matches(self.pattern, path, from_start=True)

    def __str__(self) -> str:
        return f"{'Allow' if self.allow else 'Disallow'}: {self.pattern}"


@dataclass(frozen=True)
class Verdict:
    """Whether a path may be fetched, and the rule (or reason) that decided it."""

    allowed: bool
    reason: str


@dataclass(frozen=True)
class Robots:
    """A site's rules: groups of (user agents, rules); `everything` when no file decides."""

    groups: tuple[tuple[tuple[str, ...], tuple[Rule, ...]], ...] = ()
    everything: bool | None = None
    source: str = ""
    status: int | None = None
    text: str = field(default="", repr=False)
    rule_chars: int = 0
    """How many characters the rules' patterns hold in all (what a verdict may compare)."""

    @classmethod
    def parse(cls, text: str, status: int = 200) -> "Robots":
        """Return the rules of a robots.txt body."""
        groups: list[tuple[list[str], list[Rule]]] = []
        in_agents = False
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if ":" not in line:
                continue
            key, value = (part.strip() for part in line.split(":", 1))
            key = key.lower()
            if key == "user-agent":
                if not in_agents:
                    groups.append(([], []))
                    in_agents = True
                groups[-1][0].append(value.lower())
            elif key in ("allow", "disallow") and groups:
                in_agents = False
                if value:  # an empty Disallow allows everything: no rule
                    groups[-1][1].append(Rule(key == "allow", normalised(value)))
            else:
                in_agents = False
        return cls(
            tuple((tuple(agents), tuple(rules)) for agents, rules in groups),
            status=status,
            text=text,
            rule_chars=sum(len(rule.pattern) for _, rules in groups for rule in rules),
        )

    @classmethod
    def from_response(cls, status: int | None, text: str) -> "Robots":
        """Return the rules an answer to /robots.txt means (see the module)."""
        if status is not None and 200 <= status < 300:
            return cls.parse(text, status)
        if status is not None and 400 <= status < 500 and status not in (401, 403, 429):
            return cls(everything=True, source=f"robots.txt answered {status}", status=status)
        reason = f"answered {status}" if status is not None else "could not be fetched"
        return cls(everything=False, source=f"robots.txt {reason}", status=status)

    @property
    def size(self) -> int:
        """Return about how many bytes the rules hold (the text, and each rule parsed)."""
        return len(self.text) + RULE_BYTES * sum(len(rules) for _, rules in self.groups)

    def cost(self, url: str) -> int:
        """Return at most how many characters `verdict` compares for `url`, about.

        A rule's piece may be compared at each place of the path, which is at most three
        characters a byte once percent-encoded, and at most MAX_URL_CHARS.
        """
        encoded = len(url.encode("utf-8", "surrogatepass"))
        return self.rule_chars * min(3 * encoded, MAX_URL_CHARS)

    def verdict(self, user_agent: str, url: str) -> Verdict:
        """Return whether `user_agent` may fetch `url`, and why.

        Each rule may scan the whole path: 24,000 rules against 8 KiB take most of a
        second, so a caller runs a costly one (see `cost`) off the event loop.

        Raises:
            WebError: the path is longer than MAX_URL_CHARS once percent-encoded (each
                non-ASCII character is up to twelve).
        """
        if self.everything is not None:
            return Verdict(self.everything, self.source)
        parts = urlsplit(url)
        path = without_dot_segments(parts.path or "/")
        path = normalised(path + (f"?{parts.query}" if parts.query else ""))
        if len(path) > MAX_URL_CHARS:
            raise WebError(
                f"the URL's path is over {MAX_URL_CHARS:,} characters once percent-encoded"
            )
        if path.split("?", 1)[0] == "/robots.txt":
            return Verdict(True, "robots.txt itself is always allowed")
        rules = self._rules_for(product_token(user_agent))
        matching = [rule for rule in rules if rule.matches(path)]
        if not matching:
            return Verdict(True, "no rule matches")
        best = max(matching, key=lambda rule: (len(rule.pattern), rule.allow))
        return Verdict(best.allow, page_field(str(best), MAX_RULE_SHOWN))  # the site's text

    def _rules_for(self, token: str) -> list[Rule]:
        mine = [rules for agents, rules in self.groups if token in agents]
        chosen = mine or [rules for agents, rules in self.groups if "*" in agents]
        return [rule for rules in chosen for rule in rules]


def product_token(user_agent: str) -> str:
    """Return the product token of a User-Agent ("mcp-web/0.1 (...)" gives "mcp-web")."""
    first = user_agent.strip().split(" ", 1)[0].split("/", 1)[0].lower()
    return re.sub(r"[^a-z_-]", "", first)


def robots_url(url: str) -> str:
    """Return the robots.txt URL of `url`'s origin, spelled one way (`:080` is `:80`).

    Raises:
        WebError: the port is not a number from 0 to 65535, or the IPv6 address is unclosed.
    """
    try:
        parts = urlsplit(url)
        number = parts.port
    except ValueError as exc:  # urlsplit's own words: "Port out of range 0-65535"
        raise WebError(f"not a valid URL ({exc}): {shown(url)!r}") from exc
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = f":{number}" if number is not None else ""
    return f"{parts.scheme}://{host}{port}/robots.txt"


def robots_text(body: bytes) -> str:
    """Return the part of a robots.txt body that is parsed, as text.

    That is the first MAX_ROBOTS_BYTES, to the end of the last full line they hold (a line
    cut short could say less than it does: "Disallow: /cu" for "Disallow: /cut"), decoded
    as UTF-8 with undecodable bytes replaced.
    """
    if len(body) > MAX_ROBOTS_BYTES:
        head = body[:MAX_ROBOTS_BYTES]
        body = head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]
    return body.decode("utf-8", "replace")


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_TO_NORMALISE = re.compile(r"%([0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]")
"""A percent-encoded octet, or a character a URL may not hold as it is (RFC 3986): one
that is neither unreserved nor reserved, non-ASCII, or a `%` that begins no octet."""


def without_dot_segments(path: str) -> str:
    """Return `path` with its `.` and `..` segments resolved, as a client sends it.

    RFC 3986 (5.2.4), as httpx applies it: `/public/../secret` asks for `/secret`, which
    a rule for `/secret` must see. Dots written `%2e` count too, as servers may read them.
    """
    segments = path.split("/")
    kept: list[str] = []
    for index, segment in enumerate(segments):
        dots = segment.lower().replace("%2e", ".")
        if dots == "..":
            if len(kept) > 1:
                kept.pop()
        elif dots != ".":
            kept.append(segment)
            continue
        if index == len(segments) - 1:  # `/a/..` is the directory `/`, its slash kept
            kept.append("")
    return "/".join(kept)


def normalised(path: str) -> str:
    """Return `path` percent-encoded one way, for comparison per RFC 9309 2.2.2.

    Encoded unreserved characters are decoded (`%73` is `s`); other encoded octets stay
    encoded, in upper-case hex; characters a URL cannot hold as they are are encoded as
    UTF-8. `*` and `$` are reserved characters, so a rule's wildcards keep their meaning.
    """
    return _TO_NORMALISE.sub(_normalise, path)


def _normalise(found: re.Match[str]) -> str:
    """Return what one match of `_TO_NORMALISE` becomes (see `normalised`)."""
    octet = found.group(1)
    if octet is None:
        return "".join(f"%{byte:02X}" for byte in found.group(0).encode("utf-8", "surrogatepass"))
    decoded = chr(int(octet, 16))
    return decoded if decoded in _UNRESERVED else f"%{octet.upper()}"
