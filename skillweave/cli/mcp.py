"""``skillweave mcp``: the MCP front door over stdio, for MCP clients that start a command.

The whole skill library (``SKILLS__DIRS`` and the store's skills, unpacked into a folder of
this process's own: :func:`~skillweave.cli.library.opened_library`) is served by
:class:`~mcp_manager.mcp_server.SkillMcp` on stdin/stdout, reloaded every
``SKILLS__RELOAD_SECONDS``; scripts run through :func:`~skillweave.cli.compose.open_manager`'s
manager (``SANDBOX__MANAGER_URL``, or one started here with a local warm pool). A store not up
yet is waited for first (``skillweave.storage.reachable.store_ready``); a manager not up is
waited for by each script run. stdout carries the protocol only: logs go to stderr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from mcp.server.stdio import stdio_server

from mcp_manager.mcp_server import SkillMcp
from skillweave.cli.compose import open_manager, open_store
from skillweave.cli.library import opened_library
from skillweave.config import Settings
from skillweave.skills import configured_roots, owned_folder, reloading
from skillweave.storage import store_ready

__all__ = ["serve_mcp_stdio"]


async def serve_mcp_stdio(
    settings: Settings, *, scope: Sequence[str] | None = None, file_roots: Sequence[Path] = ()
) -> None:
    """Serve the library (only the skills `scope` names, when given) over stdio until the
    client closes the connection; a client may give scripts files under `file_roots` by path.
    The library is reloaded every ``SKILLS__RELOAD_SECONDS``.

    Raises:
        ConfigError: a root set in ``SKILLS__DIRS`` is not a folder.
        SkillNotFoundError: `scope` names no skill of the library.
    """
    roots = configured_roots(settings.skills)
    with owned_folder(settings, "mcp") as own:
        await _serve(own, roots=roots, scope=scope, file_roots=file_roots)


async def _serve(
    settings: Settings,
    *,
    roots: Sequence[Path],
    scope: Sequence[str] | None,
    file_roots: Sequence[Path],
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(settings))
        # A store not up yet is waited for (one line on stderr, back-off), as every server
        # does; one that refuses us for good stops here in one line.
        await store_ready(store, settings.storage)
        library = await stack.enter_async_context(opened_library(settings, roots=roots))
        registry = library.registry
        assert registry is not None  # opened_library loaded it
        if scope is not None:
            registry.restricted(scope)  # a scope that names nothing: say so before serving
        manager = await stack.enter_async_context(open_manager(settings))
        front_door = SkillMcp(
            settings,
            registry=registry,
            store=store,
            run_script=manager.client.execute,
            scope=scope,
            file_roots=file_roots,
        )
        stack.push_async_callback(front_door.aclose)  # anchors its last audit records
        every = settings.skills.reload_seconds
        await stack.enter_async_context(reloading(library, front_door.use_registry, every=every))
        read, write = await stack.enter_async_context(stdio_server())
        server = front_door.server
        await server.run(read, write, server.create_initialization_options())
