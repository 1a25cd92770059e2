"""Publishing before the sidecar: a local store's write returns as soon as its data is
published while its sidecar is written after, and the store's ``stat``, ``list``, ``delete``
and ``aclose`` wait for the sidecars of the keys they touch. Used by
:class:`~skillweave.storage.local.LocalArtifactStore`."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from skillweave.storage.base import ArtifactRef

__all__ = ["Publisher", "Write"]

Write = Callable[[Callable[[ArtifactRef], None]], ArtifactRef | None]
"""A blocking write: it calls the function it is given with the ref once its data is
published, then writes the sidecar, and returns the ref (None: a put-if-absent lost)."""


class Publisher:
    """Runs one store's writes in threads and keeps the ones whose sidecar is being written."""

    def __init__(self) -> None:
        self._sidecars: dict[str, asyncio.Future[object]] = {}
        """Writes whose data is published and whose sidecar is still being written, by key."""

    async def published(self, key: str, write: Write) -> ArtifactRef | None:
        """Run `write` in a thread and return as soon as its data is published: it calls the
        function it is given with the ref then, and writes the sidecar after, while the caller
        goes on. Until the sidecar is written, this store's `stat`, `list` and `delete` of the
        key wait for it; another process may meanwhile find no sidecar, and hash the data.
        """
        loop = asyncio.get_running_loop()
        published: asyncio.Future[ArtifactRef] = loop.create_future()

        def tell(ref: ArtifactRef) -> None:
            loop.call_soon_threadsafe(_settle, published, ref)

        context = contextvars.copy_context()
        writing = loop.run_in_executor(None, context.run, write, tell)
        self._sidecars[key] = writing
        writing.add_done_callback(lambda done: self._forget(key, done))
        await asyncio.wait({published, writing}, return_when=asyncio.FIRST_COMPLETED)
        if published.done():
            return published.result()
        published.cancel()
        return writing.result()

    async def sidecars_of(self, wanted: Callable[[str], bool]) -> None:
        """Until the sidecars being written for the keys `wanted` picks are written."""
        pending = [future for key, future in self._sidecars.items() if wanted(key)]
        if pending:
            await asyncio.wait(pending)

    def _forget(self, key: str, done: asyncio.Future[object]) -> None:
        if self._sidecars.get(key) is done:
            del self._sidecars[key]
        if not done.cancelled():
            done.exception()  # raised to the writer already, or logged: not "never retrieved"


def _settle(future: asyncio.Future[ArtifactRef], ref: ArtifactRef) -> None:
    if not future.done():
        future.set_result(ref)
