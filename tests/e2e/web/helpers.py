"""What mcp-web's end-to-end tests share: the server over each transport, on a stub site.

`WebServers` is mcp-sqlite's `SqliteServers` (the SDK client over stdio or Streamable
HTTP, both eras, every message checked against the schema) pointed at `mcp-web`. With
`public=True` the server runs with `--allow-private-address 127.0.0.1`, as an operator
allows one private address: it reaches the stub site on loopback through every other guard;
without it, every loopback address is refused, as by default.
"""

import sys
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from e2e import http_wire
from e2e.http_wire import HttpServer
from e2e.sqlite.helpers import SqliteServers

MCP_WEB = str(Path(sys.executable).parent / "mcp-web")
"""The console script of the venv running the tests."""

STUB_ADDRESS = ("--allow-private-address", "127.0.0.1")
"""The arguments that let mcp-web reach the stub site's address, and no other private one."""


class WebServers(SqliteServers):
    """mcp-web for one test over one transport, in both eras; `public`: see the module."""

    public = True

    def program(self, arguments: Sequence[str]) -> list[str]:
        """The command line of mcp-web with `arguments`."""
        return [MCP_WEB, *(STUB_ADDRESS if self.public else ()), *arguments]

    def _start_http(self, directory: Path, arguments: Sequence[str]) -> HttpServer:
        directory.mkdir(parents=True)
        with mock.patch.dict(http_wire.MODE_ARGUMENTS, {"http+sse": ("--transport", "http")}):
            return HttpServer(directory, "http+sse", program=self.program(arguments))

    def _command(self, arguments: Sequence[str]) -> list[str] | None:
        return self.program(arguments) if self.transport == "stdio" else None
