"""The end of stdin: requests already received are answered, for a second at most.

`printf '...' | mcp-x` is how scripts use a stdio server: the answers to what was piped
must come out before the server exits, and a call that would outlast the grace period is
cancelled so the exit stays prompt.
"""

import json
import subprocess
import time
from typing import Any

from e2e.harness import EVERYTHING, LATEST


def piped(*messages: dict[str, Any]) -> tuple[list[dict[str, Any]], float]:
    """Pipe `messages` to mcp-everything, close stdin; return its answers and the time taken."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST,
            "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"},
        },
    }
    lines = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *messages]
    started = time.monotonic()
    done = subprocess.run(
        [EVERYTHING],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return [a for a in answers if "id" in a], time.monotonic() - started


def call(request_id: int, seconds: float) -> dict[str, Any]:
    arguments = {"duration": seconds, "steps": 2}
    params = {"name": "long_running_operation", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_call_piped_before_the_end_is_answered() -> None:
    answers, _ = piped(call(1, 0.3))
    assert [a["id"] for a in answers] == [0, 1]
    assert "result" in answers[1]


def test_a_call_longer_than_the_grace_is_cancelled_and_the_exit_stays_prompt() -> None:
    answers, took = piped(call(1, 30))
    assert [a["id"] for a in answers] == [0]  # a cancelled request gets no answer
    assert took < 5
