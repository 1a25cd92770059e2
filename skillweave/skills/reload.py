"""Hot reload: :func:`reloading` reloads a library every few seconds and hands a changed
registry to whoever serves it (a worker's services, ``dev``'s, the API, the manager's MCP front
door, the stdio MCP server), so that added, changed and removed skills are seen without a
restart: directory skills, and the store's (installed, uploaded, published, switched on or off:
``SkillLibrary.reload``) (``SKILLS__RELOAD_SECONDS``, default 2; 0 turns it off).

Polling, not a file watcher (inotify through ``watchfiles``): libraries live on network
filesystems and Kubernetes volumes (ConfigMaps swap a symlink), where change events do not
arrive, and every watched folder costs a kernel watch per process. The scanner's cache makes an
unchanged rescan cheap: it stats the folders and files it saw and lists none (about 55 ms for
1,000 skills, so 2 % of one core at the default interval; ``bench/skills_bench.py``,
docs/BENCHMARKS.md). A rescan that finds a change walks again and reparses only what changed.

Runs and MCP sessions keep the versions they activated: those are pinned and fetched from the
store when the library has moved on (``skillweave.sandbox.pinned``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from skillweave.skills.library import SkillLibrary
from skillweave.skills.registry import SkillRegistry

__all__ = ["reloading"]

logger = logging.getLogger("skillweave.skills")


@contextlib.asynccontextmanager
async def reloading(
    library: SkillLibrary,
    on_change: Callable[[SkillRegistry], Any],
    *,
    every: float,
) -> AsyncIterator[None]:
    """While the context lasts, reload `library` (``SkillLibrary.reload``) every `every`
    seconds and call `on_change` (awaited when it returns an awaitable) with each new
    registry; `every` ≤ 0: never.

    A rescan or a callback that fails is logged and tried again at the next tick.
    """
    if every <= 0:
        yield
        return

    async def loop() -> None:
        while True:
            await asyncio.sleep(every)
            before = library.registry
            try:
                registry = await library.reload()
                if registry is not before:
                    # The library's newest, not this scan's: another caller may have
                    # refreshed it since (an upload), and an older one must not win.
                    registry = library.registry or registry
                    logger.info("skill library changed: %d skills", len(registry))
                    changed = on_change(registry)
                    if inspect.isawaitable(changed):
                        await changed
            except Exception:
                logger.warning("reloading the skill library failed", exc_info=True)

    task = asyncio.create_task(loop(), name="skill-library-reload")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
