"""The data mcp-everything serves: the conformance suite's fixtures, and the watched file.

No MCP here, only values and file operations.
"""

import json
from pathlib import Path

RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E"
    "rkJggg=="
)
"""A 1x1 PNG, base64."""

SILENT_WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A WAV file with one silent sample, base64."""

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."
EMBEDDED_TEXT = "This is an embedded resource content."
PROMPT_RESOURCE_TEXT = "Embedded resource content for testing."
MIXED_JSON = json.dumps({"test": "data", "value": 123})
ERROR_MESSAGE = "This tool intentionally returns an error for testing"

COMPLETION_WORDS = ("paris", "park", "party", "pasta", "patio", "peach", "pear", "pebble")
"""Suggestions for the first argument of test_prompt_with_arguments."""

TEMPLATE_IDS = tuple(str(n) for n in range(1, 151))
"""Suggestions for {id} of test://template/{id}/data: more than the 100 a reply may hold."""


def template_data(item_id: str) -> str:
    """Return the JSON document served at test://template/{id}/data."""
    return json.dumps({"id": item_id, "templateTest": True, "data": f"Data for ID: {item_id}"})


def starting_with(prefix: str, candidates: tuple[str, ...]) -> list[str]:
    """Return the candidates that start with `prefix`, in order."""
    return [c for c in candidates if c.startswith(prefix)]


class WatchedFile:
    """The file behind test://watched-resource: writing it notifies subscribers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.write_text("initial content\n", encoding="utf-8")

    def read(self) -> str:
        """Return the file's current text."""
        return self.path.read_text(encoding="utf-8")

    def write(self, text: str) -> None:
        """Replace the file's text."""
        self.path.write_text(text, encoding="utf-8")
