"""The executor's own settings, read from ``EXECUTOR__*`` environment variables.

The executor runs inside a sandbox pod or as a local process the MCP manager spawned; it reads
nothing of skillweave's ``Settings`` (which would hand it storage and model credentials it must
never hold). This section is the one place it reads configuration: ``EXECUTOR__TOKEN`` (the
manager's bearer token), ``EXECUTOR__ISOLATION`` (``auto`` | ``bubblewrap`` | ``namespaces`` |
``none``, the one definition in ``skillweave.config``) and the sandbox user. Callers take an
:class:`ExecutorSettings` (tests build one directly).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from skillweave.config import IsolationChoice

__all__ = ["CAPTURE_MAX_BYTES", "MAX_BODY_BYTES", "ExecutorSettings", "IsolationChoice"]

CAPTURE_MAX_BYTES: Final = 512 * 1024 * 1024
"""Most bytes of stdout (and, separately, of stderr) kept on disk; the rest is read and dropped."""

MAX_BODY_BYTES: Final = 2 * 1024 * 1024 * 1024
"""Default cap of a ``POST /execute`` body: a package (at most 50 MiB uncompressed by default),
an environment (at most 1 GiB, the executor's own limit) and room for inputs."""


class ExecutorSettings(BaseSettings):
    """Configuration of one sandbox executor process."""

    model_config = SettingsConfigDict(env_prefix="EXECUTOR__", extra="ignore")

    token: SecretStr | None = Field(
        default=None, description="Bearer token of the manager; the only caller accepted."
    )
    isolation: IsolationChoice = Field(
        default="auto",
        description=(
            "auto: bubblewrap when it runs a sandbox here, else the namespaces fallback, else"
            " refuse to start; bubblewrap / namespaces: that mode or refuse to start; none:"
            " no sandbox (resource limits only; not a security boundary, announced loudly)."
        ),
    )
    bwrap_path: str = Field(default="bwrap", description="The bubblewrap binary (name or path).")
    sandbox_uid: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Run scripts as this uid when the executor runs as root. Unset: take a free uid of"
            " the range below, so concurrent sandboxes never share one. A pinned uid must not be"
            " shared with anything else: every process of it is killed after a run."
        ),
    )
    sandbox_gid: int | None = Field(default=None, ge=1, description="Default: the sandbox uid.")
    uid_range_start: int = Field(default=60_000, ge=1)
    uid_range_size: int = Field(default=1_000, ge=1, le=1_000_000)
    uid_lock_dir: Path | None = Field(
        default=None,
        description=(
            "Where executors on this host lock the uids they hold. Default:"
            " /run/skillweave-executor when writable, else a folder in the temp dir."
        ),
    )
    capture_max_bytes: int = Field(default=CAPTURE_MAX_BYTES, ge=1024)
    environment_cache: Path | None = Field(
        default=None,
        description=(
            "A folder the executors of one host share: each prepared environment is unpacked"
            " there once (read-only, by its sha256) and hard-linked into a run's workspace,"
            " instead of unpacked for every run. Unset: unpacked for every run."
        ),
    )
    max_body_bytes: int = Field(
        default=MAX_BODY_BYTES,
        ge=1024 * 1024,
        description=(
            "Largest POST /execute body (the multipart of the skill package, its environment"
            " and the input files) accepted; 413 above it, unread. Cover the largest package"
            " (SKILLS__PACKAGE_MAX_BYTES), environment and inputs the manager sends."
        ),
    )
    reusable: bool = Field(
        default=False,
        description=(
            "After an execution, be ready for the next in a fresh workspace and sandbox"
            " instead of refusing it: the manager's static backend (development), and the"
            " local pool's executors when SANDBOX__EXECUTIONS_PER_EXECUTOR is above 1."
        ),
    )
    max_executions: int | None = Field(
        default=None,
        ge=1,
        description=(
            "A reusable executor's last execution (the local pool's"
            " SANDBOX__EXECUTIONS_PER_EXECUTOR): after it no next sandbox is made, since the"
            " pool replaces the executor. Unset: no last one (the static backend)."
        ),
    )
