"""``skills install … --registry LABEL`` (the command ``skills find`` prints): the registry's
label is kept on the stored version's origin, in ``skills.lock`` and in what ``skills versions``
shows; a label no configured registry has is refused before anything is installed. A lock
written before the field existed loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.config import get_settings
from skillweave.skills.install import SkillsLock
from skillweave.skills.stored import StoredVersion
from tests.conftest import write_skill

_VERSION = "a" * 64


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STORAGE__BACKEND", "local")
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "store"))
    (tmp_path / "no-library").mkdir()
    monkeypatch.setenv("SKILLS__DIRS", json.dumps([str(tmp_path / "no-library")]))
    index = {"kind": "index", "location": str(tmp_path / "index.json"), "name": "team"}
    monkeypatch.setenv("SKILLS__REGISTRIES", json.dumps([index]))
    get_settings.cache_clear()
    write_skill(tmp_path / "src" / "pdf-tools")
    return CliRunner()


def test_the_registry_is_kept_on_the_origin_in_the_lock_and_in_versions(
    cli: CliRunner, tmp_path: Path
) -> None:
    source = str(tmp_path / "src")
    done = cli.invoke(app, ["skills", "install", source, "--registry", "team", "--json"])
    assert done.exit_code == 0, done.output
    [row] = json.loads(done.stdout)
    assert row["registry"] == "team"
    assert json.loads(Path("skills.lock").read_text())["skills"]["pdf-tools"]["registry"] == "team"

    again = cli.invoke(app, ["skills", "install"])  # from the lock: the registry stays
    assert again.exit_code == 0, again.output
    assert "registry team" in again.stdout

    shown = cli.invoke(app, ["skills", "versions", "pdf-tools"])
    assert shown.exit_code == 0, shown.output
    assert f"origin     {source} (registry team, path pdf-tools)" in shown.stdout
    listed = cli.invoke(app, ["skills", "versions", "pdf-tools", "--json"])
    assert json.loads(listed.stdout)["versions"][0]["origin"]["registry"] == "team"


def test_a_label_no_registry_has_is_one_line_and_installs_nothing(
    cli: CliRunner, tmp_path: Path
) -> None:
    done = cli.invoke(app, ["skills", "install", str(tmp_path / "src"), "--registry", "nope"])
    assert done.exit_code == 2
    assert "--registry 'nope': no registry of SKILLS__REGISTRIES has that label" in done.stderr
    assert "'team'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not Path("skills.lock").exists()
    assert not (tmp_path / "store" / "catalog").exists()


def test_locks_and_records_written_before_the_registry_field_load(tmp_path: Path) -> None:
    entry = {"name": "pdf", "version": _VERSION, "source": "/src", "kind": "folder"}
    old = tmp_path / "old.lock"
    old.write_text(json.dumps({"format": 1, "skills": {"pdf": entry}}))
    assert SkillsLock.load(old).skills["pdf"].registry is None

    new = tmp_path / "new.lock"
    new.write_text(json.dumps({"format": 1, "skills": {"pdf": {**entry, "registry": "team"}}}))
    loaded = SkillsLock.load(new)
    assert loaded.skills["pdf"].registry == "team"
    loaded.save(tmp_path / "saved.lock")
    assert SkillsLock.load(tmp_path / "saved.lock") == loaded

    record = {
        "version": _VERSION,
        "created_at": "2026-01-01T00:00:00Z",
        "size": 1,
        "sha256": _VERSION,
        "origin": {"source": "/src", "kind": "folder", "path": "pdf"},
    }
    origin = StoredVersion.model_validate(record).origin
    assert origin is not None
    assert origin.registry is None
