"""The input-required (MRTR) fixtures of the conformance suite 0.2 (SEP-2322, 2026-07-28).

Each tool asks the client through `ctx.ask_together`, under the keys the suite expects; in
the handshake era the same tools ask the client directly, one question after another.
"""

from typing import Any

from mcpkit import Context, Server, TextContent
from mcpkit.types import ElicitResult, Root, SamplingMessage, SamplingResult

from .hints import READ_ONLY
from .schemas import single_field_form


def register_input_tools(app: Server) -> None:
    """Register the suite's `test_input_required_result_*` tools and prompt."""

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Ask the user's name (key `user_name`), then greet them."""
        return f"Hello, {await _ask_name(ctx, 'user_name', 'What is your name?')}!"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Ask the user's name; a retry whose requestState was altered is refused."""
        return f"Hello, {await _ask_name(ctx, 'user_name', 'What is your name?')}!"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Ask the client's model for the capital of France (key `capital_question`)."""
        answers = await ctx.ask_together(
            {"capital_question": lambda: _sample(ctx, "What is the capital of France?", 100)}
        )
        return f"The model said: {_text(answers['capital_question'])}"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Ask the client's roots (key `client_roots`) and list them."""
        answers = await ctx.ask_together({"client_roots": ctx.roots})
        return f"Roots: {', '.join(root.uri for root in answers['client_roots']) or 'none'}"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Ask for a confirmation (key `confirm`); the retry must echo the requestState."""
        answers = await ctx.ask_together(
            {"confirm": lambda: ctx.elicit("Please confirm", single_field_form("ok", "boolean"))}
        )
        return f"Confirmed: {_content(answers['confirm']).get('ok')}"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Ask a name, a greeting and the roots, all in one input-required result."""
        answers: dict[str, Any] = await ctx.ask_together(
            {
                "user_name": lambda: ctx.elicit(
                    "What is your name?", single_field_form("name", "string")
                ),
                "greeting": lambda: _sample(ctx, "Generate a greeting", 50),
                "client_roots": ctx.roots,
            }
        )
        roots: list[Root] = answers["client_roots"]
        name = _content(answers["user_name"]).get("name")
        return f"{_text(answers['greeting'])} {name} ({len(roots)} roots)"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Ask a name (key `step1`), then a favourite colour (key `step2`), in two rounds."""
        name = await _ask_name(ctx, "step1", "Step 1: What is your name?")
        answers = await ctx.ask_together(
            {
                "step2": lambda: ctx.elicit(
                    "Step 2: What is your favorite color?", single_field_form("color", "string")
                )
            }
        )
        return f"{name} likes {_content(answers['step2']).get('color')}"

    @app.tool(annotations=READ_ONLY)
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Ask only what the client declared it can answer: sampling, else elicitation."""
        if ctx.client_supports("sampling"):
            answers = await ctx.ask_together(
                {"question": lambda: _sample(ctx, "Say something", 20)}
            )
            return f"The model said: {_text(answers['question'])}"
        return f"Hello, {await _ask_name(ctx, 'user_name', 'What is your name?')}!"

    @app.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that first asks what context it should use (key `user_context`)."""
        answers = await ctx.ask_together(
            {
                "user_context": lambda: ctx.elicit(
                    "What context should the prompt use?", single_field_form("context", "string")
                )
            }
        )
        return f"Use this context: {_content(answers['user_context']).get('context')}"


async def _ask_name(ctx: Context, key: str, question: str) -> Any:
    answers = await ctx.ask_together(
        {key: lambda: ctx.elicit(question, single_field_form("name", "string"))}
    )
    return _content(answers[key]).get("name")


async def _sample(ctx: Context, prompt: str, max_tokens: int) -> SamplingResult:
    message = SamplingMessage(role="user", content=TextContent(text=prompt))
    return await ctx.sample([message], max_tokens=max_tokens)


def _content(result: ElicitResult) -> dict[str, Any]:
    return dict(result.content or {})


def _text(result: SamplingResult) -> str:
    content = result.content
    return content.text if isinstance(content, TextContent) else f"[{content.type}]"
