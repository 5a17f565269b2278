"""robots.txt per RFC 9309: groups by user agent, longest match wins, allow wins a tie.

`Robots.from_response` applies the RFC's rules for an unusable file: a 2xx body is
parsed; 404 and other 4xx allow everything; 401, 403, 429, 5xx or no answer at all
disallow everything (the site is unreachable, so nothing is assumed allowed).
"""

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from . import wildcard

MAX_ROBOTS_BYTES = 500_000
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
                    groups[-1][1].append(Rule(key == "allow", value))
            else:
                in_agents = False
        return cls(
            tuple((tuple(agents), tuple(rules)) for agents, rules in groups),
            status=status,
            text=text,
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

    def verdict(self, user_agent: str, url: str) -> Verdict:
        """Return whether `user_agent` may fetch `url`, and why."""
        if self.everything is not None:
            return Verdict(self.everything, self.source)
        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.path == "/robots.txt":
            return Verdict(True, "robots.txt itself is always allowed")
        rules = self._rules_for(product_token(user_agent))
        matching = [rule for rule in rules if rule.matches(path)]
        if not matching:
            return Verdict(True, "no rule matches")
        best = max(matching, key=lambda rule: (len(rule.pattern), rule.allow))
        return Verdict(best.allow, str(best))

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
        ValueError: the port is not a number.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}/robots.txt"
