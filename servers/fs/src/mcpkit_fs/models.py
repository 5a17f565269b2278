"""The typed results of the tools: what `structuredContent` holds and `outputSchema` says.

Every model is built on first use, not at import: a host starts every server at launch.
"""

from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .text import Eol

EntryType = Literal["file", "directory", "symlink", "other"]


class _Model(BaseModel):
    model_config = ConfigDict(defer_build=True)


class TextRead(_Model):
    """Lines of a text file, and where to continue when there are more."""

    path: str
    content: str
    start_line: int | None = Field(
        description="1-based number of the first line (null: a tail of a file too large to count)"
    )
    end_line: int | None = Field(description="number of the last line returned")
    total_lines: int | None = Field(description="lines in the file, when it was read whole")
    truncated: bool = Field(description="true when lines after end_line were left out")
    next_offset: int | None = Field(description="the offset that continues the read")
    encoding: str
    eol: Eol
    size: int
    sha256: str | None = Field(description="of the whole file, when it was read whole")


class FileText(_Model):
    """One file of read_multiple_files: its content or why it could not be read."""

    path: str
    content: str | None = None
    truncated: bool = False
    error: str | None = None


class MultipleFiles(_Model):
    """The files of read_multiple_files, in the order asked."""

    files: list[FileText]


class Written(_Model):
    """What write_file did."""

    path: str
    mode: Literal["overwrite", "append", "create"]
    bytes_written: int
    created: bool
    sha256: str = Field(description="of the file now: pass as expected_sha256 to the next write")


class Edited(_Model):
    """What edit_file did (or would do, on a dry run)."""

    path: str
    diff: str = Field(description="unified diff of the change")
    replacements: int
    applied: bool = Field(description="false on a dry run")
    sha256: str = Field(description="of the file after the edit (or as it is, on a dry run)")


class Created(_Model):
    """What create_directory did."""

    path: str
    created: bool = Field(description="false when the directory already existed")


class Entry(_Model):
    """One entry of a directory listing."""

    name: str
    type: EntryType


class SizedEntry(Entry):
    """One entry of a directory listing, with its size (files only) and modification time."""

    size: int | None
    modified: str | None


EntryT = TypeVar("EntryT", bound=Entry)


class Page(_Model, Generic[EntryT]):
    """A page of a directory's entries."""

    path: str
    entries: list[EntryT]
    total_entries: int
    truncated: bool
    next_offset: int | None = Field(description="the offset of the next page")


class Listing(Page[Entry]):
    """A page of a directory's entries, by name."""


class SizedListing(Page[SizedEntry]):
    """A page of a directory's entries with sizes, and the total size of its files."""

    total_size: int


class TreeNode(_Model):
    """An entry of directory_tree; directories have children unless cut off."""

    name: str
    type: EntryType
    children: list["TreeNode"] | None = None
    truncated: bool = Field(default=False, description="children left out (depth or entries)")


class Tree(_Model):
    """directory_tree's result."""

    path: str
    tree: list[TreeNode]
    entries: int
    truncated: bool


class Moved(_Model):
    """What move_file or copy_file did."""

    source: str
    destination: str
    overwritten: bool


class Deleted(_Model):
    """What delete_path did."""

    path: str
    type: EntryType
    entries_removed: int


class Matches(_Model):
    """search_files' result: paths that match."""

    path: str
    matches: list[str]
    truncated: bool
    next_offset: int | None = Field(description="the offset of the next page of matches")


class ContentMatch(_Model):
    """One matching line of search_content, with its context."""

    path: str
    line: int
    column: int
    text: str
    before: list[str] = Field(default_factory=list[str])
    after: list[str] = Field(default_factory=list[str])


class ContentMatches(_Model):
    """search_content's result."""

    path: str
    matches: list[ContentMatch]
    files_searched: int
    truncated: bool
    next_offset: int | None = Field(description="the offset of the next page of matches")


class Comparison(_Model):
    """compare_files' result."""

    path_a: str
    path_b: str
    identical: bool
    diff: str


class FileInfo(_Model):
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


class AllowedDirectory(_Model):
    """One allowed directory."""

    path: str
    read_only: bool
    source: Literal["command line", "client roots"]


class AllowedDirectories(_Model):
    """list_allowed_directories' result."""

    directories: list[AllowedDirectory]
