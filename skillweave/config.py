"""Settings: the one place configuration is read.

Everything configurable comes from environment variables (or a `.env` file) through
:class:`Settings`, with one nested section per concern. Nested fields use `__` as the
delimiter, so `WORKFLOW__EXECUTION_ENGINE=direct` sets ``settings.workflow.execution_engine``
and `SKILLS__DIRS='["./skills"]'` sets ``settings.skills.dirs`` (a plain path, or paths joined by
``os.pathsep``, as a shell user types them, work as well). List and mapping settings otherwise
take JSON. Nothing else in the code base calls ``os.getenv``; callers take a ``Settings``
(tests build one directly) or use :func:`get_settings`, which turns invalid settings into one
:class:`~skillweave.errors.ConfigError` line naming each variable and what it accepts
(:func:`settings_problem`).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import socket
import types
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Self, Union, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretBytes,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from skillweave.errors import ConfigError

__all__ = [
    "WORKER_LIMITS",
    "ApiSettings",
    "CatalogMode",
    "EnvironmentSettings",
    "ExecutionEngine",
    "IsolationChoice",
    "KubernetesSettings",
    "ModelProfile",
    "ModelSettings",
    "ObservabilitySettings",
    "SandboxSettings",
    "SelectionMode",
    "Settings",
    "SkillsSettings",
    "StorageSettings",
    "WorkflowSettings",
    "bundled_skills_dir",
    "get_settings",
    "settings_problem",
    "unknown_settings",
    "worker_limits_set",
]

ExecutionEngine = Literal["temporal", "direct"]
CatalogMode = Literal["all", "enabled", "auto"]
SelectionMode = Literal["auto", "keyword", "bm25", "embeddings", "hybrid"]
IsolationChoice = Literal["auto", "bubblewrap", "namespaces", "none"]
"""How sandboxes contain scripts (``sandbox_executor.isolation``): auto = bubblewrap, else the
namespaces fallback, else refuse to start; ``none`` only when set, and announced loudly."""

BUNDLED = "bundled"
"""Placeholder in ``skills.dirs`` for the skills shipped with skillweave."""

_DIRS_FORM: Final = (
    f"expected a path, paths joined by {os.pathsep!r}, or a JSON list of paths, "
    'e.g. SKILLS__DIRS=\'["./skills", "bundled"]\''
)
_WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", ""})


def bundled_skills_dir() -> Path:
    """The folder of skills shipped with skillweave.

    A wheel carries them inside the package (``skillweave/_bundled_skills``); a source checkout
    or editable install uses the repository's top-level ``skills/``.
    """
    packaged = Path(__file__).parent / "_bundled_skills"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "skills"


_WORKER_OWNED: Final = (
    " Read by the worker (a job runs under its worker's value); a client's is not used. "
    "The direct engine is its own worker."
)

WORKER_LIMITS: Final = (
    "model_timeout_seconds",
    "script_timeout_seconds",
    "heartbeat_timeout_seconds",
    "activity_timeout_seconds",
    "activity_max_attempts",
)
"""The ``WORKFLOW__`` settings a job's activities run under: the worker's, never a client's
(``skillweave.engines.contract.activity_timeouts`` reads them)."""


def worker_limits_set(settings: WorkflowSettings) -> list[str]:
    """The variables of :data:`WORKER_LIMITS` this process was given (environment, ``.env``
    or code), e.g. ``["WORKFLOW__SCRIPT_TIMEOUT_SECONDS"]``: on a client of the Temporal
    engine they have no effect."""
    return [
        f"WORKFLOW__{name.upper()}" for name in WORKER_LIMITS if name in settings.model_fields_set
    ]


class WorkflowSettings(BaseModel):
    """How agent jobs are executed."""

    execution_engine: ExecutionEngine = Field(
        default="temporal",
        description="temporal (the default): jobs are durable workflows on "
        "WORKFLOW__TEMPORAL_ADDRESS, run by workers (`skillweave dev` starts a server and a "
        "worker on this machine); direct: jobs run in the process that starts them, for local "
        "development (not durable: they end with it).",
    )
    task_queue: str = "skillweave"
    namespace: str = "default"
    temporal_address: str = "localhost:7233"
    ui_url: str = Field(
        default="http://localhost:8233", description="The Temporal UI, for links to jobs."
    )

    @field_validator("ui_url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        return http_url(url, example="http://temporal-ui:8080")

    dev_db_file: Path = Field(
        default=Path("~/.skillweave/temporal.db"),
        description="`skillweave dev`: where the embedded server keeps its state.",
    )
    model_timeout_seconds: float = Field(
        default=600.0, gt=0, description="One model call." + _WORKER_OWNED
    )
    script_timeout_seconds: float = Field(
        default=900.0,
        gt=0,
        description="One script run, claim and byte moving included; must exceed the "
        "manager's SANDBOX__TIMEOUT_SECONDS." + _WORKER_OWNED,
    )
    heartbeat_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="A long activity silent this long is retried (how long a job stalls "
        "after its worker dies)." + _WORKER_OWNED,
    )
    activity_timeout_seconds: float = Field(
        default=120.0, gt=0, description="Other activities." + _WORKER_OWNED
    )
    activity_max_attempts: int = Field(
        default=8, ge=1, description="Tries per activity call." + _WORKER_OWNED
    )
    worker_heartbeat_seconds: float = Field(
        default=5.0, gt=0, description="How often a long activity heartbeats."
    )
    worker_drain_seconds: float = Field(
        default=30.0,
        ge=0,
        description="A worker told to stop (SIGTERM, Ctrl-C) stops polling at once and gives "
        "its running activities this long to finish before cancelling them (they are retried "
        "on another worker).",
    )
    follow_worker_wait_seconds: float = Field(
        default=3600.0,
        ge=0,
        description="How long a follower of a job (`run --engine temporal`, `runs logs`, the "
        "API's event stream) keeps waiting while no worker answers before it gives up, saying "
        "the job may still be running (the job itself goes on); 0 = wait for ever.",
    )


Severity = Literal["critical", "high", "medium", "low"]
"""How bad a scan finding is (``skillweave.skills.scan``)."""
ScanAction = Literal["block", "approve", "warn"]
"""What a finding of a severity does to a new skill version: it may not be enabled (block),
it waits for an operator's approval (approve), or it is enabled and the finding shown (warn)."""


