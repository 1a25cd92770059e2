"""`Activations`: the ``load_skill`` side effect (``AgentServices`` hands it here).

An activation pins the skill's version, checks it against the signature policy
(``skills.trust``: a refused skill comes back to the model as a tool result), publishes its
package where the manager runs packages from, registers the tools its scripts declare (their
schemas from ``--help-json``, run once per skill version) and stores the activation message.
It is in the audit log before the run sees it: one whose record cannot be written raises
(:class:`~skillweave.errors.AuditLogError`, retried like any failing store).
"""

from __future__ import annotations

from typing import Final

from skillweave.agent import LoadSkillInput, SkillLoaded, disclosure
from skillweave.config import SkillsSettings
from skillweave.engines._script_executor import ScriptExecutor
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder
from skillweave.engines.worker_metrics import WorkerMetrics
from skillweave.errors import InvalidKeyError, PackageError
from skillweave.llm import Message
from skillweave.sandbox import discover_tool_schemas, publish_skill
from skillweave.skills import (
    Skill,
    ToolSchema,
    activation_trust,
    declared_tool_scripts,
    largest_read,
    render_activation,
    skill_allowance,
)
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = ["Activations"]

_LARGEST_KEPT: Final = 4096
"""Skill versions whose largest read is remembered (then forgotten all at once)."""


class Activations:
    """``load_skill`` for the runs of one worker.

    Args:
        views: where skills are looked up.
        executor: runs a script's ``--help-json``.
        transcript: where the activation message is stored.
        store: where packages are published and signatures found.
        settings: the resource listing's length, the read limit and the signature policy.
        audit: where each activation is recorded.
        metrics: where activations are counted.
    """

    def __init__(
        self,
        views: SkillViews,
        *,
        executor: ScriptExecutor,
        transcript: TranscriptRecorder,
        store: ArtifactStore,
        settings: SkillsSettings,
        audit: AuditLog,
        metrics: WorkerMetrics,
    ) -> None:
        self._views = views
        self._executor = executor
        self._transcript = transcript
        self._store = store
        self._settings = settings
        self._audit = audit
        self._metrics = metrics
        self._schemas: dict[tuple[str, str, str], tuple[ToolSchema, ...] | str] = {}
        self._largest: dict[tuple[str, str], int] = {}

    async def load(self, request: LoadSkillInput) -> SkillLoaded:
        """Activate a skill: pin its version, publish its package, register its tools. A
        skill the run wrote (``draft``) is its draft's package, stored when it was made; one
        it had installed (``acquired``), that version's stored package."""
        notes: list[str] = []
        # A draft, or a skill the run had installed (request_skill): that version, from the
        # store, whatever the allowlist or pins say.
        stored = request.draft or request.acquired
        if stored is not None:
            skill = await self._views.skill_at(request.skill, stored)
            children: list[Skill] = []
        else:
            skill, view = await self._views.skill(request.skill, request.allowed, request.pinned)
        refused = await self._trusted(skill, notes, own=stored is None)
        if refused is not None:
            return await self._refused(request, skill, refused)
        if stored is None:
            try:
                await publish_skill(self._store, skill)
            except (PackageError, InvalidKeyError) as exc:
                # Its instructions still help; its scripts cannot run (the manager runs
                # packages).
                notes.append(disclosure.package_refused(exc))
            children = view.children_of(skill.name, enabled_only=True)
        text = render_activation(
            skill, children=children, max_listed=self._settings.activation_resource_listing
        )
        tools, notes = await disclosure.activation_tools(
            declared_tool_scripts(skill),
            lambda script: self.tool_schemas(skill, script),
            skill=skill.name,
            taken=request.taken_tools,
            notes=notes,
        )
        allowed, warnings = skill_allowance(skill.allowed_tools)
        if allowed is not None:
            notes += [disclosure.allowance_note(allowed), *warnings]
        text += disclosure.activation_footer(tools, notes)
        message = _message(
            request, text, preloaded=f"The skill {skill.name!r} was activated for this task.\n"
        )
        # Recorded before the activation is kept (its message in the transcript, where the
        # run reads it): a record that cannot be written raises AuditLogError, a StorageError
        # the engines retry (``engines.retries``), never a tool result. `step` (its place in
        # the transcript) tells a retried step's record (its transcript write failed after
        # it) from another activation.
        await self._audit.record(
            "activation",
            skill=skill.name,
            version=skill.version,
            run=request.run_id,
            step=request.seq,
        )
        chars = await self._transcript.store_message(request.run_id, request.seq, message)
        self._metrics.activations.labels(skill=skill.name).inc()
        return SkillLoaded(
            skill=skill.name,
            version=skill.version,
            chars=chars,
            children=tuple(child.name for child in children),
            tools=tuple(tools),
            notes=tuple(notes),
            allowed=allowed,
            read_chars=self._largest_read(skill),
        )

    def _largest_read(self, skill: Skill) -> int:
        """:func:`~skillweave.skills.largest_read` of `skill`, once per version (a pinned
        version's files never change)."""
        key = (skill.name, skill.version)
        found = self._largest.get(key)
        if found is None:
            found = largest_read(skill, max_bytes=self._settings.resource_max_bytes)
            if len(self._largest) >= _LARGEST_KEPT:
                self._largest.clear()
            self._largest[key] = found
        return found

    async def tool_schemas(self, skill: Skill, script: str) -> tuple[ToolSchema, ...] | str:
        """The tools `script` offers, from ``--help-json`` run once per skill version."""
        key = (skill.name, skill.version, script)
        cached = self._schemas.get(key)
        if cached is not None:
            return cached
        found = await discover_tool_schemas(
            self._executor.execute, skill=skill.name, version=skill.version, script=script
        )
        self._schemas[key] = found
        return found

    async def _trusted(self, skill: Skill, notes: list[str], *, own: bool) -> str | None:
        """Why the signature policy (``skills.trust``) refuses `skill` at this version, or
        None (a warning joins `notes`): :func:`activation_trust`."""
        refused, warning = await activation_trust(self._store, skill, self._settings.trust, own=own)
        if warning is not None:
            notes.append(warning)
        return refused

    async def _refused(self, request: LoadSkillInput, skill: Skill, reason: str) -> SkillLoaded:
        text = f"The skill {skill.name!r} cannot be used: {reason}"
        message = _message(request, text, is_error=True)
        chars = await self._transcript.store_message(request.run_id, request.seq, message)
        return SkillLoaded(skill=skill.name, version=skill.version, chars=chars, refused=text)


def _message(
    request: LoadSkillInput, text: str, *, preloaded: str = "", is_error: bool = False
) -> Message:
    """`text` as the answer to the model's ``activate_skill`` call, or, for a skill loaded
    without one (preloaded), as a user message after `preloaded`."""
    if request.tool_call_id:
        return Message(
            role="tool",
            text=text,
            tool_call_id=request.tool_call_id,
            tool_name=disclosure.ACTIVATE_SKILL,
            is_error=is_error,
        )
    return Message(role="user", text=preloaded + text)
