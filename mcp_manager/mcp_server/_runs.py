"""Scripts run for the MCP front door: :class:`ScriptRuns`.

A session's script runs go through the warm pool, at the version the session activated
(``skillweave.sandbox.pinned``: a version no longer available is a clear tool error), waiting
while the pool is full or the manager is down for up to ``SANDBOX__QUEUE_SECONDS``
(``skillweave.sandbox.queue``, as runs do), each under the session's own run (``mcp-<session>``)
and only as the session's active skills' ``allowed-tools`` permit. The result comes back
rendered and masked, with the output files. An executable skill's tool schemas (its scripts'
``--help-json``) are asked once per skill version. A sandbox's or manager's failure is a tool
error; a run the manager could not record is the :data:`~._results.UNAVAILABLE` refusal.
The tool handler runs scripts and reads pinned files through it; activation asks it for tool
schemas.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

from pydantic import ValidationError

from mcp_manager.cache import BoundedCache
from mcp_manager.mcp_server._artifacts import SessionArtifacts
from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._results import ScriptFailedError, ToolError, text, unavailable
from mcp_manager.mcp_server._sessions import Session
from skillweave.agent import ActiveSkill, SkillTool, disclosure
from skillweave.config import Settings
from skillweave.errors import (
    ArtifactNotFoundError,
    AuditUnavailableError,
    ExecutionRejectedError,
    ManagerRefusedError,
    ManagerUnreachableError,
    PackageError,
    SandboxError,
    SkillFormatError,
)
from skillweave.sandbox import (
    ExecuteRequest,
    ExecutionResult,
    discover_tool_schemas,
    queued,
    render_result,
    skill_at,
)
from skillweave.skills import Skill, ToolSchema
from skillweave.storage import ArtifactRef, ArtifactStore, store_identity

__all__ = ["RunScript", "ScriptRuns"]

logger = logging.getLogger("skillweave.mcp")

RunScript = Callable[[ExecuteRequest], Awaitable[ExecutionResult]]
"""How a script is run: the manager's execution service, or a client of a manager."""

_SCHEMA_CACHE: Final = 1_024  # (skill, version, script) tool lists kept
_OUTPUT_CHARS: Final = 16_000  # stdout/stderr shown inline (the full text is an artifact)


