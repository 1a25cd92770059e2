"""An invalid setting is one line, as a user sees it: every command family, run as a process,
exits 2 with one stderr line that names the variable and what it accepts, and no traceback.

Each command gets what it needs besides (tokens, a model script), so that the setting under
test is the only thing wrong; a command that got past it would fail differently, or hang
until the timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

COMMANDS: dict[str, list[str]] = {
    "skills": ["skills", "list"],
    "run": ["run", "hello"],
    "demo": ["demo"],
    "manager": ["manager"],
    "worker": ["worker"],
    "api": ["api"],
    "mcp": ["mcp"],
    "sandbox run": ["sandbox", "run", "unit-converter", "scripts/convert.py"],
    "runs": ["runs", "list"],
    "dev": ["dev", "--ephemeral"],
}
"""One command of each family that reads skillweave's settings."""

BAD = {
    # Brackets ask for JSON; a plain path is fine (test_a_path_as_typed_is_accepted).
    "SKILLS__DIRS": ("[./skills", "JSON list of paths"),
    "SANDBOX__BACKEND": ("static", "SANDBOX__EXECUTOR_URL"),
    "SANDBOX__MANAGER_URL": ("manager:8090", "expected an http(s) URL with a host"),
}
"""The variable, a bad value and a word of what the line must say it accepts."""


def _skillweave(
    tmp_path: Path, args: list[str], variables: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "model.yaml"
    script.write_text('turns:\n  - say: "hi"\n', encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),  # no ~/.skillweave of the machine's
        "SANDBOX__MANAGER_TOKEN": "m" * 16,
        "API__TOKEN": "a" * 16,
        "MODEL__NAME": str(script),
        "WORKFLOW__TEMPORAL_ADDRESS": "127.0.0.1:9",  # never reached: settings come first
        **variables,
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        cwd=tmp_path,  # no .env of the checkout's
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _assert_one_line(done: subprocess.CompletedProcess[str], variable: str, accepted: str) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: invalid setting: ")
    assert variable in lines[0]
    assert accepted in lines[0]


@pytest.mark.parametrize("variable", sorted(BAD))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_invalid_setting_is_one_line_and_exit_2(
    tmp_path: Path, command: str, variable: str
) -> None:
    value, accepted = BAD[variable]
    done = _skillweave(tmp_path, COMMANDS[command], {variable: value})
    _assert_one_line(done, variable, accepted)


@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("SKILLS__DISABLED", "pdf", "JSON list"),  # pydantic-settings' own JSON decoding
        ("SANDBOX__SKILL_SECRETS", "pdf=x", "JSON object"),
        ("SKILLS__CATALOG_TOP_K", "500", "less than or equal to 200"),
        ("WORKFLOW__EXECUTION_ENGINE", "threads", "'temporal' or 'direct'"),
        ("SANDBOX__PORT", "eighty", "valid integer"),
        ("SANDBOX__MANAGER_URL", "http://manager:port", "the port is not a number"),
        ("WORKFLOW__UI_URL", "localhost:8233", "e.g. http://temporal-ui:8080"),
        ("SANDBOX__EGRESS__GRANTS", "[]", "not a setting: check its spelling"),
        ("OBSERVABILITY__LOG_REPEAT_SECONDS", "-1", "greater than or equal to 0"),
    ],
)
def test_every_kind_of_invalid_value_is_one_line(
    tmp_path: Path, variable: str, value: str, accepted: str
) -> None:
    done = _skillweave(tmp_path, COMMANDS["skills"], {variable: value})
    _assert_one_line(done, variable, accepted)


def test_the_executor_command_names_its_own_variable(tmp_path: Path) -> None:
    done = _skillweave(
        tmp_path, ["executor"], {"EXECUTOR__TOKEN": "e" * 16, "EXECUTOR__ISOLATION": "jail"}
    )
    _assert_one_line(done, "EXECUTOR__ISOLATION", "'bubblewrap'")


def test_a_path_as_typed_is_accepted(tmp_path: Path) -> None:
    from tests.conftest import write_skill

    write_skill(tmp_path / "one" / "alpha-skill", description="First.")
    write_skill(tmp_path / "two" / "beta-skill", description="Second.")
    for value in (str(tmp_path / "one"), f"{tmp_path / 'one'}{os.pathsep}{tmp_path / 'two'}"):
        done = _skillweave(tmp_path, ["skills", "list", "--json"], {"SKILLS__DIRS": value})
        assert done.returncode == 0, done.stderr
        assert "alpha-skill" in done.stdout
        assert ("beta-skill" in done.stdout) == (os.pathsep in value)
