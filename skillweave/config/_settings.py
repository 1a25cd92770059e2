"""``Settings``: all of skillweave's configuration, one nested section per concern, read from
the environment (and ``.env``) with ``__`` between a section and its field. Built by
:func:`~skillweave.config.get_settings` or directly (tests)."""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from skillweave.config._api import ApiSettings
from skillweave.config._models import ModelSettings
from skillweave.config._observability import ObservabilitySettings
from skillweave.config._sandbox import SandboxSettings
from skillweave.config._skills import AuditSettings, SkillsSettings
from skillweave.config._storage import StorageSettings
from skillweave.config._workflow import WorkflowSettings

__all__ = ["Settings"]


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
