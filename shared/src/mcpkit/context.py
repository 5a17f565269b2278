"""The Context a handler receives: everything it may do besides returning a result.

Handlers never see a session or a transport, only this. The connection that carries the
request implements `Peer`; the Context adds the rules: progress only with a token and only
increasing, logs only at the client's level, requests to the client only when it declared
the capability.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Literal, Protocol, TypeVar

from . import answers
from .errors import ClientRequestError, InputRequired
from .jsonrpc import RequestId, as_object, is_request_id
from .shape import dump, dump_all, dump_form
from .types import ElicitResult, LogLevel, ModelPreferences, Root, SamplingMessage, SamplingResult
from .versions import V2025_03_26, form_fits, has_elicitation, has_url_elicitation

ListKind = Literal["tools", "resources", "prompts"]
T = TypeVar("T")

INPUT_KEY: ContextVar[str | None] = ContextVar("mcpkit_input_key", default=None)
"""(2026-07-28) The key the question being asked goes under in an InputRequiredResult."""

ROOTS_TIMEOUT = 30.0
SAMPLING_TIMEOUT = 300.0  # a model may take minutes
ELICITATION_TIMEOUT = 600.0  # a person may take longer


class Peer(Protocol):
    """What a Context needs from the connection its request came on."""

    @property
    def version(self) -> str:
        """The protocol version of the request."""
        ...

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's self-reported name and version."""
        ...

    @property
    def client_known(self) -> bool:
        """Whether the client declared its capabilities (see `Context.client_known`)."""
        ...

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared the capability at `path`."""
        ...

    def wants_log(self, level: LogLevel) -> bool:
        """Whether the client wants log messages at `level`."""
        ...

    def capability_error(self, *path: str, what: str) -> Exception:
        """The exception for a client capability that was not declared."""
        ...

    async def notify(self, method: str, params: dict[str, Any], related: RequestId | None) -> None:
        """Send a notification, related to request `related` if not None."""
        ...

    async def request(
        self, method: str, params: dict[str, Any], timeout: float, related: RequestId | None
    ) -> dict[str, Any]:
        """Send a request to the client and return its result.

        Raises:
            ClientRequestError: the client answered with an error or not in time.
        """
        ...

    async def roots(self, timeout: float, related: RequestId | None) -> list[Root]:
        """Return the client's roots (asking it only when they may have changed).

        The question travels with request `related`, as a sampling request does.

        Raises:
            ClientRequestError: the client answered with an error or not in time.
        """
        ...

    def close_stream(self, related: RequestId) -> None:
        """End the stream carrying request `related` early; the client resumes it."""
        ...

    async def notify_list_changed(self, kind: ListKind) -> None:
        """Tell every connected client that a list changed."""
        ...

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to `uri` that it changed."""
        ...


