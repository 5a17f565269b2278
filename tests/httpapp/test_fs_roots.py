"""mcp-fs over Streamable HTTP: the client's roots narrow access whatever streams it keeps."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from httpapp.mcphttp import Served, call, read_lines_until, serving
from mcpkit import Server
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import Policy, parse_directory
from mcpkit_fs.server import build_server


def fs_in(allowed: Path) -> Server:
    """mcp-fs allowing `allowed`, whose roots policy is the default (narrow)."""
    return build_server(
        Policy((parse_directory(str(allowed), read_only=False),), GlobSet(())), read_only=False
    )


def project(tmp_path: Path) -> Path:
    """An allowed directory with `mine/` (the client's root) and `other.txt` beside it."""
    allowed = tmp_path / "allowed"
    (allowed / "mine").mkdir(parents=True)
    (allowed / "other.txt").write_text("not the client's\n")
    return allowed


async def next_message(served: Served, lines: AsyncIterator[str]) -> dict[str, Any]:
    """The next message of an SSE stream (past the empty priming event), schema-validated."""
    while True:
        data = (await read_lines_until(lines, "data:"))[-1].removeprefix("data:").strip()
        if data:
            message: dict[str, Any] = json.loads(data)
            served.validate(message)
            return message


async def test_roots_are_asked_on_the_requests_own_stream(tmp_path: Path) -> None:
    allowed = project(tmp_path)
    async with serving(tmp_path, lambda _: fs_in(allowed)) as served:
        session = await served.initialize(capabilities={"roots": {}})  # and no GET stream
        read = call(1, "read_text_file", {"path": str(allowed / "other.txt")})
        served.requests[1] = "tools/call"
        async with served.http.stream(
            "POST", served.url, content=json.dumps(read), headers=served.headers(session)
        ) as response:
            lines = response.aiter_lines()
            question = await next_message(served, lines)
            assert question["method"] == "roots/list"
            answer = {"roots": [{"uri": f"file://{allowed / 'mine'}"}]}
            await served.post({"jsonrpc": "2.0", "id": question["id"], "result": answer}, session)
            result = await next_message(served, lines)
    assert result["id"] == 1
    assert "outside the allowed directories" in json.dumps(result)


async def test_a_client_that_cannot_be_asked_for_its_roots_gets_nothing(tmp_path: Path) -> None:
    allowed = project(tmp_path)
    async with serving(tmp_path, lambda _: fs_in(allowed), json_response=True) as served:
        session = await served.initialize(capabilities={"roots": {}})
        response = await served.post(
            call(1, "read_text_file", {"path": str(allowed / "other.txt")}), session
        )
        [answer] = served.messages(response)
    text = answer["result"]["content"][0]["text"]
    assert answer["result"]["isError"] is True
    assert "declared roots but cannot be asked for them" in text
    assert "not the client's" not in text
