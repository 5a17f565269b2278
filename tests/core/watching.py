"""What the file-watcher tests share: a `FileWatcher` running for the length of a block."""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from mcpkit.watch import FileWatcher


@asynccontextmanager
async def running(files: FileWatcher) -> AsyncGenerator[anyio.abc.TaskGroup]:
    """Run `files` in a task group for the block; yield the group for more tasks."""
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(files.run)
        yield task_group
        task_group.cancel_scope.cancel()
