"""Resources: a registered function per URI or URI template, and what a read returns.

A URI without variables is a resource (listed by `resources/list`); one with `{var}` or
`{+var}` is a template (listed by `resources/templates/list`) whose variables are the
function's parameters. The function returns `str` (text), `bytes` (a blob), or a list of
`TextResourceContents` / `BlobResourceContents` for full control.
"""

import base64
import inspect
from collections.abc import Callable, Collection, Coroutine
from typing import Any

from .context import Context
from .errors import InvalidParams
from .jsonrpc import as_list
from .signature import Signature
from .types import (
    Annotations,
    BlobResourceContents,
    Icon,
    Resource,
    ResourceContents,
    ResourceTemplate,
    TextResourceContents,
)
from .uritemplate import UriTemplate

ResourceFunction = Callable[..., Coroutine[Any, Any, Any]]


class RegisteredResource:
    """A resource or resource template with its function.

    Raises:
        TypeError: the template's variables are not exactly the function's parameters
            (besides those injected: see `Signature`).
    """

    def __init__(
        self,
        fn: ResourceFunction,
        uri: str,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
        size: int | None,
        annotations: Annotations | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        injectable: Collection[type] = (Context,),
    ) -> None:
        self.fn = fn
        self.uri = uri
        self.template = UriTemplate(uri)
        self.signature = Signature(fn, what=f"Resource {uri!r}", injectable=injectable)
        if set(self.template.variables) != set(self.signature.parameters):
            raise TypeError(
                f"Resource {uri!r}: the function's parameters {sorted(self.signature.parameters)}"
                f" must be the template's variables {sorted(self.template.variables)}"
            )
        self.is_template = bool(self.template.variables)
        self.name = name or fn.__name__
        self.title = title
        self.description = description or inspect.getdoc(fn)
        self.mime_type = mime_type
        self.size = size
        self.annotations = annotations
        self.icons = icons
        self.meta = meta

    def listing(self) -> Resource | ResourceTemplate:
        """The entry for `resources/list`, or for `resources/templates/list` if a template."""
        common: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mime_type": self.mime_type,
            "annotations": self.annotations,
            "icons": self.icons,
            "meta": self.meta,
        }
        if self.is_template:
            return ResourceTemplate(uri_template=self.uri, **common)
        return Resource(uri=self.uri, size=self.size, **common)

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the template variables if this resource serves `uri`, else None."""
        return self.template.match(uri)

    async def read(
        self, context: Context, uri: str, variables: dict[str, str]
    ) -> list[ResourceContents]:
        """Call the function and return the contents of `uri`.

        Raises:
            InvalidParams: the variables do not validate against the parameters.
            TypeError: the function returned something other than str, bytes or contents.
        """
        try:
            kwargs = self.signature.bind(variables, context)
        except ValueError as exc:
            raise InvalidParams(f"Invalid resource URI {uri}: {exc}") from None
        value = await self.fn(**kwargs)
        if isinstance(value, str):
            return [TextResourceContents(uri=uri, mime_type=self.mime_type, text=value)]
        if isinstance(value, bytes):
            blob = base64.b64encode(value).decode()
            return [BlobResourceContents(uri=uri, mime_type=self.mime_type, blob=blob)]
        items = as_list(value)
        if items is not None and all(isinstance(item, ResourceContents) for item in items):
            return items
        raise TypeError(f"Resource {self.uri} returned {type(value).__name__}, not str or bytes")
