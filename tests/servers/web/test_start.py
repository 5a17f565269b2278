"""What mcp-web loads at start: nothing a first page read can load instead.

A host starts the server with every session; bs4 (with soupsieve) took 80 ms of a 380 ms
start, urllib.request 25 ms, the closing marker's pattern 10 ms, the stylesheet reader's
modules (their patterns and classes) 15 ms.
"""

import subprocess
import sys

LATE = ("bs4", "soupsieve", "httpx", "urllib.request", "mcpkit_web.stylesheets")


def loaded_after(code: str) -> list[str]:
    """Return which of LATE a fresh interpreter holds after importing the server, then `code`."""
    held = f"print(*[m for m in {LATE!r} if m in sys.modules])"
    probe = f"import sys, mcpkit_web.__main__\n{code}\n{held}"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, check=True, text=True, timeout=60
    )
    return result.stdout.split()


def test_the_server_starts_without_what_reading_a_page_needs() -> None:
    assert loaded_after("") == []


def test_reading_a_page_loads_its_parser() -> None:
    read = (
        "from mcpkit_web import inspect\n"
        "assert inspect.links('<a href=/x>x</a>', 'https://a.example/') == "
        "[{'url': 'https://a.example/x', 'text': 'x'}]"
    )
    assert "bs4" in loaded_after(read)


def test_framing_a_page_defuses_a_closing_marker_written_otherwise() -> None:
    frame = (
        "from mcpkit_web.pages import framed\n"
        "text = framed('a \\uff1c/untrusted-web-content> b', 'https://a.example/')\n"
        "assert text.count('</untrusted-web-content>') == 1, text"
    )
    assert loaded_after(frame) == []
