"""A run's network: the egress grant of a skill whose declared destinations an operator
approved (``sandbox.egress``), opened before its run and closed after it.

:class:`EgressGrants` is built by ``ExecutionService`` over the manager's
:class:`~mcp_manager.egress.EgressService` (or none: no run gets a network); the run's
preparation (``_preparation``) opens grants, ``ExecutionService`` closes them, and admission
(``_admission``) asks whether a skill has a network or secrets bound to one.
"""

from __future__ import annotations

import asyncio

from mcp_manager.egress import EgressService, declared_network
from mcp_manager.executions._secrets import RunSecrets
from skillweave.errors import EgressPolicyError, ExecutionRejectedError
from skillweave.sandbox import EgressGrant, ExecuteRequest

__all__ = ["EgressGrants"]


class EgressGrants:
    """Opens and closes the egress grants of runs.

    Args:
        egress: the egress proxy; None: no run gets a network.
        secrets: the skills' secrets (those bound to a destination go to the proxy).
    """

    def __init__(self, egress: EgressService | None, secrets: RunSecrets) -> None:
        self._egress = egress
        self._secrets = secrets

    def bound_secrets(self, skill: str) -> set[str]:
        """The names of `skill`'s secrets bound to a destination: the proxy's, never the
        script's."""
        if self._egress is None:
            return set()
        return self._egress.bound_secrets(skill)

    async def configured(self, skill: str) -> bool:
        """Whether secrets bound to a destination or a network approval are configured for
        `skill`."""
        if self._egress is None:
            return False
        return bool(self._egress.bound_secrets(skill)) or (
            await self._egress.approval_of(skill) is not None
        )

    async def open(self, request: ExecuteRequest, package: bytes) -> EgressGrant | None:
        """The run's network, when its skill declares destinations an operator approved
        (``sandbox.egress``); None: no network at all, as every other run.

        Raises:
            ExecutionRejectedError: 422, the skill's network declaration cannot be read.
        """
        if self._egress is None:
            return None
        approval = await self._egress.approval_of(request.skill)
        if approval is None:
            return None
        try:
            declared = await asyncio.to_thread(declared_network, package)
        except EgressPolicyError as exc:
            raise ExecutionRejectedError(422, f"skill {request.skill!r}: {exc}") from exc
        if not declared:
            return None
        secrets = self._secrets.of_skill(request.skill) or {}
        return self._egress.open_grant(
            request, declared=declared, approval=approval, secrets=secrets
        )

    async def close(self, grant: EgressGrant | None) -> None:
        """Close a run's network (nothing when it had none)."""
        if grant is not None and self._egress is not None:
            await self._egress.close_grant(grant.token)
