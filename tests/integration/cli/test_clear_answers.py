"""Clear answers, as a user types the commands (issue 25, part 5): a library that keeps its
skills in hidden folders, descriptions the catalog shortens, and package dependencies under
``metadata`` (built, and accepted by strict validation as by the spec's reference validator)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_skill
from tests.mcp_manager.environment_support import bwrap_works, python_index

pytestmark = pytest.mark.timeout(120)


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`skillweave ARGS` in a subprocess, with a store under `tmp_path` and no .env."""
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "STORAGE__LOCAL_DIR": str(tmp_path / "store"), **env},
        cwd=tmp_path,
        timeout=100,
        check=False,
    )


# --- hidden folders --------------------------------------------------------------------------


def curated_library(root: Path) -> Path:
    """10 skills under skills/.curated and skills/.system, as a public library keeps them."""
    for index in range(6):
        write_skill(root / "skills" / ".curated" / f"curated-{index}")
    for index in range(4):
        write_skill(root / "skills" / ".system" / f"system-{index}")
    return root


def test_skills_list_says_where_hidden_skills_are_and_how_to_include_them(
    tmp_path: Path,
) -> None:
    root = curated_library(tmp_path / "library")
    listed = cli(tmp_path, "skills", "list", "--dir", str(root))
    assert listed.returncode == 0, listed.stderr
    stderr = " ".join(listed.stderr.split())
    assert "hidden folders here hold 10 SKILL.md file(s)" in stderr
    assert "skills/.curated (6), skills/.system (4)" in stderr
    assert "No skills found outside hidden folders" in stderr
    assert "SKILLS__INCLUDE_HIDDEN=true" in stderr

    included = cli(tmp_path, "skills", "list", "--dir", str(root), "--json")
    assert json.loads(included.stdout) == []
    included = cli(
        tmp_path, "skills", "list", "--dir", str(root), "--json", SKILLS__INCLUDE_HIDDEN="true"
    )
    assert included.returncode == 0, included.stderr
    assert len(json.loads(included.stdout)) == 10
    assert "hidden" not in included.stderr

    # The other way the hint offers: the hidden folder as a root of its own.
    one = cli(tmp_path, "skills", "list", "--dir", str(root / "skills" / ".system"), "--json")
    assert [s["name"] for s in json.loads(one.stdout)] == [f"system-{i}" for i in range(4)]


# --- shortened descriptions ------------------------------------------------------------------

PDF = (
    "Extract text and tables from PDF files, fill PDF forms and merge documents. "
    "Do NOT use for Word files or spreadsheets; use docx or xlsx instead."
)


def test_skills_catalog_marks_every_shortened_description(tmp_path: Path) -> None:
    for index in range(12):
        write_skill(tmp_path / "library" / f"pdf-{index:02d}", description=PDF)
    root = str(tmp_path / "library")
    full = cli(tmp_path, "skills", "catalog", "--dir", root, "--mode", "all", "--max-chars", "0")
    assert full.returncode == 0, full.stderr
    # A budget for about 100 characters a description: the first sentence and part of the
    # second ("Do NOT use for …"), which must not vanish unmarked.
    budget = len(full.stdout) - 12 * (len(PDF) - 100)
    fitted = cli(
        tmp_path, "skills", "catalog", "--dir", root, "--mode", "all", "--max-chars", str(budget)
    )
    assert fitted.returncode == 0, fitted.stderr
    assert len(fitted.stdout) <= budget
    descriptions = re.findall(r'<skill name="pdf-\d\d">(.*)</skill>', fitted.stdout)
    assert len(descriptions) == 12
    for description in descriptions:
        assert description != PDF
        assert description.endswith("…"), description
        kept = description.removesuffix("…")
        assert PDF.startswith(kept)
        assert PDF[len(kept)] in " ,;:.", description  # cut between words
        assert "Do NOT use for" in kept
    assert "12 descriptions shortened" in fitted.stderr


# --- dependencies under metadata -------------------------------------------------------------

PACKAGES_UNDER_METADATA = """
metadata:
  dependencies:
    python: ["swdemo-plus==1.0"]
"""
PACKAGES_AT_TOP_LEVEL = """
dependencies:
  python: ["swdemo-plus==1.0"]
"""


def test_skills_validate_strict_wants_extensions_under_metadata(tmp_path: Path) -> None:
    under = write_skill(tmp_path / "library" / "under-metadata", extra=PACKAGES_UNDER_METADATA)
    top = write_skill(tmp_path / "library" / "top-level", extra=PACKAGES_AT_TOP_LEVEL)

    passed = cli(tmp_path, "skills", "validate", "--strict", str(under))
    assert passed.returncode == 0, passed.stdout
    assert "0 errors, 0 warnings (strict)" in passed.stdout

    refused = cli(tmp_path, "skills", "validate", "--strict", str(top))
    assert refused.returncode == 1
    assert "dependencies: is a skillweave extension; the spec puts it under 'metadata'" in (
        refused.stdout
    )
    # Without --strict a top-level field still loads, with a warning.
    lenient = cli(tmp_path, "skills", "validate", str(top))
    assert lenient.returncode == 0, lenient.stdout
    assert "warning:" in lenient.stdout


@pytest.mark.skipif(not bwrap_works(), reason="environment builds need bubblewrap")
def test_skills_build_installs_dependencies_declared_under_metadata(tmp_path: Path) -> None:
    index = python_index(tmp_path / "index")
    write_skill(
        tmp_path / "library" / "needs-deps",
        description="Doubles a value with a library.",
        extra=PACKAGES_UNDER_METADATA,
        files={"scripts/use.py": "import swdemo_plus\nprint('double', swdemo_plus.DOUBLE)\n"},
    )
    env = {
        "SKILLS__DIRS": json.dumps([str(tmp_path / "library")]),
        "SANDBOX__ENVIRONMENTS__FIND_LINKS": json.dumps([str(index)]),
        "SANDBOX__ENVIRONMENTS__NO_INDEX": "true",
    }
    built = cli(tmp_path, "skills", "build", "needs-deps", "--json", **env)
    assert built.returncode == 0, built.stderr
    result = json.loads(built.stdout)
    assert result["needed"] is True
    assert result["dependencies"]["python"] == ["swdemo-plus==1.0"]

    ran = cli(tmp_path, "sandbox", "run", "needs-deps", "scripts/use.py", "--json", **env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["stdout"] == "double 84\n"
