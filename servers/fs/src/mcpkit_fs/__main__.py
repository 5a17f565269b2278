"""Command line of mcp-fs: `mcp-fs [DIR[:ro] ...] [--read-only] [--deny GLOB] [--roots MODE]`."""

import argparse
import os
from collections.abc import Sequence
from typing import get_args

from mcpkit import Server, cli, envargs, oplog

from . import __version__
from .globs import BadGlob, deny_rules
from .policy import Policy, RootsMode, parse_directory
from .server import build_server

CONFIG_HINT = """{
  "mcpServers": {
    "fs": {"command": "uvx", "args": ["--from", "mcpkit-fs", "mcp-fs", "/path/to/project"]}
  }
}"""

EPILOG = """examples:
  mcp-fs ~/project                      read and write inside ~/project
  mcp-fs ~/project ~/docs:ro            ~/docs is read-only
  mcp-fs --read-only ~/project          no write tools at all
  mcp-fs --deny '**/.ssh/**' --deny '**/.env' ~
  mcp-fs                                the client's roots decide (--roots narrow)

roots modes (the client's roots/list):
  narrow     roots narrow the directories given here; with none given, roots define them
  intersect  only where roots and the directories given here overlap; no roots, no access
  replace    roots replace the directories given here (the reference server's behaviour)
  ignore     the directories given here only"""


def make_parser() -> argparse.ArgumentParser:
    """Return the parser of mcp-fs's own arguments (environment variables give defaults)."""
    parser = argparse.ArgumentParser(
        prog="mcp-fs",
        description="An MCP filesystem server confined to the directories you allow.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "directories",
        nargs="*",
        metavar="DIR[:ro]",
        help="allowed directories, resolved at start; ':ro' makes one read-only",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=envargs.flag_default(parser, "read_only", "MCP_FS_READ_ONLY"),
        help="offer no write tools; every directory is read-only (env MCP_FS_READ_ONLY=1)",
    )
    parser.add_argument(
        "--deny",
        action="append",
        metavar="GLOB",
        default=[d for d in os.environ.get("MCP_FS_DENY", "").split(os.pathsep) if d],
        help="deny paths matching GLOB, e.g. '**/.ssh/**' (repeatable; env MCP_FS_DENY,"
        " separated by ':')",
    )
    parser.add_argument(
        "--roots",
        type=envargs.choice("MCP_FS_ROOTS", get_args(RootsMode)),
        default=os.environ.get("MCP_FS_ROOTS", "narrow"),
        help="how the client's roots count (default narrow; env MCP_FS_ROOTS)",
    )
    return parser


def configured_server(args: argparse.Namespace) -> Server:
    """Return the server the parsed arguments describe.

    Raises:
        ValueError: a directory, glob or roots mode the server cannot use.
    """
    directories = tuple(parse_directory(d, read_only=args.read_only) for d in args.directories)
    try:
        deny = deny_rules(args.deny)
    except BadGlob as exc:
        raise ValueError(str(exc)) from None
    if args.roots == "intersect" and not directories:
        raise ValueError("--roots intersect needs at least one directory")
    return oplog.describe(
        build_server(Policy(directories, deny, args.roots), read_only=args.read_only),
        directories,
        roots=args.roots,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run mcp-fs until the client disconnects; exit with status 2 on a bad configuration."""
    cli.main(configured_server, make_parser(), argv=argv, config_hint=CONFIG_HINT)


if __name__ == "__main__":
    main()
