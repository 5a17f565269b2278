"""Command line of mcp-sqlite: `mcp-sqlite [NAME=]PATH[:ro] ... [--write] [--roots MODE]`."""

import argparse
import os
from collections.abc import Sequence
from typing import get_args

from mcpkit import Server, cli, envargs, oplog

from . import __version__
from .catalog import Limits, RootsMode
from .config import parse_databases
from .database import threads_left
from .guard import MAX_GROWTH
from .server import build_server
from .temporary import MAX_TEMP, WATCH

CONFIG_HINT = """{
  "mcpServers": {
    "sqlite": {"command": "uvx", "args": ["--from", "mcpkit-sqlite", "mcp-sqlite", "/data/app.db"]}
  }
}"""

EPILOG = """examples:
  mcp-sqlite ~/data/shop.db                 read-only (by the engine)
  mcp-sqlite shop=~/shop.db logs=~/logs.db  two databases; the model names one
  mcp-sqlite --write shop=~/shop.db ref=~/ref.db:ro
                                            writes to shop only; no write tool without --write
  mcp-sqlite --write --create ~/new.db      make the database if it does not exist"""


def make_parser() -> argparse.ArgumentParser:
    """Return the parser of mcp-sqlite's own arguments (environment variables give defaults)."""
    parser = argparse.ArgumentParser(
        prog="mcp-sqlite",
        description="An MCP server for SQLite databases, read-only unless you allow writes.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "databases",
        nargs="*",
        metavar="[NAME=]PATH[:ro]",
        help="databases the model may use, by name (default: the file's stem); ':ro' keeps"
        " one read-only even with --write",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        default=envargs.flag_default(parser, "write", "MCP_SQLITE_WRITE"),
        help="allow writes (write_query, create_table, execute_transaction); env"
        " MCP_SQLITE_WRITE=1",
    )
    parser.add_argument(
        "--create",
        action="store_true",
        default=envargs.flag_default(parser, "create", "MCP_SQLITE_CREATE"),
        help="make a database that does not exist (else it is an error); env MCP_SQLITE_CREATE=1",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=os.environ.get("MCP_SQLITE_TIMEOUT", "30"),
        help="seconds a query may run before SQLite stops it (default 30; env MCP_SQLITE_TIMEOUT)",
    )
    parser.add_argument(
        "--max-growth",
        type=int,
        default=os.environ.get("MCP_SQLITE_MAX_GROWTH", str(MAX_GROWTH >> 20)),
        help="MiB a writable database may grow by while served; past it a write fails and"
        f" changes nothing (default {MAX_GROWTH >> 20}; env MCP_SQLITE_MAX_GROWTH)",
    )
    parser.add_argument(
        "--max-temp",
        type=int,
        default=os.environ.get("MCP_SQLITE_MAX_TEMP", str(MAX_TEMP >> 20)),
        help="MiB of temporary files (large sorts, temporary tables) all queries together may"
        f" take at once; past it they are stopped (default {MAX_TEMP >> 20}; env"
        " MCP_SQLITE_MAX_TEMP)",
    )
    parser.add_argument(
        "--queries",
        metavar="FILE",
        default=os.environ.get("MCP_SQLITE_QUERIES"),
        help="a TOML file of canned queries, each offered as a tool query_NAME (see the"
        " README); env MCP_SQLITE_QUERIES",
    )
    parser.add_argument(
        "--roots",
        type=envargs.choice("MCP_SQLITE_ROOTS", get_args(RootsMode)),
        default=os.environ.get("MCP_SQLITE_ROOTS", "narrow"),
        help="how the client's roots count: narrow (default: a client with roots may use the"
        " databases inside them), intersect (a client without roots gets none), ignore; env"
        " MCP_SQLITE_ROOTS",
    )
    return parser


def configured_server(args: argparse.Namespace) -> Server:
    """Return the server the parsed arguments describe.

    Raises:
        ValueError: no database, a database that cannot be used, a bad timeout, growth or
            temporary file cap, or a canned query the server cannot run.
    """
    if not args.timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if args.max_growth < 0:
        raise ValueError(f"--max-growth must be a number of MiB, not {args.max_growth}")
    if args.max_temp < 1:
        raise ValueError(f"--max-temp must be a positive number of MiB, not {args.max_temp}")
    WATCH.limit = args.max_temp << 20
    databases = tuple(
        database._replace(max_growth=args.max_growth << 20)
        for database in parse_databases(args.databases, write=args.write, create=args.create)
    )
    queries = ()
    if args.queries:
        from .canned import load_queries  # only then: the start-up of the others is measured

        queries = load_queries(args.queries, databases)
    return oplog.describe(
        build_server(databases, Limits(seconds=args.timeout), args.roots, queries),
        [f"{d.name}={d.path} ({'read-write' if d.writable else 'read-only'})" for d in databases],
        roots=args.roots,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Run mcp-sqlite until the client disconnects; exit with status 2 on a bad configuration."""
    cli.main(configured_server, make_parser(), argv=argv, config_hint=CONFIG_HINT)
    if threads_left():
        # A statement given up on (session.STOP_GRACE) may run for hours yet: exit without
        # waiting for it. The system closes its files; SQLite's journal undoes its writes.
        os._exit(0)


if __name__ == "__main__":
    main()
