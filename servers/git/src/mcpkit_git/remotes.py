"""Which remote git_fetch, git_pull and git_push may use, and what git runs at its end.

A remote is named, never given as a URL. Its URLs are checked before any use:
- a remote helper is refused: `scheme::address`, or a `remote.<name>.vcs`, makes git run
  `git remote-<scheme>`, a program the repository does not choose but could alias;
- a repository on this machine (a path, or a `file://` URL) must pass the jail as the
  repository itself does (`check_local_remote`): a `.git` file, alternates or a link
  in it would bring another repository's content in, or let a push change it. It is
  the repository git's pack programs open for the path (`entered_repository`), which
  need not be the one found from it: they try `PATH/.git`, `PATH`, `PATH.git/.git` and
  `PATH.git`, and read `~user/` as that user's home (refused).
There, git runs the pack programs under the same inert settings as here (its hooks, its
fsmonitor and the like stay off), and a push never checks files out (a checkout would run
that repository's filters). A branch is a name, never a refspec: `+main` would force and
`:main` delete, which the tools promise never to do; a push always names what it pushes
where (`pushed_branch`), so that no mapping of the repository's applies, and a fetch
refuses a mapping that writes outside `refs/remotes/` (`check_fetch_settings`), as it
refuses a remote described in the old `.git/remotes/` files. A proxy, TLS files or fsck
skip lists the repository's own configuration sets are refused (`check_network_settings`).
"""

import os
import re
import shlex
from urllib.parse import unquote

from .errors import GitError
from .jail import HOOK_KEY, driver_overrides, list_keys
from .repo import Git, plain
from .runner import GitFailed, Log, Runner
from .stores import check_stores, is_below

SKIP_LIST_KEY = re.compile(r"(?:fetch\.|receive\.)?fsck\.skiplist")
"""fsck's skip lists: git reads every value (`-c` cannot undo one), and a line that is no
object name came back in its error, the first line of any file."""
NETWORK_KEY = re.compile(
    r"http\.(?:.+\.)?(?:proxy|sslcainfo|sslcapath|sslcert|sslkey|proxysslcert|proxysslkey"
    rf"|proxysslcainfo|curloptresolve)|remote\..+\.proxy|{SKIP_LIST_KEY.pattern}"
)
"""Settings that send a fetch or push through another machine, or make git read files it
names wherever they are (certificates, keys, skip lists): the operator's to make, not a
repository's."""
PACK_PROGRAM_KEY = re.compile(r"remote\.(.+)\.(?:uploadpack|receivepack)", re.IGNORECASE)
"""The programs git runs at a remote's end. mcp-git names them on each command line
(`pack_program`), which beats the remote's own setting; but a fetch git makes by URL for
its own ends (a push that negotiates) reads the setting of the section the URL names."""
ENTERED_SUFFIXES = ("/.git", "", ".git/.git", ".git")
"""What a pack program tries after a remote's path, in this order (git's `enter_repo`): the
first that is a file (a `.git` file) or a git directory is the repository it serves."""
SHOW_STORES = ("rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir")
LOCAL_RECEIVE = ("-c", "receive.denyCurrentBranch=refuse", "receive-pack")
"""What a push runs in a repository on this machine, after the inert settings."""


