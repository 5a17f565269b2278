"""Load: 1,000 concurrent requests from 50 clients, all answered; memory comes back down."""

import socket
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx

from httpapp.mcphttp import ACCEPT_BOTH, LATEST, call, request

EVERYTHING = Path(sys.executable).parent / "mcp-everything"
CLIENTS = 50
REQUESTS_EACH = 20


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@contextmanager
def _server(tmp_path: Path) -> Generator[tuple[subprocess.Popen[bytes], str]]:
    port = _free_port()
    stderr = (tmp_path / "stderr").open("wb")
    process = subprocess.Popen(
        [EVERYTHING, "--transport", "http", "--port", str(port)], stderr=stderr
    )
    try:
        yield process, f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        stderr.close()
        assert "Traceback" not in (tmp_path / "stderr").read_text()


async def _wait_until_up(url: str) -> None:
    async with httpx.AsyncClient() as http:
        with anyio.fail_after(15):
            while True:
                try:
                    await http.get(url)
                    return
                except httpx.TransportError:
                    await anyio.sleep(0.05)


async def _client(url: str, number: int, answered: list[int]) -> None:
    """One client: a session, REQUESTS_EACH concurrent tools/call, then DELETE."""
    headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
    async with httpx.AsyncClient(timeout=60, headers=headers) as http:
        init = await http.post(
            url,
            json=request(
                0,
                "initialize",
                {
                    "protocolVersion": LATEST,
                    "capabilities": {},
                    "clientInfo": {"name": f"load-{number}", "version": "0"},
                },
            ),
        )
        http.headers["mcp-session-id"] = init.headers["mcp-session-id"]
        http.headers["mcp-protocol-version"] = LATEST

        async def one(request_id: int) -> None:
            text = f"{number}-{request_id}"
            response = await http.post(url, json=call(request_id, "echo", {"text": text}))
            assert response.json()["result"]["content"][0]["text"] == text
            answered.append(1)

        async with anyio.create_task_group() as task_group:
            for request_id in range(1, REQUESTS_EACH + 1):
                task_group.start_soon(one, request_id)
        assert (await http.delete(url)).status_code == 204


async def _round(url: str) -> int:
    answered: list[int] = []
    async with anyio.create_task_group() as task_group:
        for number in range(CLIENTS):
            task_group.start_soon(_client, url, number, answered)
    return len(answered)


async def test_a_thousand_concurrent_requests(tmp_path: Path) -> None:
    with _server(tmp_path) as (process, url):
        await _wait_until_up(url)
        assert await _round(url) == CLIENTS * REQUESTS_EACH  # warms up: allocators settle
        baseline = _rss_kib(process.pid)
        for _ in range(2):
            assert await _round(url) == CLIENTS * REQUESTS_EACH
        after = _rss_kib(process.pid)
    # Sessions, streams and tasks are gone once their clients are: no growth per round.
    assert after - baseline < 4 * 1024, f"RSS grew from {baseline} KiB to {after} KiB"
