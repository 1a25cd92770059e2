"""`RegistryInstaller`: the ``install_skill`` side effect, once a person approved a registry
skill an agent asked for (``AgentServices`` hands it here).

It installs exactly what the person saw: the source at the commit ``prepare_skill_request``
read, the named skill only, refused unless its files still hash to the approved version
(``skills.install.install_skills`` with ``expect``), admitted again (signature and scan,
``skills.admission``) and audited: an ``approval`` record (who approved, for this run) and
the ``install`` record (actor: the run; the registry, the person and the step in its
details), both before it is stored. A scan that says ``approve`` is satisfied by this
person's approval, so the skill is stored enabled.

**Exactly one install** however often the step runs (an activity retried, a worker killed
half-way), by two markers under the run's keys (``runs/{run}/acquisitions/{seq}…``), both
written put-if-absent:

- ``….announced``, written just before the audit records are appended. A step that finds it
  may have died between the two: it reads the log for this step's ``install`` record and
  appends only if none is there (the log is read only on that path, a rare one).
- ``….json``, written once the skill is stored: a step that finds it answers as the first did.

Between them, the store write itself is idempotent (the same version of the same name stored
again is the same record), so a death anywhere leaves one stored version and one ``install``
record. An install the library refuses (the source moved, a name taken meanwhile, a signature
or scan refused) is a tool result; an audit log or store that fails raises, and the engines
retry the step.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from skillweave.agent import InstallSkillInput, InstallSkillOutcome
from skillweave.agent.disclosure import ACTIVATE_SKILL, REQUEST_SKILL
from skillweave.config import SkillsSettings
from skillweave.engines._acquisition import install_allowlist
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.errors import (
    ConfigError,
    PackageError,
    RegistryError,
    SignatureError,
    SkillFormatError,
    SkillNameTakenError,
    SkillScanError,
)
from skillweave.skills import Admissions, package_limits
from skillweave.skills.install import SkillSource, install_skills
from skillweave.skills.registries import Registries
from skillweave.skills.review import SkillReviewer
from skillweave.skills.signing import SkillSignature
from skillweave.skills.stored import StoredSkills, directory_owners
from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import AuditEntry, AuditLog

__all__ = ["RegistryInstaller", "acquisition_key"]

_INSTALLED: Final = ("install", "update")
_LABEL_CHARS: Final = 200  # a registry's label in a record (a record's details are capped)
_log = logging.getLogger("skillweave.engines")


def acquisition_key(run_id: str, seq: int) -> str:
    """``runs/{run}/acquisitions/{seq}``: the step's markers start with it."""
    return f"{keys.run_prefix(run_id)}acquisitions/{seq:08d}"


class _ApprovedAdmissions(Admissions):
    """The admissions of one approved install: the person's approval satisfies a scan that
    says ``approve`` (stored enabled), and the records name the run, the person, the registry
    and the step; appended once (the module's docstring says how)."""

    def __init__(
        self,
        request: InstallSkillInput,
        *,
        settings: SkillsSettings,
        store: ArtifactStore,
        audit: AuditLog,
        reviewer: SkillReviewer | None,
    ) -> None:
        super().__init__(settings, store, audit=audit, run=request.run_id, reviewer=reviewer)
        self._request = request
        self._log = audit
        self._step = acquisition_key(request.run_id, request.seq)

    async def check(self, name: str, version: str, package: bytes) -> bool:
        await super().check(name, version, package)
        return False  # the person who approved the install read its scan

    async def announce(self, entries: Sequence[AuditEntry]) -> None:
        request = self._request
        marker = await self.store.put_if_absent(
            f"{self._step}.announced", b"{}", content_type="application/json"
        )
        if marker is None and await self._announced():
            return  # an earlier attempt of this step recorded it, then died
        actor = f"run {request.run_id}"
        facts = {
            "registry": request.origin.registry[:_LABEL_CHARS],
            "approved_by": request.approved_by,
            "step": request.seq,
        }
        approval = AuditEntry(
            "approval",
            skill=request.name,
            version=request.version,
            run=request.run_id,
            actor=request.approved_by or None,
            details={"decision": "installed", **facts},
        )
        await super().announce(
            [
                approval,
                *(
                    dataclasses.replace(
                        entry, run=request.run_id, actor=actor, details={**entry.details, **facts}
                    )
                    for entry in entries
                ),
            ]
        )

    async def _announced(self) -> bool:
        """Whether the log holds this step's install record already."""
        request = self._request
        async for record in self._log.read(skill=request.name):
            if (
                record.event in _INSTALLED
                and record.run == request.run_id
                and record.details.get("step") == request.seq
            ):
                return True
        return False


