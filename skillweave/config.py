"""Settings: the one place configuration is read.

Everything configurable comes from environment variables (or a `.env` file) through
:class:`Settings`, with one nested section per concern. Nested fields use `__` as the
delimiter, so `WORKFLOW__EXECUTION_ENGINE=direct` sets ``settings.workflow.execution_engine``
and `SKILLS__DIRS='["./skills"]'` sets ``settings.skills.dirs``. Nothing else in the code base
calls ``os.getenv``; callers take a ``Settings`` (tests build one directly) or use
:func:`get_settings`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "ApiSettings",
    "CatalogMode",
    "EnvironmentSettings",
    "ExecutionEngine",
    "IsolationChoice",
    "KubernetesSettings",
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
]

ExecutionEngine = Literal["temporal", "direct"]
CatalogMode = Literal["all", "enabled", "auto"]
SelectionMode = Literal["auto", "keyword", "bm25", "embeddings", "hybrid"]
IsolationChoice = Literal["auto", "bubblewrap", "namespaces", "none"]
"""How sandboxes contain scripts (``sandbox_executor.isolation``): auto = bubblewrap, else the
namespaces fallback, else refuse to start; ``none`` only when set, and announced loudly."""

BUNDLED = "bundled"
"""Placeholder in ``skills.dirs`` for the skills shipped with skillweave."""


def bundled_skills_dir() -> Path:
    """The folder of skills shipped with skillweave.

    A wheel carries them inside the package (``skillweave/_bundled_skills``); a source checkout
    or editable install uses the repository's top-level ``skills/``.
    """
    packaged = Path(__file__).parent / "_bundled_skills"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "skills"


class WorkflowSettings(BaseModel):
    """How agent jobs are executed."""

    execution_engine: ExecutionEngine = "direct"
    task_queue: str = "skillweave"
    namespace: str = "default"
    temporal_address: str = "localhost:7233"
    ui_url: str = Field(
        default="http://localhost:8233", description="The Temporal UI, for links to jobs."
    )
    dev_db_file: Path = Field(
        default=Path("~/.skillweave/temporal.db"),
        description="`skillweave dev`: where the embedded server keeps its state.",
    )
    model_timeout_seconds: float = Field(default=600.0, gt=0, description="One model call.")
    script_timeout_seconds: float = Field(
        default=900.0, gt=0, description="One script run, claim and byte moving included."
    )
    heartbeat_timeout_seconds: float = Field(
        default=30.0, gt=0, description="A long activity silent this long is retried."
    )
    activity_timeout_seconds: float = Field(default=120.0, gt=0, description="Other activities.")
    activity_max_attempts: int = Field(default=8, ge=1, description="Tries per activity call.")
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


class SkillsSettings(BaseModel):
    """Where skills come from and how they are shown to the model."""

    dirs: list[str] = Field(
        default_factory=lambda: [BUNDLED, "./.agents/skills", "~/.skillweave/skills"],
        description="Skill library roots, lowest precedence first; 'bundled' = shipped skills.",
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
        description="How often a worker picks up skills uploaded over the API.",
    )

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


class ModelSettings(BaseModel):
    """Which model provider the agent talks to."""

    provider: Literal["openai", "anthropic", "scripted"] = "scripted"
    name: str = "demo"
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_seconds: float = Field(default=120.0, gt=0)


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
    build_timeout_seconds: float = Field(default=600.0, gt=0)
    max_bytes: int = Field(
        default=512 * 1024 * 1024, ge=1, description="Largest environment (unpacked) accepted."
    )


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
    manager_token: SecretStr | None = Field(
        default=None, description="Bearer token of the manager API (required by the manager)."
    )
    manager_max_body_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="Largest request body the manager accepts (POST /sandbox/execute and "
        "/sandbox/environments are small JSON, /mcp JSON-RPC messages); 413 above it, unread.",
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
        description="A running execution's manager renews its claim four times a lease; a "
        "claim not renewed this long (its manager stopped) may be run again by another.",
    )
    skill_secrets: dict[str, dict[str, SecretStr]] = Field(
        default_factory=dict,
        description="Per-skill environment secrets: only that skill's executions receive them.",
    )
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    environments: EnvironmentSettings = Field(default_factory=EnvironmentSettings)


class ApiSettings(BaseModel):
    """The control-plane REST API."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    token: SecretStr | None = Field(
        default=None, description="Bearer token every route but /healthz requires (required)."
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
    """The process-wide settings, read once from the environment."""
    return Settings()
