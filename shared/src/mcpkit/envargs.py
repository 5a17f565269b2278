"""Options that an environment variable can set, checked exactly as the flag is.

Hosts configure servers through environment variables as often as through arguments, so
a value from the environment must be refused as loudly as the same value on the command
line: argparse converts a string default with the option's `type`, but it never checks a
default against `choices`, and a `store_true` flag's default is never converted at all.
`choice` and `flag` close both gaps. A bad value ends the parse with status 2 and says which
values are valid; the case of a valid one does not matter.

    parser.add_argument(
        "--mode", type=choice("MCP_X_MODE", MODES), default=os.environ.get("MCP_X_MODE", "a")
    )
    parser.add_argument(
        "--dry-run", action="store_true", default=flag_default(parser, "dry_run", "MCP_X_DRY_RUN")
    )
    args = parser.parse_args()
    check_flags(parser, args)  # each flag's environment text becomes a bool, or the parse exits

`mcpkit.cli.parse` calls `check_flags`, so a server's own flags declared this way are
checked with the common ones.
"""

import argparse
import os
from collections.abc import Callable, Sequence

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
_FLAGS_ATTRIBUTE = "_mcpkit_env_flags"


def choice(variable: str, choices: Sequence[str]) -> Callable[[str], str]:
    """Return an argparse `type` that accepts one of `choices` in any case, as lower case.

    Use it instead of `choices=` so that a default read from `variable` is checked too.
    """

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            source = f" (from {variable})" if os.environ.get(variable) == text else ""
            raise argparse.ArgumentTypeError(
                f"{text!r}{source} is not one of: {', '.join(choices)}"
            )
        return value

    parse.__name__ = "choice"  # argparse names the type in some messages
    return parse


def flag_default(parser: argparse.ArgumentParser, dest: str, variable: str) -> str | bool:
    """Return the default of the `store_true` option `dest`: `variable`'s text, or False.

    `check_flags` turns the text into a bool after parsing (or exits with status 2).
    """
    flags: dict[str, str] = getattr(parser, _FLAGS_ATTRIBUTE, {})
    flags[dest] = variable
    setattr(parser, _FLAGS_ATTRIBUTE, flags)
    return os.environ.get(variable, False)


def check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Turn each flag set from the environment into a bool; exit with status 2 on bad text."""
    flags: dict[str, str] = getattr(parser, _FLAGS_ATTRIBUTE, {})
    for dest, variable in flags.items():
        value = getattr(args, dest)
        if isinstance(value, bool):
            continue
        text = str(value).strip().lower()
        if text not in _TRUE + _FALSE:
            parser.error(
                f"{variable}={value!r} is not a yes or no: use one of {', '.join(_TRUE)}"
                f" or one of {', '.join(repr(f) for f in _FALSE)}"
            )
        setattr(args, dest, text in _TRUE)