class RegistryInstaller:
    """``install_skill`` for the runs of one worker.

    Args:
        views: the library, whose directory skills an install may not replace.
        registries: where an entry's signature is found when its source carries none.
        transcript: where each call's result is stored.
        audit: where installs are recorded.
        store: where skills are stored.
        settings: the signature and scan policies.
        reviewer: the model review (None: none).
        installed: called after an install, to serve the new skill at once (None: at the
            next refresh).
    """

    def __init__(
        self,
        views: SkillViews,
        *,
        registries: Registries,
        transcript: TranscriptRecorder,
        audit: AuditLog,
        store: ArtifactStore,
        settings: SkillsSettings,
        reviewer: SkillReviewer | None = None,
        installed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._views = views
        self._registries = registries
        self._transcript = transcript
        self._audit = audit
        self._store = store
        self._settings = settings
        self._reviewer = reviewer
        self.installed = installed

    async def install(self, request: InstallSkillInput) -> InstallSkillOutcome:
        """Install the approved version (exactly once: the module's docstring)."""
        done = f"{acquisition_key(request.run_id, request.seq)}.json"
        error: str | None = None
        if await self._store.stat(done) is None:
            error = await self._install(request)
            if error is None:
                record = {"name": request.name, "version": request.version}
                await self._store.put_if_absent(
                    done, json.dumps(record).encode(), content_type="application/json"
                )
                await self._serve(request.name)
        origin = request.origin
        text = (
            f"Installed {request.name!r} (version {request.version[:12]}) from the registry "
            f"{origin.registry!r}. Activate it with {ACTIVATE_SKILL}."
            if error is None
            else f"{request.name!r} was not installed: {error}"
        )
        summary = clip(f"[{REQUEST_SKILL} {request.name}: {text}]")
        chars = await self._transcript.tool_result(
            request, tool=REQUEST_SKILL, text=text, error=error is not None, summary=summary
        )
        return InstallSkillOutcome(
            seq=request.seq,
            chars=chars,
            is_error=error is not None,
            summary=summary,
            installed=error is None,
            version=request.version if error is None else "",
        )

    async def _serve(self, name: str) -> None:
        """Serve the installed skill at once (else at the next refresh: a failure here is
        logged, not the step's)."""
        if self.installed is None:
            return
        try:
            await self.installed()
        except Exception:
            _log.warning("serving the installed skill %s failed", name, exc_info=True)

    async def _install(self, request: InstallSkillInput) -> str | None:
        """Install it; None, or why the library refused it."""
        origin = request.origin
        source = SkillSource(
            kind=origin.kind, location=origin.source, ref=origin.ref, path=origin.path
        )
        admissions = _ApprovedAdmissions(
            request,
            settings=self._settings,
            store=self._store,
            audit=self._audit,
            reviewer=self._reviewer,
        )
        signature = await self._listed_signature(request)
        if signature is not None:
            admissions.signatures[request.name] = signature  # else its folder's
        registry = self._views.registry
        owners = directory_owners(
            skill for skill in registry if registry.owner_of(skill.name).kind == "directory"
        )
        try:
            await install_skills(
                StoredSkills(self._store, limits=package_limits(self._settings)),
                source,
                only=(request.name,),
                reserved=owners,
                commit=origin.commit,
                expect={request.name: request.version},
                admissions=admissions,
                allowed=install_allowlist(self._settings),
                registry=origin.registry,
            )
        except (
            PackageError,
            SkillFormatError,
            SkillNameTakenError,
            SignatureError,
            SkillScanError,
        ) as exc:
            return str(exc)
        return None

    async def _listed_signature(self, request: InstallSkillInput) -> SkillSignature | None:
        """The signature the registry lists for the approved version (what the check before
        the approval used when the source carries none), or None."""
        try:
            hit = await self._registries.find(request.name, registry=request.origin.registry)
        except (RegistryError, ConfigError):
            return None  # the source's own signature, if any, is checked all the same
        if hit is None or hit.entry.version != request.version:
            return None
        return hit.entry.signature
