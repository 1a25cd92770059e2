"""``skillweave mcp``: the MCP front door over stdio, for MCP clients that start a command.

The skill library of ``SKILLS__DIRS`` is served by :class:`~mcp_manager.mcp_server.SkillMcp`
on stdin/stdout; scripts run through :func:`~skillweave.cli.compose.open_manager`'s manager
(``SANDBOX__MANAGER_URL``, or one started here with a local warm pool). stdout carries the
protocol only: logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

from mcp.server.stdio import stdio_server

from mcp_manager.mcp_server import SkillMcp
from skillweave.cli.compose import open_manager, open_store
from skillweave.config import Settings
from skillweave.skills import SkillLibrary
from skillweave.skills.reload import reloading

__all__ = ["serve_mcp_stdio"]


async def serve_mcp_stdio(
    settings: Settings, *, scope: Sequence[str] | None = None, file_roots: Sequence[Path] = ()
) -> None:
    """Serve the library (only the skills `scope` names, when given) over stdio until the
    client closes the connection; a client may give scripts files under `file_roots` by path.
    The library is rescanned every ``SKILLS__RELOAD_SECONDS``.

    Raises:
        SkillNotFoundError: `scope` names no skill of the library.
    """
    library = SkillLibrary(settings.skills)
    registry = await asyncio.to_thread(library.refresh)
    if scope is not None:
        registry.restricted(scope)  # a scope that names nothing: say so before serving
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(settings))
        manager = await stack.enter_async_context(open_manager(settings))
        front_door = SkillMcp(
            settings,
            registry=registry,
            store=store,
            run_script=manager.client.execute,
            scope=scope,
            file_roots=file_roots,
        )
        every = settings.skills.reload_seconds
        await stack.enter_async_context(reloading(library, front_door.use_registry, every=every))
        read, write = await stack.enter_async_context(stdio_server())
        server = front_door.server
        await server.run(read, write, server.create_initialization_options())
