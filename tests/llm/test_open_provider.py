"""open_provider and parse_model_option: settings and --model in, the right provider out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import httpx
import pytest

import skillweave.llm
from skillweave.config import ModelSettings
from skillweave.errors import ConfigError
from skillweave.llm import (
    AnthropicProvider,
    Message,
    ModelRequest,
    OpenAIProvider,
    ProviderKind,
    ScriptedProvider,
    open_provider,
    parse_model_option,
)

SECRET = "sk-very-secret-value"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("openai:gpt-4o", ("openai", "gpt-4o")),
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("scripted:examples/demo/script.yaml", ("scripted", "examples/demo/script.yaml")),
        ("openai:qwen2.5:7b", ("openai", "qwen2.5:7b")),
        (" OpenAI : gpt-4o ", ("openai", "gpt-4o")),
    ],
)
def test_parse_model_option(value: str, expected: tuple[str, str]) -> None:
    assert parse_model_option(value) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("gpt-4o", "expected PROVIDER:NAME"),
        ("openai:", "expected PROVIDER:NAME"),
        (":gpt-4o", "expected PROVIDER:NAME"),
        ("gemini:pro", "unknown provider 'gemini', choose one of openai, anthropic, scripted"),
    ],
)
def test_parse_model_option_rejects_with_a_hint(value: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=r"e\.g\. openai:gpt-4o") as caught:
        parse_model_option(value)
    assert problem in str(caught.value)


def test_provider_kinds_are_those_of_the_settings() -> None:
    settings_kinds = get_args(ModelSettings.model_fields["provider"].annotation)
    assert get_args(ProviderKind) == settings_kinds


async def test_openai_from_settings() -> None:
    settings = ModelSettings(provider="openai", name="gpt-4o", api_key=SECRET, timeout_seconds=7)
    provider = open_provider(settings)
    assert isinstance(provider, OpenAIProvider)
    assert provider.name == "openai:gpt-4o"
    assert provider.url == "https://api.openai.com/v1/chat/completions"
    assert SECRET not in repr(provider)
    await provider.aclose()


async def test_openai_compatible_server_needs_no_key_and_model_overrides_the_name() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json={"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        )

    settings = ModelSettings(provider="openai", name="ignored", base_url="http://127.0.0.1:8000/v1")
    provider = open_provider(settings, model="qwen2.5", transport=httpx.MockTransport(answer))
    response = await provider.complete(
        ModelRequest(model="qwen2.5", messages=(Message(role="user", text="hello"),))
    )
    await provider.aclose()
    assert response.message.text == "hi"
    assert str(seen[0].url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert "authorization" not in seen[0].headers
    assert provider.name == "openai:qwen2.5"


@pytest.mark.parametrize("base_url", [None, "https://api.openai.com/v1/", "https://api.openai.com"])
def test_openai_at_api_openai_com_needs_a_key(base_url: str | None) -> None:
    settings = ModelSettings(provider="openai", name="gpt-4o", base_url=base_url)
    with pytest.raises(ConfigError, match="set MODEL__API_KEY"):
        open_provider(settings)


@pytest.mark.parametrize("api_key", [None, ""])
def test_anthropic_always_needs_a_key(api_key: str | None) -> None:
    settings = ModelSettings(
        provider="anthropic",
        name="claude-sonnet-4-5",
        base_url="http://proxy:8080",
        api_key=api_key,
    )
    with pytest.raises(
        ConfigError, match="anthropic:claude-sonnet-4-5 needs an API key: set MODEL__API_KEY"
    ):
        open_provider(settings)


async def test_anthropic_from_settings() -> None:
    settings = ModelSettings(provider="anthropic", name="claude-sonnet-4-5", api_key=SECRET)
    provider = open_provider(settings, model="claude-opus-4-1")
    assert isinstance(provider, AnthropicProvider)
    assert provider.name == "anthropic:claude-opus-4-1"
    assert provider.url == "https://api.anthropic.com/v1/messages"
    assert SECRET not in repr(provider)
    await provider.aclose()


@pytest.mark.parametrize("base_url", ["localhost:8000/v1", "ftp://host/v1", "http://"])
def test_a_base_url_that_is_not_http_is_a_config_error(base_url: str) -> None:
    settings = ModelSettings(provider="openai", name="m", base_url=base_url, api_key=SECRET)
    with pytest.raises(ConfigError, match=r"MODEL__BASE_URL .* is not an http\(s\) URL") as caught:
        open_provider(settings)
    assert SECRET not in str(caught.value)


def write_script(path: Path, say: str) -> Path:
    path.write_text(f"model: {say}\nturns:\n  - say: {say}\n", encoding="utf-8")
    return path


def test_scripted_name_is_the_script_path(tmp_path: Path) -> None:
    script = write_script(tmp_path / "a.yaml", "from-settings")
    provider = open_provider(ModelSettings(provider="scripted", name=str(script)))
    assert isinstance(provider, ScriptedProvider)
    assert provider.name == "scripted:from-settings"


def test_scripted_model_and_script_override(tmp_path: Path) -> None:
    settings = ModelSettings(provider="scripted", name=str(tmp_path / "missing.yaml"))
    by_model = open_provider(settings, model=str(write_script(tmp_path / "b.yaml", "by-model")))
    by_script = open_provider(
        settings, model="ignored", script=write_script(tmp_path / "c.yaml", "by-script")
    )
    assert (by_model.name, by_script.name) == ("scripted:by-model", "scripted:by-script")


def test_a_missing_script_says_what_to_set(tmp_path: Path) -> None:
    settings = ModelSettings(provider="scripted", name=str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match="not found: set MODEL__NAME to a script file"):
        open_provider(settings)


def test_a_bad_script_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("turns: nope\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml: turns: "):
        open_provider(ModelSettings(), script=tmp_path / "bad.yaml")


def test_every_public_name_resolves() -> None:
    for name in skillweave.llm.__all__:
        assert getattr(skillweave.llm, name) is not None, name
    assert sorted(skillweave.llm.__all__) == sorted(set(skillweave.llm.__all__))


def test_imports_only_point_down() -> None:
    code = (
        "import sys, skillweave.llm; "
        "print(sorted(m for m in sys.modules if m.startswith(('skillweave.', 'temporalio', "
        "'fastapi')) and not m.startswith(('skillweave.llm', 'skillweave.config', "
        "'skillweave.errors', 'skillweave.lazy'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
