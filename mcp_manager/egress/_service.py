"""The manager's egress: :class:`EgressService` holds the operator's approvals and credential
bindings, the gateway (``_gateway``), and the audit log (each execution's records stored beside
its outputs, and logged).

Made by the manager's app (``mcp_manager.app``); the executions (``mcp_manager.executions``)
open a grant per run that may reach the network and close it when the run ends.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mcp_manager.egress._context import EgressContext, secret_names
from mcp_manager.egress._dialer import Resolver
from mcp_manager.egress._gateway import EgressGateway
from mcp_manager.egress._log import EgressRecord
from mcp_manager.metrics import ManagerMetrics
from skillweave.config import EgressApproval, EgressSettings
from skillweave.sandbox import (
    EgressGrant,
    ExecuteRequest,
    NetworkApprovals,
    check_bound_names,
    configured_for,
)
from skillweave.skills import Destination
from skillweave.storage import ArtifactStore, keys

__all__ = ["EgressService"]

logger = logging.getLogger("skillweave.egress")


class EgressService:
    """The manager's egress: the operator's approvals (``sandbox.egress`` and those made over
    the API) and credential bindings, the :class:`EgressGateway`, and the audit log (each
    execution's records stored beside its outputs, ``keys.egress_log_key``, and logged).

    Args:
        settings: ``sandbox.egress``.
        store: where the records go.
        resolver: the DNS lookup (default: the system's).
        metrics: where ``skillweave_egress_connections`` is counted.
    """

    def __init__(
        self,
        settings: EgressSettings,
        *,
        store: ArtifactStore,
        resolver: Resolver | None = None,
        metrics: ManagerMetrics | None = None,
    ) -> None:
        self.settings = settings
        self._store = store
        self._metrics = metrics
        self._records: dict[str, list[EgressRecord]] = {}
        self._gateway = EgressGateway(audit=self._audit, resolver=resolver)
        self._approvals = NetworkApprovals(store, settings)
        check_bound_names("SANDBOX__EGRESS__CREDENTIALS", settings.credentials)  # exact names
        self._credentials = {k: tuple(v) for k, v in settings.credentials.items()}
        self._runs: dict[str, tuple[str, str]] = {}  # token -> (run id, execution id)

    async def start(self) -> None:
        """Listen where the settings say (``gateway_host``, ``gateway_port``)."""
        await self._gateway.start(self.settings.gateway_host, self.settings.gateway_port)

    async def aclose(self) -> None:
        await self._gateway.aclose()

    async def approval_of(self, skill: str) -> EgressApproval | None:
        """The operator's approval of `skill`'s network: the settings', else one made over
        the API, for exactly its canonical name (``sandbox.bindings``)."""
        approval, _ = await self._approvals.of(skill)
        return approval

    def bound_secrets(self, skill: str) -> set[str]:
        """The names of `skill`'s secrets bound to a destination: the proxy's, never the
        script's."""
        return {
            name
            for binding in configured_for(self._credentials, skill) or ()
            for name in secret_names(binding)
        }

    def open_grant(
        self,
        request: ExecuteRequest,
        *,
        declared: tuple[Destination, ...],
        approval: EgressApproval,
        secrets: Mapping[str, str],
    ) -> EgressGrant:
        """Open the network of one run; its executor bridges the sandbox to the grant."""
        if self._gateway.address is None:
            raise RuntimeError("the egress service was not started")
        context = EgressContext(
            run_id=request.run_id,
            execution_id=request.execution_id,
            skill=request.skill,
            version=request.version,
            declared=declared,
            approval=approval,
            credentials=configured_for(self._credentials, request.skill) or (),
            secrets=secrets,
            limits=self.settings.limits,
        )
        token = self._gateway.grant(context)
        self._records[request.execution_id] = []
        self._runs[token] = (request.run_id, request.execution_id)
        _, port = self._gateway.address
        return EgressGrant(host=self.settings.gateway_address, port=port, token=token)

    async def close_grant(self, token: str) -> None:
        """Close a run's network and store its records."""
        await self._gateway.revoke(token)
        run_id, execution_id = self._runs.pop(token, ("", ""))
        records = self._records.pop(execution_id, [])
        if records:
            data = "".join(record.model_dump_json() + "\n" for record in records).encode()
            try:
                await self._store.put_bytes(
                    keys.egress_log_key(run_id, execution_id),
                    data,
                    content_type="application/x-ndjson",
                )
            except Exception:  # the records are in the log too; the run's result matters more
                logger.warning("egress records of %s not stored", execution_id, exc_info=True)

    def _audit(self, record: EgressRecord) -> None:
        # Stored with a live run; a record of no run (a 407 at the gateway) is logged only.
        stored = self._records.get(record.execution_id)
        if stored is not None:
            stored.append(record)
        if self._metrics is not None:
            outcome = "allowed" if record.allowed else "refused"
            self._metrics.egress.labels(skill=record.skill, outcome=outcome).inc()