class ScanSettings(BaseModel):
    """The scan of every new skill version (``skills.scan``) and what its findings decide."""

    model_config = ConfigDict(extra="forbid")

    policy: dict[Severity, ScanAction] = Field(
        default_factory=lambda: {
            "critical": "block",
            "high": "approve",
            "medium": "warn",
            "low": "warn",
        },
        description="Severity → block, approve (an operator enables it) or warn; a severity "
        "left out warns.",
    )


class TrustSettings(BaseModel):
    """Skill signatures (``skills.trust``): the keys trusted to sign skill versions and what
    becomes of a version no trusted key signed."""

    model_config = ConfigDict(extra="forbid")

    keys: dict[str, str] = Field(
        default_factory=dict,
        description="Key id → an Ed25519 public key (base64 of its 32 bytes, as `skillweave "
        "skills keygen` prints it).",
    )
    unsigned: Literal["allow", "warn", "refuse"] = Field(
        default="warn",
        description="A version no trusted key signed: allow, warn (run, and say so), or refuse. "
        "A signature that does not match its package is refused whatever this says.",
    )


class AuditSettings(BaseModel):
    """The skill audit log (``skillweave.storage.audit``): an append-only, hash-chained record
    of every skill lifecycle and use event, kept in the artifact store."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Record skill lifecycle and use events.")
    key: SecretStr | None = Field(
        default=None,
        description="AUDIT__KEY: when set, every record's link is an HMAC under it, so that "
        "only a holder of the key can write a chain `audit verify` accepts.",
    )


class SkillsSettings(BaseModel):
    """Where skills come from and how they are shown to the model."""

    # NoDecode: the environment's text reaches `_dirs_as_typed` as typed, not JSON-decoded.
    dirs: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: [BUNDLED, "./.agents/skills", "~/.skillweave/skills"],
        description="Skill library roots, lowest precedence first; 'bundled' = shipped skills. "
        f"A path, paths joined by {os.pathsep!r}, or a JSON list of paths.",
    )
    catalog_mode: CatalogMode = "enabled"
    catalog_top_k: int = Field(
        default=20,
        ge=1,
        le=200,
        description="Skills the auto catalog lists: the most that stay within 1,500 tokens "
        "(bench/selection_bench.py).",
    )
    selection: SelectionMode = Field(
        default="auto",
        description="How skills are ranked for a request (auto catalog, search_skills, "
        "preload): auto = hybrid with the embeddings extra installed, else bm25.",
    )
    catalog_max_chars: int = Field(
        default=6_000, ge=0, description="Budget of the tier-1 catalog text; 0 = unlimited."
    )
    disabled: list[str] = Field(default_factory=list, description="Skill names never offered.")
    max_depth: int = Field(default=6, ge=1, le=32)
    max_skills: int = Field(default=20_000, ge=1)
    include_hidden: bool = Field(
        default=False,
        description="Also look for skills in hidden folders of a library (skills/.curated/…); "
        "VCS folders (.git) are never searched, and a skill's own hidden folders are never "
        "part of it.",
    )
    resource_max_bytes: int = Field(default=256 * 1024, ge=1)
    activation_resource_listing: int = Field(default=50, ge=0)
    package_max_files: int = Field(default=1_000, ge=1)
    package_max_bytes: int = Field(default=50 * 1024 * 1024, ge=1)
    package_max_ratio: int = Field(default=100, ge=1)
    uploaded_dir: Path = Field(
        default=Path("~/.skillweave/cache/uploaded-skills"),
        description="Where skills uploaded over the API are unpacked for the engines to scan "
        "(a folder of its own: it is cleared of anything else).",
    )
    uploaded_refresh_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often a long-running process reads the store's skill records "
        "whole even when the store's generation marker did not move (a fallback for writers "
        "that do not write it); changes that move it are seen every SKILLS__RELOAD_SECONDS.",
    )
    reload_seconds: float = Field(
        default=2.0,
        ge=0,
        description="How often long-running processes (worker, dev, API, manager, MCP) look "
        "for added, changed and removed skills, in the skill folders and in the store "
        "(installed, uploaded, agent-published, enabled, disabled); 0: never (restart).",
    )
    scan: ScanSettings = Field(default_factory=ScanSettings)
    trust: TrustSettings = Field(default_factory=TrustSettings)
    install_sources: list[str] = Field(
        default_factory=list,
        description="Sources the API may install skills from (POST /v1/skills/install): "
        "shell-style patterns over git URLs and local paths, e.g. "
        "'https://github.com/acme/*'; empty = none (the CLI installs from anywhere its user "
        "can read). A local source's real path (symlinks resolved) must match too, and a "
        "source whose git pointers lead outside it is refused on every door.",
    )

    @field_validator("dirs", mode="before")
    @classmethod
    def _dirs_as_typed(cls, value: object) -> object:
        """``SKILLS__DIRS`` as a user types it: ``/some/path``, ``/a:/b`` (``os.pathsep``),
        or JSON ``["/a", "bundled"]``; empty entries of the plain form are dropped."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text.startswith("["):
            return [entry for entry in text.split(os.pathsep) if entry.strip()]
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError(f"{_DIRS_FORM}; this starts with '[' but is not JSON") from None

    @property
    def pinned_dir(self) -> Path:
        """Where skill versions a job was pinned to, and the library no longer holds, are
        unpacked from the store: ``UPLOADED_DIR.pinned``, one folder per name and version."""
        folder = self.uploaded_dir.expanduser()
        return folder.with_name(f"{folder.name}.pinned")

    def resolved_dirs(self) -> list[Path]:
        """The configured roots as paths, ``bundled`` and ``~`` expanded, order kept."""
        out: list[Path] = []
        for entry in self.dirs:
            out.append(bundled_skills_dir() if entry == BUNDLED else Path(entry).expanduser())
        return out


PROFILE_NAME_PATTERN: Final = r"^[a-z0-9][a-z0-9_-]{0,62}$"
"""A model profile's name (``MODEL__PROFILES__<NAME>__…``; environment names come lowercased)."""


class ModelProfile(BaseModel):
    """One model agents may name: its provider, its name there, and where and how to reach it.

    The API key goes only to this profile's endpoint (``base_url``, else the provider's own).
    """

    provider: Literal["openai", "anthropic", "scripted"]
    name: str = Field(min_length=1, description="The model's name; for scripted, the script.")
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_seconds: float = Field(default=120.0, gt=0)
    max_attempts: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Tries of one model call in all, the first included (its retry policy); None: the"
            " engine's (WORKFLOW__ACTIVITY_MAX_ATTEMPTS). The lower of the two wins."
        ),
    )


