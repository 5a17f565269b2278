"""Command line of mcp-web: `mcp-web [--allow-host H] [--deny-host H] [--timeout S] ...`."""

import argparse
import os
from collections.abc import Sequence

from mcpkit import Server, cli, envargs, oplog

from . import __version__
from .addresses import IPNetwork, Policy, address_range, host_rules
from .fetcher import Settings, proxy_url
from .search import BACKENDS, Search
from .server import build_server
from .web import Web

BRAVE_KEY = "MCP_WEB_BRAVE_API_KEY"
DEFAULT_AGENT = f"mcp-web/{__version__} (+https://github.com/mcpkit/mcpkit)"

CONFIG_HINT = """{
  "mcpServers": {
    "web": {"command": "uvx", "args": ["--from", "mcpkit-web", "mcp-web"]}
  }
}"""

EPILOG = """examples:
  mcp-web                                   public web only, robots.txt obeyed
  mcp-web --allow-host .python.org          only python.org and its subdomains
  mcp-web --allow-private-network           also the local network (trusted setups only)
  mcp-web --proxy http://proxy:3128         through an egress proxy"""


def make_parser() -> argparse.ArgumentParser:
    """Return the parser of mcp-web's own arguments (environment variables give defaults)."""
    parser = argparse.ArgumentParser(
        prog="mcp-web",
        description="An MCP server that fetches web pages as clean markdown, SSRF-safe.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    env = os.environ.get
    parser.add_argument(
        "--allow-host",
        action="append",
        default=list(host_rules([env("MCP_WEB_ALLOW_HOST", "")])),
        metavar="HOST",
        help="only these hosts (a leading dot: the domain and its subdomains; repeat or"
        " separate with commas); env MCP_WEB_ALLOW_HOST",
    )
    parser.add_argument(
        "--deny-host",
        action="append",
        default=list(host_rules([env("MCP_WEB_DENY_HOST", "")])),
        metavar="HOST",
        help="never these hosts (same forms); env MCP_WEB_DENY_HOST",
    )
    parser.add_argument(
        "--allow-private-network",
        action="store_true",
        default=envargs.flag_default(
            parser, "allow_private_network", "MCP_WEB_ALLOW_PRIVATE_NETWORK"
        ),
        help="also reach loopback, private, link-local and other non-public addresses"
        " (trusted setups only); env MCP_WEB_ALLOW_PRIVATE_NETWORK=1",
    )
    parser.add_argument(
        "--allow-private-address",
        action="append",
        default=list(host_rules([env("MCP_WEB_ALLOW_PRIVATE_ADDRESS", "")])),
        metavar="ADDRESS",
        help="also reach this non-public address or range (10.1.2.3, 10.1.0.0/16), the rest"
        " of the private network still refused; repeatable; env MCP_WEB_ALLOW_PRIVATE_ADDRESS",
    )
    parser.add_argument(
        "--ignore-robots-txt",
        action="store_true",
        default=envargs.flag_default(parser, "ignore_robots_txt", "MCP_WEB_IGNORE_ROBOTS_TXT"),
        help="fetch pages that robots.txt disallows; env MCP_WEB_IGNORE_ROBOTS_TXT=1",
    )
    parser.add_argument(
        "--user-agent",
        default=env("MCP_WEB_USER_AGENT", DEFAULT_AGENT),
        help=f"the User-Agent sent and checked against robots.txt (default {DEFAULT_AGENT!r});"
        " env MCP_WEB_USER_AGENT",
    )
    parser.add_argument(
        "--max-download-bytes",
        type=int,
        default=env("MCP_WEB_MAX_DOWNLOAD_BYTES", "10000000"),
        help="largest body, counted after decompression (default 10000000); env"
        " MCP_WEB_MAX_DOWNLOAD_BYTES",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=env("MCP_WEB_TIMEOUT", "30"),
        help="seconds for a whole fetch, redirects included (default 30); env MCP_WEB_TIMEOUT",
    )
    parser.add_argument(
        "--min-poll-interval",
        type=float,
        default=env("MCP_WEB_MIN_POLL_INTERVAL", "60"),
        help="seconds between two polls of a subscribed page, at least (default 60); env"
        " MCP_WEB_MIN_POLL_INTERVAL",
    )
    parser.add_argument(
        "--search-backend",
        type=envargs.choice("MCP_WEB_SEARCH_BACKEND", BACKENDS),
        default=env("MCP_WEB_SEARCH_BACKEND", "duckduckgo"),
        help="web_search's backend: duckduckgo (default, no key), searxng (needs --search-url),"
        " brave (needs the environment variable MCP_WEB_BRAVE_API_KEY); env"
        " MCP_WEB_SEARCH_BACKEND",
    )
    parser.add_argument(
        "--search-url",
        default=env("MCP_WEB_SEARCH_URL", ""),
        help="the backend's endpoint (a SearXNG instance's URL; others have a default); env"
        " MCP_WEB_SEARCH_URL",
    )
    parser.add_argument(
        "--proxy",
        default=env("MCP_WEB_PROXY") or None,
        help="an http(s) proxy URL, or 'env' for the environment's proxy variables (default:"
        " none, and the environment's proxy settings are ignored); env MCP_WEB_PROXY",
    )
    return parser


def configured_server(args: argparse.Namespace) -> Server:
    """Return the server the parsed arguments describe.

    Raises:
        ValueError: a bad timeout, download cap, host rule or private address.
    """
    if not args.timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    if not args.max_download_bytes > 0:
        raise ValueError(f"--max-download-bytes must be positive, not {args.max_download_bytes}")
    if not args.min_poll_interval > 0:
        raise ValueError(f"--min-poll-interval must be positive, not {args.min_poll_interval}")
    deny_hosts = host_rules(args.deny_host)
    for rule in deny_hosts:
        try:
            address_range(rule)
        except ValueError:
            raise ValueError(
                f"--deny-host {rule!r} is neither a host nor a range of addresses (10.0.0.0/8)"
            ) from None
    allow_hosts = host_rules(args.allow_host)
    if any("/" in rule for rule in allow_hosts):
        raise ValueError("--allow-host takes host names and addresses, not ranges")
    policy = Policy(
        allow_hosts=allow_hosts,
        deny_hosts=deny_hosts,
        allow_private=args.allow_private_network,
        private_allowed=private_addresses(host_rules(args.allow_private_address)),
    )
    if any(ord(c) < 32 or ord(c) == 127 for c in args.user_agent):
        raise ValueError(f"--user-agent must hold no control characters: {args.user_agent!r}")
    settings = Settings(
        user_agent=args.user_agent,
        max_bytes=args.max_download_bytes,
        timeout=args.timeout,
        proxy=proxy_url(args.proxy),
    )
    web = Web(
        policy,
        settings,
        obey_robots=not args.ignore_robots_txt,
        min_poll_interval=args.min_poll_interval,
    )
    reach = "public and private networks" if policy.allow_private else "public addresses only"
    places = [reach, *(f"only {host}" for host in policy.allow_hosts)]
    places += [f"also {allowed}" for allowed in policy.private_allowed]
    places += [f"never {host}" for host in policy.deny_hosts]
    search = Search(args.search_backend, args.search_url, os.environ.get(BRAVE_KEY, ""))
    return oplog.describe(build_server(web, search), places)


def private_addresses(rules: Sequence[str]) -> tuple[IPNetwork, ...]:
    """Return the addresses and ranges of --allow-private-address rules.

    Raises:
        ValueError: a rule is neither an address nor a range (a host name would be
            resolved at each fetch, and could come to name any address).
    """
    networks: list[IPNetwork] = []
    for rule in rules:
        try:
            network = address_range(rule)
        except ValueError:
            network = None
        if network is None:
            raise ValueError(
                f"--allow-private-address {rule!r} is neither an address nor a range (10.1.0.0/16)"
            )
        networks.append(network)
    return tuple(networks)


def main(argv: Sequence[str] | None = None) -> None:
    """Run mcp-web until the client disconnects; exit with status 2 on a bad configuration."""
    cli.main(configured_server, make_parser(), argv=argv, config_hint=CONFIG_HINT)


if __name__ == "__main__":
    main()
