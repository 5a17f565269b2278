"""The repository jail: which repository a `repo_path` names, and whether it may be used.

A repository may be used when its work tree, its git directory, its common directory and
every object store it borrows from (alternates) are all inside one allowed place (the
operator's repositories, as the client's roots narrow them). Git is asked where those
are, with discovery stopped above the place, so a `.git` file, `core.worktree`, a
symbolic link or a worktree pointing elsewhere is seen and refused, and so is a link inside
the git directory (`objects`, `refs`, `logs/HEAD`) that leads out or into a work tree, and
a git directory a work tree could write into (`check_out_of_reach`). Bare repositories,
configuration that includes other files or sets a merge strategy, and partial clones
(which fetch on their own) are refused too; filter, diff and merge drivers and aliases
the repository names are neutralised by overrides (a name with `=`, which `-c` cannot
spell, is refused; remote pack programs, which `-c` cannot override, by the options of
`remotes.pack_program`). A remote on this machine passes the same checks
(`remotes.check_local_remote`).
"""

import os
import re
import stat
from collections.abc import Sequence
from typing import NamedTuple

from .errors import GitError
from .runner import INERT_CONFIG, GitFailed, Log, Runner
from .stores import check_inside, check_out_of_reach, check_stores, is_below

DRIVER_KEY = re.compile(
    r"^(filter\.(?P<filter>.+)\.(clean|smudge|process)"
    r"|diff\..+\.(command|textconv)"
    r"|merge\..+\.driver)$"
)
INCLUDE_KEY = re.compile(r"^include(if\..*)?\.path$")
ALIAS_KEY = re.compile(r"^alias\..+$")
HOOK_KEY = re.compile(r"^hook\.(?P<name>.+)\.(command|event)$")
"""A hook set by configuration (git 2.54 and later), which `core.hooksPath` does not stop."""
PARTIAL_CLONE_KEY = re.compile(r"^(extensions\.partialclone|remote\..+\.promisor)$")
STRATEGY_KEY = re.compile(r"^pull\.(twohead|octopus)$")
"""A merge strategy for rebases and merges, run as `git merge-<name>`: a name with a slash
runs a program of the work tree. Git reads the first value set, so `-c` cannot override it."""
SUBMODULE_KEY = re.compile(r"^submodule\.(?P<name>.+)\.[^.]+$")
REFUSED_KEYS = (
    (
        INCLUDE_KEY,
        "This repository's configuration includes another file ({key}); mcp-git refuses"
        " such repositories, as an included file could arm git. Remove the include from"
        " .git/config to use it.",
    ),
    (
        STRATEGY_KEY,
        "This repository's configuration sets a merge strategy ({key}), which git runs as"
        " a program and its command line cannot override; mcp-git refuses such"
        " repositories. Remove it from .git/config to use it.",
    ),
    (
        PARTIAL_CLONE_KEY,
        "This repository is a partial clone ({key}): git would fetch missing objects on its"
        " own, through the remote's configuration; mcp-git refuses such repositories.",
    ),
)
"""Keys that no `-c` setting can make safe, and why a repository setting one is refused."""
URL_HTTP_SAFE = {
    key.lower().removeprefix("http."): value
    for key, value in INERT_CONFIG
    if key.startswith("http.")
}
"""What `runner.INERT_CONFIG` sets for all URLs, set again for one (which would beat it)."""
URL_HTTP_KEY = re.compile(rf"^http\..+\.(?P<name>{'|'.join(URL_HTTP_SAFE)})$")
MAX_CACHED = 256


class Repository(NamedTuple):
    """A repository that passed the jail: where it is and how git must be run in it."""

    path: str  # the work tree's real path
    git_dir: str
    common_dir: str  # where refs and objects live (the git directory, but in a worktree)
    place: str  # the allowed place that holds it
    read_only: bool
    overrides: tuple[tuple[str, str], ...]  # neutralise the repository's own drivers


def holder(path: str, places: Sequence[tuple[str, bool]]) -> tuple[str, bool] | None:
    """Return the innermost allowed place (path, read-only) holding the real `path`."""
    holding = [place for place in places if is_below(path, place[0])]
    return max(holding, key=lambda place: len(place[0])) if holding else None