class ModelSettings(ModelProfile):
    """The default model (``MODEL__PROVIDER``, ``MODEL__NAME``, …) and the named profiles
    (``MODEL__PROFILES__<NAME>__PROVIDER``, ``__NAME``, ``__BASE_URL``, ``__API_KEY``,
    ``__TIMEOUT_SECONDS``, ``__MAX_ATTEMPTS``) an agent's ``model`` may name instead of
    ``provider:name``, and the folder a server's requested scripted models come from
    (``MODEL__SCRIPTS_DIR``, see ``skillweave.llm.factory.requested_script``)."""

    provider: Literal["openai", "anthropic", "scripted"] = "scripted"
    name: str = Field(default="demo", min_length=1)
    profiles: dict[str, ModelProfile] = Field(default_factory=dict)
    scripts_dir: Path | None = Field(
        default=None,
        description="On a server (API, worker, dev), the folder a scripted model named by a "
        "request (an agent's model_id, a job's model: scripted:NAME) must come from; NAME is a "
        "file inside it. Unset: servers refuse such models. The local CLI (run, demo) reads "
        "any file its user names.",
    )

    @property
    def configured(self) -> bool:
        """Whether a default model is set: the built-in ``scripted:demo`` (MODEL__PROVIDER and
        MODEL__NAME left as they are) is a placeholder that names no model."""
        fields = type(self).model_fields
        return (self.provider, self.name) != (fields["provider"].default, fields["name"].default)

    @field_validator("profiles")
    @classmethod
    def _profile_names(cls, profiles: dict[str, ModelProfile]) -> dict[str, ModelProfile]:
        for name in profiles:
            if not re.fullmatch(PROFILE_NAME_PATTERN, name):
                raise ValueError(
                    f"model profile name {name!r}: use lowercase letters, digits, '-' and '_'"
                    " (at most 63), e.g. MODEL__PROFILES__LOCAL__PROVIDER"
                )
        return profiles


