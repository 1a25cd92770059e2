"""Preparing what a run carries, before it takes a sandbox: the request checked by the
executor's own rules, its skill package read and admitted, its input artifacts read, its
environment built (a first use may build for minutes, holding no sandbox), its network
granted and its secrets joined.

:class:`RunPreparation` is called by ``ExecutionService``; its :class:`PreparedRun` goes to
the runner (``_runner``). Nothing here writes anything but a build, so a request refused here
started nothing and its id stays free.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from mcp_manager.executions._admission import Admission
from mcp_manager.executions._environment import RunEnvironments
from mcp_manager.executions._grants import EgressGrants
from mcp_manager.executions._packages import Packages
from mcp_manager.executions._secrets import RunSecrets
from mcp_manager.executor_client import SandboxRun
from skillweave.errors import ArtifactIntegrityError, ArtifactNotFoundError, ExecutionRejectedError
from skillweave.sandbox import (
    EgressGrant,
    ExecuteRequest,
    ExecutionLimits,
    ExecutorRequest,
    check_run,
    check_text,
    clean_script,
)
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["PreparedRun", "RunPreparation"]


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """What a run carries to its sandbox; why it is not given its skill's secrets (None: it
    is); the network it was granted (closed after the run)."""

    run: SandboxRun
    unbound: str | None
    grant: EgressGrant | None


def _input_name(ref: ArtifactRef) -> str:
    """Where an input lands under ``inputs/``: its path in the run (an output under the name
    its script gave it)."""
    if "/inputs/" in ref.key:
        return ref.key.split("/inputs/", 1)[1]
    if "/outputs/" in ref.key:
        return keys.decode_output_path(ref.key.split("/outputs/", 1)[1])
    return ref.key.rsplit("/", 1)[-1]


class RunPreparation:
    """Prepares runs from their requests.

    Args:
        store: where the input artifacts are read.
        packages: the skill packages.
        admission: whether a version may run, and whether it is bound to its secrets.
        environments: the runs' packed environments.
        grants: the runs' networks.
        secrets: the skills' secrets.
        default_limits: the limits of a request that sets none.
    """

    def __init__(
        self,
        store: ArtifactStore,
        *,
        packages: Packages,
        admission: Admission,
        environments: RunEnvironments,
        grants: EgressGrants,
        secrets: RunSecrets,
        default_limits: ExecutionLimits,
    ) -> None:
        self._store = store
        self._packages = packages
        self._admission = admission
        self._environments = environments
        self._grants = grants
        self._secrets = secrets
        self._default_limits = default_limits

    async def prepare(
        self, request: ExecuteRequest, package_ref: ArtifactRef | None
    ) -> PreparedRun:
        """What a run of `request` carries (`package_ref`: its package's, None when the
        version is not published).

        Raises:
            ExecutionRejectedError: the request cannot run as asked (an invalid field, an
                unknown skill or script, a foreign or missing input, a package changed or
                refused by the trust policy, dependencies or a network declaration that
                cannot be used); nothing ran.
        """
        package, inputs = await self._validate(request, package_ref)
        unbound = await self._admission.unbound(request)
        # Before a sandbox is taken: a first use may build for minutes, holding none.
        environment = await self._environments.of_run(request, package)
        owned = unbound is None
        grant = await self._grants.open(request, package) if owned else None
        try:
            run = self._sandbox_run(
                request, package, inputs, environment, egress=grant, owned=owned
            )
        except BaseException:
            await self._grants.close(grant)
            raise
        return PreparedRun(run, unbound, grant)

    async def _validate(
        self, request: ExecuteRequest, package_ref: ArtifactRef | None
    ) -> tuple[bytes, list[tuple[str, bytes]]]:
        # The executor's own rules, first: a request it would refuse never takes the claim.
        check_text(request.execution_id, "execution_id")
        check_text(request.skill, "skill")
        for ref in request.inputs:
            check_text(ref.key, "input key")
        check_run(
            script=request.script,
            args=request.args,
            env=self._secrets.env_of(request, owned=True),  # the largest it can be
            inputs=[_input_name(ref) for ref in request.inputs],
            input_bytes=sum(ref.size for ref in request.inputs),
        )
        script = clean_script(request.script)
        if package_ref is None:
            raise ExecutionRejectedError(
                404, f"skill {request.skill!r} version {request.version[:12]} is not published"
            )
        package = await self._packages.get(package_ref)
        await self._admission.check(request.skill, request.version, package)
        if script not in package.names:
            raise ExecutionRejectedError(
                404, f"script {script!r} is not in skill {request.skill!r}"
            )
        inputs: list[tuple[str, bytes]] = []
        for ref in request.inputs:
            if not keys.belongs_to_run(ref.key, request.run_id):
                raise ExecutionRejectedError(
                    403, f"input {ref.key!r} does not belong to run {request.run_id!r}"
                )
            name = _input_name(ref)
            try:
                inputs.append((name, await self._store.get_bytes(ref)))
            except ArtifactNotFoundError:
                raise ExecutionRejectedError(404, f"input {ref.key!r} does not exist") from None
            except ArtifactIntegrityError:
                raise ExecutionRejectedError(
                    409, f"input {ref.key!r} does not match its ref (size or sha256)"
                ) from None
        return package.data, inputs

    def _sandbox_run(
        self,
        request: ExecuteRequest,
        package: bytes,
        inputs: list[tuple[str, bytes]],
        environment: bytes | None,
        *,
        egress: EgressGrant | None = None,
        owned: bool = False,
    ) -> SandboxRun:
        """What the sandbox is sent: the request with its skill's secrets when the run is
        `owned` (those bound to a network destination stay with the egress proxy) and its
        limits."""
        env = self._secrets.env_of(request, owned=owned)
        for name in self._grants.bound_secrets(request.skill):
            env.pop(name, None)
        body = ExecutorRequest(
            script=clean_script(request.script),
            args=request.args,
            env=env,
            limits=request.limits or self._default_limits,
            environment_sha256=hashlib.sha256(environment).hexdigest() if environment else None,
            egress=egress,
        )
        return SandboxRun(
            request=request, body=body, package=package, inputs=inputs, environment=environment
        )
