"""A subscription told of a commit, a branch and an edit made by another process."""

from pathlib import Path
from urllib.parse import quote

import anyio
import pytest

from e2e.git.helpers import GitServers, git
from e2e.sqlite.helpers import Era, watching

pytestmark = pytest.mark.filterwarnings(
    # The handshake era's way to subscribe, which the SDK marks as removed in 2026-07-28.
    "ignore:resources/(un)?subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
)


async def test_another_process_commits(gits: GitServers, era: Era, jail: Path) -> None:
    repo = jail / "repo"
    base = f"git://{quote(str(repo), safe='')}"
    status, log = f"{base}/status", f"{base}/log"
    async with watching(gits, era, [status, log], "-r", str(jail)) as watch:
        assert sorted(watch.honored) == sorted([status, log])
        await anyio.sleep(0.3)
        git(repo, "commit", "-q", "--allow-empty", "-m", "elsewhere")
        told = {await watch.next_event(10), await watch.next_event(10)}
        assert told == {status, log}  # the status names the new commit, the log lists it
        (repo / "a.txt").write_text("edited\n")
        assert await watch.next_event(10) == status
        await watch.quiet(1.5)