class StorageSettings(BaseModel):
    """Where artifacts, transcripts and uploaded skill packages live."""

    backend: Literal["local", "s3"] = "local"
    local_dir: Path = Path("~/.skillweave/store")
    s3_endpoint: str = "localhost:9000"
    s3_bucket: str = "skillweave"
    s3_access_key: SecretStr | None = None
    s3_secret_key: SecretStr | None = None
    s3_secure: bool = False
    s3_region: str | None = None
    s3_create_bucket: bool = Field(
        default=False,
        description="Create s3_bucket when it is missing (said in one WARNING line with the new "
        "store's id); false: a missing bucket is an error, so a mistyped name is never a new, "
        "empty store.",
    )


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


class ApiSettings(BaseModel):
    """The control-plane REST API."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    token: SecretStr | None = Field(
        default=None, description="Bearer token every route but /healthz requires (required)."
    )
    docs_open: bool = Field(
        default=False,
        description="Serve the API documentation (/openapi.json, /docs, /redoc) without the "
        "token; by default they need it, like every route but /healthz.",
    )
    extra_tokens: list[SecretStr] = Field(
        default_factory=list,
        description="More accepted tokens (for rotating: add the new one, then retire the old).",
    )
    max_json_bytes: int = Field(
        default=1024 * 1024, ge=1024, description="Largest JSON request body accepted."
    )
    max_upload_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024,
        description="Largest upload (a skill ZIP, a run's files) accepted.",
    )


class ObservabilitySettings(BaseModel):
    """Logs and metrics. Tracing is configured by the standard ``OTEL_*`` variables (see
    ``skillweave.telemetry``): off unless an exporter or endpoint is set."""

    log_format: Literal["text", "json"] = Field(
        default="text",
        description="text: one human line per record; json: one JSON object per line, with "
        "job_id, execution_id, skill and script when the record has them.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_repeat_seconds: float = Field(
        default=60.0,
        ge=0,
        description="A warning or error identical to one written less than this long ago is "
        "counted, not written; the count is written once the time is up (0: write every one).",
    )
    worker_metrics_port: int = Field(
        default=0,
        ge=0,
        le=65535,
        description="A worker serves Prometheus /metrics on this port (0: not served).",
    )
    worker_metrics_host: str = Field(
        default="127.0.0.1", description="The address the worker's /metrics listens on."
    )


class Settings(BaseSettings):
    """All of skillweave's configuration, one nested section per concern."""

    model_config = SettingsConfigDict(
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        nested_model_default_partial_update=True,
    )

    workflow: WorkflowSettings = Field(default_factory=WorkflowSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    # The CLI's remote mirrors talk to a running API. These two are read from top-level names
    # (no section), as a client's environment spells them; REMOTE_API_URL works as well.
    remote_api_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("remote_api_url", "skillweave_api_url"),
        description="SKILLWEAVE_API_URL: the API the CLI's remote commands use.",
    )
    remote_api_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("remote_api_token", "skillweave_api_token"),
        description="SKILLWEAVE_API_TOKEN: the bearer token for SKILLWEAVE_API_URL.",
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment.

    Raises:
        ConfigError: a setting is invalid; the message is one line naming each such variable
            and the form it accepts (:func:`settings_problem`).
    """
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise ConfigError(settings_problem(exc)) from None


_SHOWN_VALUE_CHARS: Final = 60
_SHOWN_PROBLEMS: Final = 3
_JSON_FORMS: Final = {
    "list": 'a JSON list, e.g. \'["a", "b"]\'',
    "object": 'a JSON object, e.g. \'{"name": "value"}\'',
}


def http_url(url: str, *, example: str) -> str:
    """`url` when it is an http(s) URL with a host; else the error a setting's validator
    raises, saying the accepted form."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http(s) URL with a host, e.g. {example}")
    try:
        _ = parts.port  # a port that is not a number raises
    except ValueError:
        raise ValueError(f"the port is not a number; expected e.g. {example}") from None
    return url