def driver_overrides(keys: Sequence[str], *, hooks: bool) -> tuple[tuple[str, str], ...]:
    """Return the `-c` settings that disarm each driver among configuration `keys`.

    Each submodule named (in `.git/config` or `.gitmodules`) is also set to be ignored:
    its `submodule.<name>.ignore` beats `diff.ignoreSubmodules`, and a look into it runs
    git there, under the submodule's own configuration (its own filters, say). Each alias
    is emptied: git runs `git remote-<scheme>` for a remote helper, which an alias of that
    name would answer with a command. A cookie jar or TLS check set for one URL
    (`http.<url>.cookieFile`) is set back as `runner.INERT_CONFIG` sets it for all URLs.
    Unless `hooks` may run, each hook configured by name is left with no event to run on.

    Raises:
        GitError: the configuration sets a key of `REFUSED_KEYS` (no `-c` setting can
            make it safe), or names a driver, submodule, alias, hook or URL with `=` in its
            name, which `-c` cannot spell (`-c filter.a=b.clean=` sets `filter.a`).
    """
    overrides: list[tuple[str, str]] = []
    for key in keys:
        lowered = key.lower()
        for refused, why in REFUSED_KEYS:
            if refused.match(lowered):
                raise GitError(why.format(key=key))
        driver = DRIVER_KEY.match(lowered)
        submodule = SUBMODULE_KEY.match(key)
        alias = ALIAS_KEY.match(lowered)
        url_http = URL_HTTP_KEY.match(lowered)
        hook = None if hooks else HOOK_KEY.match(key)
        if all(match is None for match in (driver, submodule, alias, url_http, hook)):
            continue
        if "=" in key:
            raise GitError(
                f"This repository's configuration names a driver, submodule, alias, hook or URL"
                f" with '=' in its name ({key}), which git's command line cannot switch off;"
                " mcp-git refuses such repositories."
            )
        if url_http is not None:
            overrides.append((key, URL_HTTP_SAFE[url_http.group("name")]))
        elif submodule is not None:
            overrides.append((f"submodule.{submodule.group('name')}.ignore", "all"))
        elif alias is not None:
            overrides.append((key, ""))
        elif hook is not None:  # an empty event clears the hook's events
            overrides.append((f"hook.{hook.group('name')}.event", ""))
        elif driver is not None:
            overrides.append((key, ""))
            if driver.group("filter") is not None:
                overrides.append((f"filter.{driver.group('filter')}.required", "false"))
    return tuple(dict.fromkeys(overrides))


def locate(repo_path: str, places: Sequence[tuple[str, bool]]) -> tuple[str, str, bool]:
    """Return the real path of `repo_path`, its place and whether that is read-only.

    Raises:
        GitError: no place holds it, or it is no directory.
    """
    if not places:
        raise GitError("No repository is allowed to this client (see git_list_repositories).")
    if "\x00" in repo_path or not repo_path.strip():
        raise GitError("repo_path must be a path to a repository")
    try:
        real = os.path.realpath(os.path.join(places[0][0], os.path.expanduser(repo_path)))
        os.fsencode(real)
    except ValueError:  # a lone surrogate, which no file name holds
        raise GitError("repo_path must be a path to a repository") from None
    found = holder(real, places)
    if found is None:
        raise GitError(
            f"{repo_path} is outside the repositories this server may use; see"
            " git_list_repositories."
        )
    if not os.path.isdir(real):
        raise GitError(f"{repo_path} is not a directory")
    return real, *found


def check_parts(repo_path: str, shown: str, place: str) -> tuple[str, str, str]:
    """Return the work tree, git and common directories `rev-parse` showed, if in `place`.

    Raises:
        GitError: it is bare, or a part of it (or an object store it borrows) is outside.
    """
    lines = shown.rstrip("\n").split("\n")  # not splitlines: a path may hold U+2028
    if lines[:1] == ["true"] or len(lines) != 4:
        raise GitError(f"{repo_path} is a bare repository; mcp-git works on work trees only")
    top, git_dir, common = (os.path.realpath(line) for line in lines[1:])
    check_inside(repo_path, "work tree", top, place)
    check_stores(repo_path, git_dir, common, place)
    check_out_of_reach(repo_path, top, git_dir, common, place)
    return top, git_dir, common


