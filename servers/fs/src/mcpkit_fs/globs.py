"""Glob patterns and `.gitignore` rules, matched against `/`-separated paths.

`*` and `?` never cross a `/`; `**` as a whole component matches any number of
components; `[...]` is a character class. Dot files are not special. A pattern without
a `/` matches a name at any depth (`*.py`, `.env`); one with a `/` matches the whole path
(`src/**/*.py`, `**/.ssh/**`).
"""

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple


def _translate(pattern: str) -> str:
    """Return the regular expression (without anchors) for a glob pattern."""
    parts: list[str] = []
    components = pattern.split("/")
    for index, component in enumerate(components):
        last = index == len(components) - 1
        if component == "**":
            # Zero or more whole components, with their separators.
            parts.append(".*" if last else "(?:.*/)?")
            continue
        parts.append(_translate_component(component))
        if not last:
            parts.append("/")
    return "".join(parts)


def _translate_component(component: str) -> str:
    """Return the regular expression for one component (no `/` inside)."""
    out: list[str] = []
    i = 0
    while i < len(component):
        char = component[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in component[i + 2 :]:
            end = component.index("]", i + 2)
            body = component[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\")
            out.append("[^" + body + "]" if negate else "[" + body + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


class Glob:
    """One glob pattern (see the module docstring for the syntax)."""

    def __init__(self, pattern: str, *, anchored: bool | None = None) -> None:
        self.pattern = pattern
        self.anchored = "/" in pattern.rstrip("/") if anchored is None else anchored
        self._regex = re.compile(_translate(pattern.rstrip("/") or pattern) + r"\Z", re.DOTALL)

    def match(self, path: str) -> bool:
        """Return whether `path` (`/`-separated) matches: by its name if unanchored."""
        target = path if self.anchored else path.rsplit("/", 1)[-1]
        return self._regex.match(target) is not None


class GlobSet:
    """Several globs: a path matches if any of them does."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.globs = tuple(Glob(p) for p in patterns if p)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def match(self, path: str) -> bool:
        """Return whether any glob matches `path`."""
        return any(glob.match(path) for glob in self.globs)


class IgnoreRule(NamedTuple):
    """One line of a `.gitignore`, relative to the directory that holds the file."""

    base: str  # the directory of the .gitignore, relative to the walk's start ("" = start)
    glob: Glob
    negate: bool
    directories_only: bool


def parse_gitignore(text: str, base: str) -> list[IgnoreRule]:
    """Return the rules of a `.gitignore` file found in directory `base`."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        directories_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        # A leading or inner slash anchors the pattern to the .gitignore's directory.
        glob = Glob(line.lstrip("/"), anchored="/" in line)
        rules.append(IgnoreRule(base, glob, negate, directories_only))
    return rules


def is_ignored(rules: Sequence[IgnoreRule], path: str, is_dir: bool) -> bool:
    """Return whether `path` (relative to the walk's start) is ignored: the last match wins."""
    ignored = False
    for rule in rules:
        if rule.directories_only and not is_dir:
            continue
        if rule.base and not path.startswith(rule.base + "/"):
            continue
        relative = path[len(rule.base) + 1 :] if rule.base else path
        if rule.glob.match(relative):
            ignored = not rule.negate
    return ignored
