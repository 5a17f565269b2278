"""Command line of mcp-everything: `mcp-everything [--transport stdio] [--log-level LEVEL]`."""

import argparse
from collections.abc import Sequence

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
    cli.main(build_server(), parser, argv=argv, config_hint=CONFIG_HINT)


if __name__ == "__main__":
    main()