def settings_problem(
    exc: ValidationError | SettingsError, settings_cls: type[BaseSettings] = Settings
) -> str:
    """One line for invalid settings of `settings_cls`: each offending variable as the
    environment spells it (``SKILLS__CATALOG_TOP_K``), its value unless it is a secret, and
    what it accepts. Used for skillweave's settings and the executor's ``EXECUTOR__*`` ones."""
    if isinstance(exc, SettingsError):
        return _undecodable(exc, settings_cls)
    prefix = str(settings_cls.model_config.get("env_prefix") or "")
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    problems = []
    for error in exc.errors():
        names = [part for part in error["loc"] if isinstance(part, str)]
        items = [str(part) for part in error["loc"] if isinstance(part, int)]
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            closest = _closest_setting(settings_cls, [name.lower() for name in names])
            message = (
                f"not a setting; did you mean {prefix}{delimiter.join(closest).upper()}?"
                if closest
                else "not a setting: check its spelling (README, Configuration)"
            )
        section = _annotation_at(settings_cls, [name.lower() for name in names])
        if isinstance(section, type) and issubclass(section, BaseModel):
            problems.append(message)  # a rule across a section's fields names them itself
            continue
        variable = prefix + delimiter.join(names).upper()
        shown = variable + "".join(f"[{item}]" for item in items)  # an item of a list
        if not _is_secret(settings_cls, names) and isinstance(error["input"], str | int | float):
            value = str(error["input"])
            if len(value) > _SHOWN_VALUE_CHARS:
                value = value[:_SHOWN_VALUE_CHARS] + "…"
            shown += f"={value!r}"
        problems.append(f"{shown}: {message}")
    more = len(problems) - _SHOWN_PROBLEMS
    line = "; ".join(problems[:_SHOWN_PROBLEMS]) + (f" (and {more} more)" if more > 0 else "")
    return f"invalid setting: {line}"


