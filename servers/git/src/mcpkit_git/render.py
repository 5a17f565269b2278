"""Readable text for the tools' structured results (the text block beside them)."""

from typing import Any

from .merging import BY_COMMAND


def status(value: Any) -> str:
    """Render a status like a short `git status`."""
    lines = ["Repository status:"]
    branch = value["branch"] or f"(detached at {(value['commit'] or '')[:12]})"
    lines.append(f"On branch {branch}")
    if value["rebasing"]:
        lines.append("A rebase is under way: git_rebase goes on ('continue', 'skip' or 'abort')")
    if value["in_progress"]:
        tool = BY_COMMAND[value["in_progress"]].tool
        lines.append(
            f"A {value['in_progress']} is under way: resolve the conflicts, git_add, then"
            f" git_commit concludes it ({tool} with action 'abort' gives it up)"
        )
    if value["upstream"]:
        lines.append(
            f"Upstream {value['upstream']}: ahead {value['ahead']}, behind {value['behind']}"
        )
    for title, key in (("Staged", "staged"), ("Not staged", "unstaged")):
        if value[key]:
            lines.append(f"{title}:")
            lines += [f"  {change['state']}: {change['path']}" for change in value[key]]
    for title, key in (("Untracked", "untracked"), ("Conflicted", "conflicted")):
        if value[key]:
            lines.append(f"{title}:")
            lines += [f"  {path}" for path in value[key]]
    if value["truncated"]:
        lines.append("(cut: git's output passed the server's cap, so the lists stop short)")
    elif value["clean"]:
        lines.append("nothing to commit, working tree clean")
    return "\n".join(lines)


def page(value: Any) -> str:
    """Render a page of text, with where the next page starts when cut."""
    text: str = value["text"]
    if value["truncated"]:
        text += f"\n[cut: continue with offset={value['next_offset']}]"
    return text or "(no output)"


def log(value: Any) -> str:
    """Render commits as short blocks."""
    blocks = [
        f"Commit: {c['hash']}\nAuthor: {c['author_name']} <{c['author_email']}>\n"
        f"Date: {c['author_date']}\nMessage: {c['subject']}"
        + (f"\n\n{c['body']}" if c["body"] else "")
        + "".join(f"\n  {_file_stat(f)}" for f in c.get("files", ()))
        for c in value["commits"]
    ]
    if value["next_skip"] is not None:
        blocks.append(f"[more: continue with skip={value['next_skip']}]")
    return "\n\n".join(blocks) or "(no commits)"


def _file_stat(stat: Any) -> str:
    """Render a file a commit changed: `+added -deleted path` (binary: `binary path`)."""
    counts = "binary" if stat["added"] is None else f"+{stat['added']} -{stat['deleted']}"
    moved = f"{stat['original_path']} -> " if "original_path" in stat else ""
    return f"{counts} {moved}{stat['path']}"


def reflog(value: Any) -> str:
    """Render reflog entries one a line: selector, short commit, what moved the ref."""
    lines = [f"{e['selector']} {e['commit'][:12]} {e['action']}" for e in value["entries"]]
    if value["next_skip"] is not None:
        lines.append(f"[more: continue with skip={value['next_skip']}]")
    return "\n".join(lines) or f"(no reflog entries for {value['ref']})"


def worktrees(value: Any) -> str:
    """Render work trees one a line: folder, commit, branch, as `git worktree list` does."""
    lines = [value["message"]] if value["message"] else []
    for tree in value["worktrees"]:
        where = f"[{tree['branch']}]" if tree["branch"] else "(detached HEAD)"
        flags = [flag for flag in ("main", "locked", "prunable") if tree[flag]]
        commit = (tree["commit"] or "")[:12]
        lines.append(" ".join([tree["path"], commit, where, *flags]))
    if value["truncated"]:
        lines.append("[cut: the first work trees only]")
    return "\n".join(lines)


def cleaned(value: Any) -> str:
    """Render what a clean deleted, or would delete, one name a line."""
    if not value["removed"] and not value["kept"]:
        return "Nothing untracked to delete"
    head = "Would delete" if value["dry_run"] else "Deleted"
    lines = [f"{head}:", *value["removed"]] if value["removed"] else []
    if value["kept"]:
        lines += ["Kept (a repository inside):", *value["kept"]]
    return "\n".join(lines)


def remotes(value: Any) -> str:
    """Render remotes as `git remote -v` does: a line per URL, fetch then push."""
    lines: list[str] = []
    for remote in value["remotes"]:
        if remote["problem"] is not None:
            lines.append(f"{remote['name']}\t({remote['problem']})")
        lines += [f"{remote['name']}\t{url} (fetch)" for url in remote["fetch_urls"]]
        lines += [f"{remote['name']}\t{url} (push)" for url in remote["push_urls"]]
    if value["truncated"]:
        lines.append("[cut: the first remotes by name only]")
    return "\n".join(lines) or "(no remotes)"


def branches(value: Any) -> str:
    """Render branch names, marking the current one."""
    lines = [f"{'*' if name == value['current'] else ' '} {name}" for name in value["branches"]]
    if value["truncated"]:
        lines.append("[cut: the first branches by name only; narrow with contains]")
    return "\n".join(lines)


def blame(value: Any) -> str:
    """Render blame lines as `commit (author) line: text`."""
    lines = [
        f"{line['commit'][:8]} ({line['author']}) {line['line']}: {line['text']}"
        for line in value["lines"]
    ]
    if value["truncated"]:
        lines.append("[cut: ask for fewer lines with start_line and end_line]")
    return "\n".join(lines)


def matches(value: Any) -> str:
    """Render grep matches as `path:line: text`."""
    lines = [f"{m['path']}:{m['line']}: {m['text']}" for m in value["matches"]]
    if value["truncated"]:
        lines.append("[more matches: raise max_results or narrow paths]")
    return "\n".join(lines) or "(no match)"


def files(value: Any) -> str:
    """Render file paths, one per line."""
    listed = "\n".join(value["files"]) or "(no files)"
    return (
        f"{listed}\n(more files follow: narrow paths or raise max_files)"
        if value["truncated"]
        else listed
    )


def merge_base(value: Any) -> str:
    """Render a merge base."""
    return value["merge_base"] or "(no common ancestor)"


def repositories(value: Any) -> str:
    """Render repository paths, one per line, and a last line if the search stopped early."""
    text = "\n".join(value["repositories"]) or "(no repository found)"
    if value["truncated"]:
        text += (
            "\n(the search stopped before looking everywhere: a repository not listed can"
            " still be used by its path)"
        )
    return text


def done(value: Any) -> str:
    """Render what a change did."""
    return str(value["message"])