class Context:
    """The handler's view of its request: logging, progress, notifications, client requests.

    Asking the client (`roots`, `sample`, `elicit`, `elicit_url`, `ask_together`) works in
    both eras, but differently. In the handshake era the question is a request to the
    client and the call returns its answer. In the stateless era (2026-07-28) the call
    raises `InputRequired`, which ends this attempt with an `InputRequiredResult`; the
    client answers and retries, and the handler runs again *from the top*, where the same
    call now returns the answer. So a handler asks first, then changes things: whatever
    it did before the question is done again on the retry. `InputRequired` is a
    `BaseException`, like a cancellation: `except Exception` does not catch it, and code
    must let it pass. A question whose request is cancelled is withdrawn (the client is
    sent `notifications/cancelled`) and the cancellation propagates, as in anyio.
    """

    def __init__(
        self,
        peer: Peer,
        request_id: RequestId | None,
        meta: object,
        provided: Mapping[type, object] | None = None,
    ) -> None:
        """Serve request `request_id` of `peer`, whose `_meta` is `meta` (if an object).

        `provided`: what the server's lifespan provides, by type.
        """
        self._peer = peer
        self.request_id = request_id
        self._provided = provided or {}
        token = (as_object(meta) or {}).get("progressToken")
        self._progress_token = token if is_request_id(token) else None
        self._last_progress: float | None = None
        self._done = False

    @property
    def wants_progress(self) -> bool:
        """Whether a progress report would reach the client (a token, and no answer yet)."""
        return self._progress_token is not None and not self._done

    @property
    def protocol_version(self) -> str:
        """The protocol version of the request."""
        return self._peer.version

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's self-reported name and version (never a basis for security)."""
        return self._peer.client_info

    def get(self, kind: type[T]) -> T:
        """Return the value of type `kind` the server's lifespan provides (or this Context).

        Handlers get these by annotating a parameter with the type; this is for code that
        receives only the Context.

        Raises:
            LookupError: the lifespan provides no value of type `kind`.
        """
        if kind is Context:
            return self  # pyright: ignore[reportReturnType]
        try:
            return self._provided[kind]  # pyright: ignore[reportReturnType]
        except KeyError:
            raise LookupError(f"The server's lifespan provides no {kind.__name__}") from None

    def finish(self) -> None:
        """Mark the request answered: from now on, progress is no longer sent."""
        self._done = True

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client, if it wants messages at `level`."""
        if not self._peer.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._peer.notify("notifications/message", params, self.request_id)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress, if the client asked for it (with a progress token).

        Never raises at a handler: without a token, after the answer, or when `progress`
        is not greater than the last value reported (the spec says progress MUST
        increase), the report is dropped quietly.
        """
        if not self.wants_progress:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self._progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.protocol_version >= V2025_03_26:
            params["message"] = message
        await self._peer.notify("notifications/progress", params, self.request_id)

    def close_sse_stream(self) -> None:
        """Over Streamable HTTP, end this request's SSE stream now; nothing is lost.

        The client reconnects with `Last-Event-ID` after the `retry` interval and receives
        what was sent meanwhile (SEP-1699 polling): a long call then holds no connection open.
        Over stdio, there is no such stream and this does nothing.
        """
        if self.request_id is not None:
            self._peer.close_stream(self.request_id)

    async def notify_list_changed(self, kind: ListKind) -> None:
        """Tell connected clients that the list of tools, resources or prompts changed."""
        await self._peer.notify_list_changed(kind)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to `uri` that it changed."""
        await self._peer.notify_resource_updated(uri)

    async def roots(self, *, timeout: float = ROOTS_TIMEOUT) -> list[Root]:
        """Ask the client for its roots (a question: see the class docstring).

        Raises:
            InputRequired: (2026-07-28) asked, not yet answered: the retry runs the handler
                again from the top. Let it pass.
            ClientRequestError: the client has no roots capability, fails or times out.
        """
        self._require("roots", what="roots")
        return await self._peer.roots(timeout, self.request_id)

    async def sample(
        self,
        messages: Sequence[SamplingMessage],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: ModelPreferences | None = None,
        timeout: float = SAMPLING_TIMEOUT,
    ) -> SamplingResult:
        """Ask the client's model for a completion (a question: see the class docstring).

        Raises:
            InputRequired: (2026-07-28) asked, not yet answered: the retry runs the handler
                again from the top. Let it pass.
            ClientRequestError: the client has no sampling capability, fails or times out.
        """
        self._require("sampling", what="sampling")
        version = self.protocol_version
        params: dict[str, Any] = {
            "messages": dump_all(list(messages), version),
            "maxTokens": max_tokens,
        }
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if stop_sequences is not None:
            params["stopSequences"] = list(stop_sequences)
        if model_preferences is not None:
            params["modelPreferences"] = dump(model_preferences, version)
        result = await self._peer.request(
            "sampling/createMessage", params, timeout, self.request_id
        )
        return answers.sampling_result(result)

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        timeout: float = ELICITATION_TIMEOUT,
    ) -> ElicitResult:
        """Ask the user to fill in a form (a flat object schema of primitive fields).

        A question: see the class docstring. Fields the session's version cannot express
        (a `default` before 2025-11-25, say) are left out of what the client is sent.

        Raises:
            InputRequired: (2026-07-28) asked, not yet answered: the retry runs the handler
                again from the top. Let it pass.
            ClientRequestError: the client cannot show forms, fails, times out, or answers
                with content that does not fit the form.
        """
        if not has_elicitation(self.protocol_version):
            raise ClientRequestError(f"Protocol {self.protocol_version} has no elicitation")
        if not form_fits(self.protocol_version, requested_schema):
            raise ClientRequestError(
                f"This form uses fields protocol {self.protocol_version} cannot express"
                " (multi-select or titled choices need 2025-11-25)"
            )
        self._require("elicitation", what="elicitation")
        # `elicitation: {}` means forms; a client listing modes must list "form".
        supports = self._peer.client_supports
        if supports("elicitation", "url") and not supports("elicitation", "form"):
            raise ClientRequestError("The client accepts only URL elicitation, not forms")
        form = dump_form(requested_schema, self.protocol_version)
        params = {"message": message, "requestedSchema": form}
        if has_url_elicitation(self.protocol_version):
            params["mode"] = "form"
        result = await self._peer.request("elicitation/create", params, timeout, self.request_id)
        return answers.form_answer(result, requested_schema)

    async def elicit_url(
        self, message: str, url: str, elicitation_id: str, *, timeout: float = ELICITATION_TIMEOUT
    ) -> ElicitResult:
        """Ask the user to visit `url` (for what must not pass through the client).

        A question: see the class docstring.

        Raises:
            InputRequired: (2026-07-28) asked, not yet answered: the retry runs the handler
                again from the top. Let it pass.
            ClientRequestError: the client does not support URL elicitation, fails or
                times out.
        """
        if not has_url_elicitation(self.protocol_version):
            raise ClientRequestError(f"Protocol {self.protocol_version} has no URL elicitation")
        self._require("elicitation", "url", what="URL elicitation")
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        result = await self._peer.request("elicitation/create", params, timeout, self.request_id)
        return answers.elicit_result(result)

    @property
    def client_known(self) -> bool:
        """Whether the client declared its capabilities, so `client_supports` can tell.

        False on a stateless HTTP server for handshake-era requests: each POST arrives
        without its client's handshake, so no capability shows, and nothing can be asked.
        """
        return self._peer.client_known

    def client_supports(self, *path: str) -> bool:
        """Whether the client declared the capability at `path`, e.g. `("sampling",)`."""
        return self._peer.client_supports(*path)

    async def ask_together(
        self, questions: Mapping[str, Callable[[], Awaitable[T]]]
    ) -> dict[str, T]:
        """Ask the client several things at once; return each answer under its question's key.

        Each question is a call such as `lambda: ctx.elicit(...)`. In the stateless era one
        InputRequiredResult carries every unanswered one, keyed as `questions` names them;
        in the handshake era they are asked in turn.

        Raises:
            InputRequired: (2026-07-28) some are unanswered: the client answers and retries.
            ClientRequestError: the client lacks a capability, fails or times out.
        """
        answered: dict[str, T] = {}
        unanswered: dict[str, dict[str, Any]] = {}
        state: dict[str, Any] = {}
        for key, ask in questions.items():
            token = INPUT_KEY.set(key)
            try:
                answered[key] = await ask()
            except InputRequired as needed:
                unanswered.update(needed.requests)
                state = needed.answers
            finally:
                INPUT_KEY.reset(token)
        if unanswered:
            raise InputRequired(unanswered, state)
        return answered

    def _require(self, *path: str, what: str) -> None:
        if not self._peer.client_supports(*path):
            raise self._peer.capability_error(*path, what=what)
