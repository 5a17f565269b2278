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

from e2e.fs_helpers import another_process_writes, make_tree
from e2e.harness import LATEST, MODERN, Everything

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


@pytest.mark.parametrize("transport", ["stdio"])
async def test_mcp_fs_in_the_stateless_era(everything: Everything, tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    readme = tree.root / "README.md"
    uri = f"file://{readme}"
    async with everything.stateless(command=tree.command()) as (client, record):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        read = await client.read_resource(uri)
        prompts = await client.list_prompts()
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri]
            await anyio.sleep(0.5)  # let the watcher start
            another_process_writes(readme, "# Changed\n")
            with anyio.fail_after(10):
                event = await anext(aiter(subscription))
    assert tools
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "# Project\n"
    assert prompts.prompts
    assert event == ResourceUpdated(uri=uri)
    assert record.result_of("resources/read")["resultType"] == "complete"


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
