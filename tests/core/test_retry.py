"""The 2026-07-28 retry runs a handler again from the top; `except Exception` cannot stop it."""

from typing import Any

from checked import connect, stateless
from mcpkit import ClientRequestError, Context, Server

ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}


def make_server(runs: list[str]) -> Server:
    app = Server("retrying", "1")

    @app.tool()
    async def careless(ctx: Context) -> str:
        """Wrap the question in `except Exception`, as handlers often wrap I/O."""
        runs.append("careless")
        try:
            answer = await ctx.elicit("OK?", FORM)
        except Exception as exc:  # the mistake under test
            return f"swallowed {type(exc).__name__}"
        return f"answered {answer.action}"

    return app


async def test_except_exception_does_not_swallow_the_retry_signal() -> None:
    runs: list[str] = []
    call: dict[str, Any] = {"name": "careless", "arguments": {}}
    async with connect(make_server(runs), initialize=False, wire_version="2026-07-28") as client:
        first = await stateless(client, "tools/call", call, ELICITATION)
        assert first["resultType"] == "input_required"
        [key] = first["inputRequests"]
        retry = {
            **call,
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        done = await stateless(client, "tools/call", retry, ELICITATION)
    assert done["content"][0]["text"] == "answered accept"
    assert runs == ["careless", "careless"]  # the retry ran it again from the top


async def test_a_client_that_cannot_answer_is_still_an_exception_to_catch() -> None:
    runs: list[str] = []
    async with connect(make_server(runs), capabilities={}) as client:  # no elicitation
        result = await client.call_tool("careless")
    assert result["content"][0]["text"] == f"swallowed {ClientRequestError.__name__}"


async def test_an_answer_is_to_the_question_asked_not_to_a_changed_one() -> None:
    # Answers were keyed by order alone: "Drop stash 'one'?" accepted, the retry found
    # another stash on top, asked "Drop stash 'two'?", and took the first answer for it.
    app = Server("asking", "1")
    latest = ["one"]

    @app.tool()
    async def drop(ctx: Context) -> str:
        answer = await ctx.elicit(f"Drop stash {latest[0]!r}?", FORM)
        return f"dropped {latest[0]} ({answer.action})"

    call: dict[str, Any] = {"name": "drop", "arguments": {}}
    async with connect(app, initialize=False, wire_version="2026-07-28") as client:
        first = await stateless(client, "tools/call", call, ELICITATION)
        [key] = first["inputRequests"]
        latest[0] = "two"  # made by another process meanwhile
        retry = {
            **call,
            "inputResponses": {key: {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"],
        }
        again = await stateless(client, "tools/call", retry, ELICITATION)
    assert again["resultType"] == "input_required"
    [asked] = again["inputRequests"].values()
    assert asked["params"]["message"] == "Drop stash 'two'?"
