"""Command line of mcp-git: `mcp-git [--repository PATH ...] [--read-only | tiers]`."""

import argparse
import logging
import os
from collections.abc import Sequence
from typing import get_args

from mcpkit import Server, cli, envargs, oplog
from mcpkit.places import RootsMode, real_place

from . import __version__
from .access import Tiers
from .runner import Settings
from .server import build_server

logger = logging.getLogger("mcp-git")

CONFIG_HINT = """{
  "mcpServers": {
    "git": {"command": "uvx", "args": ["--from", "mcpkit-git", "mcp-git", "-r", "/src/project"]}
  }
}"""

EPILOG = """examples:
  mcp-git                                  the working directory (a repository, or folders
                                           holding some)
  mcp-git -r ~/src/app -r ~/src/lib        two repositories; nothing else
  mcp-git -r ~/src --read-only             every repository under ~/src, read-only
  mcp-git -r ~/src/app --allow-remote      also fetch, pull and push (force only with lease)"""


def make_parser() -> argparse.ArgumentParser:
    """Return the parser of mcp-git's own arguments (environment variables give defaults)."""
    parser = argparse.ArgumentParser(
        prog="mcp-git",
        description="An MCP server for git repositories, jailed to them and inert in hostile ones.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "-r",
        "--repository",
        action="append",
        default=_list("MCP_GIT_REPOSITORY"),
        metavar="PATH",
        help="a repository, or a folder of repositories, the model may use (repeatable;"
        " default: the working directory); env MCP_GIT_REPOSITORY (':'-separated)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=envargs.flag_default(parser, "read_only", "MCP_GIT_READ_ONLY"),
        help="list no tool that changes anything; env MCP_GIT_READ_ONLY=1",
    )
    parser.add_argument(
        "--allow-history-rewrite",
        action="store_true",
        default=envargs.flag_default(
            parser, "allow_history_rewrite", "MCP_GIT_ALLOW_HISTORY_REWRITE"
        ),
        help="allow reset --soft/--hard, commit --amend, rebase and deleting an unmerged branch;"
        " env MCP_GIT_ALLOW_HISTORY_REWRITE=1",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        default=envargs.flag_default(parser, "allow_remote", "MCP_GIT_ALLOW_REMOTE"),
        help="add git_fetch, git_pull and git_push; env MCP_GIT_ALLOW_REMOTE=1",
    )
    parser.add_argument(
        "--allow-hooks",
        action="store_true",
        default=envargs.flag_default(parser, "allow_hooks", "MCP_GIT_ALLOW_HOOKS"),
        help="let the repositories' hooks run (off: never); env MCP_GIT_ALLOW_HOOKS=1",
    )
    parser.add_argument(
        "--inherit-git-config",
        action="store_true",
        default=envargs.flag_default(parser, "inherit_git_config", "MCP_GIT_INHERIT_GIT_CONFIG"),
        help="read your global and system git configuration and GIT_* variables (off:"
        " neither); env MCP_GIT_INHERIT_GIT_CONFIG=1",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=os.environ.get("MCP_GIT_TIMEOUT", "120"),
        help="seconds a git command may run before it is killed (default 120; env MCP_GIT_TIMEOUT)",
    )
    parser.add_argument(
        "--roots",
        type=envargs.choice("MCP_GIT_ROOTS", get_args(RootsMode)),
        default=os.environ.get("MCP_GIT_ROOTS", "narrow"),
        help="how the client's roots count: narrow (default), intersect, replace, ignore;"
        " env MCP_GIT_ROOTS",
    )
    return parser


def configured_server(args: argparse.Namespace) -> Server:
    """Return the server the parsed arguments describe.

    Raises:
        ValueError: a repository that does not exist, or a bad timeout.
    """
    if not args.timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    places: list[str] = args.repository or [os.getcwd()]
    if not args.repository and not os.path.exists(os.path.join(places[0], ".git")):
        logger.warning(
            "mcp-git serves the repositories under %s (the working directory, no repository"
            " itself); name them with --repository",
            places[0],
        )
    settings = Settings(
        allow_hooks=args.allow_hooks, inherit_config=args.inherit_git_config, timeout=args.timeout
    )
    tiers = Tiers(
        read_only=args.read_only,
        history_rewrite=args.allow_history_rewrite,
        remote=args.allow_remote,
    )
    server = build_server(places, settings=settings, tiers=tiers, roots=args.roots)
    shown = [real_place(place, read_only=args.read_only, source="command line") for place in places]
    return oplog.describe(server, shown, roots=args.roots)


def main(argv: Sequence[str] | None = None) -> None:
    """Run mcp-git until the client disconnects; exit with status 2 on a bad configuration."""
    cli.main(configured_server, make_parser(), argv=argv, config_hint=CONFIG_HINT)


def _list(name: str) -> list[str]:
    return [item for item in os.environ.get(name, "").split(os.pathsep) if item]


if __name__ == "__main__":
    main()