SHOW_PARTS = (
    "rev-parse",
    "--path-format=absolute",
    "--is-bare-repository",
    "--show-toplevel",
    "--absolute-git-dir",
    "--git-common-dir",
)


def list_keys(*source: str) -> list[str]:
    """Return the git command that lists the configuration's key names (or `source`'s)."""
    return ["config", *source, "--no-includes", "--null", "--name-only", "--list"]


def lstat_mode(path: str) -> int:
    """Return the mode of `path` itself (not what a link leads to), 0 if there is none."""
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


Cache = dict[tuple[str, str], tuple[tuple[object, ...], Repository]]
"""Repositories checked before, by (real path, place), with the stat they were checked at."""


def fingerprint(real: str, repo: Repository | None) -> tuple[object, ...]:
    """The state of every file that decides where a repository is and how it is configured.

    Unchanged, the checks of `open_repository` would find what they found before. A file
    is known by its inode, size and times (its change time cannot be set back, so an
    edit in place is seen too); a directory by its inode only, as its times change
    whenever git writes its index or a ref, which decides nothing here. Links are
    followed, as git follows them: a linked configuration edited in place is seen.
    """
    paths = [os.path.join(real, ".git")]
    if repo is not None:
        paths += [
            os.path.join(repo.path, ".git"),
            os.path.join(repo.path, ".gitmodules"),
            os.path.join(repo.git_dir, "config"),
            os.path.join(repo.git_dir, "config.worktree"),
            os.path.join(repo.git_dir, "commondir"),
            os.path.join(repo.common_dir, "config"),
            os.path.join(repo.common_dir, "objects", "info", "alternates"),
        ]
    found: list[object] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append(None)
            continue
        if stat.S_ISDIR(info.st_mode):
            found.append((info.st_dev, info.st_ino))
        else:
            found.append(
                (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            )
    return tuple(found)


async def open_repository(
    runner: Runner,
    repo_path: str,
    places: Sequence[tuple[str, bool]],
    *,
    log: Log | None = None,
    cache: Cache | None = None,
) -> Repository:
    """Return the repository at `repo_path` if the jail allows it.

    `places` are the allowed places (real path, read-only). A relative `repo_path` is
    taken from the first place. Git looks for the repository no higher than the place.
    With a `cache`, a repository whose files are as they were when it was last checked
    is not asked again (the place is checked every time).

    Raises:
        GitError: no place allows it, it is no repository (or a bare one), a part of it
            lies outside its place, or its configuration includes files.
    """
    real, place, read_only = locate(repo_path, places)
    known = cache.get((real, place)) if cache is not None else None
    if known is not None and known[0] == fingerprint(real, known[1]):
        return known[1]._replace(read_only=read_only)
    ceiling = {"GIT_CEILING_DIRECTORIES": os.path.dirname(place) or "/"}
    try:
        shown = await runner.run(real, SHOW_PARTS, env=ceiling, log=log)
        top, git_dir, common = check_parts(repo_path, shown.text, place)
        repo = Repository(top, git_dir, common, place, read_only, ())
        # Taken before the configuration is read: a change while it is read shows next time.
        state = fingerprint(real, repo)
        listed = [await runner.run(top, list_keys(), env=ceiling, log=log)]
    except GitFailed as exc:  # changed while it was looked at, say
        raise GitError(f"{repo_path} is not a git repository usable here: {exc}") from None
    if stat.S_ISREG(lstat_mode(os.path.join(top, ".gitmodules"))):  # git reads no other kind
        modules = list_keys("--file", ".gitmodules")
        listed.append(await runner.run(top, modules, env=ceiling, log=log, check=False))
    keys = [key for result in listed for key in result.text.split("\x00") if key]
    repo = repo._replace(overrides=driver_overrides(keys, hooks=runner.settings.allow_hooks))
    if cache is not None:
        if len(cache) >= MAX_CACHED:
            cache.clear()
        cache[real, place] = state, repo
    return repo
