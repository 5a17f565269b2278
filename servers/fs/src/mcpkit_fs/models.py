"""The typed results of the tools: what `structuredContent` holds and `outputSchema` says.

Dataclasses, described with `Param`, not pydantic models: pydantic is then imported on the
first listing or call, not at start-up (a host starts every server at launch), and a result
of a thousand entries costs a thousand cheap objects, not a thousand validations.
"""

from dataclasses import dataclass, field
from typing import Annotated, Literal

from typing_extensions import TypedDict

from mcpkit import Param

from .text import Eol

EntryType = Literal["file", "directory", "symlink", "other"]
NextOffset = Annotated[int | None, Param(description="the offset of the next page")]
NextMatches = Annotated[int | None, Param(description="the offset of the next page of matches")]


@dataclass
class TextRead:
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
    truncated: Annotated[bool, Param(description="true when lines after end_line were left out")]
    next_offset: Annotated[int | None, Param(description="the offset that continues the read")]
    encoding: str
    eol: Eol
    size: int
    sha256: Annotated[str | None, Param(description="of the whole file, when it was read whole")]


@dataclass
class FileText:
    """One file of read_multiple_files: its content or why it could not be read."""

    path: str
    content: str | None = None
    truncated: bool = False
    error: str | None = None


@dataclass
class MultipleFiles:
    """The files of read_multiple_files, in the order asked."""

    files: list[FileText]


@dataclass
class Written:
    """What write_file did."""

    path: str
    mode: Literal["overwrite", "append", "create"]
    bytes_written: int
    created: bool
    sha256: Annotated[
        str, Param(description="of the file now: pass as expected_sha256 to the next write")
    ]


@dataclass
class Edited:
    """What edit_file did (or would do, on a dry run)."""

    path: str
    diff: Annotated[str, Param(description="unified diff of the change")]
    replacements: int
    applied: Annotated[bool, Param(description="false on a dry run")]
    sha256: Annotated[
        str, Param(description="of the file after the edit (or as it is, on a dry run)")
    ]


@dataclass
class Created:
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
    """A page of a directory's entries, by name."""

    entries: list[Entry]


class SizedListing(Page):
    """A page of a directory's entries with sizes, and the total size of its files."""

    entries: list[SizedEntry]
    total_size: int


@dataclass
class TreeNode:
    """An entry of directory_tree; directories have children unless cut off."""

    name: str
    type: EntryType
    children: list["TreeNode"] | None = None
    truncated: Annotated[bool, Param(description="children left out (depth or entries)")] = False


@dataclass
class Tree:
    """directory_tree's result."""

    path: str
    tree: list[TreeNode]
    entries: int
    truncated: bool


@dataclass
class Moved:
    """What move_file or copy_file did."""

    source: str
    destination: str
    overwritten: bool


@dataclass
class Deleted:
    """What delete_path did."""

    path: str
    type: EntryType
    entries_removed: int


@dataclass
class Matches:
    """search_files' result: paths that match."""

    path: str
    matches: list[str]
    truncated: bool
    next_offset: NextMatches


@dataclass(slots=True)
class ContentMatch:
    """One matching line of search_content, with its context."""

    path: str
    line: int
    column: int
    text: str
    before: list[str] = field(default_factory=list[str])
    after: list[str] = field(default_factory=list[str])


@dataclass
class ContentMatches:
    """search_content's result."""

    path: str
    matches: list[ContentMatch]
    files_searched: int
    truncated: bool
    next_offset: NextMatches


@dataclass
class Comparison:
    """compare_files' result."""

    path_a: str
    path_b: str
    identical: bool
    diff: str


@dataclass
class FileInfo:
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
    symlink_target: str | None = None
    mime_type: str | None = None
    sha256: str | None = None


@dataclass
class AllowedDirectory:
    """One allowed directory."""

    path: str
    read_only: bool
    source: Literal["command line", "client roots"]


@dataclass
class AllowedDirectories:
    """list_allowed_directories' result."""

    directories: list[AllowedDirectory]
