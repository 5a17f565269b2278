"""What mcp-fs's tools share: their annotations, path arguments and file URIs."""

from typing import Annotated
from urllib.parse import quote

from mcpkit import Param, ToolAnnotations

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
CREATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
REPLACE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)

PathArg = Annotated[str, Param(description="Absolute, or relative to the first allowed directory")]
Excludes = Annotated[
    list[str],
    Param(description="Glob patterns of paths to leave out (e.g. node_modules, **/*.log)"),
]


def file_uri(path: str) -> str:
    """Return the `file://` URI of an absolute path.

    A name that is not UTF-8 holds its bytes as lone surrogates (Python's file names):
    they are written as the bytes they stand for (`%FF`), where encoding them failed.
    """
    return "file://" + quote(path, errors="surrogateescape")
