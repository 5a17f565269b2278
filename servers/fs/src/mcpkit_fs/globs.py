"""Glob patterns and `.gitignore` rules, matched against `/`-separated paths.

`*` and `?` never cross a `/`; `**` as a whole component matches any number of
components; `[...]` is a character class. Dot files are not special. A pattern without
a `/` matches a name at any depth (`*.py`, `.env`); one with a `/` matches the whole path
(`src/**/*.py`, `**/.ssh/**`).
"""

import os
import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from .errors import FsError
from .text import composed


class BadGlob(FsError):
    """A glob pattern that cannot be read, such as `[z-a]`."""


def _translate(pattern: str) -> str:
    """Return the regular expression (without anchors) for a glob pattern.

    `**` takes any number of whole components. As with `*` in a component, each run of
    components between two `**` is matched where it first fits, in an atomic group: a
    pattern with many `**` takes linear time in the depth of the path.
    """
    runs: list[list[str]] = [[]]  # the components between `**`s, as regular expressions
    for component in pattern.split("/"):
        if component == "**":
            runs.append([])
        else:
            runs[-1].append(_translate_component(component))
    if len(runs) == 1:
        return "/".join(runs[0])
    first, *middle, last = ["/".join(run) for run in runs]
    found = "".join(f"(?>(?:[^/]*/)*?{run}/)" for run in middle if run)
    rest = f"(?:.*/)?{last}" if last else ".*"
    return f"{first}/{found}{rest}" if first else f"{found}{rest}"


def _translate_component(component: str) -> str:
    """Return the regular expression for one component (no `/` inside).

    Each run of text between two `*` is matched where it first fits, inside an atomic
    group: that is always a match if there is one, and it never backtracks, so a pattern
    such as `*a*a*a*a*b` against a long name of `a`s takes linear time, not exponential.
    """
    runs: list[list[str]] = [[]]  # the regular expressions of the runs between `*`s
    i = 0
    while i < len(component):
        char = component[i]
        if char == "*":
            runs.append([])
        elif char == "?":
            runs[-1].append("[^/]")
        elif char == "[" and (end := _set_end(component, i)) != -1:
            body = component[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            # Literal in a glob's set, special in a regular expression's (`^` and `]` first).
            body = body.replace("\\", "\\\\").replace("[", "\\[")
            body = "\\" + body if body.startswith(("^", "]")) else body
            runs[-1].append("[^/" + body + "]" if negate else "[" + body + "]")
            i = end
        else:
            runs[-1].append(re.escape(char))
        i += 1
    texts = ["".join(run) for run in runs]
    if len(texts) == 1:
        return texts[0]
    first, *middle, last = texts
    found = "".join(f"(?>[^/]*?{text})" for text in middle if text)
    return f"{first}{found}[^/]*{last}"


def _set_end(component: str, start: int) -> int:
    """Return where the set opened by the `[` at `start` ends (its `]`), or -1 if it does not.

    A `]` first in the set (after `[` or `[!`) is a member: `[]]` and `[!]]` are sets of
    one character, and `[!]` is no set but three characters.
    """
    first = start + 2 if component[start + 1 : start + 2] == "!" else start + 1
    return component.find("]", first + 1)


class Glob:
    """One glob pattern (see the module docstring for the syntax)."""

    def __init__(
        self, pattern: str, *, anchored: bool | None = None, ignore_case: bool = False
    ) -> None:
        self.pattern = pattern
        self.anchored = "/" in pattern.rstrip("/") if anchored is None else anchored
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        try:
            regex = re.compile(_translate(composed(pattern.rstrip("/") or pattern)) + r"\Z", flags)
        except re.error as exc:
            raise BadGlob(f"Invalid glob pattern {pattern!r}: {exc}. Fix it and retry.") from None
        self._regex = regex

    def match(self, path: str) -> bool:
        """Return whether `path` (`/`-separated) matches: by its name if unanchored.

        Names that differ only in Unicode form match alike: a file named on macOS (NFD)
        is the one a pattern typed elsewhere (NFC) names, as it is to every path lookup.
        """
        target = composed(path if self.anchored else path.rsplit("/", 1)[-1])
        return self._regex.match(target) is not None


class GlobSet:
    """Several globs: a path matches if any of them does."""

    def __init__(self, patterns: Iterable[str], *, ignore_case: bool = False) -> None:
        self.globs = tuple(Glob(p, ignore_case=ignore_case) for p in patterns if p)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def match(self, path: str) -> bool:
        """Return whether any glob matches `path`."""
        return any(glob.match(path) for glob in self.globs)


def deny_rules(patterns: Iterable[str]) -> GlobSet:
    """Return the operator's deny globs as they are matched, against real absolute paths.

    `~` is the home directory, and a pattern with a `/` that starts with neither `/` nor
    `**/` matches at any depth (`.ssh/**` as `**/.ssh/**`): matched against the whole
    absolute path as written, it could never match, and would deny nothing. Letter case
    does not count: on a filesystem where it does not (macOS, Windows, a FAT drive),
    `.ENV` opens `.env`; where it does, denying `.ENV` too is the safe error.

    Raises:
        BadGlob: a pattern cannot be read.
    """
    rules: list[str] = []
    for pattern in patterns:
        pattern = os.path.expanduser(pattern)
        floating = "/" in pattern.rstrip("/") and not pattern.startswith(("/", "**/"))
        rules.append(f"**/{pattern}" if floating else pattern)
    return GlobSet(rules, ignore_case=True)


class IgnoreRule(NamedTuple):
    """One line of a `.gitignore`, relative to the directory that holds the file."""

    base: str  # the directory of the .gitignore below the walk's start ("" = at or above)
    above: str  # for a .gitignore above the start: the path from its directory to the start
    glob: Glob
    negate: bool
    directories_only: bool


def parse_gitignore(
    text: str, base: str, *, above: str = "", most: int | None = None
) -> list[IgnoreRule]:
    """Return the rules of a `.gitignore` file (its first `most`, if given).

    The file is in the directory `base` below the walk's start, or in one `above` the start
    by that path.
    """
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        if most is not None and len(rules) >= most:
            break
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        if line.startswith(("\\#", "\\!")):  # an escaped first character is literal
            line = line[1:]
        directories_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        # A leading or inner slash anchors the pattern to the .gitignore's directory.
        try:
            glob = Glob(line.lstrip("/"), anchored="/" in line)
        except BadGlob:
            continue  # as git does: a rule it cannot read ignores nothing
        rules.append(IgnoreRule(base, above, glob, negate, directories_only))
    return rules


def is_ignored(rules: Sequence[IgnoreRule], path: str, is_dir: bool) -> bool:
    """Return whether `path` (relative to the walk's start) is ignored: the last match wins."""
    ignored = False
    for rule in rules:
        if rule.directories_only and not is_dir:
            continue
        if rule.base:
            if not path.startswith(rule.base + "/"):
                continue
            relative = path[len(rule.base) + 1 :]
        else:
            relative = f"{rule.above}/{path}" if rule.above else path
        if rule.glob.match(relative):
            ignored = not rule.negate
    return ignored
