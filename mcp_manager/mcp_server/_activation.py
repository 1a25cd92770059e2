"""Activating a skill in an MCP session (``activate_skill``): :class:`Activations`.

An activation applies the signature policy (``skillweave.skills.admission``, as a run's does),
publishes the skill's package (what the manager runs its scripts from), finds an executable
skill's tools (their schemas through :class:`~._runs.ScriptRuns`), notes its ``allowed-tools``,
renders the ``<skill_content>`` payload with the children it opens, and pins the skill's
version in the session. Each is an ``activation`` record of the audit log, written before the
session counts the skill as active: a log that cannot be written refuses the call with the
:data:`~._results.UNAVAILABLE` error. The tool handler calls :meth:`Activations.activate`;
``SkillMcp.aclose`` closes the log.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from mcp_manager.mcp_server._library import SessionLibrary
from mcp_manager.mcp_server._results import ToolError, text, unavailable
from mcp_manager.mcp_server._runs import ScriptRuns
from mcp_manager.mcp_server._sessions import Session
from skillweave.agent import ActiveSkill, disclosure
from skillweave.config import Settings
from skillweave.errors import AuditLogError, InvalidKeyError, PackageError
from skillweave.sandbox import AUDIT_RETRY_SECONDS, audit_refusal, publish_skill
from skillweave.skills import (
    activation_trust,
    declared_tool_scripts,
    render_activation,
    skill_allowance,
)
from skillweave.storage import ArtifactStore
from skillweave.storage.audit import AuditLog

__all__ = ["Activations"]


class Activations:
    """Skills activated in sessions, each audited in `store`'s log.

    Args:
        settings: the skills section (trust policy, resource listing) and the audit section.
        store: where packages are published and the audit log is kept.
        library: the skills each session sees.
        runs: finds an executable skill's tool schemas.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: ArtifactStore,
        library: SessionLibrary,
        runs: ScriptRuns,
    ) -> None:
        self._settings = settings
        self._store = store
        self._library = library
        self._runs = runs
        self._audit = AuditLog.from_settings(
            settings.audit, store, actor=f"mcp@{socket.gethostname()}"
        )

    async def aclose(self) -> None:
        """Close the audit log: its queued records are written and its newest one anchored."""
        await self._audit.aclose()

    async def activate(self, session: Session, name: str) -> list[Any]:
        """Activate `name` in `session`: the ``<skill_content>`` payload and its footer.

        Raises:
            ToolError: the session may not activate it now, or its signature is refused.
            MCPError: the :data:`~._results.UNAVAILABLE` refusal (the log cannot be written).
        """
        library = self._library.of(session)
        name = library.canonical(name) or name  # web.scraper for scraper
        refusal = disclosure.activation_refusal(
            name, roots=self._library.roots(session), active=session.active
        )
        if refusal is None and not library.is_enabled(name):  # gone since its parent
            refusal = disclosure.cannot_activate(name, self._library.attachable(session))
        if refusal is not None:
            raise ToolError(refusal)
        skill = library.get(name)
        # The signature policy, as a run's activation applies it (a refusal is a tool error).
        refused, warning = await activation_trust(
            self._store, skill, self._settings.skills.trust, own=True
        )
        if refused is not None:
            raise ToolError(f"The skill {name!r} cannot be used: {refused}")
        notes: list[str] = [warning] if warning is not None else []
        try:
            await publish_skill(self._store, skill)  # what the manager runs its scripts from
        except (PackageError, InvalidKeyError) as exc:
            notes.append(disclosure.package_refused(exc))
        tools, notes = await disclosure.activation_tools(
            declared_tool_scripts(skill),
            lambda script: self._runs.tool_schemas(skill, script),
            skill=name,
            taken=disclosure.registered_tools(session.active),
            notes=notes,
        )
        allowed, warnings = skill_allowance(skill.allowed_tools)
        if allowed is not None:
            notes += [disclosure.allowance_note(allowed), *warnings]
        children = library.children_of(name, enabled_only=True)
        rendered = await asyncio.to_thread(
            render_activation,
            skill,
            children=children,
            max_listed=self._settings.skills.activation_resource_listing,
        )
        try:  # recorded before the session counts it: an activation is never unrecorded
            await self._audit.record(
                "activation", skill=name, version=skill.version, run=session.run_id
            )
        except AuditLogError as exc:
            raise unavailable(
                audit_refusal(exc, what="this activation", so=f"{name!r} was not activated"),
                retry_after=AUDIT_RETRY_SECONDS,
            ) from exc
        session.active[name] = ActiveSkill(
            name=name,
            version=skill.version,
            children=tuple(child.name for child in children),
            tools=tuple(tools),
            allowed=allowed,
        )
        return [text(rendered + disclosure.activation_footer(tools, notes))]
