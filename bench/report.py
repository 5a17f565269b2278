"""What the stdio and HTTP benches share: their command line's servers and tool arguments,
the report's rows, and the table (stdlib only)."""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable, Mapping
from typing import Any, cast

Json = dict[str, Any]
Column = tuple[str, str, str, bool]
"""title, key in the report, format, whether it has a ratio to the first server"""
Figures = dict[str, float | None]


def ratio(value: float | None, base: float | None) -> float | None:
    """value / base, None where either is missing."""
    return value / base if value is not None and base else None


def parse_servers(
    parser: argparse.ArgumentParser, specs: list[str], *, placeholder: str = ""
) -> list[tuple[str, list[str]]]:
    """Return each `--server NAME=CMD` as (name, argv); CMD must hold `placeholder` if given.

    Exits through `parser.error` on a bad or repeated spec.
    """
    servers: list[tuple[str, list[str]]] = []
    want = f"want a new NAME=CMD, CMD with {placeholder}" if placeholder else "want a new NAME=CMD"
    for spec in specs:
        name, _, cmd = spec.partition("=")
        if not name or placeholder not in cmd or not cmd.strip() or name in dict(servers):
            parser.error(f"--server {spec!r}: {want}")
        try:
            servers.append((name, shlex.split(cmd)))
        except ValueError as e:
            parser.error(f"--server {spec!r}: {e}")
    return servers


def tool_arguments(parser: argparse.ArgumentParser, flag: str, tool: str, text: str) -> Json:
    """Return the JSON object `text` of `--flag TOOL ARGS`; exits through `parser.error`."""
    try:
        arguments = json.loads(text)
    except ValueError as e:
        parser.error(f"--{flag} {tool}: ARGS is not JSON: {e}")
    if not isinstance(arguments, dict):
        parser.error(f"--{flag} {tool}: ARGS must be a JSON object")
    return cast(Json, arguments)


def server_rows(
    servers: list[tuple[str, list[str]]],
    figures: Mapping[str, Figures],
    columns: list[Column],
    samples: Callable[[str], Json],
) -> list[Json]:
    """One report row per server: its figures, their ratios to the first server's, `samples`."""
    base = figures[servers[0][0]]
    rows: list[Json] = []
    for name, argv in servers:
        fig = figures[name]
        ratios = {key: ratio(fig[key], base[key]) for _, key, _, has in columns if has}
        rows.append(
            {
                "name": name,
                "cmd": shlex.join(argv),
                **fig,
                "ratios": ratios,
                "samples": samples(name),
            }
        )
    return rows


def table(servers: list[Json], columns: list[Column]) -> list[str]:
    """The report's rows as the lines of a plain-text table (columns nobody has left out)."""
    rows = [["server"]] + [[s["name"]] for s in servers]
    for title, key, fmt, has_ratio in columns:
        if all(s[key] is None for s in servers):
            continue
        rows[0] += [title, "x"] if has_ratio else [title]
        for row, s in zip(rows[1:], servers, strict=True):
            row.append("-" if s[key] is None else fmt.format(s[key]))
            if has_ratio:
                row.append("-" if s["ratios"][key] is None else f"{s['ratios'][key]:.2f}x")
    widths = [max(map(len, col)) for col in zip(*rows, strict=True)]
    for r in rows:
        r[0] = r[0].ljust(widths[0])  # names to the left, figures to the right
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
