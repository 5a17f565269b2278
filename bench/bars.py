"""The bars a server's bench measures it against, and the table that shows them (stdlib only).

A `Row` is one line of a bench's table: a figure of each column, our ratio to another
column, and maybe a `Bar` it must meet. `verdicts` works the ratios and verdicts out of
the measured figures; `table` lays them out as aligned text.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from report import Json, ratio


@dataclass(frozen=True)
class Bar:
    """A bar of an issue: our value, or its ratio to the other column, within `limit`."""

    limit: float
    relative: bool
    text: str
    at_least: bool = False  # the value must be at least `limit` (else at most)

    def met(self, value: float) -> bool:
        """Whether the value meets the bar."""
        return value >= self.limit if self.at_least else value <= self.limit


@dataclass(frozen=True)
class Row:
    """One line of the table: a figure of each column, our ratio to `other`, a bar."""

    title: str
    key: str
    other: str | None = None
    bar: Bar | None = None


def verdicts(rows: list[Row], columns: dict[str, Json], ours: str) -> list[Json]:
    """Each row's figures, `ours`'s ratio to the other column and whether it meets its bar."""
    out: list[Json] = []
    for row in rows:
        values = {name: col["figures"][row.key] for name, col in columns.items()}
        x = ratio(values[ours], values[row.other]) if row.other else None
        met = None
        if row.bar is not None:
            value = x if row.bar.relative else values[ours]
            met = None if value is None else row.bar.met(value)
        bar = row.bar.text if row.bar else None
        out.append({"title": row.title, "key": row.key, **values, "x": x, "bar": bar, "met": met})
    return out


def cell(row: Json, name: str) -> str:
    """A figure as the table shows it."""
    value: float | None = row[name]
    return "-" if value is None else f"{value:,.{1 if value >= 10 else 2}f}"


def table(
    names: Sequence[str], rows: list[Json], ours: str, cell_of: Callable[[Json, str], str] = cell
) -> list[str]:
    """The rows as aligned lines: titles and bars to the left, figures to the right."""
    lines = [["", *names, f"x = {ours} / other", "bar", ""]]
    for v in rows:
        verdict = {None: "", True: "met", False: "MISSED"}[v["met"]]
        x = "-" if v["x"] is None else f"{v['x']:.2f}x"
        lines.append([v["title"], *(cell_of(v, n) for n in names), x, v["bar"] or "", verdict])
    widths = [max(map(len, col)) for col in zip(*lines, strict=True)]
    last = len(widths) - 1
    return [
        "  ".join(
            c.ljust(w) if i in (0, last - 1, last) else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in lines
    ]
