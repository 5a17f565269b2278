"""Command line of mcp-everything: `mcp-everything [--transport stdio] [--log-level LEVEL]`."""

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mcpkit import cli

from . import __version__
from .server import build_server

CONFIG_HINT = """{
  "mcpServers": {
    "everything": {"command": "uvx", "args": ["--from", "mcpkit-everything", "mcp-everything"]}
  }
}"""


def main(argv: Sequence[str] | None = None) -> None:
    """Run mcp-everything until the client disconnects."""
    parser = argparse.ArgumentParser(
        prog="mcp-everything",
        description="An MCP server that exercises every protocol feature (a test server).",
        epilog="example: mcp-everything --log-level info",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    args = cli.parse(parser, argv)
    with tempfile.TemporaryDirectory(prefix="mcp-everything-") as directory:
        server = build_server(Path(directory) / "watched-resource.txt")
        cli.run(server, args, config_hint=CONFIG_HINT)


if __name__ == "__main__":
    main()