async def checked_remote(git: Git, remote: str) -> bool:
    """Return whether remote `remote` is a repository on this machine (not another one's).

    Raises:
        GitError: the repository has no such remote, or it is a remote helper or also a
            group of remotes, or it is a repository on this machine that the jail refuses.
    """
    plain(remote, "remote")
    old_file = described_in_old_files(git.repo.common_dir, remote)
    if old_file is not None:
        raise GitError(
            f"Remote {remote!r} is described in .git/{old_file}, an old form whose mappings"
            " could overwrite this repository's branches: refused. Describe it in"
            " .git/config (git remote add) instead."
        )
    result = await git.run(["remote"])
    if remote not in result.text.split():
        raise GitError(f"No remote named {remote!r}; remotes: {result.text.split() or 'none'}")
    helper = await git.run(["config", "--get-all", f"remote.{remote}.vcs"], check=False)
    if helper.text.strip():
        raise GitError(f"Remote {remote!r} is served by a remote helper: refused")
    # A group of the same name wins: git would fetch each remote it lists, none checked.
    group = await git.run(["config", "--get-all", f"remotes.{remote}"], check=False)
    if group.text.strip():
        raise GitError(
            f"{remote!r} is also a group of remotes (remotes.{remote} = {group.text.strip()!r}),"
            " which git would fetch instead of the remote: refused"
        )
    await check_network_settings(git, remote)
    paths: list[str] = []
    for url in [*await urls(git, remote, push=False), *await urls(git, remote, push=True)]:
        if "::" in url:
            raise GitError(f"Remote {remote!r} is {url}, a remote helper: refused")
        path = local_path(url, git.repo.path)
        if path is not None:
            paths.append(path)
    await _check_local_remotes(git, paths)
    return bool(paths)


async def _check_local_remotes(git: Git, paths: list[str]) -> None:
    """Raise GitError unless each repository the remote `paths` open lies wholly in the place."""
    place = git.repo.place
    outside = _first_outside(paths, place)  # all of them, before git is asked about any
    if outside is not None:
        raise GitError(f"Remote {outside} is a path outside {place}: refused")
    for path in dict.fromkeys(paths):
        entered = await entered_repository(git.runner, path, git.log)
        if entered is None:
            raise GitError(f"Remote {path} is not a git repository usable here")
        if not is_below(entered, place):
            raise GitError(f"Remote {path} opens {entered}, outside {place}: refused")
        await check_local_remote(git.runner, entered, place, git.log)


def _first_outside(paths: list[str], place: str) -> str | None:
    """Return the first of `paths` that leads outside `place`, its links followed, if any."""
    return next((path for path in paths if not is_below(os.path.realpath(path), place)), None)


async def urls(git: Git, remote: str, *, push: bool) -> list[str]:
    """Return the URLs git fetches from (pushes to, if `push`) for `remote`, as git rewrites them.

    Read as bytes, so that a name that is not UTF-8 is the name git uses.

    Raises:
        GitError: a URL holds a line break: git's list of them, a line each, would show
            `.` and the rest where git uses `./.<LF>`, a link to anywhere.
    """
    for key in ("pushurl", "url") if push else ("url",):
        if any("\n" in url for url in await git.config_values(f"remote.{remote}.{key}")):
            raise GitError(f"Remote {remote!r} has a URL that holds a line break: refused")
    args = ["remote", "get-url", "--all", *(["--push"] if push else []), remote]
    lines = (await git.run(args)).stdout.split(b"\n")
    return [os.fsdecode(line) for line in lines if line]


def described_in_old_files(common_dir: str, remote: str) -> str | None:
    """Return the old file describing `remote` (`remotes/<name>`, `branches/<name>`), if any.

    git reads them beside the configuration, with fetch mappings of their own
    (`Pull: +refs/heads/main:refs/heads/main`), which `check_fetch_settings` does not see.
    """
    for folder in ("remotes", "branches"):
        if os.path.lexists(os.path.join(common_dir, folder, remote)):
            return f"{folder}/{remote}"
    return None


async def check_network_settings(git: Git, remote: str) -> None:
    """Refuse a repository whose own configuration sets a proxy, files or pack programs.

    See `NETWORK_KEY`, and `PACK_PROGRAM_KEY`: a pack program set for any section but
    `remote`'s (for another remote, or for a URL) is refused.

    Raises:
        GitError: it does (the operator's configuration may, with --inherit-git-config).
    """
    listed = await git.run(["config", "--show-scope", "-z", "--name-only", "--list"])
    fields = listed.stdout.split(b"\0")
    for scope, key in zip(fields[0::2], fields[1::2], strict=False):
        name = os.fsdecode(key)
        if scope not in (b"local", b"worktree"):
            continue
        program = PACK_PROGRAM_KEY.fullmatch(name)
        if program is not None and program.group(1) != remote:
            raise GitError(
                f"This repository's configuration sets {name}, a program git would run at a"
                " remote's end: refused. Remove it from .git/config."
            )
        if NETWORK_KEY.fullmatch(name.lower()):
            raise GitError(
                f"This repository's configuration sets {name}, which would send a fetch or"
                " push through another machine or read files outside it: refused. Remove it"
                " from .git/config (your own configuration may set it: --inherit-git-config)."
            )


