"""What an install takes and what a listing shows (``skills.install``): a marketplace plugin's
skills (``plugins``), every skill (``*``), an unknown name listing those there are, and a
listing that scans what an install would store and stores nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.errors import PackageError
from skillweave.skills.install import install_skills, list_source, parse_source
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.skills.test_install import commit_all, git

MARKETPLACE = {
    "name": "acme",
    "plugins": [
        {"name": "documents", "source": "./", "skills": ["./skills/pdf-tools"]},
        {"name": "everything", "source": "./"},  # no list: its skills/*/ folders
        {"name": "elsewhere", "source": {"source": "github", "repo": "acme/other"}},
    ],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_skill(root / "skills" / "pdf-tools", description="Reads PDFs. Use for PDFs.")
    write_skill(
        root / "skills" / "run-tools",
        description="Runs commands. Use to run one.",
        files={"scripts/run.py": "import os, sys\nos.system(sys.argv[1])\n"},
    )
    (root / ".claude-plugin").mkdir()
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(MARKETPLACE))
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "skills")
    return root


@pytest.fixture
def stored(tmp_path: Path) -> StoredSkills:
    return StoredSkills(LocalArtifactStore(tmp_path / "store"))


async def test_a_plugin_installs_the_skills_it_lists(repo: Path, stored: StoredSkills) -> None:
    [item] = await install_skills(stored, parse_source(str(repo)), plugins=["documents"])
    assert (item.record.name, item.origin.path) == ("pdf-tools", "skills/pdf-tools")
    assert [record.name for record in await stored.list()] == ["pdf-tools"]


async def test_a_plugin_without_a_list_takes_its_skills_folders(
    repo: Path, stored: StoredSkills
) -> None:
    installed = await install_skills(
        stored, parse_source(str(repo)), plugins=["everything", "documents"], only=["*"]
    )
    assert sorted(item.record.name for item in installed) == ["pdf-tools", "run-tools"]


async def test_unknown_and_unavailable_plugins_and_skills_are_one_line(
    repo: Path, stored: StoredSkills
) -> None:
    source = parse_source(str(repo))
    with pytest.raises(PackageError, match="its plugins: documents, everything, elsewhere"):
        await install_skills(stored, source, plugins=["nope"])
    with pytest.raises(PackageError, match="skillweave skills install acme/other"):
        await install_skills(stored, source, plugins=["elsewhere"])
    with pytest.raises(PackageError, match="no skill named 'nope'; its skills: pdf-tools, run"):
        await install_skills(stored, source, only=["nope"])
    with pytest.raises(PackageError, match=r"its skills: pdf-tools$"):
        await install_skills(stored, source, plugins=["documents"], only=["run-tools"])
    assert await stored.list() == []


async def test_a_folder_without_a_marketplace_refuses_plugins(
    tmp_path: Path, stored: StoredSkills
) -> None:
    write_skill(tmp_path / "plain" / "one")
    with pytest.raises(PackageError, match="--plugin needs a plugin marketplace"):
        await install_skills(stored, parse_source(str(tmp_path / "plain")), plugins=["x"])


async def test_a_listing_scans_what_an_install_would_store_and_stores_nothing(
    repo: Path, stored: StoredSkills
) -> None:
    listing = await list_source(parse_source(str(repo)))
    assert listing.commit == git(repo, "rev-parse", "HEAD")
    assert listing.marketplace is not None
    by_name = {item.name: item for item in listing.skills}
    assert by_name["pdf-tools"].plugins == ("documents", "everything")
    assert by_name["pdf-tools"].description == "Reads PDFs. Use for PDFs."
    assert not by_name["pdf-tools"].report.findings
    assert by_name["run-tools"].report.findings
    assert await stored.list() == []

    narrowed = await list_source(parse_source(str(repo)), plugins=["documents"])
    assert [item.name for item in narrowed.skills] == ["pdf-tools"]
    [item] = await install_skills(stored, parse_source(str(repo)), only=["pdf-tools"])
    assert item.version == by_name["pdf-tools"].version


async def test_a_listing_names_a_marketplace_it_cannot_read_and_lists_the_skills(
    tmp_path: Path, stored: StoredSkills
) -> None:
    write_skill(tmp_path / "lib" / "skills" / "one")
    (tmp_path / "lib" / ".claude-plugin").mkdir()
    (tmp_path / "lib" / ".claude-plugin" / "marketplace.json").write_text('{"name": 3}')
    listing = await list_source(parse_source(str(tmp_path / "lib")))
    assert [item.name for item in listing.skills] == ["one"]
    assert listing.marketplace is None
    assert listing.marketplace_problem is not None
    assert "not a plugin marketplace: name" in listing.marketplace_problem
    with pytest.raises(PackageError, match="not a plugin marketplace"):
        await list_source(parse_source(str(tmp_path / "lib")), plugins=["p"])