class ScriptRuns:
    """Scripts of the sessions' active skills, run by `run_script`.

    Args:
        settings: the sandbox queue budget and the pinned-skills folder, read at each call.
        store: where packages, inputs and outputs are (its identity goes with each request).
        library: the library served (a pinned version is looked up in it first).
        run_script: runs one script in a sandbox.
        artifacts: masks results and hands out output files.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: ArtifactStore,
        library: SessionLibrary,
        run_script: RunScript,
        artifacts: SessionArtifacts,
    ) -> None:
        self._settings = settings
        self._store = store
        self._library = library
        self._run_script = run_script
        self._artifacts = artifacts
        self._schemas: BoundedCache[tuple[str, str, str], tuple[ToolSchema, ...] | str] = (
            BoundedCache(max_entries=_SCHEMA_CACHE)
        )

    async def tool_schemas(self, skill: Skill, script: str) -> tuple[ToolSchema, ...] | str:
        """The tools `script` offers, from ``--help-json`` (run once per skill version: the
        manager keeps the result under a stable execution id, and this server a copy)."""
        key = (skill.name, skill.version, script)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        with _sandbox_errors():
            found = await discover_tool_schemas(
                self._queued, skill=skill.name, version=skill.version, script=script
            )
        self._schemas.put(key, found)
        return found

    async def pinned(self, active: ActiveSkill) -> Skill:
        """The skill at the version the session activated.

        Raises:
            ToolError: that version is no longer available.
        """
        try:
            return await skill_at(
                self._store,
                self._library.registry,
                active.name,
                active.version,
                pinned_dir=self._settings.skills.pinned_dir,
            )
        except (ArtifactNotFoundError, SkillFormatError, PackageError):
            raise ToolError(
                f"Skill {active.name!r} changed since this session activated it, and the "
                f"version it activated ({active.version[:12]}) is no longer available. Start a "
                "new session to use the skill as it is now."
            ) from None

    async def execute(
        self,
        session: Session,
        active: ActiveSkill,
        *,
        script: str,
        args: list[str],
        inputs: list[ArtifactRef],
        tool: SkillTool | None,
    ) -> list[Any]:
        """Run `script` of `active` at its pinned version (for `tool`, a skill tool's); its
        result and output files. A run the session's active skills' allowed-tools do not
        allow is refused first.

        Raises:
            ToolError: refused before the run, or the sandbox or manager failed.
            ScriptFailedError: the script ran and failed.
            MCPError: the :data:`~._results.UNAVAILABLE` refusal (nothing ran).
        """
        if not disclosure.permits(session.active, skill=active.name, script=script, tool=tool):
            what = tool.name if tool is not None else f"Running {active.name}/{script}"
            raise ToolError(disclosure.not_permitted(session.active, what))
        await self.pinned(active)  # a version no longer available is refused before the run
        try:
            request = ExecuteRequest(
                execution_id=f"mcp/{session.run_id}/{uuid.uuid4().hex}",
                run_id=session.run_id,
                skill=active.name,
                version=active.version,
                script=script,
                args=args,
                inputs=inputs,  # no limits: the manager's own
            )
        except ValidationError as exc:
            raise ToolError(f"The script was not run: {_invalid(exc)}") from None
        started = time.monotonic()
        with _sandbox_errors():
            result = await self._queued(request)
        logger.info(
            "mcp run %s %s: %s in %.0f ms",
            active.name,
            script,
            result.status,
            (time.monotonic() - started) * 1000,
        )
        result = self._artifacts.masked(result)
        content: list[Any] = [text(render_result(result, inline_chars=_OUTPUT_CHARS))]
        for output in result.outputs:
            content.append(await self._artifacts.output(output.ref))
        if result.status != "succeeded":
            raise ScriptFailedError(content)
        return content

    async def _queued(self, request: ExecuteRequest) -> ExecutionResult:
        """Run `request`, waiting while the pool is full or the manager is down or refuses
        this door (as a run's script step does). The request names this door's store: a
        manager on another one refuses it instead of looking for its packages and inputs
        where they are not."""
        request = request.model_copy(update={"store_id": await store_identity(self._store)})
        return await queued(
            lambda: self._run_script(request),
            queue_seconds=self._settings.sandbox.queue_seconds,
            call=f"script {request.skill}/{request.script}",
        )


@contextlib.contextmanager
def _sandbox_errors() -> Iterator[None]:
    """A run the manager rejected (what the caller can fix: ``skillweave.sandbox.client``'s
    rule), a manager that refuses this door or is down past the queue budget (an operator
    must act: said as such, never as the script's outcome), or a sandbox that failed (a full
    pool past the queue budget too), as a tool error; a run the manager could not record
    past the queue budget as the :data:`~._results.UNAVAILABLE` refusal (nothing ran)."""
    try:
        yield
    except AuditUnavailableError as exc:
        raise unavailable(str(exc), retry_after=exc.retry_after) from exc
    except ExecutionRejectedError as exc:
        raise ToolError(f"The script was not run: {exc.reason}") from None
    except (ManagerRefusedError, ManagerUnreachableError) as exc:
        raise ToolError(f"No script ran; an operator must act: {exc}") from None
    except SandboxError as exc:
        raise ToolError(f"The sandbox failed: {exc}; try again.") from None


def _invalid(exc: ValidationError) -> str:
    """A request's validation errors in one line: field and message, no input echoed back."""
    return "; ".join(
        f"{'.'.join(str(part) for part in error['loc']) or 'request'}: {error['msg']}"
        for error in exc.errors()[:3]
    )
