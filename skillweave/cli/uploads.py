"""The skills uploaded over the API, as a worker or the API process serves them.

A worker (:func:`~skillweave.cli.worker.open_worker`) and the API
(:func:`~skillweave.cli.api.api_app`) unpack uploaded skills, and the versions jobs pin, into
folders of their own (:func:`own_uploaded_folder`: ``SKILLS__UPLOADED_DIR/ROLE-PID`` and
``ROLE-PID.pinned``): processes on one host never unpack into each other's, and a killed
process's folders are swept by the next. A worker picks up new uploads now and then
(:func:`serving_uploaded`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillweave.config import Settings

if TYPE_CHECKING:
    from skillweave.engines import AgentServices

__all__ = ["own_uploaded_folder", "serving_uploaded", "uploaded_skills_folder"]

logger = logging.getLogger("skillweave.worker")


def uploaded_skills_folder(settings: Settings, role: str) -> Path:
    """This process's folder for unpacked uploaded skills (``SKILLS__UPLOADED_DIR/ROLE-PID``),
    after removing the folders of processes that are gone (a killed worker leaves its own)."""
    root = settings.skills.uploaded_dir.expanduser()
    if root.is_dir():
        for folder in root.iterdir():
            pid = folder.name.removesuffix(".pinned").rpartition("-")[2]
            if folder.is_dir() and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)
    return root / f"{role}-{os.getpid()}"


@contextlib.contextmanager
def own_uploaded_folder(settings: Settings, role: str) -> Iterator[Settings]:
    """`settings` with this process's folder (:func:`uploaded_skills_folder`) for uploaded
    skills, and so ``ROLE-PID.pinned`` for the pinned versions it unpacks; both are removed
    when the context ends."""
    dest = uploaded_skills_folder(settings, role)
    skills = settings.skills.model_copy(update={"uploaded_dir": dest})
    own = settings.model_copy(update={"skills": skills})
    try:
        yield own
    finally:
        shutil.rmtree(own.skills.uploaded_dir.expanduser(), ignore_errors=True)
        shutil.rmtree(own.skills.pinned_dir, ignore_errors=True)


@contextlib.asynccontextmanager
async def serving_uploaded(
    services: AgentServices, settings: Settings, *, roots: Sequence[Path]
) -> AsyncIterator[None]:
    """The uploaded skills unpacked into ``settings.skills.uploaded_dir`` and served beside
    `roots` now, and while the context lasts: the library rescanned every
    ``SKILLS__RELOAD_SECONDS`` (directory skills added, changed or removed) and the uploads
    unpacked again every ``SKILLS__UPLOADED_REFRESH_SECONDS`` (a failed round is logged and
    tried again)."""
    from skillweave.skills import SkillLibrary
    from skillweave.skills.reload import reloading
    from skillweave.skills.stored import StoredSkills

    stored = StoredSkills(services.store)
    dest = settings.skills.uploaded_dir
    library = SkillLibrary(settings.skills, dirs=[*roots, dest])
    await services.load_uploaded(stored, library=library, dest=dest)

    async def uploads() -> None:
        while True:
            await asyncio.sleep(settings.skills.uploaded_refresh_seconds)
            try:
                await services.load_uploaded(stored, library=library, dest=dest)
            except Exception:
                logger.warning("refreshing uploaded skills failed", exc_info=True)

    refresher = asyncio.create_task(uploads())
    try:
        async with reloading(library, services.use_registry, every=settings.skills.reload_seconds):
            yield
    finally:
        refresher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await refresher


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