def unknown_settings(settings_cls: type[BaseSettings] = Settings) -> list[str]:
    """One line for each variable (environment, then ``.env``) that names a section of
    `settings_cls` (or, for a class with an ``env_prefix``, carries it) but no setting in it,
    with the closest setting: ``SKILLS__DIRZ is not a setting; did you mean SKILLS__DIRS?``.

    pydantic-settings ignores such a variable, so a misspelt setting would go unnoticed: every
    command says so on stderr, and every server logs it at start. Dynamic keys count as
    settings (``MODEL__PROFILES__<NAME>__…``, ``SANDBOX__SKILL_SECRETS__<SKILL>__…``); in a
    section that forbids unknown keys (``SKILLS__SCAN``, ``SKILLS__TRUST``, ``AUDIT``,
    ``SANDBOX__EGRESS``) such a variable is an invalid setting instead (:func:`get_settings`,
    :func:`settings_problem`, with the same suggestion), so it is not listed here.
    """
    prefix = str(settings_cls.model_config.get("env_prefix") or "").lower()
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    sections = {
        name
        for name, field in settings_cls.model_fields.items()
        if isinstance(_unwrap(field.annotation), type)
        and issubclass(_unwrap(field.annotation), BaseModel)
    }
    lines: list[str] = []
    for origin, variables in _setting_sources(settings_cls):
        for name in variables:
            lowered = name.lower()
            if not lowered.startswith(prefix):
                continue
            parts = lowered[len(prefix) :].split(delimiter)
            if not prefix and (len(parts) < 2 or parts[0] not in sections):
                continue  # not ours: only a section's variables are skillweave's
            if _first_unknown(settings_cls, parts) is None:
                continue
            closest = _closest_setting(settings_cls, parts)
            guess = (
                f"; did you mean {prefix.upper()}{delimiter.join(closest).upper()}?"
                if closest
                else ": check its spelling (README, Configuration)"
            )
            lines.append(f"{name}{origin} is not a setting{guess}")
    return lines


def _first_unknown(model: type[BaseModel], parts: list[str]) -> int | None:
    """The index of the first of a variable's name parts that names no setting, walking
    sections, their fields and mappings' keys; None when the name is a setting, or when the
    unknown part is in a section that forbids unknown keys (validation reports it)."""
    annotation: Any = model
    for index, part in enumerate(parts):
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            if part not in fields:
                return None if annotation.model_config.get("extra") == "forbid" else index
            annotation = fields[part].annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]  # any key: a profile's name, a skill's
        else:
            return index  # more parts after a plain value
    return None


