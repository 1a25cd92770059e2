"""`SkillPublisher`: the ``publish_skill`` side effect (``SkillAuthoring`` hands it here).

After a person approved (with the draft's scan in front of them), the run's draft package is
stored as an uploaded skill (``StoredSkills``: validated again, its name owned, its origin the
run), and the worker's library serves it at once, so later runs find it. Its ``scan``,
``signature``, ``approval`` and ``upload`` records are written before it is stored
(``skills.admission``); a record that cannot be written raises
:class:`~skillweave.errors.AuditLogError`, a failing store the engines retry, never a tool
result. A publication the library refuses (a name taken, a bad package or signature, a
blocking scan) is a tool result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from skillweave.agent import PublishSkillInput, PublishSkillOutcome
from skillweave.agent.disclosure import PUBLISH_SKILL
from skillweave.config import SkillsSettings
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.errors import (
    PackageError,
    SignatureError,
    SkillFormatError,
    SkillNameTakenError,
    SkillScanError,
)
from skillweave.skills import Admissions
from skillweave.skills.review import SkillReviewer
from skillweave.skills.stored import SkillOrigin, StoredSkills, directory_owners
from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import AuditEntry, AuditLog

__all__ = ["SkillPublisher"]

_log = logging.getLogger("skillweave.engines")


class SkillPublisher:
    """``publish_skill`` for the runs of one worker.

    Args:
        views: the library, whose directory skills an upload may not replace.
        transcript: where each call's result is stored.
        audit: where publications are recorded.
        store: where drafts are and uploaded skills are kept.
        settings: the signature policy.
        published: called after a publication, to serve the new skill at once (the worker's
            uploaded-skills refresh); None: it is served at the next refresh.
        reviewer: the model review the publication's admission applies; None: none.
    """

    def __init__(
        self,
        views: SkillViews,
        *,
        transcript: TranscriptRecorder,
        audit: AuditLog,
        store: ArtifactStore,
        settings: SkillsSettings,
        published: Callable[[], Awaitable[None]] | None = None,
        reviewer: SkillReviewer | None = None,
    ) -> None:
        self._views = views
        self._transcript = transcript
        self._audit = audit
        self._store = store
        self._settings = settings
        self.published = published
        self._reviewer = reviewer

    async def publish(self, request: PublishSkillInput) -> PublishSkillOutcome:
        """Store the approved draft as an uploaded skill and serve it."""
        store = self._store
        registry = self._views.registry
        record = await store.stat(keys.draft_key(request.run_id, request.name, request.version))
        package = await store.stat(keys.skill_package_key(request.name, request.version))
        error: str | None = None
        if record is None or package is None:
            error = f"{request.name!r} version {request.version[:12]} is not a draft of this run"
        else:
            data = await store.get_bytes(package)
            owners = directory_owners(
                skill for skill in registry if registry.owner_of(skill.name).kind == "directory"
            )
            origin = SkillOrigin(source=f"run {request.run_id}", kind="agent")
            admissions = Admissions(
                self._settings,
                store,
                audit=self._audit,
                run=request.run_id,
                reviewer=self._reviewer,
            )

            async def admitted(name: str, version: str, package: bytes) -> bool:
                await admissions.check(name, version, package)
                # Recorded before it is stored: a record that cannot be written raises
                # AuditLogError (not among the refusals below), which the engines retry.
                await admissions.announce(
                    [
                        AuditEntry(
                            "approval",
                            skill=name,
                            version=version,
                            run=request.run_id,
                            details={"decision": "published", "by": request.approved_by},
                        ),
                        AuditEntry(
                            "upload",
                            skill=name,
                            version=version,
                            run=request.run_id,
                            details={"source": "agent"},
                        ),
                    ]
                )
                return False  # the person who approved the publication read its scan

            try:
                await StoredSkills(store).add_package(
                    data,
                    reserved=owners,
                    origin=origin,
                    expect_version=request.version,
                    check=admitted,
                )
            except (
                SkillNameTakenError,
                SkillFormatError,
                PackageError,
                SignatureError,
                SkillScanError,
            ) as exc:
                error = str(exc)
            else:
                await admissions.keep(request.name)
        if error is None and self.published is not None:
            try:
                await self.published()
            except Exception:  # served at the next refresh anyway
                _log.warning("serving the published skill %s failed", request.name, exc_info=True)
        text = (
            f"Published {request.name!r} (version {request.version[:12]}): later runs can find "
            "and activate it."
            if error is None
            else f"{request.name!r} was not published: {error}"
        )
        summary = clip(f"[{PUBLISH_SKILL} {request.name}: {text}]")
        chars = await self._transcript.tool_result(
            request, tool=PUBLISH_SKILL, text=text, error=error is not None, summary=summary
        )
        return PublishSkillOutcome(
            seq=request.seq,
            chars=chars,
            is_error=error is not None,
            summary=summary,
            published=error is None,
        )
