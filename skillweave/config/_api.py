"""The ``API__`` section: the control-plane REST API's address, tokens and request caps.
Part of :class:`~skillweave.config.Settings`; ``skillweave.api`` reads it."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr

__all__ = ["ApiSettings"]


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
