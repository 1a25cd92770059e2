"""Admission of a skill version to run: its package must be the version it is stored under
and signed as the trust policy asks, and a run gets its skill's secrets, credentials and
network only when the version is bound to them (``skillweave.sandbox.bindings``).

:class:`Admission` is asked by the run's preparation (``_preparation``) and by
``ExecutionService.prepare_environment``; it warns once per version, not per run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from mcp_manager.executions._grants import EgressGrants
from mcp_manager.executions._packages import SkillPackage
from mcp_manager.executions._secrets import RunSecrets
from skillweave.config import TrustSettings
from skillweave.errors import ExecutionRejectedError, SignatureError
from skillweave.sandbox import ExecuteRequest, SkillOwnership
from skillweave.skills import Skill, bound_name
from skillweave.skills.signing import check_trust, parse_signature
from skillweave.storage import ArtifactStore, keys

__all__ = ["Admission"]

logger = logging.getLogger("skillweave.manager")


class Admission:
    """Whether a skill version may run here, and whether its runs are bound to its secrets.

    Args:
        store: where signatures lie beside packages (``keys.skill_signature_key``).
        trust: the signature policy (``skills.trust``).
        ownership: which versions own their skill's name.
        secrets: the skills' secrets (whether any are configured for a name).
        grants: the runs' networks (whether one is approved for a name).
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        trust: TrustSettings,
        ownership: SkillOwnership,
        secrets: RunSecrets,
        grants: EgressGrants,
    ) -> None:
        self._store = store
        self._trust = trust
        self._ownership = ownership
        self._secrets = secrets
        self._grants = grants
        self._trust_warned: set[tuple[str, str]] = set()
        self._unbound_warned: set[tuple[str, str]] = set()

    def use_registry(self, skills: Iterable[Skill]) -> None:
        """Take the manager's library as scanned now: the versions of its directory skills
        that their secrets, credentials and network bind to."""
        self._ownership.use_registry(skills)

    async def check(self, skill: str, version: str, package: SkillPackage) -> None:
        """Refuse a package whose files are not the version it is stored under (changed in
        the store after it was published), or whose signature the trust policy refuses
        (``skills.trust``; its signature is ``keys.skill_signature_key`` beside it).

        Raises:
            ExecutionRejectedError: 409 changed, 403 refused by the policy (one line each).
        """
        if package.version != version:
            raise ExecutionRejectedError(
                409,
                f"skill {skill!r} version {version[:12]}: the stored package's files hash to "
                f"{package.version[:12]}; it was changed after it was published and is not run",
            )
        signature = None
        ref = await self._store.stat(keys.skill_signature_key(skill, version))
        try:
            if ref is not None:
                signature = parse_signature(await self._store.get_bytes(ref), source=ref.key)
            warning = check_trust(signature, name=skill, version=version, policy=self._trust)
        except SignatureError as exc:
            raise ExecutionRejectedError(403, str(exc)) from None
        if warning is not None and (skill, version) not in self._trust_warned:
            self._trust_warned.add((skill, version))  # once per version, not per run
            logger.warning("%s", warning)

    async def unbound(self, request: ExecuteRequest) -> str | None:
        """Why the run is not given its skill's secrets, credentials and network (its name is
        not canonical, or the version is not its owner's: ``sandbox.bindings``), logged once
        per version (every run's audit record has it); None when it is given them, or nothing
        is configured for its name."""
        if bound_name(request.skill) is not None and not await self._configured(request.skill):
            return None  # nothing to give: who owns the name does not matter
        refusal = await self._ownership.refusal(request.skill, request.version)
        if refusal is not None and (request.skill, request.version) not in self._unbound_warned:
            self._unbound_warned.add((request.skill, request.version))  # once per version
            logger.warning(
                "skill %r version %s runs without secrets, credentials or network: %s",
                request.skill,
                request.version[:12],
                refusal,
            )
        return refusal

    async def _configured(self, skill: str) -> bool:
        """Whether secrets, credentials or a network approval are configured for `skill`."""
        if self._secrets.of_skill(skill):
            return True
        return await self._grants.configured(skill)
