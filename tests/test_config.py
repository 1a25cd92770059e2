from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from skillweave.config import Settings, bundled_skills_dir


def test_nested_env_vars_reach_their_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKFLOW__EXECUTION_ENGINE", "direct")
    monkeypatch.setenv("SKILLS__DIRS", '["./skills", "/opt/more"]')
    monkeypatch.setenv("SKILLS__CATALOG_MODE", "auto")
    monkeypatch.setenv("MODEL__API_KEY", "sk-secret")
    settings = Settings(_env_file=None)
    assert settings.workflow.execution_engine == "direct"
    assert settings.skills.dirs == ["./skills", "/opt/more"]
    assert settings.skills.catalog_mode == "auto"
    assert settings.model.api_key is not None
    assert settings.model.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(settings)


def test_one_nested_field_keeps_the_other_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLS__MAX_DEPTH", "3")
    settings = Settings(_env_file=None)
    assert settings.skills.max_depth == 3
    assert settings.skills.catalog_mode == "enabled"


def test_modes_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKFLOW__EXECUTION_ENGINE", "threads")
    with pytest.raises(ValidationError, match="execution_engine"):
        Settings(_env_file=None)


def test_default_dirs_start_with_the_bundled_skills() -> None:
    dirs = Settings(_env_file=None).skills.resolved_dirs()
    assert dirs[0] == bundled_skills_dir()
    assert (bundled_skills_dir() / "data-toolkit").is_dir()
    assert not any("~" in str(d) for d in dirs)


def test_temporal_is_the_default_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Temporal is the durable default; direct is the local-development switch."""
    for key in [key for key in os.environ if key.startswith("WORKFLOW__")]:
        monkeypatch.delenv(key)
    assert Settings(_env_file=None).workflow.execution_engine == "temporal"
    monkeypatch.setenv("WORKFLOW__EXECUTION_ENGINE", "direct")
    assert Settings(_env_file=None).workflow.execution_engine == "direct"


def test_no_default_model_is_one_unset_or_unusable(monkeypatch: pytest.MonkeyPatch) -> None:
    """No MODEL__PROVIDER/NAME: no default model (the built-in name is a placeholder); one set
    but unusable here is absent where it would run, named where workers run it."""
    from skillweave.llm.factory import default_model_name, default_model_problem

    for key in [key for key in os.environ if key.startswith("MODEL__")]:
        monkeypatch.delenv(key)
    unset = Settings(_env_file=None).model
    assert default_model_problem(unset) == (
        "no default model is configured (MODEL__PROVIDER, MODEL__NAME)"
    )
    assert default_model_problem(unset, runs_here=False) is not None
    monkeypatch.setenv("MODEL__PROVIDER", "openai")
    monkeypatch.setenv("MODEL__NAME", "gpt-4o-mini")
    keyless = Settings(_env_file=None).model
    assert "needs an API key" in (default_model_problem(keyless) or "")
    assert default_model_problem(keyless, runs_here=False) is None
    assert default_model_name(keyless) == "default:openai:gpt-4o-mini"


def test_registries_are_read_as_a_user_types_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLS__REGISTRIES", "acme/skills")
    [one] = Settings(_env_file=None).skills.registries
    assert (one.kind, one.location, one.label) == ("marketplace", "acme/skills", "acme/skills")
    monkeypatch.setenv(
        "SKILLS__REGISTRIES",
        '["index:/srv/i.json", "/srv/j.JSON", "api:https://sw.example.com",'
        ' {"kind": "marketplace", "location": "./shelf", "name": "shelf", "token": "t"}]',
    )
    kinds = [(r.kind, r.location, r.label) for r in Settings(_env_file=None).skills.registries]
    assert kinds == [
        ("index", "/srv/i.json", "/srv/i.json"),
        ("index", "/srv/j.JSON", "/srv/j.JSON"),
        ("api", "https://sw.example.com", "https://sw.example.com"),
        ("marketplace", "./shelf", "shelf"),
    ]
    monkeypatch.setenv("SKILLS__REGISTRIES", "[")
    with pytest.raises(ValidationError, match="a JSON list of them"):
        Settings(_env_file=None)
    monkeypatch.setenv("SKILLS__REGISTRIES", '["index:/a\\u0007b.json"]')
    with pytest.raises(ValidationError, match="no control characters"):
        Settings(_env_file=None)


def test_the_git_host_is_a_base_url_that_carries_integrity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLS__GIT_HOST", "file:///srv/git/")
    assert Settings(_env_file=None).skills.git_host == "file:///srv/git"
    for bad in ("http://git.example.com", "git://example.com", "github.com"):
        monkeypatch.setenv("SKILLS__GIT_HOST", bad)
        with pytest.raises(ValidationError, match="https://, ssh:// or file://"):
            Settings(_env_file=None)