def local_path(url: str, top: str) -> str | None:
    """Return the absolute path a remote URL names on this machine, or None.

    As git in the work tree `top` reads URLs: `file://PATH`, or a path (no `:` before
    the first `/`); `host:path` and `scheme://...` name another machine. Trailing
    slashes go, as the pack programs drop them.

    Raises:
        GitError: the path starts with `~`, which the pack programs read as a home.
    """
    if url.startswith("file://"):
        path = unquote(url.removeprefix("file://")) or "/"
    elif "://" in url:
        return None
    else:
        colon, slash = url.find(":"), url.find("/")
        if colon != -1 and (slash == -1 or colon < slash):
            return None
        path = url
    if path.startswith("~"):
        raise GitError(f"Remote {url!r} starts with '~', a user's home: refused")
    return os.path.join(top, path.rstrip("/") or "/")


async def entered_repository(runner: Runner, path: str, log: Log | None) -> str | None:
    """Return the real path of the repository git's pack programs open for `path`, or None.

    The first of `ENTERED_SUFFIXES` after `path` that is a file, or a directory git takes
    for a git directory; a file is a `.git` file, which `check_local_remote` follows.
    """
    for candidate, is_file in _entry_points(path):
        if is_file or await _is_git_directory(runner, candidate, log):
            return candidate
    return None


def _entry_points(path: str) -> list[tuple[str, bool]]:
    """Return the real paths of what exists at `path` + each of `ENTERED_SUFFIXES`, in order.

    Each with whether it is a file (else a directory).
    """
    found: list[tuple[str, bool]] = []
    for suffix in ENTERED_SUFFIXES:
        candidate = path + suffix
        if os.path.isfile(candidate) or os.path.isdir(candidate):
            found.append((os.path.realpath(candidate), os.path.isfile(candidate)))
    return found


async def _is_git_directory(runner: Runner, path: str, log: Log | None) -> bool:
    """Return whether git takes the directory `path` itself for a git directory."""
    try:
        await runner.run(path, ("rev-parse", "--git-dir"), env={"GIT_DIR": path}, log=log)
    except (GitFailed, OSError):
        return False
    return True


def pack_program(git: Git, action: str, local: bool) -> str:
    """Return the program a fetch, pull or push runs at the remote's end.

    The option beats `remote.<name>.uploadpack` and `receivepack`, which take their first
    value, so a repository's own would beat `-c`. On this machine, git runs it through a
    shell, with the inert settings on its command line: git passes none of its own
    configuration to a program it starts in another repository. A server elsewhere gets
    the plain program name.
    """
    inert = git.runner.inert
    if action != "push":
        return shlex.join(git.runner.argv(["upload-pack"], inert)) if local else "git-upload-pack"
    return shlex.join(git.runner.argv(LOCAL_RECEIVE, inert)) if local else "git-receive-pack"


async def pushed_branch(git: Git, branch: str | None) -> str:
    """Return the name of the branch a push sends: `branch`, or the current one.

    A push sends it to its namesake, always named (`refs/heads/B:refs/heads/B`), so that
    no push mapping of the repository's applies: `remote.*.push` of `+main:main` forced the
    push, and one of `:keep` deleted a branch (and git refuses a refspec with
    `remote.*.mirror`, which would force and delete).

    Raises:
        GitError: HEAD is detached and no branch is named, or the name is not valid.
    """
    if branch is None:
        current = await git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        if current.status != 0:
            raise GitError("HEAD is detached: name the branch to push")
        branch = current.text.strip()
    [name] = await checked_branch(git, branch)
    return name


