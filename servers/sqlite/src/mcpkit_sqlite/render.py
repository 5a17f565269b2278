"""The text a model reads beside `structuredContent`: rows as JSON, CSV or a markdown table.

JSON names the columns once, then gives each row's values in order
(`{"columns": [...], "rows": [[...], ...]}`): an object per row would repeat every column
name in every row, doubling what ten thousand rows cost to send and to read. Results are
data, never instructions: rows are rendered as data, never as prose.
"""

import math

from mcpkit.jsonrpc import encode

from .cells import Cell, Row
from .results import Changed, Rows


def rows(result: Rows) -> str:
    """Render `result` in its format, with a last line saying what was left out."""
    columns, values = result["columns"], result["rows"]
    if result["format"] == "csv":
        text = _csv(columns, values)
    elif result["format"] == "markdown":
        text = _markdown(columns, values)
    else:
        text = _json(columns, values)
    if result["next_offset"] is not None:  # after a blank line: not a row of the table
        text += (
            f"\n\n({result['row_count']} rows shown; more follow: pass offset"
            f" {result['next_offset']} for the next page)"
        )
    return text


def changed(result: Changed) -> str:
    """Say what writing statements did, then give the rows they returned, as JSON."""
    text = (
        f"{result['rows_affected']} rows affected in {result['database']}"
        f" ({result['statements']} statements; last insert rowid {result['last_insert_rowid']})"
    )
    for returned in result["returned"]:
        rows = returned["rows"]
        text += f"\n\nStatement {returned['statement']} returned:\n"
        text += _json(returned["columns"], rows)
        if returned["truncated"]:
            text += f"\n({len(rows)} rows shown; the statement returned more)"
    return text


def _json(columns: list[str], values: list[Row]) -> str:
    return encode({"columns": columns, "rows": values}).decode()


def _text(value: Cell) -> str:
    return "" if (shown := _plain(value)) is None else str(shown)


def _plain(value: Cell) -> str | int | float | None:
    """A cell's value for text: a BLOB's summary, and None where JSON has null (NaN, ±inf)."""
    if isinstance(value, dict):
        return f"<BLOB {value['bytes']} bytes, sha256 {value['sha256'][:12]}…>"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _csv(columns: list[str], values: list[Row]) -> str:
    return "\n".join(",".join(map(_csv_field, row)) for row in [columns, *values])


def _csv_field(value: Cell) -> str:
    """Return a CSV field (RFC 4180): text always quoted, numbers and NULL never.

    So NULL and '' differ, and a lone carriage return (which Python's csv quotes only when
    it ends lines) cannot split a row.
    """
    plain = _plain(value)
    if plain is None:
        return ""
    if isinstance(plain, str):
        return '"' + plain.replace('"', '""') + '"'
    return str(plain)


def _markdown(columns: list[str], values: list[Row]) -> str:
    def line(cells: list[str]) -> str:
        escaped = (c.replace("|", "\\|").replace("\r", " ").replace("\n", " ") for c in cells)
        return "| " + " | ".join(escaped) + " |"

    lines = [line(columns), "|" + "---|" * len(columns)]
    lines += [line([_text(value) for value in row]) for row in values]
    return "\n".join(lines)