def _closest_setting(model: type[BaseModel], parts: list[str]) -> list[str] | None:
    """The setting a misspelt variable most likely meant, as name parts: the first unknown
    part replaced by the closest name there (the parts after it kept when the result is a
    setting), or the value it runs past; None when nothing is close."""
    annotation: Any = model
    for index, part in enumerate(parts):
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            if part in fields:
                annotation = fields[part].annotation
                continue
            close = difflib.get_close_matches(part, list(fields), n=1, cutoff=0.6)
            if not close:
                return None
            guess = [*parts[:index], close[0]]
            whole = [*guess, *parts[index + 1 :]]
            return whole if _annotation_at(model, whole) is not None else guess
        if get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
            continue
        return parts[:index] or None
    return None


def _undecodable(exc: SettingsError, settings_cls: type[BaseSettings]) -> str:
    """pydantic-settings does not say which list or mapping setting's text is not JSON: find
    the variables (environment, then ``.env``) that hold such text."""
    prefix = str(settings_cls.model_config.get("env_prefix") or "")
    delimiter = str(settings_cls.model_config.get("env_nested_delimiter") or "__")
    found: list[str] = []
    for origin, variables in _setting_sources(settings_cls):
        for name, value in variables.items():
            upper = name.upper()
            if not upper.startswith(prefix.upper()) or value is None:
                continue
            parts = upper[len(prefix) :].lower().split(delimiter)
            form = _json_form(_annotation_at(settings_cls, parts, json_only=True))
            if form is None:
                continue
            try:
                json.loads(value)
            except ValueError:
                found.append(f"{upper}{origin}: expected {_JSON_FORMS[form]}")
    if not found:
        return f"invalid setting: a list or mapping value is not valid JSON ({exc})"
    return "invalid setting: " + "; ".join(found[:_SHOWN_PROBLEMS])


def _setting_sources(settings_cls: type[BaseSettings]) -> list[tuple[str, dict[str, str | None]]]:
    sources: list[tuple[str, dict[str, str | None]]] = [("", dict(os.environ))]
    env_file = settings_cls.model_config.get("env_file")
    if isinstance(env_file, str | Path) and Path(env_file).is_file():
        from dotenv import dotenv_values  # pydantic-settings' own .env reader

        sources.append((f" (in {env_file})", dict(dotenv_values(env_file))))
    return sources


def _unwrap(annotation: Any) -> Any:
    """`X | None` → X; ``Annotated[X, ...]`` → X."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _annotation_at(model: type[BaseModel], parts: list[str], *, json_only: bool = False) -> Any:
    """The type a variable's name parts lead to, through sections and mappings; None when the
    name is not a setting (or, `json_only`, is one whose text is never read as JSON)."""
    annotation: Any = model
    for part in parts:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields = {name.lower(): field for name, field in annotation.model_fields.items()}
            field = fields.get(part)
            if field is None or (json_only and NoDecode in field.metadata):
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    return _unwrap(annotation)


def _json_form(annotation: Any) -> str | None:
    """``"list"`` or ``"object"`` when the environment gives this type as JSON, else None."""
    origin = get_origin(annotation)
    if origin in (list, set, tuple, frozenset):
        return "list"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "object"
    return None


def _is_secret(model: type[BaseModel], parts: list[str]) -> bool:
    """Whether the setting at these name parts holds a secret (its value is never shown)."""
    annotation = _annotation_at(model, [part.lower() for part in parts])
    return annotation is None or _holds_secret(annotation)


def _holds_secret(annotation: Any) -> bool:
    if annotation in (SecretStr, SecretBytes):
        return True
    return any(_holds_secret(_unwrap(arg)) for arg in get_args(annotation))