async def last_fetched(git: Git, remote: str, branch: str) -> str:
    """Return the commit `remote`'s `branch` had when last fetched ("" if it had none).

    What a push with a lease may replace, named in the question and given to git: left
    to git, the lease was whatever a fetch made meanwhile had brought.
    """
    return await git.object_at(f"refs/remotes/{plain(remote, 'remote')}/{branch}") or ""


async def check_fetch_settings(git: Git, remote: str) -> None:
    """Refuse a remote whose fetch would change this repository's own refs.

    A fetch or a pull updates what the mapping (`remote.<name>.fetch`) names, forced with
    a `+`, and prunes there what the remote lacks: `+refs/heads/*:refs/heads/*` would
    overwrite the repository's branches, `+refs/tags/*:refs/tags/*` its tags. So a mapping
    may write into `refs/remotes/` only (and `sync` never prunes: `pruneTags` would
    delete the local tags the remote lacks).

    Raises:
        GitError: a mapping writes elsewhere.
    """
    for spec in await git.config_values(f"remote.{remote}.fetch"):
        destination = spec.partition(":")[2].strip()
        # `^...` excludes; no destination writes FETCH_HEAD alone
        if spec.startswith("^") or not destination or destination.startswith("refs/remotes/"):
            continue
        raise GitError(
            f"Remote {remote!r} fetches into {destination!r} (remote.{remote}.fetch ="
            f" {spec!r}): a fetch would overwrite this repository's own refs. Map it into"
            f" refs/remotes/{remote}/ instead."
        )


async def checked_branch(git: Git, branch: str | None) -> list[str]:
    """Return `branch` as the refs of a fetch, pull or push: a name, or nothing.

    Raises:
        GitError: it is not a valid branch name, or starts with `+` (a forced update).
    """
    if branch is None:
        return []
    if branch.startswith("+"):
        raise GitError(f"branch {branch!r} is not allowed: a leading '+' forces the update")
    return [await git.ref_name(branch, what="branch")]


async def check_local_remote(runner: Runner, path: str, place: str, log: Log | None) -> None:
    """Raise GitError unless the repository at `path`, inside `place`, lies wholly in it.

    `path` is its git directory or its `.git` file. A remote on this machine is a
    repository git reads and writes as it does this one: a `.git` file, alternates or a
    link in it could lead to another repository.
    """
    itself = {"GIT_DIR": path}  # as the pack programs open it: not found from a folder
    folder = os.path.dirname(path)
    try:
        shown = await runner.run(folder, SHOW_STORES, env=itself, log=log)
        check_remote_stores(path, shown.text, place)
        listed = await runner.run(folder, list_keys(), env=itself, log=log)
    except (GitFailed, OSError) as exc:
        raise GitError(f"Remote {path} is not a git repository usable here: {exc}") from None
    # Its configuration passes as this repository's does: a partial clone fetches what a
    # push lacks through its own remote's upload-pack, a command its configuration names.
    keys = [key for key in listed.text.split("\0") if key]
    try:
        driver_overrides(keys, hooks=True)
    except GitError as exc:
        raise GitError(f"Remote {path}: {exc}") from None
    if any(SKIP_LIST_KEY.fullmatch(key.lower()) for key in keys):
        raise GitError(
            f"Remote {path} sets an fsck skip list, a file its git would read wherever it"
            " is; mcp-git refuses such remotes."
        )
    if not runner.settings.allow_hooks and any(HOOK_KEY.match(key) for key in keys):
        raise GitError(
            f"Remote {path} configures hooks by name (hook.<name>.command), which a push"
            " would run there; mcp-git refuses such remotes unless the operator allows hooks."
        )


def check_remote_stores(path: str, shown: str, place: str) -> None:
    """Raise GitError unless the stores `rev-parse` showed for remote `path` are in `place`."""
    lines = shown.rstrip("\n").split("\n")
    if len(lines) != 2:
        raise GitError(f"Remote {path} is not a git repository usable here")
    git_dir, common = (os.path.realpath(line) for line in lines)
    check_stores(f"Remote {path}", git_dir, common, place)
