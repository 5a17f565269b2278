"""Git's machine formats as typed values: status (porcelain v2 -z), log records, grep rows."""

from collections.abc import Iterator, Sequence
from typing import NotRequired

from typing_extensions import TypedDict

LOG_FIELDS = ("%H", "%P", "%an", "%ae", "%aI", "%cn", "%cI", "%D", "%s", "%b")
"""What `git log` shows of a commit, in `Commit`'s order; never a %G (signature) format."""
REFLOG_FIELDS = ("%gd", "%H", "%gs", "%s", "%cI")
"""What `git log -g` shows of a reflog entry, in `ReflogEntry`'s order."""

STATES = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "unmerged",
}


class Change(TypedDict):
    """One changed path in the index or the work tree."""

    path: str
    state: str
    original_path: str | None


class Status(TypedDict):
    """The state of a work tree, as `git status` knows it."""

    branch: str | None  # None: detached HEAD
    commit: str | None  # None: no commit yet
    upstream: str | None
    ahead: int
    behind: int
    staged: list[Change]
    unstaged: list[Change]
    untracked: list[str]
    conflicted: list[str]
    rebasing: bool  # a rebase stopped part way: HEAD is detached until it goes on
    in_progress: str | None  # a merge, cherry-pick or revert stopped part way (conflicts)
    clean: bool
    truncated: bool  # git's output passed the cap: the lists stop short


class FileStat(TypedDict):
    """A file a commit changed: lines added and deleted (None: binary), its old path if moved."""

    path: str
    added: int | None
    deleted: int | None
    original_path: NotRequired[str]


class Commit(TypedDict):
    """One commit of a log (`files`: what it changed, when asked for)."""

    hash: str
    parents: list[str]
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_date: str
    refs: list[str]
    subject: str
    body: str
    files: NotRequired[list[FileStat]]


class ReflogEntry(TypedDict):
    """One move of a ref, newest first: `selector` (HEAD@{2}) names the commit it was at."""

    selector: str
    commit: str
    action: str  # what moved it: "commit: fix", "reset: moving to HEAD~1", "checkout: ..."
    subject: str
    committer_date: str


def status(output: bytes, *, truncated: bool = False) -> Status:
    """Parse `git status --porcelain=v2 -z --branch` output (`truncated`: cut at the cap)."""
    result = Status(
        branch=None,
        commit=None,
        upstream=None,
        ahead=0,
        behind=0,
        staged=[],
        unstaged=[],
        untracked=[],
        conflicted=[],
        rebasing=False,
        in_progress=None,
        clean=True,
        truncated=truncated,
    )
    records = output.decode("utf-8", "replace").split("\x00")
    if truncated:
        records.pop()  # the record the cap cut
    index = 0
    while index < len(records):
        record = records[index]
        index += 1
        if record.startswith("# "):
            _header(result, record[2:])
        elif record.startswith(("1 ", "2 ")):
            fields = record.split(" ", 9 if record[0] == "2" else 8)
            original = None
            if record[0] == "2":  # the original path is the next record
                if index == len(records):
                    break  # the cap cut it off
                original = records[index]
                index += 1
            _entry(result, fields[1], fields[-1], original)
        elif record.startswith("u "):
            result["conflicted"].append(record.split(" ", 10)[-1])
        elif record.startswith("? "):
            result["untracked"].append(record[2:])
    result["clean"] = not (
        truncated
        or result["staged"]
        or result["unstaged"]
        or result["untracked"]
        or result["conflicted"]
    )
    return result


def _header(result: Status, header: str) -> None:
    key, _, value = header.partition(" ")
    if key == "branch.oid":
        result["commit"] = None if value == "(initial)" else value
    elif key == "branch.head":
        result["branch"] = None if value == "(detached)" else value
    elif key == "branch.upstream":
        result["upstream"] = value
    elif key == "branch.ab":
        ahead, behind = value.split(" ")
        result["ahead"], result["behind"] = int(ahead), -int(behind)


