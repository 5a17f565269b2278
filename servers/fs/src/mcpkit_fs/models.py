"""The typed results of the tools: what `structuredContent` holds and `outputSchema` says.

TypedDicts, described with `Param`, not pydantic models or dataclasses: a TypedDict costs a
tenth of a dataclass to define, which counts at start-up (a host starts every server at
launch); a result of a thousand entries is a thousand plain dicts, cheap to build; and a
result made only of JSON types is sent as it is, without a copy or a serialization pass
(see `mcpkit.tools`). Fields are all required, so every key is always present.
"""

from typing import Annotated, Literal

from typing_extensions import TypedDict

from mcpkit import Param

from .text import Eol

EntryType = Literal["file", "directory", "symlink", "other"]
NextOffset = Annotated[int | None, Param(description="the offset of the next page")]
NextMatches = Annotated[int | None, Param(description="the offset of the next page of matches")]
TooDeep = Annotated[
    str | None,
    Param(description="the first directory too deep to walk into (100 levels): search from it"),
]


class TextRead(TypedDict):
    """Lines of a text file, and where to continue when there are more."""

    path: str
    content: str
    start_line: Annotated[
        int | None,
        Param(
            description="1-based number of the first line"
            " (null: a tail of a file too large to count)"
        ),
    ]
    end_line: Annotated[int | None, Param(description="number of the last line returned")]
    total_lines: Annotated[
        int | None, Param(description="lines in the file, when it was read whole")
    ]
    truncated: Annotated[
        bool,
        Param(
            description="true when lines after end_line (before start_line, for a tail) were"
            " left out, or a line was cut"
        ),
    ]
    line_cut: Annotated[
        bool,
        Param(
            description="true when the one line shown is longer than max_bytes and only its"
            " start (its end, for a tail) is shown: a larger max_bytes reads it whole"
        ),
    ]
    next_offset: Annotated[int | None, Param(description="the offset that continues the read")]
    encoding: str
    eol: Eol
    size: int
    sha256: Annotated[str | None, Param(description="of the whole file, when it was read whole")]


class FileText(TypedDict):
    """One file of read_multiple_files: its content or why it could not be read."""

    path: str
    content: str | None
    truncated: bool
    error: str | None


class MultipleFiles(TypedDict):
    """The files of read_multiple_files, in the order asked."""

    files: list[FileText]


class Written(TypedDict):
    """What write_file did."""

    path: str
    mode: Literal["overwrite", "append", "create"]
    bytes_written: int
    created: bool
    sha256: Annotated[
        str, Param(description="of the file now: pass as expected_sha256 to the next write")
    ]


class Edited(TypedDict):
    """What edit_file did (or would do, on a dry run)."""

    path: str
    diff: Annotated[str, Param(description="unified diff of the change")]
    replacements: int
    applied: Annotated[bool, Param(description="false on a dry run")]
    sha256: Annotated[
        str, Param(description="of the file after the edit (or as it is, on a dry run)")
    ]


class Created(TypedDict):
    """What create_directory did."""

    path: str
    created: Annotated[bool, Param(description="false when the directory already existed")]


class Entry(TypedDict):
    """One entry of a directory listing."""

    name: str
    type: EntryType


class SizedEntry(Entry):
    """One entry of a directory listing, with its size (files only) and modification time."""

    size: int | None
    modified: str | None


class Page(TypedDict):
    """What a listing says of its page: the directory, its size, where the next page starts."""

    path: str
    total_entries: int
    truncated: bool
    next_offset: NextOffset


class Listing(Page):
    """A page of a directory's names: directories first, then files, links and others.

    Each kind is sorted by name. A page is a stretch of that order: `offset` and
    `total_entries` count the names of every kind.
    """

    directories: list[str]
    files: list[str]
    symlinks: list[str]
    other: Annotated[list[str], Param(description="devices, FIFOs and sockets")]


class SizedListing(Page):
    """A page of a directory's entries with sizes, and the total size of its files."""

    entries: list[SizedEntry]
    total_size: int


class TreeNode(TypedDict):
    """An entry of directory_tree; directories have children unless cut off."""

    name: str
    type: EntryType
    children: list["TreeNode"] | None
    truncated: Annotated[
        bool,
        Param(description="children left out (depth or entries), or it could not be read"),
    ]


class Tree(TypedDict):
    """directory_tree's result."""

    path: str
    tree: list[TreeNode]
    entries: int
    truncated: bool


class Moved(TypedDict):
    """What move_file did."""

    source: str
    destination: str
    overwritten: bool


class Copied(Moved):
    """What copy_file did."""

    left_out: int  # FIFOs, sockets, devices and links leading outside, not copied


class Deleted(TypedDict):
    """What delete_path did."""

    path: str
    type: EntryType
    entries_removed: int


class Matches(TypedDict):
    """search_files' result: paths that match."""

    path: str
    matches: list[str]
    truncated: bool
    next_offset: NextMatches
    too_deep: TooDeep


class ContentMatch(TypedDict):
    """One matching line of search_content, with its context."""

    path: str
    line: int
    column: int
    text: str
    before: list[str]
    after: list[str]


class ContentMatches(TypedDict):
    """search_content's result."""

    path: str
    matches: list[ContentMatch]
    files_searched: int
    truncated: bool
    next_offset: NextMatches
    too_deep: TooDeep


class Comparison(TypedDict):
    """compare_files' result."""

    path_a: str
    path_b: str
    identical: bool
    binary: Annotated[bool, Param(description="either file is not text: no diff, only identical")]
    diff: str


class FileInfo(TypedDict):
    """get_file_info's result (the reference's fields, then ours)."""

    path: str
    size: int
    created: str | None
    modified: str
    accessed: str
    isDirectory: bool  # the reference's spelling
    isFile: bool
    permissions: str
    type: EntryType
    symlink_target: str | None
    mime_type: str | None
    sha256: str | None


class AllowedDirectory(TypedDict):
    """One allowed directory."""

    path: str
    read_only: bool
    source: Literal["command line", "client roots"]


class AllowedDirectories(TypedDict):
    """list_allowed_directories' result."""

    directories: list[AllowedDirectory]
