"""Installs stay inside the source (issue 38, item 4): every git mechanism that makes git read
another path, built with the real ``git`` in tmp folders, is refused before anything is read,
or shown closed; nothing of the other repository is installed and nothing is stored.

The other repository (``other``) always holds the skill ``other-skill``; the source under
``repos/`` (what ``SKILLS__INSTALL_SOURCES`` allows here) holds ``own-skill`` where it has
skills of its own.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillweave.errors import PackageError
from skillweave.skills import confinement
from skillweave.skills.install import install_skills, parse_source
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.skills.test_install import commit_all, git


def make_repo(root: Path, *names: str) -> Path:
    for name in names:
        write_skill(root / name, description=f"The {name} skill. Use when testing installs.")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "skills")
    return root


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """Another repository, outside the allowed folder."""
    return make_repo(tmp_path / "other", "other-skill")


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    (tmp_path / "repos").mkdir()
    return tmp_path / "repos"


@pytest.fixture
def allowed(repos: Path) -> list[str]:
    return [f"{repos}/*", f"file://{repos}/*"]


@pytest.fixture
def stored(tmp_path: Path) -> StoredSkills:
    return StoredSkills(LocalArtifactStore(tmp_path / "store"))


async def refused(stored: StoredSkills, source: str, allowed: list[str] | None, match: str) -> str:
    """Install `source` and expect a one-line refusal matching `match`, nothing stored."""
    with pytest.raises(PackageError, match=match) as caught:
        await install_skills(stored, parse_source(source), allowed=allowed)
    assert "\n" not in str(caught.value)
    assert await stored.list() == []
    return str(caught.value)


async def names(stored: StoredSkills, source: str, allowed: list[str] | None) -> list[str]:
    installed = await install_skills(stored, parse_source(source), allowed=allowed)
    return sorted(item.record.name for item in installed)


# --- pointers to another git directory -------------------------------------------------------


@pytest.mark.parametrize("with_allowlist", [True, False], ids=["api", "cli"])
async def test_a_git_file_pointing_at_another_repository_is_refused(
    other: Path,
    repos: Path,
    allowed: list[str],
    stored: StoredSkills,
    with_allowlist: bool,
) -> None:
    source = repos / "innocent"
    source.mkdir()
    (source / ".git").write_text(f"gitdir: {other}/.git\n")
    message = await refused(
        stored,
        str(source),
        allowed if with_allowlist else None,
        r"\.git: a file pointing at another repository \(gitdir:\).*install from the repository",
    )
    assert str(other) not in message  # what it points at stays the server's


async def test_a_linked_worktree_of_another_repository_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    git(other, "worktree", "add", "-q", str(repos / "worktree"))
    await refused(stored, str(repos / "worktree"), allowed, r"worktree: \.git: a file pointing")


async def test_a_git_symlink_to_another_repository_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = repos / "linked-git"
    source.mkdir()
    (source / ".git").symlink_to(other / ".git")
    await refused(stored, str(source), allowed, r"\.git: a symlink to a git directory outside")


async def test_a_commondir_pointing_at_another_repository_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    # A git directory of its own (HEAD, an empty objects/) whose objects and refs are another's.
    source = repos / "common"
    (source / ".git" / "objects").mkdir(parents=True)
    (source / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (source / ".git" / "commondir").write_text(f"{other}/.git\n")
    await refused(stored, str(source), allowed, r"\.git/commondir: points at another repository")


async def test_alternates_pointing_at_another_repositorys_objects_are_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    # A --shared clone holds no object of its own: every one is read from the other's.
    git(repos, "clone", "-q", "--shared", str(other), "shared")
    assert (repos / "shared" / ".git" / "objects" / "info" / "alternates").is_file()
    await refused(
        stored,
        str(repos / "shared"),
        allowed,
        r"\.git/objects/info/alternates: points at another repository's objects",
    )


async def test_alternates_of_a_bare_repository_are_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    git(repos, "clone", "-q", "--bare", "--reference", str(other), str(other), "bare.git")
    await refused(stored, str(repos / "bare.git"), allowed, r"objects/info/alternates: points")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("include.path", "{other}/.git/config"),
        ("includeIf.gitdir:/.path", "{other}/.git/config"),
        ("core.worktree", "{other}"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.promisor", "true"),
    ],
)
async def test_a_repository_config_leading_elsewhere_is_refused(
    other: Path,
    repos: Path,
    *,
    allowed: list[str],
    stored: StoredSkills,
    key: str,
    value: str,
) -> None:
    source = make_repo(repos / "configured", "own-skill")
    git(source, "config", key, value.format(other=other))
    await refused(
        stored,
        str(source),
        allowed,
        rf"(?i)\.git/config: sets {re.escape(key)}, which leads git outside",
    )


async def test_grafts_and_http_alternates_are_refused(
    repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = make_repo(repos / "grafted", "own-skill")
    (source / ".git" / "info").mkdir(exist_ok=True)
    (source / ".git" / "info" / "grafts").write_text(git(source, "rev-parse", "HEAD") + "\n")
    await refused(stored, str(source), allowed, r"\.git/info/grafts: grafts rewrite history")
    (source / ".git" / "info" / "grafts").unlink()
    (source / ".git" / "objects" / "info" / "http-alternates").write_text("https://x/\n")
    await refused(stored, str(source), allowed, r"http-alternates: names other places")


async def test_git_reads_exactly_the_judged_git_directory(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    """A git directory holding a ``.git`` file of its own: git's clone would follow it (it
    tries ``<dir>/.git`` first); the install hands git the judged directory, served strictly."""
    source = make_repo(repos / "nested", "own-skill")
    (source / ".git" / ".git").write_text(f"gitdir: {other}/.git\n")
    assert await names(stored, str(source), allowed) == ["own-skill"]
    assert await stored.get("other-skill") is None
    # Named as the git directory itself, that .git file is the pointer, and judged so.
    fresh = StoredSkills(LocalArtifactStore(repos.parent / "fresh"))
    await refused(fresh, f"file://{source}/.git", allowed, r"\.git: a file pointing")


async def test_gits_own_environment_cannot_point_it_elsewhere(
    other: Path,
    repos: Path,
    allowed: list[str],
    stored: StoredSkills,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = make_repo(repos / "plain", "own-skill")
    objects = str(other / ".git" / "objects")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_COMMON_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", objects)
    monkeypatch.setenv("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'include.path'='{other}/.git/config'")
    assert await names(stored, str(source), allowed) == ["own-skill"]
    assert await stored.get("other-skill") is None


# --- symlinks --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["folder", "repository"])
async def test_a_symlinked_source_leading_outside_the_allowed_folder_is_refused(
    tmp_path: Path,
    other: Path,
    *,
    repos: Path,
    allowed: list[str],
    stored: StoredSkills,
    kind: str,
) -> None:
    target = other if kind == "repository" else other / "other-skill"
    (repos / "link").symlink_to(target)
    message = await refused(
        stored, str(repos / "link"), allowed, r"link: its real path \(symlinks resolved\) is not"
    )
    assert str(other) not in message
    # A parent folder that is a symlink is judged alike.
    (repos / "up").symlink_to(tmp_path)
    await refused(stored, str(repos / "up" / "other"), allowed, r"its real path")
    await refused(stored, f"file://{repos}/link", allowed, r"its real path")


async def test_a_symlink_inside_the_allowed_folder_still_installs(
    repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    make_repo(repos / "real", "own-skill")
    (repos / "alias").symlink_to(repos / "real")
    assert await names(stored, str(repos / "alias"), allowed) == ["own-skill"]


async def test_a_symlink_inside_a_folder_source_leading_outside_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = repos / "folder"
    write_skill(source / "own-skill", description="Own. Use in tests.")
    (source / "borrowed").symlink_to(other / "other-skill")
    await refused(
        stored, str(source), allowed, r"folder: borrowed: a symlink to outside the source"
    )
    (source / "borrowed").unlink()
    (source / "own-skill" / "SKILL.md").unlink()
    (source / "own-skill" / "SKILL.md").symlink_to(other / "other-skill" / "SKILL.md")
    await refused(stored, str(source), allowed, r"own-skill/SKILL.md: a symlink to outside")
    # Where the reader never looks (hidden folders), a symlink is not judged.
    (source / "own-skill" / "SKILL.md").unlink()
    write_skill(source / "own-skill", description="Own. Use in tests.")
    (source / ".cache").symlink_to(other)
    assert await names(stored, str(source), None) == ["own-skill"]


async def test_a_symlink_in_the_git_directory_leading_outside_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = make_repo(repos / "borrowing", "own-skill")
    shutil.rmtree(source / ".git" / "objects")
    (source / ".git" / "objects").symlink_to(other / ".git" / "objects")
    (source / ".git" / "refs" / "heads" / "main").write_text(git(other, "rev-parse", "HEAD"))
    # git's local clone refuses a symlinked objects/ itself; its file:// transport follows it.
    for named in (str(source), f"file://{source}"):
        await refused(stored, named, allowed, r"\.git/objects: a symlink to outside the source")


async def test_a_source_too_large_to_judge_is_refused(
    repos: Path, stored: StoredSkills, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = make_repo(repos / "large", "own-skill")
    monkeypatch.setattr(confinement, "MAX_ENTRIES", 10)
    await refused(stored, str(source), None, r"more than 10 entries to judge")
    for number in range(10):
        (source / "own-skill" / f"note-{number}.md").write_text("a note\n")
    await refused(stored, str(source / "own-skill"), None, r"more than 10 entries to judge")


# --- submodules ------------------------------------------------------------------------------


async def test_a_submodule_never_brings_another_repositorys_files(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = make_repo(repos / "super", "own-skill")
    git(source, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "vendor")
    commit_all(source, "a submodule beside the skill")
    assert (source / "vendor" / "other-skill" / "SKILL.md").is_file()  # checked out here
    assert await names(stored, str(source), allowed) == ["own-skill"]
    assert await stored.get("other-skill") is None


async def test_a_submodule_inside_a_skill_is_refused(
    other: Path, repos: Path, allowed: list[str], stored: StoredSkills
) -> None:
    source = make_repo(repos / "super", "own-skill")
    git(
        source,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(other),
        "own-skill/vendor",
    )
    commit_all(source, "a submodule inside the skill")
    await refused(
        stored,
        str(source),
        allowed,
        r"own-skill/vendor: a submodule \(another repository's commit\) inside the skill"
        r" 'own-skill'; an install reads no submodule",
    )


# --- file:// URLs ----------------------------------------------------------------------------


async def test_a_file_url_is_read_as_the_path_it_names(
    other: Path, repos: Path, stored: StoredSkills
) -> None:
    # git itself would try <path>.git when <path> is missing: the allowlist named one folder.
    shutil.copytree(other, repos / "exact.git")
    only = [f"file://{repos}/exact"]
    await refused(stored, f"file://{repos}/exact", only, r"exact: not a folder")
    for url in (f"file://{repos}/%65xact.git", f"file://localhost{repos}/exact.git"):
        await refused(stored, url, None, r"is read as the path it names")
    make_repo(repos / "exact", "own-skill")
    assert await names(stored, f"file://{repos}/exact", only) == ["own-skill"]


# --- what still installs ---------------------------------------------------------------------


async def test_plain_sources_still_install(
    repos: Path, allowed: list[str], stored: StoredSkills, tmp_path: Path
) -> None:
    make_repo(repos / "plain", "own-skill")
    git(repos, "clone", "-q", "--bare", str(repos / "plain"), "plain.git")
    # A linked worktree elsewhere: its link back (.git/worktrees/*/gitdir) is never read.
    git(repos / "plain", "worktree", "add", "-q", str(tmp_path / "elsewhere-worktree"))
    # A .git file pointing inside the source itself.
    separate = repos / "separate"
    git(repos, "init", "-q", "-b", "main", f"--separate-git-dir={separate}/.store", "separate")
    write_skill(separate / "sep-skill", description="Separate. Use in tests.")
    commit_all(separate, "skills")
    folder = repos / "folder"
    write_skill(folder / "folder-skill", description="A folder skill. Use in tests.")
    (folder / "folder-skill" / "alias.md").symlink_to(folder / "folder-skill" / "SKILL.md")
    for source, expected in (
        (str(repos / "plain"), ["own-skill"]),
        (str(repos / "plain.git"), ["own-skill"]),
        (f"file://{repos}/plain", ["own-skill"]),
        (str(separate), ["sep-skill"]),
        (str(folder), ["folder-skill"]),
    ):
        fresh = StoredSkills(LocalArtifactStore(tmp_path / "stores" / os.urandom(4).hex()))
        assert await names(fresh, source, allowed) == expected, source


# --- the CLI door, as a user types it ----------------------------------------------------------


def test_the_cli_refuses_a_git_file_and_a_lock_leading_to_another_repository(
    other: Path, repos: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLS__", "STORAGE__"))}
    (tmp_path / "no-library").mkdir()  # an empty library: the store's skills are all
    env |= {
        "STORAGE__LOCAL_DIR": str(tmp_path / "cli-store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-library")]),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillweave.cli", "skills", "install", *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )

    def stored_names() -> list[str]:
        skills = tmp_path / "cli-store" / "skills"
        return sorted(p.name for p in skills.iterdir()) if skills.is_dir() else []

    source = repos / "innocent"
    source.mkdir()
    (source / ".git").write_text(f"gitdir: {other}/.git\n")
    done = cli(str(source))
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert ".git: a file pointing at another repository (gitdir:)" in line
    assert stored_names() == []
    assert not (tmp_path / "skills.lock").exists()

    # A lock made from a good repository; then its .git is swapped for a pointer.
    (source / ".git").unlink()
    make_repo(source, "own-skill")
    done = cli(str(source))
    assert done.returncode == 0, done.stderr
    assert stored_names() == ["own-skill"]
    shutil.rmtree(tmp_path / "cli-store")
    shutil.rmtree(source / ".git")
    (source / ".git").write_text(f"gitdir: {other}/.git\n")
    done = cli()  # everything in skills.lock, again
    assert done.returncode == 1, done.stdout + done.stderr
    assert ".git: a file pointing at another repository" in done.stderr
    assert stored_names() == []
