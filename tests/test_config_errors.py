"""Settings as a user types them, and invalid ones as one line naming the variable
(``get_settings`` → :class:`ConfigError`; the CLI prints it, exit 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from sandbox_executor.settings import ExecutorSettings
from skillweave.config import Settings, get_settings, settings_problem
from skillweave.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No .env and no settings of the machine's: only what a test sets."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if "__" in name:
            monkeypatch.delenv(name)


def _problem(monkeypatch: pytest.MonkeyPatch, **variables: str) -> str:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        get_settings()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("invalid setting: ")
    return message


@pytest.mark.parametrize(
    ("typed", "dirs"),
    [
        ("/some/path", ["/some/path"]),
        (f"/a{os.pathsep}~/b", ["/a", "~/b"]),
        (f"bundled{os.pathsep}{os.pathsep}/c{os.pathsep}", ["bundled", "/c"]),
        ('["/a", "bundled"]', ["/a", "bundled"]),
        ('  ["/with:colon"]  ', ["/with:colon"]),
        ("[]", []),
    ],
)
def test_skill_dirs_as_a_user_types_them(
    monkeypatch: pytest.MonkeyPatch, typed: str, dirs: list[str]
) -> None:
    monkeypatch.setenv("SKILLS__DIRS", typed)
    assert get_settings().skills.dirs == dirs


def test_skill_dirs_from_code_and_json_sections_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None, skills={"dirs": ["x"]}).skills.dirs == ["x"]
    monkeypatch.setenv("SKILLS", '{"dirs": ["/y"], "max_depth": 3}')
    settings = get_settings()
    assert settings.skills.dirs == ["/y"]
    assert settings.skills.max_depth == 3


def test_broken_json_dirs_name_the_variable_and_the_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problem(monkeypatch, SKILLS__DIRS="[./skills")
    assert "SKILLS__DIRS='[./skills'" in message
    assert "a path" in message
    assert "JSON list of paths" in message


def test_a_wrong_item_names_the_variable_and_the_item(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problem(monkeypatch, SKILLS__DIRS='["ok", 3]')
    assert "SKILLS__DIRS[1]='3'" in message


def test_lists_and_mappings_that_are_not_json_name_their_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = _problem(monkeypatch, SANDBOX__ENVIRONMENTS__PIP_ARGS="--pre")
    assert message == (
        "invalid setting: SANDBOX__ENVIRONMENTS__PIP_ARGS: expected a JSON list, "
        'e.g. \'["a", "b"]\''
    )
    monkeypatch.delenv("SANDBOX__ENVIRONMENTS__PIP_ARGS")
    message = _problem(monkeypatch, SANDBOX__SKILL_SECRETS="pdf=KEY")
    assert "SANDBOX__SKILL_SECRETS: expected a JSON object" in message
    assert "KEY" not in message


def test_only_the_undecodable_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problem(monkeypatch, SKILLS__DIRS="/plain/path", SKILLS__DISABLED="pdf")
    assert message.startswith("invalid setting: SKILLS__DISABLED: expected a JSON list")
    assert "SKILLS__DIRS" not in message


def test_a_value_in_dot_env_is_named_with_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    Path(".env").write_text("SKILLS__DISABLED=pdf\n", encoding="utf-8")
    message = _problem(monkeypatch)
    assert "SKILLS__DISABLED (in .env): expected a JSON list" in message


def test_each_invalid_value_is_named_on_the_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problem(
        monkeypatch,
        WORKFLOW__EXECUTION_ENGINE="threads",
        SKILLS__CATALOG_TOP_K="0",
        SANDBOX__ISOLATION="jail",
    )
    assert "WORKFLOW__EXECUTION_ENGINE='threads': Input should be 'temporal' or 'direct'" in message
    assert "SKILLS__CATALOG_TOP_K='0'" in message
    assert "SANDBOX__ISOLATION='jail'" in message


def test_secret_values_are_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _problem(monkeypatch, SANDBOX__SKILL_SECRETS='{"pdf": "sk-live-123"}')
    assert "SANDBOX__SKILL_SECRETS__PDF" in message
    assert "sk-live-123" not in message


@pytest.mark.parametrize(
    ("variables", "missing"),
    [
        ({}, "SANDBOX__EXECUTOR_URL and SANDBOX__EXECUTOR_TOKEN"),
        ({"SANDBOX__EXECUTOR_URL": "http://127.0.0.1:8081"}, "SANDBOX__EXECUTOR_TOKEN:"),
        ({"SANDBOX__EXECUTOR_TOKEN": "t"}, "SANDBOX__EXECUTOR_URL:"),
    ],
)
def test_the_static_backend_needs_its_executor(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], missing: str
) -> None:
    message = _problem(monkeypatch, SANDBOX__BACKEND="static", **variables)
    assert f"SANDBOX__BACKEND='static' needs {missing}" in message


def test_the_static_backend_with_its_executor_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOX__BACKEND", "static")
    monkeypatch.setenv("SANDBOX__EXECUTOR_URL", "http://127.0.0.1:8081")
    monkeypatch.setenv("SANDBOX__EXECUTOR_TOKEN", "t")
    assert get_settings().sandbox.backend == "static"


def test_executor_settings_are_named_with_their_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECUTOR__ISOLATION", "jail")
    with pytest.raises(ValidationError) as caught:
        ExecutorSettings()
    message = settings_problem(caught.value, ExecutorSettings)
    assert message.startswith("invalid setting: EXECUTOR__ISOLATION='jail': Input should be")
