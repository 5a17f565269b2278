"""checksum (work in a thread, with progress and cancellation) and allowed_places (roots)."""

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from checked import connect
from mcpkit_everything import workspace
from mcpkit_everything.server import build_server
from mcpkit_everything.workspace import MiB


async def test_checksum_hashes_in_a_thread_and_reports_progress(tmp_path: Path) -> None:
    async with connect(build_server(tmp_path / "watched.txt")) as client:
        result = await client.call_tool("checksum", {"megabytes": 256}, progress_token="sum")
    expected = hashlib.sha256(bytes(range(256)) * (256 * MiB // 256)).hexdigest()
    assert result["structuredContent"] == {"megabytes": 256, "sha256": expected}
    reports = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    counts = [report["progress"] for report in reports]
    assert counts == sorted(set(counts))  # increasing, each at most once
    assert all(report["total"] == 256 for report in reports)


async def test_a_cancelled_checksum_gets_no_answer_and_the_server_goes_on(tmp_path: Path) -> None:
    async with connect(build_server(tmp_path / "watched.txt")) as client:
        params = {"name": "checksum", "arguments": {"megabytes": 4096}}
        client.send({"jsonrpc": "2.0", "id": "sum", "method": "tools/call", "params": params})
        await anyio.sleep(0.2)
        await client.notify("notifications/cancelled", {"requestId": "sum"})
        with anyio.fail_after(5):
            await client.request("ping")
        await anyio.sleep(0.3)
    assert all(message.get("id") != "sum" for message in client.messages)


async def test_checksums_hash_two_at_a_time_leaving_worker_threads_to_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Forty took every one of anyio's worker threads: a watched resource's read waited.
    running: list[int] = [0]
    most: list[int] = [0]
    hashed = workspace.hash_generated

    def counted(megabytes: int, tick: Any) -> str:
        running[0] += 1
        most[0] = max(most[0], running[0])
        try:
            return hashed(megabytes, tick)
        finally:
            running[0] -= 1

    monkeypatch.setattr(workspace, "hash_generated", counted)
    async with (
        connect(build_server(tmp_path / "watched.txt")) as client,
        anyio.create_task_group() as calls,
    ):
        for _ in range(6):
            calls.start_soon(client.call_tool, "checksum", {"megabytes": 64})
    assert most[0] == 2


async def places_for(tmp_path: Path, roots: list[Path] | None) -> list[str]:
    handlers: dict[str, Any] = {}
    if roots is not None:

        async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
            return {"roots": [{"uri": f"file://{root}"} for root in roots]}

        handlers["roots/list"] = list_roots
    async with connect(build_server(tmp_path / "watched.txt"), handlers=handlers) as client:
        result = await client.call_tool("allowed_places")
    return result["structuredContent"]["places"]


async def test_allowed_places_are_the_scratch_directory_narrowed_by_roots(tmp_path: Path) -> None:
    inside, outside = tmp_path / "project", tmp_path.parent
    inside.mkdir()
    assert await places_for(tmp_path, None) == [str(tmp_path)]
    assert await places_for(tmp_path, [inside]) == [str(inside)]
    assert await places_for(tmp_path, [outside]) == [str(tmp_path)]  # above: narrows nothing
    assert await places_for(tmp_path, [Path("/nonexistent-root")]) == []
