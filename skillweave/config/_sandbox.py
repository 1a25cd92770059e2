"""The ``SANDBOX__`` section: the MCP manager, its warm pool and executors, with its
``KUBERNETES``, ``ENVIRONMENTS`` and ``EGRESS`` subsections and per-skill secrets. Part of
:class:`~skillweave.config.Settings`; ``mcp_manager``, ``sandbox_executor`` and the sandbox
client read it."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from skillweave.config._urls import http_url

__all__ = [
    "CredentialBinding",
    "EgressApproval",
    "EgressLimits",
    "EgressSettings",
    "EnvironmentSettings",
    "IsolationChoice",
    "KubernetesSettings",
    "SandboxSettings",
]

IsolationChoice = Literal["auto", "bubblewrap", "namespaces", "none"]
"""How sandboxes contain scripts (``sandbox_executor.isolation``): auto = bubblewrap, else the
namespaces fallback, else refuse to start; ``none`` only when set, and announced loudly."""

_WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", ""})


class KubernetesSettings(BaseModel):
    """The manager's ``kubernetes`` backend: sandbox pods from a template, in one namespace.

    ``pool_target`` and ``pool_max`` of :class:`SandboxSettings` count per manager replica:
    each keeps that many warm pods of its own (any replica may claim any warm pod).
    """

    namespace: str = Field(default="skillweave-sandboxes", min_length=1, max_length=63)
    pool: str = Field(
        default="default",
        pattern=r"^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$",
        description="The pool's name, a label on its pods: managers of one pool share pods.",
    )
    template_file: Path | None = Field(
        default=None, description="A mounted pod template (YAML); unset = the built-in one."
    )
    image: str | None = Field(
        default=None, description="Overrides the executor container's image of the template."
    )
    runtime_class: str | None = Field(
        default=None, description="runtimeClassName of sandbox pods, e.g. gvisor."
    )
    executor_port: int = Field(default=8080, ge=1, le=65535)
    manager_id: str | None = Field(
        default=None,
        description="This replica's identity on the pods it owns and claims (default: hostname).",
    )
    kubeconfig: Path | None = Field(
        default=None, description="A kubeconfig file; unset = in-cluster, else ~/.kube/config."
    )
    context: str | None = Field(default=None, description="The kubeconfig context to use.")
    lease_seconds: float = Field(
        default=30.0,
        gt=0,
        description="A claimed pod whose claimer has not renewed its lease this long is reaped.",
    )
    reap_interval_seconds: float = Field(default=15.0, gt=0)
    max_age_seconds: float = Field(
        default=3600.0, gt=0, description="Warm pods older than this are rotated."
    )
    claim_max_seconds: float = Field(
        default=3900.0,
        gt=0,
        description="Claimed pods older than this are reaped (the longest script limit + margin).",
    )
    api_timeout_seconds: float = Field(default=10.0, gt=0)


class EnvironmentSettings(BaseModel):
    """How the manager prepares skills' declared dependencies (``sandbox.environments``).

    A build runs in a build sandbox, the only place allowed to reach the package index; the
    result is stored, keyed by skill version, runtime and platform, and reused ever after.
    """

    builds: bool = Field(
        default=True,
        description="Build missing environments; false (air-gapped): only prebuilt ones are used.",
    )
    index_url: str | None = Field(
        default=None, description="pip's --index-url (default: pip's own, or PIP_INDEX_URL)."
    )
    extra_index_urls: list[str] = Field(default_factory=list)
    find_links: list[str] = Field(
        default_factory=list, description="pip's --find-links: folders or pages of wheels."
    )
    no_index: bool = Field(default=False, description="pip's --no-index: find_links only.")
    pip_args: list[str] = Field(default_factory=list, description="More pip install options.")
    npm_registry: str | None = Field(default=None, description="npm's --registry.")
    npm_args: list[str] = Field(default_factory=list, description="More npm install options.")
    max_dependencies: int = Field(default=200, ge=1, le=10_000)
    infer_imports: bool = Field(
        default=True,
        description="Also install the packages a skill's scripts import and do not declare "
        "(best effort: one the index lacks is skipped); false: declared dependencies only.",
    )
    base_python: list[str] = Field(
        default_factory=list,
        description="Python requirements every skill's environment gets (the base "
        "environment, built once for the skills that need nothing else).",
    )
    base_node: dict[str, str] = Field(
        default_factory=dict, description="Node packages (name → range) every skill gets."
    )
    build_timeout_seconds: float = Field(default=600.0, gt=0)
    max_bytes: int = Field(
        default=512 * 1024 * 1024, ge=1, description="Largest environment (unpacked) accepted."
    )


class EgressApproval(BaseModel):
    """An operator's approval of a skill's network (``sandbox.egress.approvals[skill]``).

    Attributes:
        destinations: what may be reached, each as the skill declares it under
            ``metadata.network`` (an approval of a destination the skill does not declare
            approves nothing).
        version: the skill version approved (its sha256); None: any version (its declaration
            still has to name the destination).
        private: destinations approved although they resolve to private addresses (a service
            on the operator's network).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    destinations: tuple[str, ...] = ()
    version: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    private: tuple[str, ...] = ()


class CredentialBinding(BaseModel):
    """A header the egress proxy adds to a skill's plain-HTTP requests to one destination,
    its value a template over the skill's secrets (``Bearer ${SALES_TOKEN}``, from
    ``SANDBOX__SKILL_SECRETS``); the script never holds it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    destination: str
    header: str = Field(pattern=r"^[A-Za-z0-9-]{1,64}$")
    value: str


class EgressLimits(BaseModel):
    """Caps on one execution's network egress."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_connections: int = Field(default=64, ge=1)
    max_bytes: int = Field(default=64 * 1024 * 1024, ge=1, description="Both ways together.")
    max_requests_per_second: float = Field(default=20.0, gt=0)


class EgressSettings(BaseModel):
    """Which skills may reach which hosts, through the manager's egress proxy
    (``sandbox.egress``); nothing is reachable unless approved here."""

    model_config = ConfigDict(extra="forbid")

    approvals: dict[str, EgressApproval] = Field(
        default_factory=dict, description="Skill name → its approved destinations."
    )
    credentials: dict[str, list[CredentialBinding]] = Field(
        default_factory=dict, description="Skill name → headers bound to destinations."
    )
    limits: EgressLimits = Field(default_factory=EgressLimits)
    gateway_host: str = Field(
        default="127.0.0.1",
        description="Where the manager's egress gateway listens for the executors' bridges. "
        "Local executors reach loopback; Kubernetes sandbox pods need 0.0.0.0 and "
        "ADVERTISE_HOST.",
    )
    gateway_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="The gateway's port (0: a free one). Kubernetes: fixed, the port the "
        "sandbox NetworkPolicy lets pods reach.",
    )
    advertise_host: str | None = Field(
        default=None,
        description="The address executors dial for the gateway (unset: GATEWAY_HOST). "
        "Kubernetes: the manager pod's IP (status.podIP).",
    )

    @model_validator(mode="after")
    def _reachable_gateway(self) -> EgressSettings:
        if self.advertise_host is None and self.gateway_host in _WILDCARD_HOSTS:
            raise ValueError(
                f"SANDBOX__EGRESS__GATEWAY_HOST={self.gateway_host} listens everywhere, but "
                "executors need one address to dial: set SANDBOX__EGRESS__ADVERTISE_HOST "
                "(on Kubernetes, the manager pod's IP)"
            )
        return self

    @property
    def gateway_address(self) -> str:
        """The host executors dial for the gateway."""
        return self.advertise_host or self.gateway_host