def _entry(result: Status, xy: str, path: str, original: str | None) -> None:
    if xy[0] != ".":
        result["staged"].append(Change(path=path, state=STATES[xy[0]], original_path=original))
    if xy[1] != ".":
        result["unstaged"].append(Change(path=path, state=STATES[xy[1]], original_path=original))


def log_format(token: str, fields: Sequence[str] = LOG_FIELDS) -> str:
    """Return the `git log --format` that `records` reads: `fields`, each record split by `token`.

    The token must be new for each command: a message or a name can hold any text, and one
    holding the separators it knew in advance added commits that do not exist. Each record
    begins with its separator and its last field ends with one, so that what `--numstat`
    writes after a commit is its own.
    """
    return f"%x1e{token}" + f"%x1f{token}".join(fields) + f"%x1f{token}"


def records(output: bytes, token: str, count: int) -> Iterator[list[str]]:
    """Yield the `count` fields (and what follows the last) of each `log_format` record.

    A record cut by the output cap is left out.
    """
    for record in output.decode("utf-8", "replace").split(f"\x1e{token}")[1:]:
        fields = record.split(f"\x1f{token}")
        if len(fields) == count + 1:
            yield fields


def commits(output: bytes, token: str, *, stat: bool = False) -> list[Commit]:
    """Parse `git log --format=log_format(token)` output (`stat`: with `--numstat -z`)."""
    found: list[Commit] = []
    for fields in records(output, token, len(LOG_FIELDS)):
        commit = Commit(
            hash=fields[0],
            parents=fields[1].split(),
            author_name=fields[2],
            author_email=fields[3],
            author_date=fields[4],
            committer_name=fields[5],
            committer_date=fields[6],
            refs=[ref for ref in fields[7].split(", ") if ref],
            subject=fields[8],
            body=fields[9].strip(),
        )
        if stat:
            commit["files"] = file_stats(fields[10])
        found.append(commit)
    return found


def reflog(output: bytes, token: str) -> list[ReflogEntry]:
    """Parse `git log -g --format=log_format(token, REFLOG_FIELDS)` output."""
    return [
        ReflogEntry(selector=f[0], commit=f[1], action=f[2], subject=f[3], committer_date=f[4])
        for f in records(output, token, len(REFLOG_FIELDS))
    ]


def file_stats(output: str) -> list[FileStat]:
    """Parse what `git log --numstat -z` writes after a commit.

    Each file is `added TAB deleted TAB path NUL` (`-` for a binary file's counts); a moved
    one has an empty path, then its old and new paths, each ended by NUL.
    """
    parts = iter(output.lstrip("\x00\n").split("\x00"))
    stats: list[FileStat] = []
    for entry in parts:
        if not entry:  # after the last file's NUL
            break
        added, _, rest = entry.partition("\t")
        deleted, _, path = rest.partition("\t")
        stat = FileStat(path=path, added=_count(added), deleted=_count(deleted))
        if not path:  # moved: its old path, then its new one
            stat["original_path"] = next(parts, "")
            stat["path"] = next(parts, "")
        stats.append(stat)
    return stats


def _count(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def grep_rows(output: str) -> list[tuple[str, int, str]]:
    """Return the (path, line, text) rows of `git grep -z -n` output.

    A row is `path NUL line NUL text LF`. The text holds no NUL nor line break (a line with
    NUL is binary, skipped), but a path may hold a line break: each text ends at the first
    line break after its line number, and the next path is what follows, up to its NUL.
    Split at every line break, a file named `junk<LF>src/auth.py` showed its matches as
    those of src/auth.py.
    """
    parts = output.split("\x00")
    rows: list[tuple[str, int, str]] = []
    path = parts[0]
    for line, rest in zip(parts[1::2], parts[2::2], strict=False):
        text, _, following = rest.partition("\n")
        if not line.isdecimal():
            break
        rows.append((path, int(line), text))
        path = following
    return rows
