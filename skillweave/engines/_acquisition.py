"""`SkillAcquisition`: the ``find_skills`` and ``prepare_skill_request`` side effects of an
agent that asks for registry skills (``skillweave.agent.acquisition`` offers the tools;
``AgentServices`` hands these calls here), and the rules the install shares with them.

``find_skills``: the registries the agent may use (``SKILLS__REGISTRIES``, narrowed by the
spec's ``acquisition.registries``) searched for a query; each hit shown with its registry,
version, scan and signature, and handed back so that ``request_skill`` may name it.

``prepare_skill_request`` (before anyone is asked): the registry entry found again by name,
its source (an ``owner/repo`` on ``SKILLS__GIT_HOST``, as ``skills install`` reads it) read at
the entry's commit (else its ref; only where ``SKILLS__INSTALL_SOURCES``
allows, when it is set: :func:`install_allowlist`), the named skill staged, its files hashed
and compared with the entry's version (a registry that lies, or a source that moved, is
refused), its signature checked against ``skills.trust`` and its package scanned under
``skills.scan.policy`` (with the model review when one is set). What would refuse it (not
listed, a name the library has, a source that cannot be read, a version that differs, a
signature refused, a scan that blocks) is the tool result, in a line the model can act on;
nothing is stored and nothing is recorded: only an install is. The install itself is
:class:`~skillweave.engines._installer.RegistryInstaller`'s.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from skillweave.agent import (
    FindSkillsInput,
    FindSkillsOutcome,
    RegistryOrigin,
    RegistrySkill,
    SkillRequestChecked,
    SkillRequestInput,
)
from skillweave.agent.disclosure import FIND_SKILLS, REQUEST_SKILL
from skillweave.config import SkillsSettings
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.errors import (
    ConfigError,
    PackageError,
    RegistryError,
    SignatureError,
    SkillFormatError,
    SkillScanError,
)
from skillweave.skills import Admissions, PackageLimits, archive_version
from skillweave.skills.install import SkillSource, fetched, staged_skills
from skillweave.skills.registries import MAX_HITS, Registries, RegistryHit
from skillweave.skills.review import SkillReviewer
from skillweave.skills.signing import SkillSignature
from skillweave.storage import ArtifactStore
from skillweave.terminal import counted

__all__ = ["SkillAcquisition", "Staged", "install_allowlist", "library_refusal", "stage_entry"]

_log = logging.getLogger("skillweave.engines")


@dataclass(frozen=True, slots=True)
class Staged:
    """A registry skill read from its source: its package, version, signature and commit."""

    package: bytes
    version: str
    signature: SkillSignature | None
    commit: str | None


def stage_entry(
    source: SkillSource,
    name: str,
    *,
    commit: str | None,
    limits: PackageLimits,
    allowed: Sequence[str] | None,
) -> Staged:
    """The skill `name` of `source` (at `commit`, a git source), packaged (blocking: run it in
    a thread); `allowed`: the allowlist the source must match (:func:`install_allowlist`).

    Raises:
        PackageError, SkillFormatError: the source cannot be read (or is not allowed), or
            holds no such skill.
    """
    commit = commit if source.kind == "git" else None
    with fetched(source, commit=commit, allowed=allowed) as got:
        found = staged_skills(got.root, only=(name,), limits=limits, submodules=got.submodules)
        if len(found) != 1:
            raise PackageError(f"the source holds {len(found)} skills named {name!r}, not one")
        [skill] = found
        _, version = archive_version(skill.package, limits=limits)
        return Staged(skill.package, version, skill.signature, got.commit)


def install_allowlist(settings: SkillsSettings) -> list[str] | None:
    """Where an agent's installs may read: ``SKILLS__INSTALL_SOURCES`` when it is set (the
    API's allowlist), else any source a configured registry lists (a person approves each,
    reading its source)."""
    return settings.install_sources or None


def library_refusal(views: SkillViews, name: str, version: str) -> str | None:
    """Why `name` cannot be installed into the library as it is now (a directory skill has
    the name, or the store holds it, at this `version` or another), or None."""
    registry = views.registry
    if name not in registry:
        return None
    owner = registry.owner_of(name)
    if owner.kind == "directory":
        return (
            f"The library has a skill named {name!r} already (a directory skill); activate "
            "it, or find a skill with another name."
        )
    if registry.get(name).version == version:
        return (
            f"The library has {name!r} at this version already; activate it if this agent may "
            "use it (search_skills finds it then)."
        )
    return (
        f"The library has another version of {name!r}; activate that one, or ask an operator "
        "to update it (skillweave skills install)."
    )


class SkillAcquisition:
    """``find_skills`` and ``prepare_skill_request`` for the runs of one worker.

    Args:
        views: the library, whose names a registry skill may not take.
        registries: the registries (``SKILLS__REGISTRIES``).
        transcript: where each call's result is stored.
        store: where the admission checks read (nothing is written).
        settings: the signature and scan policies.
        limits: what one package may hold.
        reviewer: the model review of a version's files (None: none).
    """

    def __init__(
        self,
        views: SkillViews,
        *,
        registries: Registries,
        transcript: TranscriptRecorder,
        store: ArtifactStore,
        settings: SkillsSettings,
        limits: PackageLimits,
        reviewer: SkillReviewer | None = None,
    ) -> None:
        self._views = views
        self._registries = registries
        self._transcript = transcript
        self._store = store
        self._settings = settings
        self._limits = limits
        self._reviewer = reviewer

    # --- find_skills -------------------------------------------------------------------------

    async def find(self, request: FindSkillsInput) -> FindSkillsOutcome:
        """The registry skills that fit a query; ``request_skill`` may name them."""
        try:  # more than asked: the agent's registries are picked from them
            wide = min(MAX_HITS, request.top_k * 4)
            results = await self._registries.results(request.query, top_k=wide)
        except (RegistryError, ConfigError) as exc:
            text = f"The registries could not be searched: {exc}"
            return await self._found(request, text, (), error=True)
        for problem in results.problems:  # the operator's to read, not the model's
            _log.warning("find_skills: %s", problem)
        hits = [hit for hit in results.hits if _allowed(hit.registry, request.registries)]
        hits = hits[: request.top_k]
        if not hits:
            text = "No registry skill matches that query; try other words."
            if results.problems:
                text += (
                    f" ({counted(len(results.problems), 'registry problem')} on the way: an "
                    "operator finds them in the worker's log.)"
                )
            return await self._found(request, text, ())
        lines, found = [], []
        for hit in hits:
            entry = hit.entry
            lines.append(f"- {entry.name}: {entry.description}")
            refused = library_refusal(self._views, entry.name, entry.version)
            if refused is not None:
                lines.append(f"  (cannot be requested: {refused})")
                continue
            lines.append(f"  {_facts(hit, self._settings)}")
            found.append(
                RegistrySkill(name=entry.name, registry=hit.registry, version=entry.version)
            )
        if found:
            lines.append(
                f"Ask for one with {REQUEST_SKILL}; a person decides whether to install it."
            )
        return await self._found(request, "\n".join(lines), tuple(found))

    async def _found(
        self,
        request: FindSkillsInput,
        text: str,
        found: tuple[RegistrySkill, ...],
        *,
        error: bool = False,
    ) -> FindSkillsOutcome:
        names = ", ".join(hit.name for hit in found) or "no match"
        summary = clip(f"[{FIND_SKILLS} {request.query!r}: {names}]")
        chars = await self._transcript.tool_result(
            request, tool=FIND_SKILLS, text=text, error=error, summary=summary
        )
        return FindSkillsOutcome(
            seq=request.seq, chars=chars, is_error=error, summary=summary, found=found
        )

    # --- prepare_skill_request ---------------------------------------------------------------

    async def prepare(self, request: SkillRequestInput) -> SkillRequestChecked:
        """Check a request before a person is asked (the module's docstring says what)."""
        name = request.name
        try:
            hit = await self._registries.find(name, registry=request.registry)
        except (RegistryError, ConfigError) as exc:
            return await self._refused(request, f"its registry could not be read: {exc}")
        if hit is None or hit.entry.name != name or not _allowed(hit.registry, request.registries):
            return await self._refused(
                request, f"no registry this agent may use lists {name!r} any more"
            )
        entry = hit.entry
        refused = library_refusal(self._views, name, entry.version)
        if refused is not None:
            return await self._refused(request, refused, version=entry.version)
        try:
            source = entry.install_source(git_host=self._settings.git_host)
            staged = await asyncio.to_thread(
                stage_entry,
                source,
                name,
                commit=entry.commit,
                limits=self._limits,
                allowed=install_allowlist(self._settings),
            )
        except (PackageError, SkillFormatError) as exc:
            return await self._refused(request, f"its source cannot be read: {exc}")
        if staged.version != entry.version:
            return await self._refused(
                request,
                f"its files hash to version {staged.version[:12]}, not the {entry.version[:12]} "
                f"the registry {hit.registry!r} lists (the registry is wrong, or the source "
                "moved); ask for another skill",
                version=entry.version,
            )
        # The checks the install makes again (skills.admission), here with nothing recorded.
        admissions = Admissions(self._settings, self._store, reviewer=self._reviewer)
        signature = staged.signature or entry.signature
        if signature is not None:
            admissions.signatures[name] = signature
        try:
            await admissions.check(name, staged.version, staged.package)
        except SignatureError as exc:
            return await self._refused(
                request, f"its signature is refused: {exc}", version=staged.version
            )
        except SkillScanError as exc:
            return await self._refused(
                request,
                f"its scan found what the policy blocks ({'; '.join(exc.findings[:3])}); "
                "ask for another skill",
                version=staged.version,
            )
        admitted = admissions.admitted[name]
        if signature is None:
            signed = "unsigned"  # which the trust policy allows, or the check refused it
        else:
            signed = f"signed by {signature.key_id}, " + (
                f"not verified: {admitted.warning}"
                if admitted.warning
                else "verified with a trusted key"
            )
        return SkillRequestChecked(
            seq=request.seq,
            chars=0,
            summary=clip(f"[{REQUEST_SKILL} {name}: checked, asking a person]"),
            ready=True,
            name=name,
            version=staged.version,
            origin=RegistryOrigin(
                registry=hit.registry,
                source=source.location,
                kind=source.kind if source.kind != "agent" else "folder",
                ref=source.ref,
                commit=staged.commit,
                path=source.path,
            ),
            scan=clip(admitted.report.summary(), 1_000),
            decision=admitted.decision,
            signature=clip(signed, 500),
        )

    async def _refused(
        self, request: SkillRequestInput, why: str, *, version: str = ""
    ) -> SkillRequestChecked:
        text = f"{request.name!r} cannot be installed: {why}."
        summary = clip(f"[{REQUEST_SKILL} {request.name}: refused] {text}")
        chars = await self._transcript.tool_result(
            request, tool=REQUEST_SKILL, text=text, error=True, summary=summary
        )
        return SkillRequestChecked(
            seq=request.seq,
            chars=chars,
            is_error=True,
            summary=summary,
            name=request.name,
            version=version,
        )


def _allowed(registry: str, allowed: Sequence[str] | None) -> bool:
    return allowed is None or registry in allowed


def _facts(hit: RegistryHit, settings: SkillsSettings) -> str:
    """A hit's registry, version, scan and signature, in a line."""
    entry = hit.entry
    scan = "not scanned"
    if entry.scan is not None:
        scan = f"{entry.scan.summary} ({entry.scan.decision_under(settings.scan)})"
    signed = "unsigned"
    if entry.signature is not None:
        signed = f"signed by {entry.signature.key_id}" + ("" if hit.verified else " (unverified)")
    return f"registry: {hit.registry} · version {entry.version[:12]} · scan: {scan} · {signed}"
