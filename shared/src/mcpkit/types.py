"""The MCP wire types a server author builds: content, resources, annotations, messages.

Attributes are snake_case; on the wire they are camelCase. A field or type that only some
protocol versions define is marked with `Since(version)`; `mcpkit.shape.dump` leaves it out
of (or converts it for) older sessions, so handlers never think about versions.
"""

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .versions import V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25

Role = Literal["user", "assistant"]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


@dataclass(frozen=True)
class Since:
    """Marks a field as defined only from protocol `version` on."""

    version: str


class WireModel(BaseModel):
    """Base of the wire types: camelCase aliases, built lazily to keep start-up fast."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        defer_build=True,
        frozen=True,
    )

    since: ClassVar[str] = V2024_11_05
    """The first protocol version that defines this type."""

    def downgrade(self) -> "WireModel | None":
        """Return a stand-in for sessions older than `since`, or None to drop it."""
        return None


Meta = Annotated[dict[str, Any] | None, Field(alias="_meta"), Since(V2025_06_18)]


class Annotations(WireModel):
    """Hints about who a piece of content is for and how much it matters."""

    audience: list[Role] | None = None
    priority: Annotated[float, Field(ge=0, le=1)] | None = None
    last_modified: Annotated[str | None, Since(V2025_06_18)] = None


class Icon(WireModel):
    """An icon a client may show beside a tool, resource, prompt or the server."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


Icons = Annotated[list[Icon] | None, Since(V2025_11_25)]
Title = Annotated[str | None, Since(V2025_06_18)]


class TextContent(WireModel):
    """Text for the model or the user."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: Meta = None


class ImageContent(WireModel):
    """An image, base64-encoded."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


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


class TextResourceContents(WireModel):
    """The text of a resource."""

    uri: str
    mime_type: str | None = None
    text: str
    meta: Meta = None


class BlobResourceContents(WireModel):
    """The bytes of a resource, base64-encoded."""

    uri: str
    mime_type: str | None = None
    blob: str
    meta: Meta = None


ResourceContents = TextResourceContents | BlobResourceContents


class EmbeddedResource(WireModel):
    """A resource's contents inside a tool result or prompt message."""

    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: Annotations | None = None
    meta: Meta = None


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


class ToolAnnotations(WireModel):
    """Hints about a tool's behaviour. Unset fields take the spec's defaults."""

    since: ClassVar[str] = V2025_03_26
    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolResult(WireModel):
    """A tool result with full control over every field."""

    content: list[ContentBlock] = []
    structured_content: Annotated[dict[str, Any] | None, Since(V2025_06_18)] = None
    is_error: bool | None = None
    meta: Meta = None


class Message(WireModel):
    """One message of a prompt."""

    role: Role
    content: ContentBlock


class SamplingMessage(WireModel):
    """One message of a sampling request."""

    role: Role
    content: TextContent | ImageContent | AudioContent


class ModelPreferences(WireModel):
    """What the server would like the client's model to favour when sampling."""

    hints: list[dict[str, str]] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


class SamplingResult(WireModel):
    """The client's answer to `sampling/createMessage`."""

    model_config = ConfigDict(extra="allow")
    role: Role
    content: TextContent | ImageContent | AudioContent
    model: str
    stop_reason: str | None = None


class ElicitResult(WireModel):
    """The user's answer to `elicitation/create`."""

    model_config = ConfigDict(extra="allow")
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str] | None] | None = None


class Root(WireModel):
    """A directory or file the client says the server may work in."""

    model_config = ConfigDict(extra="allow")
    uri: str
    name: str | None = None


class Implementation(WireModel):
    """The name and version of a server (or client)."""

    name: str
    version: str
    title: Title = None
    description: Annotated[str | None, Since(V2025_11_25)] = None
    website_url: Annotated[str | None, Since(V2025_11_25)] = None
    icons: Icons = None


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


class PromptArgument(WireModel):
    """One argument of a prompt (prompt arguments are strings)."""

    name: str
    title: Title = None
    description: str | None = None
    required: bool | None = None


class Prompt(WireModel):
    """A prompt as listed by `prompts/list`."""

    name: str
    title: Title = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: Icons = None
    meta: Meta = None
