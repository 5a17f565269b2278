"""How results read as text: the block a model sees when its host ignores `structuredContent`.

Listings, searches, reads and changes read better as lines than as JSON, and the lines are
the reference server's (`[FILE] name`, one path per line, the file's text, `key: value`, a
diff, a sentence saying what was done) or grep's for content search, so prompts written for
them keep working. Every rendering of a page ends with where to continue. directory_tree
keeps JSON, as the reference's does.
"""

from typing import Literal

from .models import (
    AllowedDirectories,
    Comparison,
    ContentMatches,
    Copied,
    Created,
    Deleted,
    Edited,
    FileInfo,
    Listing,
    Matches,
    Moved,
    MultipleFiles,
    SizedListing,
    TextRead,
    Written,
)
from .text import OTHER_BREAKS, one_line
from .walk import MAX_WALK_DEPTH

MAX_PADDED_NAME = 40  # names up to this long are padded so that sizes line up

_MARKS = {"file": "[FILE] ", "directory": "[DIR] ", "symlink": "[LINK] ", "other": "[OTHER] "}
_LISTING_MARKS: tuple[tuple[Literal["directories", "files", "symlinks", "other"], str], ...] = (
    ("directories", _MARKS["directory"]),
    ("files", _MARKS["file"]),
    ("symlinks", _MARKS["symlink"]),
    ("other", _MARKS["other"]),
)


def listing(result: Listing) -> str:
    """`[DIR] name` lines, then `[FILE] name` and the rest, then the continuation if any."""
    lines = [mark + name for key, mark in _LISTING_MARKS for name in result[key]]
    if result["next_offset"] is not None:
        shown = f"{len(lines)} of {result['total_entries']} entries"
        lines.append(_next_page(shown, result["next_offset"]))
    return one_per_line(lines) if lines else f"{result['path']} is empty"


def sized_listing(result: SizedListing) -> str:
    """Lines with each file's size, the totals, then the continuation."""
    entries = result["entries"]
    # Sizes line up for usual names; one long name must not pad every other line to it.
    width = min(MAX_PADDED_NAME, max((len(entry["name"]) for entry in entries), default=0))
    lines = [
        f"{_MARKS[entry['type']]}{entry['name']:<{width}}  {_size(entry['size'])}"
        for entry in entries
    ]
    lines.append(f"Total: {result['total_entries']} entries, {_size(result['total_size'])}")
    if result["next_offset"] is not None:
        shown = f"{len(entries)} of {result['total_entries']} entries"
        lines.append(_next_page(shown, result["next_offset"]))
    return one_per_line(lines)


def matches(result: Matches) -> str:
    """One matching path per line, or that none matched."""
    lines = list(result["matches"]) or [f"No matches below {result['path']}"]
    if result["next_offset"] is not None:
        lines.append(_next_page("more matches", result["next_offset"]))
    if result["too_deep"] is not None:
        lines.append(_too_deep(result["too_deep"]))
    return one_per_line(lines)


def content_matches(result: ContentMatches) -> str:
    """Lines as `grep -n` writes them: `path:line:text`, context `path-line-text`, `--` between.

    As in grep, matches whose context lines touch or overlap read as one group, each line
    once: a line that matches is shown as a match even where it is another's context.
    """
    matches = result["matches"]
    separated = any(match["before"] or match["after"] for match in matches)
    out: list[str] = []
    group: str | None = None  # the path of the group being written
    last = 0  # the number of its last line written
    for match in matches:
        path, number, before, after = match["path"], match["line"], match["before"], match["after"]
        path = one_line(path)
        first = number - len(before)
        if path != group or first > last + 1:
            if out and separated:
                out.append("--")
            group, last = path, first - 1
        elif number <= last:  # written as the context of the match before: now a match
            lines_after = last - number  # written after it: it is that far from the end
            out[len(out) - 1 - lines_after] = f"{path}:{number}:{match['text']}"
        out += [f"{path}-{first + i}-{text}" for i, text in enumerate(before) if first + i > last]
        if number > last:
            out.append(f"{path}:{number}:{match['text']}")
        out += [f"{path}-{n}-{text}" for n, text in enumerate(after, number + 1) if n > last]
        last = max(last, number + len(after))
    if not out:
        out.append(f"No matches in {result['path']} ({result['files_searched']} files searched)")
    if result["next_offset"] is not None:
        out.append(_next_page("more matches", result["next_offset"]))
    if result["too_deep"] is not None:
        out.append(one_line(_too_deep(result["too_deep"])))
    return "\n".join(out)


def multiple_files(result: MultipleFiles) -> str:
    """Each file as `path:` and its text, or `path: Error - why`, split by `---` lines."""
    parts: list[str] = []
    for file in result["files"]:
        if file["content"] is None:
            parts.append(one_line(f"{file['path']}: Error - {file['error']}"))
        else:
            cut = "\n[cut short: read_text_file with offset reads on]" if file["truncated"] else ""
            parts.append(f"{one_line(file['path'])}:\n{file['content']}{cut}")
    return "\n---\n".join(parts)


