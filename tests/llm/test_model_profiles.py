"""What a run's model name resolves to (`resolve_model`), and `ModelProviders`: profiles,
``provider:name``, and a key that only goes to the endpoint it was configured with."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from skillweave.config import ModelSettings, Settings
from skillweave.errors import ConfigError
from skillweave.llm.factory import ModelProviders, describe_model, resolve_model
from skillweave.llm.openai import OpenAIProvider

KEY = "sk-local-9f8e7d6c"
LOCAL = "http://127.0.0.1:8080/v1"


def _secret(profile_key: SecretStr | None) -> str | None:
    return None if profile_key is None else profile_key.get_secret_value()


def test_provider_name_keeps_the_base_url_and_key_when_no_provider_is_configured() -> None:
    """The reported bug: MODEL__BASE_URL was dropped, and the local server's key went to
    api.openai.com, when MODEL__PROVIDER was unset (scripted)."""
    settings = ModelSettings(base_url=LOCAL, api_key=SecretStr(KEY))
    profile = resolve_model(settings, "openai:smollm2")
    assert (profile.provider, profile.name, profile.base_url) == ("openai", "smollm2", LOCAL)
    assert _secret(profile.api_key) == KEY


def test_provider_name_of_the_configured_provider_keeps_its_endpoint_and_key() -> None:
    settings = ModelSettings(
        provider="openai", name="a", base_url=LOCAL, api_key=SecretStr(KEY), timeout_seconds=5
    )
    profile = resolve_model(settings, "openai:b")
    assert (profile.name, profile.base_url, profile.timeout_seconds) == ("b", LOCAL, 5)
    assert _secret(profile.api_key) == KEY


@pytest.mark.parametrize(
    ("configured", "named"), [("openai", "anthropic:claude-haiku-4-5"), ("anthropic", "openai:x")]
)
def test_a_key_never_goes_to_another_providers_endpoint(configured: str, named: str) -> None:
    settings = ModelSettings(provider=configured, name="m", api_key=SecretStr(KEY))  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as refused:
        resolve_model(settings, named)
    message = str(refused.value)
    assert f"model {named!r} needs an API key" in message
    assert "are not sent to" in message
    assert "MODEL__PROFILES__<NAME>__PROVIDER=" in message
    assert KEY not in message


def test_another_provider_that_needs_no_key_gets_its_own_endpoint_without_the_key() -> None:
    # An OpenAI-compatible model at the public endpoint needs a key, so it is refused above; a
    # profile gives it an endpoint of its own, and nothing of the default travels with it.
    settings = ModelSettings(
        provider="anthropic",
        name="m",
        api_key=SecretStr(KEY),
        profiles={"local": {"provider": "openai", "name": "q", "base_url": LOCAL}},
    )
    profile = resolve_model(settings, "local")
    assert (profile.base_url, profile.api_key) == (LOCAL, None)


def test_no_name_is_the_default_and_a_profile_is_taken_as_configured(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("turns:\n  - say: hi\n", encoding="utf-8")
    settings = ModelSettings(
        provider="scripted",
        name=str(script),
        profiles={
            "local": {
                "provider": "openai",
                "name": "qwen2.5:7b",
                "base_url": LOCAL,
                "api_key": KEY,
                "timeout_seconds": 600,
            }
        },
    )
    assert resolve_model(settings, None).name == str(script)
    local = resolve_model(settings, "local")
    assert (local.provider, local.name, local.base_url) == ("openai", "qwen2.5:7b", LOCAL)
    assert (_secret(local.api_key), local.timeout_seconds) == (KEY, 600)
    assert describe_model(local, "local") == "openai:qwen2.5:7b (profile local)"
    assert describe_model(local, "openai:qwen2.5:7b") == "openai:qwen2.5:7b"


@pytest.mark.parametrize(
    ("named", "says"),
    [
        ("nosuch", "unknown model profile 'nosuch' (configured: bad-url, claude, local)"),
        ("No Such", "a profile name is lowercase letters"),
        ("claude", "model profile 'claude' needs an API key: set MODEL__PROFILES__CLAUDE__API_KEY"),
        ("bad-url", "MODEL__PROFILES__BAD-URL__BASE_URL 'localhost:80/v1' is not an http(s) URL"),
        ("mistral:large", "unknown provider 'mistral'"),
        ("openai:", "expected PROVIDER:NAME"),
    ],
)
def test_a_name_that_does_not_resolve_says_what_to_set(named: str, says: str) -> None:
    settings = ModelSettings(
        profiles={
            "local": {"provider": "openai", "name": "q", "base_url": LOCAL},
            "claude": {"provider": "anthropic", "name": "claude-sonnet-4-5"},
            "bad-url": {"provider": "openai", "name": "q", "base_url": "localhost:80/v1"},
        }
    )
    with pytest.raises(ConfigError) as refused:
        resolve_model(settings, named)
    assert says in str(refused.value)


def test_profiles_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL__PROFILES__LOCAL__PROVIDER", "openai")
    monkeypatch.setenv("MODEL__PROFILES__LOCAL__NAME", "qwen2.5:7b")
    monkeypatch.setenv("MODEL__PROFILES__LOCAL__BASE_URL", LOCAL)
    monkeypatch.setenv("MODEL__PROFILES__LOCAL__API_KEY", KEY)
    profile = Settings(_env_file=None).model.profiles["local"]
    assert (profile.provider, profile.name, profile.base_url) == ("openai", "qwen2.5:7b", LOCAL)
    assert KEY not in repr(profile)


def test_a_profile_name_that_cannot_be_named_is_refused_in_the_settings() -> None:
    with pytest.raises(ValidationError, match=r"model profile name 'a\.b'"):
        ModelSettings(profiles={"a.b": {"provider": "openai", "name": "q"}})


async def test_model_providers_open_each_model_once_and_close_them_all() -> None:
    models = ModelProviders(
        ModelSettings(
            provider="openai",
            name="default-model",
            base_url=LOCAL,
            profiles={"other": {"provider": "openai", "name": "other-model", "base_url": LOCAL}},
        )
    )
    default, other, named = models.default, models.provider_for("other"), None
    named = models.provider_for("openai:third")
    assert models.provider_for(None) is default
    assert models.provider_for("other") is other
    assert [p.name for p in (default, other, named)] == [
        "openai:default-model",
        "openai:other-model",
        "openai:third",
    ]
    assert isinstance(named, OpenAIProvider)
    assert named.url == f"{LOCAL}/chat/completions"
    await models.aclose()
    assert all(p._client.is_closed for p in (default, other, named))  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="unknown model profile"):
        models.provider_for("missing")
