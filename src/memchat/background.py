"""Background work after commit: strong references to every task, and every failure logged."""

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("memchat.background")


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def drain(self, timeout_s: float = 30.0) -> None:
        """Wait for running tasks (shutdown, tests); tasks spawned meanwhile are awaited too."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self._tasks:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            await asyncio.wait(set(self._tasks), timeout=remaining)

    def __len__(self) -> int:
        return len(self._tasks)
