"""No default model, and a default given to a run by name (``llm.factory``): what a server
starts with when ``MODEL__*`` names nothing usable, and how a worker runs exactly the default the
API resolved, or refuses a run whose default is not its own."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import ModelSettings
from skillweave.errors import ConfigError
from skillweave.llm.factory import (
    NAME_A_MODEL,
    ModelProviders,
    default_model_name,
    default_model_problem,
    describe_default,
    open_default_provider,
    resolve_model,
)

SCRIPT = "model: {name}\nturns:\n  - say: answered by {name}\n"


def _script(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SCRIPT.format(name=name), encoding="utf-8")
    return path


def test_unset_is_no_default_model_and_a_server_starts_without_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    unset = ModelSettings()  # the built-in scripted:demo is a placeholder, not a model
    assert default_model_problem(unset) is not None
    with caplog.at_level(logging.WARNING, logger="skillweave.models"):
        assert open_default_provider(unset, required=False) is None
    [said] = [r.getMessage() for r in caplog.records if r.name == "skillweave.models"]
    assert said.startswith("no default model is configured (MODEL__PROVIDER, MODEL__NAME)")
    assert NAME_A_MODEL in said
    assert describe_default(None) == "none (each run names its own)"
    with pytest.raises(ConfigError, match="model script 'demo' not found"):
        open_default_provider(unset, required=True)  # a command that runs one run: refused


def test_a_default_set_but_unusable_is_absent_and_says_why() -> None:
    keyless = ModelSettings(provider="anthropic", name="claude-haiku-4-5")
    problem = default_model_problem(keyless)
    assert problem is not None
    assert "needs an API key" in problem
    assert open_default_provider(keyless, required=False) is None
    # Where workers run the model (the API on Temporal), only its name is needed here.
    assert default_model_problem(keyless, runs_here=False) is None


async def test_a_run_given_the_default_by_name_runs_this_default(tmp_path: Path) -> None:
    script = _script(tmp_path, "the-default")
    settings = ModelSettings(provider="scripted", name=str(script), max_attempts=2)
    provider = open_default_provider(settings, required=False)
    assert provider is not None
    models = ModelProviders(settings, default=provider)
    try:
        named = default_model_name(settings)
        assert named == f"default:scripted:{script}"
        assert models.provider_for(named) is provider  # the very default, not a second one
        assert models.profile_for(named).max_attempts == 2
    finally:
        await models.aclose()


@pytest.mark.parametrize("theirs", ["default:openai:gpt-4o", "default:scripted:/etc/passwd"])
async def test_a_run_given_another_default_fails_saying_the_two_differ(
    tmp_path: Path, theirs: str
) -> None:
    script = _script(tmp_path, "ours")
    models = ModelProviders(ModelSettings(provider="scripted", name=str(script)))
    try:
        with pytest.raises(ConfigError) as refused:
            models.provider_for(theirs)
        message = str(refused.value)
        assert f"default model {theirs.removeprefix('default:')!r}" in message
        assert f"this one's default is 'scripted:{script}'" in message
        assert "same MODEL__PROVIDER and MODEL__NAME" in message
    finally:
        await models.aclose()


async def test_a_worker_without_a_default_refuses_a_default_given_by_name() -> None:
    models = ModelProviders(ModelSettings())
    with pytest.raises(ConfigError, match="this one has no default model"):
        models.provider_for("default:openai:gpt-4o")
    await models.aclose()


def test_an_agent_cannot_name_a_default_itself() -> None:
    """``default:…`` is how the API gives a run its default: no provider an agent may name."""
    settings = ModelSettings(provider="openai", name="gpt-4o", api_key=SecretStr("sk-x"))
    with pytest.raises(ConfigError, match="unknown provider 'default'"):
        resolve_model(settings, default_model_name(settings))
