"""A directory skill whose name is not canonical loads (third-party libraries load unchanged)
and is flagged wherever a user looks at it, as the user types it: ``skills list``, ``show`` and
``validate`` each say that it gets no secrets, credentials or network
(``skills.names.NOT_BOUND``). The library is the default ``./.agents/skills`` of the folder the
command runs in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.skills.loader import load_skill_file
from skillweave.skills.names import NOT_BOUND
from tests.conftest import write_skill

pytestmark = pytest.mark.timeout(120)


def _skillweave(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),  # no ~/.skillweave of the machine's
        "SKILLS__DIRS": '["./.agents/skills"]',
    }
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("name", ["PROBE-A", "ｐｒｏｂｅ-ａ"])
def test_the_flag_is_in_list_show_and_validate(tmp_path: Path, name: str) -> None:
    write_skill(tmp_path / ".agents" / "skills" / name, name=name)
    listed = _skillweave(tmp_path, "skills", "list")
    shown = _skillweave(tmp_path, "skills", "show", name)
    validated = _skillweave(tmp_path, "skills", "validate", ".agents/skills")
    for done in (listed, shown, validated):
        assert done.returncode == 0, done.stderr
        text = done.stdout + done.stderr
        flagged = [line for line in text.splitlines() if NOT_BOUND in line]
        assert len(flagged) == 1, text
        assert repr(name) in flagged[0]
    assert name in listed.stdout  # it still loads


def test_a_canonical_name_is_not_flagged(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "probe-a")
    loaded = load_skill_file(folder / "SKILL.md")
    assert loaded.skill is not None
    assert not [d for d in loaded.diagnostics if NOT_BOUND in d.message]
    bad = write_skill(tmp_path / "PROBE-A")
    flagged = [d for d in load_skill_file(bad / "SKILL.md").diagnostics if NOT_BOUND in d.message]
    assert [d.field for d in flagged] == ["name"]
    assert not any(d.fatal for d in flagged)
