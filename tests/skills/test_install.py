"""Installing skills (issue 27, part 1): from local git repositories (the only git the tests
use), ZIPs and folders; the origin kept with each version; all or none; ``skills.lock``
reproducing an install at its commit and refusing files that changed; hostile sources."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.errors import PackageError, SkillNameTakenError
from skillweave.skills import build_package
from skillweave.skills.install import SkillsLock, install_skills, parse_source
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository of two skills under skills/, one commit on main."""
    root = tmp_path / "repo"
    write_skill(
        root / "skills" / "pdf-tools",
        description="Reads PDFs. Use when a PDF must be read.",
        files={"scripts/read.py": "print('v1')\n"},
    )
    write_skill(root / "skills" / "csv-tools", description="Reads CSVs. Use for CSV files.")
    (root / "README.md").write_text("skills for tests\n")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "first")
    return root


@pytest.fixture
def stored(tmp_path: Path) -> StoredSkills:
    return StoredSkills(LocalArtifactStore(tmp_path / "store"))


async def test_a_repository_of_skills_installs_each_with_its_origin(
    repo: Path, stored: StoredSkills
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    (repo / "skills" / "pdf-tools" / "scripts" / "read.py").write_text("print('uncommitted')\n")
    installed = await install_skills(stored, parse_source(str(repo)))

    assert sorted(item.record.name for item in installed) == ["csv-tools", "pdf-tools"]
    pdf = await stored.get("pdf-tools")
    assert pdf is not None
    origin = pdf.latest_version.origin
    assert origin is not None
    assert (origin.kind, origin.source, origin.path, origin.commit, origin.ref) == (
        "git",
        str(repo),
        "skills/pdf-tools",
        head,
        None,
    )
    # The committed files, never the working tree.
    package = await stored.read_package("pdf-tools", pdf.latest)
    assert b"uncommitted" not in package


async def test_a_ref_names_a_branch_tag_or_commit_and_an_unknown_one_is_refused(
    repo: Path, stored: StoredSkills
) -> None:
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "-b", "next")
    (repo / "skills" / "pdf-tools" / "scripts" / "read.py").write_text("print('v2')\n")
    second = commit_all(repo, "second")
    git(repo, "checkout", "-q", "main")

    for ref, commit in (("v1", first), ("next", second), (second[:12], second)):
        [item] = await install_skills(
            stored, parse_source(str(repo), ref=ref, path="skills/pdf-tools")
        )
        assert (item.origin.ref, item.origin.commit) == (ref, commit)
    with pytest.raises(PackageError, match="no branch, tag or commit 'nope'"):
        await install_skills(stored, parse_source(str(repo), ref="nope"))


async def test_a_locked_install_reads_the_locked_commit_and_refuses_other_files(
    repo: Path, stored: StoredSkills, tmp_path: Path
) -> None:
    lock_path = tmp_path / "skills.lock"
    lock = SkillsLock()
    for item in await install_skills(stored, parse_source(str(repo))):
        lock.record(item.record.name, item.version, item.origin, lock_path=lock_path)
    lock.save(lock_path)
    locked = SkillsLock.load(lock_path).skills["pdf-tools"]
    assert locked.source == "repo"  # beside the lock: kept relative to it

    (repo / "skills" / "pdf-tools" / "scripts" / "read.py").write_text("print('moved on')\n")
    commit_all(repo, "moved on")
    again = StoredSkills(LocalArtifactStore(tmp_path / "store-2"))
    [item] = await install_skills(
        again,
        SkillsLock.load(lock_path).source_of(locked, lock_path=lock_path),
        only=("pdf-tools",),
        commit=locked.commit,
        expect={"pdf-tools": locked.version},
    )
    assert (item.version, item.origin.commit) == (locked.version, locked.commit)

    # The same commit, but the lock says other files: refused, nothing stored.
    forged = "0" * 64
    fresh = StoredSkills(LocalArtifactStore(tmp_path / "store-3"))
    with pytest.raises(PackageError, match="not the locked 000000000000"):
        await install_skills(
            fresh,
            parse_source(str(repo)),
            only=("pdf-tools",),
            commit=locked.commit,
            expect={"pdf-tools": forged},
        )
    assert await fresh.list() == []


