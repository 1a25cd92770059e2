"""The ``MODEL__`` section: the default model and the named model profiles an agent may
choose. Part of :class:`~skillweave.config.Settings`; ``skillweave.llm`` reads it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

__all__ = ["PROFILE_NAME_PATTERN", "ModelProfile", "ModelSettings"]

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
    input_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million input tokens; None: not priced."
    )
    output_usd_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million output tokens; None: not priced."
    )

    def cost_of(self, *, input_tokens: int, output_tokens: int) -> float | None:
        """What `input_tokens` and `output_tokens` of this model cost, in USD: the one rule
        that prices tokens (an eval job's cost, ``skillweave.evals``). None unless both prices
        are set: half a price would understate the cost."""
        if self.input_usd_per_mtok is None or self.output_usd_per_mtok is None:
            return None
        return (
            input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok
        ) / 1_000_000


class ModelSettings(ModelProfile):
    """The default model (``MODEL__PROVIDER``, ``MODEL__NAME``, …) and the named profiles
    (``MODEL__PROFILES__<NAME>__PROVIDER``, ``__NAME``, ``__BASE_URL``, ``__API_KEY``,
    ``__TIMEOUT_SECONDS``, ``__MAX_ATTEMPTS``, ``__INPUT_USD_PER_MTOK``,
    ``__OUTPUT_USD_PER_MTOK``) an agent's ``model`` may name instead of
    ``provider:name``, and the folder a server's requested scripted models come from
    (``MODEL__SCRIPTS_DIR``, see ``skillweave.llm.factory.requested_script``)."""

    provider: Literal["openai", "anthropic", "scripted"] = "scripted"
    name: str = Field(default="demo", min_length=1)
    profiles: dict[str, ModelProfile] = Field(default_factory=dict)
    scripts_dir: Path | None = Field(
        default=None,
        description="On a server (API, worker, dev), the folder a scripted model named by a "
        "request (an agent's model_id, a run's model: scripted:NAME) must come from; NAME is a "
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
