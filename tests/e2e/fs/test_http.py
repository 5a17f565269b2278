"""mcp-fs over Streamable HTTP and the legacy HTTP+SSE transport, driven by the SDK client."""

from pathlib import Path

import anyio
import mcp_types as types

from e2e.fs_helpers import FsTree, structured
from e2e.harness import Everything
from e2e.http_wire import HttpServer, HttpTransport


async def test_fs_serves_both_http_transports(tmp_path: Path, fs: FsTree) -> None:
    server = HttpServer(tmp_path, "http+sse", program=fs.command())
    try:
        for name in ("http", "sse"):
            everything = Everything(HttpTransport(server, name))
            async with everything.connect() as conn:
                with anyio.fail_after(10):
                    listed = await conn.session.list_tools()
                    read = await conn.session.call_tool("read_text_file", {"path": "README.md"})
            assert "read_text_file" in {tool.name for tool in listed.tools}, name
            assert not read.is_error, name
            text = read.content[0]
            assert isinstance(text, types.TextContent)
            assert text.text == "# Project\n", name  # the file's text, at every version
            if name == "http":  # 2025-11-25: structured output too
                assert structured(read)["content"] == "# Project\n"
            assert everything.problems() == [], name
    finally:
        server.stop()
    assert server.problems() == []
