"""mcpkit: a thin Model Context Protocol core for servers.

Declare a server with `Server` and its decorators, run it with `mcpkit.cli`, test it with
`mcpkit.testing.connect`. Handlers receive a `Context`; they never see the transport.
"""

from .caching import CacheHint
from .completions import Completion
from .context import Context
from .errors import (
    ClientRequestError,
    InvalidParams,
    MCPError,
    ProtocolError,
    ResourceNotFound,
    ToolError,
)
from .jsonrpc import well_formed
from .server import Server
from .signature import Param
from .types import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    ElicitResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    Message,
    ModelPreferences,
    Resource,
    ResourceLink,
    Root,
    SamplingMessage,
    SamplingResult,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolResult,
)
from .watch import Changed

__all__ = (
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CacheHint",
    "Changed",
    "ClientRequestError",
    "Completion",
    "Context",
    "ElicitResult",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "InvalidParams",
    "MCPError",
    "Message",
    "ModelPreferences",
    "Param",
    "ProtocolError",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "Root",
    "SamplingMessage",
    "SamplingResult",
    "Server",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "well_formed",
)
