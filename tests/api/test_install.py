"""``POST /v1/skills/install`` (issue 27, part 1): only sources SKILLS__INSTALL_SOURCES allows,
judged before anything is read; each skill stored with its origin; names owned."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillweave.skills.install import source_allowed
from skillweave.storage.local import LocalArtifactStore
from tests.api.conftest import DIRECTORY_SKILL, Api, _serve, _settings
from tests.conftest import write_skill
from tests.skills.test_install import commit_all, git


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The skills API allowing installs from the test's repositories only."""
    base = _settings(tmp_path)
    skills = base.skills.model_copy(update={"install_sources": [f"{tmp_path}/repos/*"]})
    settings = base.model_copy(update={"skills": skills})
    async for served in _serve(settings, LocalArtifactStore(tmp_path / "store")):
        yield served


def make_repo(root: Path, *names: str) -> str:
    for name in names:
        write_skill(root / name, description=f"The {name} skill. Use when testing installs.")
    git(root, "init", "-q", "-b", "main")
    return commit_all(root, "skills")


async def test_an_allowed_repository_installs_with_its_origin(api: Api, tmp_path: Path) -> None:
    head = make_repo(tmp_path / "repos" / "tools", "lint-tool", "fmt-tool")
    answer = await api.client.post(
        "/v1/skills/install", json={"source": str(tmp_path / "repos" / "tools")}
    )
    assert answer.status_code == 201, answer.text
    installed = {item["name"]: item for item in answer.json()}
    assert sorted(installed) == ["fmt-tool", "lint-tool"]
    assert installed["lint-tool"]["origin"]["commit"] == head
    assert installed["lint-tool"]["origin"]["path"] == "lint-tool"

    detail = (await api.client.get("/v1/skills/lint-tool")).json()
    assert detail["versions"][-1]["origin"]["commit"] == head
    assert detail["version"] == installed["lint-tool"]["version"]


async def test_other_sources_are_refused_alike_whether_or_not_they_exist(
    api: Api, tmp_path: Path
) -> None:
    make_repo(tmp_path / "elsewhere", "lint-tool")
    answers = [
        await api.client.post("/v1/skills/install", json={"source": source})
        for source in (
            str(tmp_path / "elsewhere"),
            str(tmp_path / "no-such-place"),
            f"{tmp_path}/repos/../elsewhere",
            "https://github.com/acme/skills.git",
        )
    ]
    assert [a.status_code for a in answers] == [403] * 4
    assert len({a.json()["detail"] for a in answers}) == 1
    assert "SKILLS__INSTALL_SOURCES does not allow this source" in answers[0].json()["detail"]
    assert (await api.client.get("/v1/skills/lint-tool")).status_code == 404


async def test_a_directory_skills_name_is_refused_and_nothing_is_stored(
    api: Api, tmp_path: Path
) -> None:
    make_repo(tmp_path / "repos" / "clash", "ok-tool", DIRECTORY_SKILL)
    answer = await api.client.post(
        "/v1/skills/install", json={"source": str(tmp_path / "repos" / "clash")}
    )
    assert answer.status_code == 409, answer.text
    assert answer.json()["errors"][0]["name"] == DIRECTORY_SKILL
    assert (await api.client.get("/v1/skills/ok-tool")).status_code == 404


def test_url_patterns_match_whole_urls_without_dot_segments() -> None:
    allowed = ["https://github.com/acme/*"]
    assert source_allowed("https://github.com/acme/skills.git", allowed)
    assert not source_allowed("https://github.com/acme/../evil/skills.git", allowed)
    assert not source_allowed("https://github.com/acme/%2e%2e/evil", allowed)
    assert not source_allowed("https://github.com/evil/skills.git", allowed)
    assert not source_allowed("https://github.com/acme/x", [])


async def test_an_allowed_source_leading_to_another_repository_is_refused(
    api: Api, tmp_path: Path
) -> None:
    """Issue 38, item 4: a source is judged by what would be read (the hostile cases one by
    one: tests/skills/test_install_confinement.py)."""
    make_repo(tmp_path / "elsewhere", "lint-tool")
    (tmp_path / "repos").mkdir()
    pointer = tmp_path / "repos" / "pointer"
    pointer.mkdir()
    (pointer / ".git").write_text(f"gitdir: {tmp_path}/elsewhere/.git\n")
    (tmp_path / "repos" / "link").symlink_to(tmp_path / "elsewhere")
    answers = [
        await api.client.post("/v1/skills/install", json={"source": str(source)})
        for source in (pointer, tmp_path / "repos" / "link")
    ]
    assert [a.status_code for a in answers] == [422, 422], [a.text for a in answers]
    assert ".git: a file pointing at another repository (gitdir:)" in answers[0].json()["detail"]
    assert "its real path (symlinks resolved) is not one" in answers[1].json()["detail"]
    assert all(str(tmp_path / "elsewhere") not in a.json()["detail"] for a in answers)
    assert (await api.client.get("/v1/skills/lint-tool")).status_code == 404
    assert (await api.client.get("/v1/skills/")).json()["total"] == 1  # the directory skill
