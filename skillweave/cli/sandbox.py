"""``skillweave sandbox run``: one script through a manager, from the command line.

With ``SANDBOX__MANAGER_URL`` set it uses that manager (which must share this machine's
artifact store settings, since the CLI publishes the skill and uploads inputs there); otherwise
it starts a manager with a local warm pool of one sandbox inside this process, on a loopback
port, for the duration of the command. :func:`manager_for` is that choice, also used by
``skillweave run`` (``skillweave.cli.run``).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from pydantic import SecretStr

from mcp_manager import create_app
from mcp_manager.server import LoopbackServer
from skillweave.config import Settings
from skillweave.errors import ConfigError
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest, ExecutionLimits, ExecutionResult
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import Skill
from skillweave.storage import keys, open_store
from skillweave.storage.base import ArtifactStore

__all__ = ["SandboxRun", "copy_outputs", "manager_for", "prepare_environment", "run_script"]


class SandboxRun:
    """What ``sandbox run`` did: the result and where things are."""

    def __init__(self, result: ExecutionResult, *, run_id: str, store: ArtifactStore) -> None:
        self.result = result
        self.run_id = run_id
        self.store = store


@contextlib.asynccontextmanager
async def manager_for(
    settings: Settings, *, pool_target: int = 1
) -> AsyncIterator[tuple[str, str]]:
    """A manager to talk to, as ``(url, token)``: the configured one (``SANDBOX__MANAGER_URL``),
    or one started here on loopback with a local warm pool of `pool_target` sandboxes, stopped
    (its sandboxes destroyed) when the context ends.

    Raises:
        ConfigError: a manager URL is configured without its token.
    """
    if settings.sandbox.manager_url:
        if settings.sandbox.manager_token is None:
            raise ConfigError("SANDBOX__MANAGER_URL is set but SANDBOX__MANAGER_TOKEN is not")
        yield settings.sandbox.manager_url, settings.sandbox.manager_token.get_secret_value()
        return
    token = secrets.token_urlsafe(32)
    local = settings.model_copy(deep=True)
    local.sandbox = local.sandbox.model_copy(
        update={"manager_token": SecretStr(token), "pool_target": pool_target}
    )
    async with LoopbackServer(create_app(local, publish=False)) as server:
        yield server.url, token


async def run_script(
    settings: Settings,
    skill: Skill,
    script: str,
    *,
    args: Sequence[str] = (),
    inputs: Sequence[Path] = (),
    timeout: float | None = None,
) -> SandboxRun:
    """Publish `skill`, upload `inputs`, run `script` through a manager, return the outcome."""
    store = open_store(settings.storage)
    await publish_skill(store, skill)
    run_id = f"cli-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    refs = []
    for path in inputs:
        data = await asyncio.to_thread(path.read_bytes)
        refs.append(await store.put_bytes(keys.run_input_key(run_id, path.name), data))
    request = ExecuteRequest(
        execution_id=f"{run_id}/1",
        run_id=run_id,
        skill=skill.name,
        version=skill.version,
        script=script,
        args=list(args),
        inputs=refs,
        limits=ExecutionLimits(timeout_seconds=timeout or settings.sandbox.timeout_seconds),
    )
    async with manager_for(settings) as (url, token), SandboxClient(url, token=token) as client:
        result = await client.execute(request)
    return SandboxRun(result, run_id=run_id, store=store)


async def prepare_environment(settings: Settings, skill: Skill) -> dict[str, object]:
    """Publish `skill` and have a manager build its environment of dependencies (once)."""
    store = open_store(settings.storage)
    await publish_skill(store, skill)
    async with (
        manager_for(settings, pool_target=0) as (url, token),
        SandboxClient(url, token=token) as client,
    ):
        return await client.prepare_environment(skill.name, skill.version)


async def copy_outputs(run: SandboxRun, destination: Path) -> list[Path]:
    """Copy the output artifacts of `run` into `destination`; returns the files written."""
    written: list[Path] = []
    for output in run.result.outputs:
        target = destination / output.path
        target.parent.mkdir(parents=True, exist_ok=True)
        await run.store.get_file(output.ref, str(target))
        written.append(target)
    return written