def text_read(result: TextRead) -> str:
    """The text itself, then whether a line was cut and where to continue."""
    notes: list[str] = []
    if result["line_cut"]:
        line = "The line" if result["start_line"] is None else f"Line {result['start_line']}"
        notes.append(
            f"[{line} is longer than max_bytes and is shown only in part:"
            " a larger max_bytes reads it whole]"
        )
    total = "" if result["total_lines"] is None else f" of {result['total_lines']}"
    if result["next_offset"] is not None:
        notes.append(_next_page(f"up to line {result['end_line']}{total}", result["next_offset"]))
    elif result["truncated"] and not result["line_cut"]:  # a tail that lost its first lines
        start = "" if result["start_line"] is None else f"from line {result['start_line']}{total}: "
        notes.append(f"[{start}earlier lines did not fit in max_bytes]")
    return "\n".join([result["content"], *notes]) if notes else result["content"]


def file_info(result: FileInfo) -> str:
    """`key: value` lines (booleans as JSON writes them), the fields without a value left out."""
    return "\n".join(
        f"{key}: {str(value).lower() if isinstance(value, bool) else one_line(str(value))}"
        for key, value in result.items()
        if value is not None
    )


def allowed_directories(result: AllowedDirectories) -> str:
    """The directories, one per line, marked when read-only or from the client's roots."""
    lines = ["Allowed directories:"]
    for directory in result["directories"]:
        marks = ["read-only"] if directory["read_only"] else []
        if directory["source"] == "client roots":
            marks.append("from the client's roots")
        lines.append(one_line(directory["path"]) + (f" ({', '.join(marks)})" if marks else ""))
    return "\n".join(lines)


def comparison(result: Comparison) -> str:
    """The unified diff, or that the files are identical."""
    both = f"{one_line(result['path_a'])} and {one_line(result['path_b'])}"
    if result["identical"]:
        return f"{both} are identical"
    if result["binary"]:
        return f"{both} differ (not both text: compared byte for byte)"
    if not result["diff"]:
        stored = "line endings, byte order mark or encoding"
        return f"{both} hold the same lines, stored differently: {stored}"
    return result["diff"]


def written(result: Written) -> str:
    """What write_file did, and the hash to pass as expected_sha256 next time."""
    verb = "Appended" if result["mode"] == "append" else "Wrote"
    made = " (new file)" if result["created"] else ""
    return (
        f"{verb} {result['bytes_written']} bytes to {one_line(result['path'])}{made}\n"
        f"sha256: {result['sha256']}"
    )


def edited(result: Edited) -> str:
    """The diff of the edit, saying whether it was applied (not on a dry run)."""
    done = "Applied" if result["applied"] else "Dry run, nothing written:"
    count = result["replacements"]
    head = f"{done} {count} replacement{'s' if count != 1 else ''} in {one_line(result['path'])}"
    return f"{head}\n{result['diff']}\nsha256: {result['sha256']}"


def created(result: Created) -> str:
    """That the directory was created, or already existed."""
    if result["created"]:
        return f"Successfully created directory {one_line(result['path'])}"
    return f"{one_line(result['path'])} already existed"


def moved(result: Moved) -> str:
    """That the source was moved, and whether it replaced something."""
    return _transfer("moved", result)


def copied(result: Copied) -> str:
    """That the source was copied, whether it replaced something, and what was left out."""
    count = result["left_out"]
    if not count:
        return _transfer("copied", result)
    entries = f"{count} FIFO, socket, device or outward link entr{'ies' if count != 1 else 'y'}"
    return f"{_transfer('copied', result)}, except {entries}, which cannot be copied"


def deleted(result: Deleted) -> str:
    """What delete_path removed."""
    count = result["entries_removed"]
    entries = f"{count} entr{'ies' if count != 1 else 'y'}"
    return f"Deleted {result['type']} {one_line(result['path'])} ({entries})"


def _transfer(verb: str, result: Moved) -> str:
    replaced = ", replacing what was there" if result["overwritten"] else ""
    source, destination = one_line(result["source"]), one_line(result["destination"])
    return f"Successfully {verb} {source} to {destination}{replaced}"


def one_per_line(items: list[str]) -> str:
    """Join `items` one per line, with the line breaks inside them escaped (`one_line`).

    The joined text is checked first, with string searches: few names hold a break, and
    a check of each would cost a 1,000-entry listing 0.1 ms.
    """
    text = "\n".join(items)
    if text.count("\n") == len(items) - 1 and not any(c in text for c in OTHER_BREAKS):
        return text
    return "\n".join(map(one_line, items))


def _next_page(what: str, next_offset: int) -> str:
    """The last line of a page that is not the last: what it holds, and where to go on."""
    return f"[{what}: continue with offset={next_offset}]"


def _too_deep(directory: str) -> str:
    """The last line of a search that met directories too deep to walk into."""
    return (
        f"[not searched: the directories over {MAX_WALK_DEPTH} levels down, the first being"
        f" {directory}: search from it to go on]"
    )


def _size(size: int | None) -> str:
    """A byte count as people read it: 912 B, 4.2 KiB, 1.5 MiB; blank for no size."""
    if size is None:
        return ""
    if size < 1024:
        return f"{size} B"
    amount = size / 1024
    for unit in ("KiB", "MiB", "GiB"):
        if amount < 1024:
            return f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} TiB"
