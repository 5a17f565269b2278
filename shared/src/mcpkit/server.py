"""`Server`: what a server offers, and the handlers of the methods that use it.

A server offers tools, resources, prompts, completions and watches. Declare once: each is one
async function and one decorator; its schema, validation, listing and the server's
capabilities derive from it. Registrations may change while clients are connected: they are
told through `notifications/*/list_changed`.
"""

from collections.abc import Callable, Coroutine, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from . import methods
from .caching import NO_CACHE, CacheHint
from .completions import CompleterFunction, RegisteredCompleter
from .context import Context, ListKind
from .errors import MethodNotFound, ResourceNotFound, ToolError
from .lifespan import Lifespan, provided_types
from .prompts import RegisteredPrompt
from .resources import RegisteredResource
from .signature import Signature
from .tools import RegisteredTool, TextRendering
from .types import Annotations, Icon, Implementation, Resource, ToolAnnotations
from .versions import has_completions
from .watches import Admission, RegisteredWatch, WatchFunction

F = TypeVar("F", bound=Callable[..., Coroutine[Any, Any, Any]])
Handler = Callable[[Context, dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]
ResourceLister = Callable[..., Coroutine[Any, Any, list[Resource]]]
ListChangedListener = Callable[[ListKind], None]


class Server:
    """An MCP server's offer: register with the decorators, run with `run()`.

    Raises:
        TypeError: (at construction) `lifespan` does not say what it provides (see
            `mcpkit.lifespan`); (at registration) a function cannot be served.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[Icon] | None = None,
        page_size: int = 100,
        cache: Mapping[str, CacheHint] | None = None,
        lifespan: Lifespan | None = None,
        errors: tuple[type[Exception], ...] = (),
    ) -> None:
        """Declare a server; see `mcpkit.lifespan` for `lifespan`.

        `errors`: the server's own exception types whose message is for the client, so
        that work modules need not import `mcpkit`. Raised in a tool, one becomes an
        `isError` result; in a resource read or a subscription, "resource not found"
        with its message; in a prompt or a completion, invalid params. `ToolError` is
        always one of them.
        """
        self.info = Implementation(
            name=name, version=version, title=title, website_url=website_url, icons=icons
        )
        self.instructions = instructions
        self.page_size = page_size
        self.cache = dict(cache or {})
        self.lifespan = lifespan
        self.provides = provided_types(lifespan) if lifespan is not None else ()
        """The types of the values the lifespan provides: handlers get them by annotation."""
        self.injectable = (Context, *self.provides)
        self.errors = (ToolError, *errors)
        self.tools: dict[str, RegisteredTool] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.completers: dict[tuple[str, str, str], RegisteredCompleter] = {}
        self.watches: list[RegisteredWatch] = []
        self.resource_lister: ResourceLister | None = None
        self.list_changed_listeners: list[ListChangedListener] = []
        self.handlers: dict[str, tuple[str, Handler]] = {
            method: (feature, partial(handle, self))
            for method, (feature, handle) in methods.HANDLERS.items()
        }

    # Registration -----------------------------------------------------------------------

    def tool(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        input_schema: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        text: TextRendering | None = None,
    ) -> Callable[[F], F]:
        """Register an async function as a tool (see `mcpkit.tools` for what it may return).

        Parameters become the input schema (a `Context` parameter is injected instead);
        the docstring becomes the description. `input_schema` replaces the derived schema
        in the listing only (arguments are still validated against the signature). `text`
        renders a structured result as the text block (default: the same JSON).
        """

        def register(fn: F) -> F:
            self.add_tool(
                RegisteredTool(
                    fn,
                    name=name,
                    title=title,
                    description=description,
                    annotations=annotations,
                    icons=icons,
                    input_schema=input_schema,
                    meta=meta,
                    text=text,
                    injectable=self.injectable,
                    errors=self.errors,
                )
            )
            return fn

        return register

    def add_tool(self, tool: RegisteredTool) -> None:
        """Add (or replace) a tool and tell connected clients."""
        self.tools[tool.name] = tool
        self.list_changed("tools")

    def remove_tool(self, name: str) -> None:
        """Remove a tool, if present, and tell connected clients."""
        if self.tools.pop(name, None) is not None:
            self.list_changed("tools")

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Annotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register an async function as the resource at `uri`.

        With `{var}` or `{+var}` variables (which must be the function's parameters), `uri`
        is a template.
        """

        def register(fn: F) -> F:
            self.add_resource(
                RegisteredResource(
                    fn,
                    uri,
                    name=name,
                    title=title,
                    description=description,
                    mime_type=mime_type,
                    size=size,
                    annotations=annotations,
                    icons=icons,
                    meta=meta,
                    injectable=self.injectable,
                )
            )
            return fn

        return register

    def list_resources(self, fn: ResourceLister) -> ResourceLister:
        """Register `async def fn(...) -> list[Resource]`: resources listed per client.

        It takes only what is injected by type (the request's `Context`, what the lifespan
        provides). Listed after the others, read through the template matching their URI,
        they may depend on the client's roots: a change of roots tells the client the list
        changed.

        Raises:
            TypeError: `fn` takes a parameter that would not be given.
        """
        what = f"Resource lister {fn.__name__!r}"
        signature = Signature(fn, what=what, injectable=self.injectable)
        if signature.parameters:
            raise TypeError(f"{what}: takes {sorted(signature.parameters)}, which nobody gives")

        async def list_for(ctx: Context) -> list[Resource]:
            return await fn(**signature.inject(ctx.get))

        self.resource_lister = list_for
        return fn

    def add_resource(self, resource: RegisteredResource) -> None:
        """Add (or replace) a resource or template and tell connected clients."""
        self.resources[resource.uri] = resource
        self.list_changed("resources")

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or template, if present, and tell connected clients."""
        if self.resources.pop(uri, None) is not None:
            self.list_changed("resources")

    def prompt(
        self,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register an async function as a prompt; its string parameters are the arguments."""

        def register(fn: F) -> F:
            prompt = RegisteredPrompt(
                fn,
                name=name,
                title=title,
                description=description,
                icons=icons,
                meta=meta,
                injectable=self.injectable,
            )
            self.add_prompt(prompt)
            return fn

        return register

    def add_prompt(self, prompt: RegisteredPrompt) -> None:
        """Add (or replace) a prompt and tell connected clients."""
        self.prompts[prompt.name] = prompt
        self.list_changed("prompts")

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt, if present, and tell connected clients."""
        if self.prompts.pop(name, None) is not None:
            self.list_changed("prompts")

    def complete(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[CompleterFunction], CompleterFunction]:
        """Register a completer for `argument` of a prompt or of a resource template.

        See `mcpkit.completions` for the parameters it may take.

        Raises:
            TypeError: not exactly one of `prompt` and `resource` is given, or the function
                takes a parameter a completer is not given.
        """
        if (prompt is None) == (resource is None):
            raise TypeError("complete() needs exactly one of prompt= and resource=")
        key = ("ref/prompt", prompt, argument) if prompt else ("ref/resource", resource, argument)

        def register(fn: CompleterFunction) -> CompleterFunction:
            what = f"Completer of {argument!r} of {key[1]!r}"
            completer = RegisteredCompleter(fn, what=what, injectable=self.injectable)
            self.completers[key] = completer  # pyright: ignore[reportArgumentType]
            return fn

        return register

    def watch(
        self, uri: str, *, admit: Admission | None = None
    ) -> Callable[[WatchFunction], WatchFunction]:
        """Register an async function that watches the resources matching `uri`.

        It runs while a client is subscribed to a matching URI, gets the template variables
        by name and a `Changed` by type (see there: subscribing waits for
        `changed.in_place()`), and is cancelled when the last subscriber leaves. A
        `ProtocolError` it raises before it is in place refuses the subscription with that
        error. One watch serves every subscriber: `admit`, awaited with the variables and
        the request's `Context` for each subscription, refuses a client by raising a
        `ProtocolError` (say, a file outside its roots). See `mcpkit.watches`.

        Raises:
            TypeError: a function takes parameters it would not be given.
        """

        def register(fn: WatchFunction) -> WatchFunction:
            self.watches.append(RegisteredWatch(uri, fn, admit=admit, provides=self.provides))
            return fn

        return register

    def find_watch(self, uri: str) -> tuple[RegisteredWatch, dict[str, str]] | None:
        """Return the watch of `uri` and its variables, or None if no watch serves it."""
        for watch in self.watches:
            variables = watch.template.match(uri)
            if variables is not None:
                return watch, variables
        return None

    async def admit(self, ctx: Context, uri: str) -> None:
        """Let the client of `ctx` subscribe to `uri`, or raise what its `admit` raises."""
        found = self.find_watch(uri)
        if found is not None:
            try:
                await found[0].admit_client(ctx, found[1])
            except self.errors as exc:
                raise ResourceNotFound(uri, str(exc)) from None

    def run(self, argv: Sequence[str] | None = None) -> None:
        """Serve from the command line (`argv`, default `sys.argv`): see `mcpkit.cli.main`."""
        from . import cli  # it imports this module

        cli.main(self, argv=argv)

    def list_changed(self, kind: ListKind) -> None:
        """Tell connected clients that the `kind` list changed (registering does it itself).

        For lists that change without a registration: resources a `list_resources`
        function lists from a database, say.
        """
        for listener in self.list_changed_listeners:
            listener(kind)

    # Capabilities and lookup ------------------------------------------------------------

    def offers(self, feature: str) -> bool:
        """Return whether anything is registered for `feature` ("tools", "completions", ...)."""
        registries: dict[str, Any] = {
            "tools": self.tools,
            "resources": self.resources,
            "prompts": self.prompts,
            "completions": self.completers,
        }
        return bool(registries[feature])

    def capabilities(self, version: str, *, notifies: bool = True) -> dict[str, Any]:
        """Return the server capabilities for a session of `version`: what is registered.

        A session that cannot be told of changes (`notifies=False`: stateless HTTP, with no
        stream outliving a request) is not offered list changes or subscriptions.
        """
        changes = {"listChanged": True} if notifies else {}
        capabilities: dict[str, Any] = {"logging": {}}
        if self.offers("tools"):
            capabilities["tools"] = dict(changes)
        if self.offers("resources"):
            capabilities["resources"] = {"subscribe": True, **changes} if notifies else {}
        if self.offers("prompts"):
            capabilities["prompts"] = dict(changes)
        if self.offers("completions") and has_completions(version):
            capabilities["completions"] = {}  # 2024-11-05 has completion but no capability
        return capabilities

    def cache_hint(self, method: str) -> CacheHint:
        """Return how cacheable the results of `method` are (`cache=` at construction)."""
        return self.cache.get(method, NO_CACHE)

    def handler(self, method: str) -> Handler:
        """Return the handler of `method`.

        Raises:
            MethodNotFound: no such method, or nothing is registered for its feature.
        """
        entry = self.handlers.get(method)
        if entry is None:
            raise MethodNotFound(f"Method not found: {method}")
        feature, handler = entry
        if not self.offers(feature):
            raise MethodNotFound(f"Method not found: {method} (this server has no {feature})")
        return handler

    def find_resource(self, uri: str) -> tuple[RegisteredResource, dict[str, str]]:
        """Return the resource serving `uri` and its variables: exact URIs before templates.

        Raises:
            ResourceNotFound: nothing serves `uri`.
        """
        exact = self.resources.get(uri)
        if exact is not None and not exact.is_template:
            return exact, {}
        for resource in self.resources.values():
            variables = resource.match(uri) if resource.is_template else None
            if variables is not None:
                return resource, variables
        raise ResourceNotFound(uri)
