"""The MCP wire types a server author builds: content, resources, annotations, messages.

Attributes are snake_case; on the wire they are camelCase. A field or type that only some
protocol versions define is marked with `Since(version)`; `mcpkit.shape.dump` leaves it out
of (or converts it for) older sessions, so handlers never think about versions.

They are plain dataclasses, type-checked rather than validated at run time: a server
builds them at import (annotations, icons) and on every call (content), and both must be cheap.
What the client sends is validated where it is parsed.
"""

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from .versions import V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25

Role = Literal["user", "assistant"]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Since(NamedTuple):
    """Marks a field as defined only from protocol `version` on."""

    version: str


class WireName(NamedTuple):
    """Gives a field a wire name other than its camelCase form."""

    name: str


class WireModel:
    """Base of the wire types.

    They are dataclasses without `==` and `repr`: a wire value is built, dumped and dropped,
    and each generated method is compiled at import, a start-up cost (9 ms for all of them).
    """

    __slots__ = ()

    since: ClassVar[str] = V2024_11_05
    """The first protocol version that defines this type."""

    def downgrade(self) -> "WireModel | None":
        """Return a stand-in for sessions older than `since`, or None to drop it."""
        return None


Meta = Annotated[dict[str, Any] | None, Since(V2025_06_18), WireName("_meta")]


@dataclass(kw_only=True, eq=False, repr=False)
class Annotations(WireModel):
    """Hints about who a piece of content is for and how much it matters."""

    audience: list[Role] | None = None
    priority: float | None = None  # 0 (least important) to 1 (most)
    last_modified: Annotated[str | None, Since(V2025_06_18)] = None


@dataclass(kw_only=True, eq=False, repr=False)
class Icon(WireModel):
    """An icon a client may show beside a tool, resource, prompt or the server."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


Icons = Annotated[list[Icon] | None, Since(V2025_11_25)]
Title = Annotated[str | None, Since(V2025_06_18)]


@dataclass(kw_only=True, eq=False, repr=False)
class TextContent(WireModel):
    """Text for the model or the user."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class ImageContent(WireModel):
    """An image, base64-encoded."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class AudioContent(WireModel):
    """Audio, base64-encoded."""

    since: ClassVar[str] = V2025_03_26
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None

    def downgrade(self) -> WireModel:
        """Describe the audio in text: 2024-11-05 has no audio content."""
        return TextContent(
            text=f"[{self.mime_type} audio omitted: the session's protocol has no audio]"
        )


@dataclass(kw_only=True, eq=False, repr=False)
class TextResourceContents(WireModel):
    """The text of a resource."""

    uri: str
    mime_type: str | None = None
    text: str
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class BlobResourceContents(WireModel):
    """The bytes of a resource, base64-encoded."""

    uri: str
    mime_type: str | None = None
    blob: str
    meta: Meta = None


ResourceContents = TextResourceContents | BlobResourceContents


@dataclass(kw_only=True, eq=False, repr=False)
class EmbeddedResource(WireModel):
    """A resource's contents inside a tool result or prompt message."""

    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class ResourceLink(WireModel):
    """A pointer to a resource the client may read."""

    since: ClassVar[str] = V2025_06_18
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: Title = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: Icons = None
    meta: Meta = None

    def downgrade(self) -> WireModel:
        """Name the resource in text: sessions before 2025-06-18 have no links."""
        return TextContent(text=f"Resource: {self.uri}")


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


@dataclass(kw_only=True, eq=False, repr=False)
class ToolAnnotations(WireModel):
    """Hints about a tool's behaviour. Unset fields take the spec's defaults."""

    since: ClassVar[str] = V2025_03_26
    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class ToolResult(WireModel):
    """A tool result with full control over every field."""

    content: list[ContentBlock] = field(default_factory=list[ContentBlock])
    structured_content: Annotated[dict[str, Any] | None, Since(V2025_06_18)] = None
    is_error: bool | None = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class Message(WireModel):
    """One message of a prompt."""

    role: Role
    content: ContentBlock


@dataclass(kw_only=True, eq=False, repr=False)
class SamplingMessage(WireModel):
    """One message of a sampling request."""

    role: Role
    content: TextContent | ImageContent | AudioContent


@dataclass(kw_only=True, eq=False, repr=False)
class ModelPreferences(WireModel):
    """What the server would like the client's model to favour when sampling."""

    hints: list[dict[str, str]] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class SamplingResult(WireModel):
    """The client's answer to `sampling/createMessage`."""

    role: Role
    content: TextContent | ImageContent | AudioContent
    model: str
    stop_reason: str | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class ElicitResult(WireModel):
    """The user's answer to `elicitation/create`."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str] | None] | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class Root(WireModel):
    """A directory or file the client says the server may work in."""

    uri: str
    name: str | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class Implementation(WireModel):
    """The name and version of a server (or client)."""

    name: str
    version: str
    title: Title = None
    description: Annotated[str | None, Since(V2025_11_25)] = None
    website_url: Annotated[str | None, Since(V2025_11_25)] = None
    icons: Icons = None


@dataclass(kw_only=True, eq=False, repr=False)
class Tool(WireModel):
    """A tool as listed by `tools/list`."""

    name: str
    title: Title = None
    description: str | None = None
    input_schema: dict[str, Any]
    output_schema: Annotated[dict[str, Any] | None, Since(V2025_06_18)] = None
    annotations: ToolAnnotations | None = None
    icons: Icons = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class Resource(WireModel):
    """A resource as listed by `resources/list`."""

    uri: str
    name: str
    title: Title = None
    description: str | None = None
    mime_type: str | None = None
    size: Annotated[int | None, Since(V2025_03_26)] = None
    annotations: Annotations | None = None
    icons: Icons = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class ResourceTemplate(WireModel):
    """A family of resources as listed by `resources/templates/list`."""

    uri_template: str
    name: str
    title: Title = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: Icons = None
    meta: Meta = None


@dataclass(kw_only=True, eq=False, repr=False)
class PromptArgument(WireModel):
    """One argument of a prompt (prompt arguments are strings)."""

    name: str
    title: Title = None
    description: str | None = None
    required: bool | None = None


@dataclass(kw_only=True, eq=False, repr=False)
class Prompt(WireModel):
    """A prompt as listed by `prompts/list`."""

    name: str
    title: Title = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: Icons = None
    meta: Meta = None
