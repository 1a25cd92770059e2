"""``skills find`` and ``registry build`` in process (issue 45): the table and its columns, the
install command for each hit, unreachable registries on stderr, and the one line that says how
to configure registries. The subprocess journey is tests/integration/cli/test_registries.py."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.cli.registry import install_command
from skillweave.config import get_settings
from skillweave.skills.registries import IndexEntry, RegistryHit
from tests.conftest import write_skill
from tests.skills.registries.helpers import library


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLS__REGISTRY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SKILLS__SELECTION", "bm25")
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "no-skills").mkdir()  # no directory skill owns a registry skill's name
    monkeypatch.setenv("SKILLS__DIRS", json.dumps([str(tmp_path / "no-skills")]))
    monkeypatch.chdir(tmp_path)  # an install keeps its skills.lock here
    return tmp_path


def test_build_then_find_prints_the_table_and_how_to_install(env: Path) -> None:
    runner = CliRunner()
    source = library(env / "lib")
    index = env / "index.json"
    built = runner.invoke(app, ["registry", "build", str(source), "--out", str(index)])
    assert built.exit_code == 0, built.output
    assert "wrote 3 skills to" in built.output
    registries = json.dumps(
        [str(env / "gone.json"), {"kind": "index", "location": str(index), "name": "team"}]
    )
    get_settings.cache_clear()  # read the environment afresh, as a new process would
    found = runner.invoke(
        app,
        ["skills", "find", "convert temperature", "-k", "1"],
        env={"SKILLS__REGISTRIES": registries},
    )
    assert found.exit_code == 0, found.output
    header = found.stdout.splitlines()[0].split()
    assert header == ["name", "registry", "description", "version", "scan", "signed", "here"]
    row = found.stdout.splitlines()[1].split()
    assert row[:2] == ["unit-converter", "team"]
    assert (
        f"skillweave skills install {source} --path unit-converter --skill unit-converter"
        " --registry team"
    ) in found.stdout
    assert "no index file" in found.stderr
    assert "gone.json" in found.stderr


def test_find_says_what_the_library_has_of_each_hit(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hit installed at that version needs no install command; another version would be
    updated; a directory skill's name cannot be installed over."""
    own = env / "own"
    write_skill(own / "pdf-forms", description="Fill in PDF forms, our own way.")
    monkeypatch.setenv("SKILLS__DIRS", json.dumps([str(own)]))
    get_settings.cache_clear()
    runner = CliRunner()
    source = library(env / "lib")
    index = env / "index.json"
    assert (
        runner.invoke(app, ["registry", "build", str(source), "--out", str(index)]).exit_code == 0
    )
    installed = runner.invoke(app, ["skills", "install", str(source / "csv-report")])
    assert installed.exit_code == 0, installed.output
    get_settings.cache_clear()
    query = ["skills", "find", "convert units, fill PDF forms, CSV report", "-k", "3"]
    env_vars = {"SKILLS__REGISTRIES": json.dumps([str(index)])}
    found = runner.invoke(app, [*query, "--json"], env=env_vars)
    assert found.exit_code == 0, found.output
    here = {hit["entry"]["name"]: hit["here"] for hit in json.loads(found.stdout)["hits"]}
    assert here == {
        "csv-report": "installed",
        "pdf-forms": "directory skill",
        "unit-converter": None,
    }
    shown = runner.invoke(app, query, env=env_vars)
    assert "--skill unit-converter" in shown.stdout
    assert "--skill csv-report" not in shown.stdout  # installed: nothing to do
    assert "--skill pdf-forms" not in shown.stdout  # refused: the name is a directory skill's


def test_no_registry_is_one_line_saying_how(env: Path) -> None:
    found = CliRunner().invoke(app, ["skills", "find", "x"], env={"SKILLS__REGISTRIES": "[]"})
    assert found.exit_code == 2
    assert "set SKILLS__REGISTRIES" in found.stderr
    assert len(found.stderr.strip().splitlines()) == 1


def test_an_unknown_registry_label_is_bad_usage(env: Path) -> None:
    found = CliRunner().invoke(
        app,
        ["skills", "find", "x", "--registry", "nope"],
        env={"SKILLS__REGISTRIES": json.dumps([str(env / "i.json")])},
    )
    assert found.exit_code == 2
    assert "no registry labelled 'nope'" in found.stderr


def test_the_install_command_names_the_commit_path_and_skill_quoted() -> None:
    entry = IndexEntry(
        name="pdf-forms",
        description="d",
        source="https://example.com/a b.git",
        ref="main",
        commit="c" * 40,
        path="skills/pdf forms",
        version="a" * 64,
    )
    command = install_command(RegistryHit(entry=entry, registry="r", score=1.0))
    assert shlex.split(command) == [
        "skillweave",
        "skills",
        "install",
        "https://example.com/a b.git",
        "--ref",
        "c" * 40,
        "--path",
        "skills/pdf forms",
        "--skill",
        "pdf-forms",
        "--registry",
        "r",
    ]