class SandboxSettings(BaseModel):
    """How skill scripts are run: the MCP manager, its warm pool and its executors."""

    backend: Literal["local", "kubernetes", "static"] = "local"
    isolation: IsolationChoice = Field(
        default="auto",
        description="How scripts are contained (EXECUTOR__ISOLATION of every executor the "
        "manager starts; executors it did not start must report a mode this allows): auto "
        "= bubblewrap, else namespaces, else refuse; bubblewrap; namespaces; none (no "
        "sandbox: not a security boundary, announced on every surface).",
    )
    manager_url: str | None = Field(
        default=None, description="A running MCP manager; unset = start one in-process."
    )

    @field_validator("manager_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return None if url is None else http_url(url, example="http://manager:8090")

    manager_token: SecretStr | None = Field(
        default=None, description="Bearer token of the manager API (required by the manager)."
    )
    manager_docs_open: bool = Field(
        default=False,
        description="Serve the manager's API documentation (/openapi.json, /docs, /redoc) "
        "without the token; by default they need it, like every path but /healthz.",
    )
    manager_max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="Largest request body the manager accepts (POST /sandbox/execute and "
        "/sandbox/environments are small JSON, /mcp JSON-RPC messages); 413 above it, unread.",
    )
    mcp_input_max_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1,
        description="Largest file an MCP client gives a script (input_files: inline, or a "
        "local path over stdio); over HTTP the request body cap applies too.",
    )
    executor_url: str | None = Field(
        default=None, description="static backend: the one development executor."
    )
    executor_token: SecretStr | None = Field(
        default=None, description="static backend: the token that executor accepts."
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8090, ge=0, le=65535)
    pool_target: int = Field(default=2, ge=0, le=256, description="Ready sandboxes to keep.")
    pool_max: int = Field(default=8, ge=1, le=1024, description="Sandboxes alive at most.")
    executions_per_executor: int = Field(
        default=1,
        ge=1,
        le=10_000,
        description="local backend: how many executions one executor process serves before "
        "the pool replaces it. Each execution has a fresh workspace and a fresh sandbox "
        "(bubblewrap, namespaces, its uid swept when anything could outlive the script) "
        "either way; above 1 the executor process, which never runs a script, is kept, and "
        "an execution costs about a third less CPU (docs/SCALING.md).",
    )
    claim_timeout_seconds: float = Field(
        default=60.0,
        ge=0,
        description="How long a claim waits (first come, first served) for a sandbox before a "
        "503; long enough that a burst queues here rather than in 503 retries.",
    )
    queue_seconds: float = Field(
        default=600.0,
        ge=0,
        description="How long a script step waits for a sandbox while the pool is full (asking "
        "again after each 503's Retry-After) before the step fails to the engine's retries.",
    )
    start_timeout_seconds: float = Field(default=20.0, gt=0)
    timeout_seconds: float = Field(default=60.0, gt=0, description="Default script wall time.")
    claim_lease_seconds: float = Field(
        default=20.0,
        gt=0,
        le=86_400,
        description="A running execution's manager renews its claim four times a lease; a "
        "claim not renewed this long (its manager stopped) may be run again by another. Each "
        "claim carries its holder's lease: others judge it by that one.",
    )
    clock_skew_seconds: float = Field(
        default=5.0,
        ge=0,
        description="How far the clocks of two managers may disagree: a claim is taken over "
        "only once its lease and this much more have passed since it was last renewed.",
    )
    manager_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$",
        description="This manager's name in its claims, logs, /healthz and metrics (default: "
        "host name and port; on Kubernetes, SANDBOX__KUBERNETES__MANAGER_ID when set).",
    )

    @property
    def manager_identity(self) -> str:
        """This manager's id: ``manager_id``, else the Kubernetes one, else ``host:port``."""
        if self.manager_id:
            return self.manager_id
        if self.backend == "kubernetes" and self.kubernetes.manager_id:
            return self.kubernetes.manager_id
        return f"{socket.gethostname()}:{self.port}"

    skill_secrets: dict[str, dict[str, SecretStr]] = Field(
        default_factory=dict,
        description="Per-skill environment secrets: only that skill's executions receive them.",
    )
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    environments: EnvironmentSettings = Field(default_factory=EnvironmentSettings)
    egress: EgressSettings = Field(default_factory=EgressSettings)

    @model_validator(mode="after")
    def _static_backend_has_its_executor(self) -> Self:
        problem = self.static_backend_problem()
        if problem is not None:
            raise ValueError(problem)
        return self

    def static_backend_problem(self) -> str | None:
        """Why the ``static`` backend cannot run with these settings (its executor's URL or
        token is missing), naming the variables; None when it can, or is not chosen."""
        if self.backend != "static":
            return None
        token = self.executor_token.get_secret_value() if self.executor_token else ""
        missing = [
            name
            for name, value in (
                ("SANDBOX__EXECUTOR_URL", self.executor_url),
                ("SANDBOX__EXECUTOR_TOKEN", token),
            )
            if not value
        ]
        if not missing:
            return None
        return (
            f"SANDBOX__BACKEND='static' needs {' and '.join(missing)}: the development "
            "executor's URL (e.g. http://127.0.0.1:8081) and the token it accepts"
        )
