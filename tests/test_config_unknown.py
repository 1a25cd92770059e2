"""A variable that names a settings section but no setting in it (``SKILLS__DIRZ``) is not
ignored silently: every command warns of it in one line on stderr with the closest setting,
servers log it at start, and in a section that forbids unknown keys it is an invalid setting
with the same suggestion."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_executor.settings import ExecutorSettings
from skillweave.config import get_settings, unknown_settings
from skillweave.errors import ConfigError
from tests.conftest import REPO, write_skill

MISSPELT = {
    "SKILLS__DIRZ": "SKILLS__DIRS",
    "WORKFLOW__NAMESAPCE": "WORKFLOW__NAMESPACE",
    "SANDBOX__KUBERNETES__NAMESPCE": "SANDBOX__KUBERNETES__NAMESPACE",  # a nested section
    "MODEL__PROFILES__LOCAL__BASEURL": "MODEL__PROFILES__LOCAL__BASE_URL",  # a dynamic key
    "SANDBOX__ENVIRONMENTS__NOINDEX": "SANDBOX__ENVIRONMENTS__NO_INDEX",
    "SKILLS__DIRS__EXTRA": "SKILLS__DIRS",  # past a plain value
}
SETTINGS = {
    "SKILLS__CATALOG_MODE": "all",
    "MODEL__PROFILES__LOCAL__PROVIDER": "openai",
    "MODEL__PROFILES__LOCAL__NAME": "m",
    "SANDBOX__SKILL_SECRETS__PDF__TOKEN": "s3cret-value",
    "SKILLS__SCAN__POLICY": '{"high": "warn"}',
    "SKILLS__TRUST__UNSIGNED": "allow",
}
NOT_OURS = {"PATH_X__Y": "1", "FOO__BAR": "1", "SKILLWEAVE_API_URL": "http://a:1"}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """An environment with no skillweave variables of its own, in a folder with no .env."""
    for name in list(os.environ):
        if "__" in name:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_each_misspelt_variable_is_named_with_the_closest_setting(
    clean_env: pytest.MonkeyPatch,
) -> None:
    for name, value in {**dict.fromkeys(MISSPELT, "x"), **SETTINGS, **NOT_OURS}.items():
        clean_env.setenv(name, value)
    clean_env.setenv("skills__max_depht", "3")  # names are read case-insensitively

    lines = unknown_settings()

    assert sorted(lines) == sorted(
        [f"{name} is not a setting; did you mean {meant}?" for name, meant in MISSPELT.items()]
        + ["skills__max_depht is not a setting; did you mean SKILLS__MAX_DEPTH?"]
    )


def test_a_name_nothing_is_close_to_says_where_settings_are_listed(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("API__ZZZZ", "1")
    assert unknown_settings() == [
        "API__ZZZZ is not a setting: check its spelling (README, Configuration)"
    ]


def test_dot_env_variables_are_checked_too(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SKILLS__CATALOG_MODEE=all\nSKILLS__CATALOG_MODE=all\n")
    assert unknown_settings() == [
        "SKILLS__CATALOG_MODEE (in .env) is not a setting; did you mean SKILLS__CATALOG_MODE?"
    ]


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("SKILLS__SCAN__POLCY", "SKILLS__SCAN__POLICY"),
        ("SKILLS__TRUST__UNSIGNDE", "SKILLS__TRUST__UNSIGNED"),
        (
            "SANDBOX__EGRESS__APPROVALS__PDF__DESTINATION",
            "SANDBOX__EGRESS__APPROVALS__PDF__DESTINATIONS",
        ),
    ],
)
def test_in_a_section_that_forbids_unknown_keys_it_is_an_invalid_setting(
    clean_env: pytest.MonkeyPatch, name: str, meant: str
) -> None:
    clean_env.setenv(name, "x")
    assert unknown_settings() == []  # not a warning: an error, said once
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigError) as caught:
            get_settings()
    finally:
        get_settings.cache_clear()
    assert f"{name}: not a setting; did you mean {meant}?" in str(caught.value)


def test_the_executor_settings_are_checked_under_their_prefix(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("EXECUTOR__ISOLATON", "none")
    clean_env.setenv("EXECUTOR__ISOLATION", "none")
    assert unknown_settings(ExecutorSettings) == [
        "EXECUTOR__ISOLATON is not a setting; did you mean EXECUTOR__ISOLATION?"
    ]
    assert unknown_settings() == []  # not a section of skillweave's settings


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if "__" not in name}
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_every_command_warns_in_one_line_on_stderr(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "lib" / "solo")
    done = _cli("skills", "validate", str(skill), env={"SKILLS__DIRZ": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: SKILLS__DIRZ is not a setting; did you mean SKILLS__DIRS?"
    ]
    assert "1 skill folder checked" in done.stdout


def test_a_server_logs_it_at_start(clean_env: pytest.MonkeyPatch) -> None:
    from skillweave.cli import serve

    clean_env.setenv("WORKFLOW__NAMESAPCE", "other")
    get_settings.cache_clear()
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep()
    root = logging.getLogger()
    before = list(root.handlers), root.level, logging.getLogger("skillweave").level
    try:
        serve._service_logging("skillweave-test")
        root.addHandler(keep)
        serve._service_logging("skillweave-test")  # once more, now with a handler to see it
    finally:
        for handler in [h for h in root.handlers if h not in before[0]]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(before[1])
        logging.getLogger("skillweave").setLevel(before[2])
        get_settings.cache_clear()
    [record] = [r for r in records if r.name == "skillweave.config"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "WORKFLOW__NAMESAPCE is not a setting; did you mean WORKFLOW__NAMESPACE?"
    )
