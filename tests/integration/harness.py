"""The one way the tests start a real MCP manager: ``create_app`` served by uvicorn on loopback
(:class:`~mcp_manager.server.LoopbackServer`), with a sandbox client and an authenticated HTTP
client on it, as a :class:`Manager`.

The suites that start one differ only in what they pass: the manager suite
(``tests/integration/manager``) a counting local backend, the engine suite
(``tests/integration/temporal``) one session manager shared by both engines, the Kubernetes
suite a ``kubernetes`` backend against kmock, the hostile-sandbox suite an isolation mode. A
manager in a process of its own (to be killed) is not this: see ``tests/reliability/stack.py``
and ``tests/integration/kubernetes/conftest.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Self

import httpx
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from mcp_manager import ManagerState, create_app
from mcp_manager.backends import SandboxBackend
from mcp_manager.egress import Resolver
from mcp_manager.executions import ExecutionService
from mcp_manager.server import LoopbackServer
from skillweave.config import Settings
from skillweave.sandbox.client import SandboxClient
from skillweave.sandbox.models import ExecuteRequest
from skillweave.skills import SkillRegistry
from skillweave.storage.local import LocalArtifactStore


@dataclass
class Manager:
    """A running MCP manager: where it listens, clients on its API, and what it was built from.

    Start one with :meth:`serving` (or :meth:`serve`), which fills every field.
    """

    url: str
    token: str
    http: httpx.AsyncClient = field(repr=False)
    """On the manager's HTTP API, with its bearer token: metrics, pool, executions."""
    _: KW_ONLY
    client: SandboxClient = field(repr=False)
    """The sandbox client the engines use (``execute``, ``cancel``)."""
    store: LocalArtifactStore
    registry: SkillRegistry | None
    """The library published in `store`, for :meth:`version`; None if the test passed none."""
    backend: Any
    """The backend the test passed (a counting one, say), to read its counts; else None."""
    app: FastAPI = field(repr=False)
    server: LoopbackServer = field(repr=False)

    # --- starting one ------------------------------------------------------------------------

    @classmethod
    async def serve(
        cls,
        settings: Settings,
        *,
        store: LocalArtifactStore,
        registry: SkillRegistry | None = None,
        backend: SandboxBackend | None = None,
        publish: bool = False,
        egress_resolver: Resolver | None = None,
    ) -> Self:
        """Serve a manager for `settings` over `store` on loopback; stop it with :meth:`shutdown`.

        Args:
            settings: its configuration; the token is ``sandbox.manager_token`` (required).
            store: its artifact store.
            registry: the library published in `store`, for :meth:`version`.
            backend: where its sandboxes come from (default: ``settings.sandbox.backend``).
            publish: let the manager publish the configured library itself at start-up.
            egress_resolver: the egress proxy's DNS lookup (default: the system's).
        """
        assert settings.sandbox.manager_token is not None, "the manager needs a token"
        token = settings.sandbox.manager_token.get_secret_value()
        app = create_app(
            settings,
            store=store,
            backend=backend,
            publish=publish,
            egress_resolver=egress_resolver,
        )
        server = LoopbackServer(app)
        url = await server.start()
        return cls(
            url,
            token,
            httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ),
            client=SandboxClient(url, token=token),
            store=store,
            registry=registry,
            backend=backend,
            app=app,
            server=server,
        )

    @classmethod
    @contextlib.asynccontextmanager
    async def serving(
        cls,
        settings: Settings,
        *,
        store: LocalArtifactStore,
        registry: SkillRegistry | None = None,
        backend: SandboxBackend | None = None,
        publish: bool = False,
        egress_resolver: Resolver | None = None,
    ) -> AsyncIterator[Self]:
        """:meth:`serve` for the length of the context."""
        manager = await cls.serve(
            settings,
            store=store,
            registry=registry,
            backend=backend,
            publish=publish,
            egress_resolver=egress_resolver,
        )
        try:
            yield manager
        finally:
            await manager.shutdown()

    # --- in this process: the app's own state ------------------------------------------------

    @property
    def state(self) -> ManagerState:
        """The app's state (pool, execution service, metrics), to inspect or inject into."""
        return self.app.state.manager

    @property
    def service(self) -> ExecutionService:
        """The manager's execution service (for tests that inject failures into its steps)."""
        return self.state.service

    def version(self, skill: str) -> str:
        """The published version of `skill` in the manager's library."""
        assert self.registry is not None, "a manager served with a registry"
        return self.registry.get(skill).version

    def request(self, script: str, *, skill: str = "probe", **fields: Any) -> ExecuteRequest:
        """A request to run `script` of `skill` at its version, under a fresh execution id."""
        fields.setdefault("execution_id", f"test/{skill}/{script}/{time.monotonic_ns()}")
        fields.setdefault("run_id", "run-1")
        return ExecuteRequest(skill=skill, version=self.version(skill), script=script, **fields)

    # --- over HTTP ---------------------------------------------------------------------------

    async def pool(self) -> dict[str, Any]:
        """``GET /sandbox/pool``: ready, busy and target counts (``state.pool`` is the object)."""
        response = await self.http.get("/sandbox/pool")
        response.raise_for_status()
        return response.json()

    async def metric(self, name: str, **labels: str) -> float:
        """The sum of a metric's samples (a counter's ``_total``) that carry `labels`."""
        response = await self.http.get("/metrics")
        response.raise_for_status()
        total = 0.0
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                if sample.name == name and all(
                    sample.labels.get(k) == v for k, v in labels.items()
                ):
                    total += sample.value
        return total

    async def executions(self, outcome: str | None = None) -> int:
        """Scripts the manager really ran (not answered from a stored or in-flight run)."""
        labels = {"outcome": outcome} if outcome else {}
        return int(await self.metric("skillweave_sandbox_executions_total", **labels))

    async def deduplicated(self) -> int:
        """Requests answered from a stored or in-flight run instead of a new one."""
        return int(await self.metric("skillweave_sandbox_deduplicated_total"))

    async def execution(self, execution_id: str) -> dict[str, Any] | None:
        """``GET /sandbox/executions/{id}``: running or finished (with its result), or None."""
        response = await self.http.get(f"/sandbox/executions/{execution_id}")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return response.json()

    async def shutdown(self) -> None:
        """Stop this manager (its pool and executors go with it); idempotent, as each step is."""
        await self.client.aclose()
        await self.http.aclose()
        await self.server.stop()


StartManager = Callable[..., Awaitable[Manager]]
"""What a suite's ``start_manager`` fixture gives: start one more manager, stopped at the end."""


async def eventually(
    check: Callable[[], Any], *, timeout: float = 20.0, every: float = 0.05, what: str = ""
) -> Any:
    """Call `check` (sync or async) until it returns something truthy; return that."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {timeout} s: {what or check}")
        await asyncio.sleep(every)
