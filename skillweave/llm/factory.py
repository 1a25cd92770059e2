"""Choosing a provider: :func:`open_provider` from the ``MODEL__*`` settings, and
:func:`parse_model_option` for the CLI's ``--model PROVIDER:NAME``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, assert_never, cast, get_args

import httpx

from skillweave.config import ModelSettings
from skillweave.errors import ConfigError
from skillweave.llm.anthropic import DEFAULT_ANTHROPIC_BASE_URL, AnthropicProvider
from skillweave.llm.base import ModelProvider
from skillweave.llm.openai import DEFAULT_OPENAI_BASE_URL, OpenAIProvider
from skillweave.llm.scripted import ScriptedProvider

__all__ = ["ProviderKind", "open_provider", "parse_model_option"]

ProviderKind = Literal["openai", "anthropic", "scripted"]
"""The providers ``MODEL__PROVIDER`` and ``--model`` accept (those of ``ModelSettings``)."""

_MODEL_OPTION_HINT = (
    "expected PROVIDER:NAME, e.g. openai:gpt-4o, anthropic:claude-sonnet-4-5 "
    "or scripted:path/to/script.yaml"
)
_OPENAI_API_HOST = "api.openai.com"


def parse_model_option(value: str) -> tuple[ProviderKind, str]:
    """Split the CLI's ``--model PROVIDER:NAME`` into the provider and the name.

    For ``scripted`` the name is the path of the script. Only the first colon splits, so a
    name may hold colons (``openai:qwen2.5:7b``).

    Raises:
        ConfigError: no colon, an empty part, or an unknown provider.
    """
    provider, colon, name = value.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not colon or not provider or not name:
        raise ConfigError(f"--model {value!r}: {_MODEL_OPTION_HINT}")
    if provider not in get_args(ProviderKind):
        choices = ", ".join(get_args(ProviderKind))
        raise ConfigError(
            f"--model {value!r}: unknown provider {provider!r}, choose one of {choices} "
            f"({_MODEL_OPTION_HINT})"
        )
    return cast(ProviderKind, provider), name


def open_provider(
    settings: ModelSettings,
    *,
    model: str | None = None,
    script: Path | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ModelProvider:
    """The provider `settings` ask for. Nothing is contacted here.

    Args:
        settings: the ``MODEL__*`` settings; ``name`` is the model, or for ``scripted`` the
            path of the script.
        model: replaces ``settings.name`` (the NAME of ``--model``).
        script: for ``scripted``, the script to replay, whatever the name says.
        transport: an httpx transport for the HTTP providers (tests).

    Raises:
        ConfigError: an API key is needed and missing (Anthropic always; OpenAI at
            api.openai.com), or the script cannot be read or is not a script.
    """
    name = model or settings.name
    api_key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    match settings.provider:
        case "scripted":
            path = script or Path(name)
            if not path.is_file():
                raise ConfigError(
                    f"model script {str(path)!r} not found: set MODEL__NAME to a script file "
                    "(or pass --model scripted:PATH)"
                )
            return ScriptedProvider.from_file(path)
        case "openai":
            base_url = _checked_base_url(settings.base_url or DEFAULT_OPENAI_BASE_URL)
            if not api_key and httpx.URL(base_url).host == _OPENAI_API_HOST:
                raise ConfigError(
                    "model provider 'openai' needs an API key at api.openai.com: set "
                    "MODEL__API_KEY (or MODEL__BASE_URL to an OpenAI-compatible server that "
                    "needs none)"
                )
            return OpenAIProvider(
                model=name,
                base_url=base_url,
                api_key=api_key,
                timeout=settings.timeout_seconds,
                transport=transport,
            )
        case "anthropic":
            if not api_key:
                raise ConfigError("model provider 'anthropic' needs an API key: set MODEL__API_KEY")
            return AnthropicProvider(
                model=name,
                base_url=_checked_base_url(settings.base_url or DEFAULT_ANTHROPIC_BASE_URL),
                api_key=api_key,
                timeout=settings.timeout_seconds,
                transport=transport,
            )
        case _:
            assert_never(settings.provider)


def _checked_base_url(base_url: str) -> str:
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(
            f"MODEL__BASE_URL {base_url!r} is not an http(s) URL, e.g. http://localhost:8000/v1"
        )
    return base_url
