"""Registration builds: the API asks the MCP manager to prepare a new skill version's
environment of dependencies as soon as it is stored, so that its first run does not wait for it.

:class:`EnvironmentBuilds` is made when the app starts (:class:`~skillweave.api.state.ApiState`);
the skill writes (:mod:`skillweave.api.skill_writes`) call it after an upload or an install.
"""

from __future__ import annotations

import asyncio
import logging

from skillweave.config import SandboxSettings
from skillweave.errors import SkillweaveError
from skillweave.sandbox import SandboxClient
from skillweave.skills.stored import StoredSkill

__all__ = ["EnvironmentBuilds"]

logger = logging.getLogger("skillweave.api")


class EnvironmentBuilds:
    """The registration builds this app asked for, in the background."""

    def __init__(self, settings: SandboxSettings) -> None:
        self._settings = settings
        self._tasks: set[asyncio.Task[None]] = set()  # kept so none is collected early

    def prepare(self, record: StoredSkill) -> None:
        """Ask the manager (``SANDBOX__MANAGER_URL``) to prepare the environment of `record`'s
        latest version now, in the background. Without a manager configured, the first run
        builds it. A failure is logged; the run that needs the environment reports it again,
        clearly."""
        sandbox = self._settings
        if not sandbox.manager_url or sandbox.manager_token is None:
            return
        url, token = sandbox.manager_url, sandbox.manager_token.get_secret_value()

        async def prepare() -> None:
            try:
                async with SandboxClient(url, token=token) as client:
                    prepared = await client.prepare_environment(record.name, record.latest)
            except SkillweaveError as exc:
                logger.warning("environment of %s %s: %s", record.name, record.latest[:12], exc)
                return
            if prepared.get("needed"):
                logger.info("environment of %s %s ready", record.name, record.latest[:12])

        task = asyncio.create_task(prepare(), name=f"prepare-{record.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