async def test_a_source_installs_all_or_nothing(repo: Path, stored: StoredSkills) -> None:
    with pytest.raises(SkillNameTakenError, match="csv-tools"):
        await install_skills(
            stored, parse_source(str(repo)), reserved={"csv-tools": "the directory skill"}
        )
    assert await stored.list() == []


async def test_zips_and_folders_install_too(tmp_path: Path, stored: StoredSkills) -> None:
    folder = write_skill(tmp_path / "src" / "any-folder-name", name="notes", description="Notes.")
    archive = tmp_path / "notes.zip"
    archive.write_bytes(build_package(folder))
    [from_folder] = await install_skills(stored, parse_source(str(folder)))
    [from_zip] = await install_skills(stored, parse_source(str(archive)))
    assert from_folder.version == from_zip.version
    assert (from_folder.origin.kind, from_zip.origin.kind) == ("folder", "zip")
    assert from_folder.origin.commit is None


@pytest.mark.parametrize(
    ("source", "options", "message"),
    [
        ("http://example.com/skills.git", {}, "carry no integrity; use https:// or ssh://"),
        ("git://example.com/skills.git", {}, "carry no integrity"),
        ("ext::sh -c touch% /tmp/pwned", {}, "carry no integrity"),
        ("/no/such/place", {}, "no such file or folder"),
        ("https://example.com/s.git", {"path": "../outside"}, "inside the source"),
        ("https://example.com/s.git", {"path": "/etc"}, "inside the source"),
        ("https://example.com/s.git", {"ref": "--upload-pack=evil"}, "not a branch, tag"),
    ],
)
def test_hostile_sources_are_refused_in_one_line(
    source: str, options: dict[str, str], message: str
) -> None:
    with pytest.raises(PackageError, match=message) as caught:
        parse_source(source, **options)
    assert "\n" not in str(caught.value)


async def test_a_repositorys_symlinks_and_escapes_bring_nothing_of_this_machine(
    tmp_path: Path, stored: StoredSkills
) -> None:
    repo = tmp_path / "sly"
    skill = write_skill(repo / "sly-skill", description="Sly. Use never.")
    (skill / "passwd").symlink_to("/etc/passwd")
    (repo / "up").symlink_to(tmp_path)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "sly")

    with pytest.raises(PackageError, match=r"no folder 'up'|leaves the source"):
        await install_skills(stored, parse_source(str(repo), path="up"))
    [item] = await install_skills(stored, parse_source(str(repo)))
    package = await stored.read_package(item.record.name, item.version)
    assert b"root:x:0:0" not in package  # a symlink is checked out as its text, at most


def test_a_broken_lock_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "skills.lock"
    path.write_text('{"format": 1, "skills": {"a": {"name": "b"}}}')
    with pytest.raises(
        PackageError, match=r"skills.lock: not a skills lock: skills\.a\."
    ) as caught:
        SkillsLock.load(path)
    assert "\n" not in str(caught.value)


def test_the_cli_installs_updates_reinstalls_and_removes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "cli-store"))
    (tmp_path / "no-library").mkdir()  # an empty library: the store's skills are all
    monkeypatch.setenv("SKILLS__DIRS", json.dumps([str(tmp_path / "no-library")]))
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, ["skills", *args])
        return result.exit_code, result.stdout + result.stderr

    code, shown = run("install", str(repo), "--path", "skills", "--skill", "pdf-tools")
    assert code == 0, shown
    assert "installed 1 skill" in shown
    first = json.loads(Path("skills.lock").read_text())["skills"]["pdf-tools"]

    (repo / "skills" / "pdf-tools" / "scripts" / "read.py").write_text("print('v2')\n")
    second = commit_all(repo, "v2")
    code, shown = run("install")  # from the lock: still the first commit
    assert code == 0, shown
    assert json.loads(Path("skills.lock").read_text())["skills"]["pdf-tools"] == first
    code, shown = run("update", "--json")
    assert code == 0, shown
    updated = json.loads(Path("skills.lock").read_text())["skills"]["pdf-tools"]
    assert updated["commit"] == second
    assert updated["version"] != first["version"]

    code, shown = run("remove", "pdf-tools")
    assert code == 0, shown
    assert json.loads(Path("skills.lock").read_text())["skills"] == {}
    code, shown = run("install")
    assert code == 2
    assert "nothing in skills.lock to install" in shown
