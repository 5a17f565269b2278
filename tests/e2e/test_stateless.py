"""The official SDK's `Client` drives our servers in the stateless era (2026-07-28).

Over stdio and Streamable HTTP it probes `server/discover`, then every request carries its
`_meta`; elicitation goes through input-required results (MRTR) and a `subscriptions/listen`
stream receives a real resource update. Every server message validates against the
2026-07-28 schema (`Everything.problems`).
"""

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourceUpdated

from e2e.fs_helpers import FsTree, another_process_writes, make_tree
from e2e.harness import LATEST, MODERN, Everything, StdioTransport
from e2e.http_wire import HttpServer, HttpTransport

pytestmark = pytest.mark.anyio

USER: dict[str, str | int | float | bool | list[str] | None] = {
    "username": "ada",
    "email": "ada@example.com",
}


async def accept_user(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Fill in test_elicitation's form."""
    del context, params
    return types.ElicitResult(action="accept", content=USER)


def text_of(result: types.CallToolResult) -> str:
    """The text of a result's single text block."""
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_everything_in_the_stateless_era(everything: Everything) -> None:
    async with everything.stateless(elicitation_callback=accept_user) as (client, record):
        assert client.server_info is not None
        assert client.server_info.name == "mcp-everything"
        tools = {tool.name for tool in (await client.list_tools()).tools}
        echoed = await client.call_tool("echo", {"text": "hi"})
        static = await client.read_resource("test://static-text")
        templates = await client.list_resource_templates()
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": ""},
        )
        elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert {"echo", "test_elicitation", "update_watched_resource"} <= tools
    assert text_of(echoed) == "hi"
    (contents,) = static.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "This is the content of the static text resource."
    assert templates.resource_templates
    assert "test_prompt_with_arguments" in prompts
    assert prompt.messages
    assert completion.completion.values
    assert '"username": "ada"' in text_of(elicited)
    discover = record.result_of("server/discover")
    assert MODERN in discover["supportedVersions"]
    asked = [r for r in record.server_messages() if r.get("result", {}).get("inputRequests")]
    assert [r["result"]["resultType"] for r in asked] == ["input_required"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_listen_stream_gets_the_watched_resource_update(everything: Everything) -> None:
    uri = "test://watched-resource"
    async with (
        everything.stateless() as (client, record),
        client.listen(resource_subscriptions=[uri]) as subscription,
    ):
        assert subscription.honored.resource_subscriptions == [uri]
        await client.call_tool("update_watched_resource", {"text": "changed"})
        with anyio.fail_after(10):
            event = await anext(aiter(subscription))
    assert event == ResourceUpdated(uri=uri)
    (update,) = record.notifications("notifications/resources/updated")
    assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] is not None


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_listen_stream_gets_the_polled_counter_update(everything: Everything) -> None:
    uri = "test://counter"
    async with everything.stateless() as (client, record):
        (contents,) = (await client.read_resource(uri)).contents
        assert isinstance(contents, types.TextResourceContents)
        count = int(contents.text)  # an HTTP server is shared by the session's tests
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri]
            await client.call_tool("set_counter", {"value": count + 1})
            with anyio.fail_after(10):
                event = await anext(aiter(subscription))
    assert event == ResourceUpdated(uri=uri)
    (update,) = record.notifications("notifications/resources/updated")
    assert update["params"]["uri"] == uri


async def test_mcp_fs_over_stdio_in_the_stateless_era(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    fs = Everything(StdioTransport(tmp_path))
    await drive_fs(fs, tree, tree.command())
    assert not fs.problems()


async def test_mcp_fs_over_http_in_the_stateless_era(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    server = HttpServer(tmp_path, "http+sse", program=tree.command())
    try:
        fs = Everything(HttpTransport(server, "http"))
        await drive_fs(fs, tree, None)
    finally:
        server.stop()
    assert not fs.problems()
    assert not server.problems()


async def drive_fs(fs: Everything, tree: FsTree, command: list[str] | None) -> None:
    """Use every kind of request on mcp-fs with the SDK Client in the stateless era.

    The client's roots narrow access to `src`: the server asks for them through an input
    request (MRTR) and the client retries with the answer.
    """
    readme, app = tree.root / "README.md", tree.root / "src" / "app.py"
    uri = f"file://{readme}"

    async def list_roots(context: object) -> types.ListRootsResult:
        del context
        return types.ListRootsResult.model_validate({"roots": [{"uri": f"file://{app.parent}"}]})

    review = types.PromptReference(type="ref/prompt", name="review_file")
    async with fs.stateless(command=command, list_roots_callback=list_roots) as (client, record):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        code = await client.call_tool("read_text_file", {"path": str(app)})
        narrowed = await client.call_tool("read_text_file", {"path": str(readme)})
        read = await client.read_resource(f"file://{app}")
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        prompt = await client.get_prompt("review_file", {"path": str(app)})
        completion = await client.complete(review, {"name": "path", "value": f"{app.parent}/a"})
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri]
            another_process_writes(readme, "# Changed\n")
            with anyio.fail_after(10):
                event = await anext(aiter(subscription))
    assert {"read_text_file", "write_file", "search_content"} <= tools
    assert "def main" in text_of(code)
    assert narrowed.is_error
    assert "outside the allowed directories" in text_of(narrowed)
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.startswith("def main")
    assert "review_file" in prompts
    assert "def main" in str(prompt.messages[0].content)
    assert completion.completion.values == [str(app)]
    assert event == ResourceUpdated(uri=uri)
    assert MODERN in record.result_of("server/discover")["supportedVersions"]
    assert record.result_of("resources/read")["resultType"] == "complete"
    results = [message.get("result", {}) for message in record.server_messages()]
    asked = [result for result in results if "inputRequests" in result]
    assert asked, "the server never asked for the client's roots"
    assert all(r["resultType"] == "input_required" for r in asked)
    questions = [q["method"] for r in asked for q in r["inputRequests"].values()]
    assert set(questions) == {"roots/list"}


@pytest.mark.parametrize("transport", ["http"])
async def test_a_handshake_client_and_a_stateless_client_share_one_server(
    everything: Everything,
) -> None:
    async with (
        everything.connect(LATEST) as handshake,
        everything.stateless() as (client, _),
    ):
        legacy, modern = await handshake.session.call_tool("echo", {"text": "old"}), None
        modern = await client.call_tool("echo", {"text": "new"})
        again = await handshake.session.call_tool("echo", {"text": "still"})
    assert text_of(legacy) == "old"
    assert text_of(modern) == "new"
    assert text_of(again) == "still"
    assert "resultType" not in handshake.record.result_of("tools/call", name="echo")
