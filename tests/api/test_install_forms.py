"""``POST /v1/skills/install`` and ``/install/preview`` with the ecosystem's forms (issue 45):
``owner/repo`` and tree URLs on the git host (a folder of repositories here), judged by the
allowlist by their canonical git URL before anything is read; ``plugins`` and ``skills: ["*"]``;
a preview that lists each skill's scan and stores, audits and locks nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillweave.storage.local import LocalArtifactStore
from tests.api.conftest import Api, _serve, _settings
from tests.conftest import write_skill
from tests.skills.test_install import commit_all, git

MARKETPLACE = {
    "name": "acme-skills",
    "owner": {"name": "Acme"},
    "plugins": [
        {"name": "documents", "source": "./", "skills": ["./skills/pdf-tool"]},
        {"name": "builders", "source": "./", "skills": ["./skills/make-tool"]},
    ],
}


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    """The skills API with `tmp_path/host` as its git host, allowing acme's repositories."""
    host = tmp_path / "host"
    repo = host / "acme" / "skills"
    write_skill(repo / "skills" / "pdf-tool", description="Reads PDFs. Use for PDFs.")
    write_skill(
        repo / "skills" / "make-tool",
        description="Builds things. Use to build.",
        files={"scripts/build.py": "import os, sys\nos.system(sys.argv[1])\n"},
    )
    (repo / ".claude-plugin").mkdir()
    (repo / ".claude-plugin" / "marketplace.json").write_text(json.dumps(MARKETPLACE))
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "skills")
    base = _settings(tmp_path)
    skills = base.skills.model_copy(
        update={"install_sources": [f"file://{host}/acme/*"], "git_host": f"file://{host}"}
    )
    settings = base.model_copy(update={"skills": skills})
    async for served in _serve(settings, LocalArtifactStore(tmp_path / "store")):
        yield served


async def names(api: Api) -> set[str]:
    page = (await api.client.get("/v1/skills/", params={"source": "uploaded"})).json()
    return {item["name"] for item in page["items"]}


async def test_a_shorthand_installs_a_plugins_skills(api: Api, tmp_path: Path) -> None:
    answer = await api.client.post(
        "/v1/skills/install", json={"source": "acme/skills", "plugins": ["documents"]}
    )
    assert answer.status_code == 201, answer.text
    [item] = answer.json()
    assert item["name"] == "pdf-tool"
    assert item["origin"]["source"] == f"file://{tmp_path}/host/acme/skills"
    assert item["origin"]["path"] == "skills/pdf-tool"
    assert await names(api) == {"pdf-tool"}


async def test_a_tree_url_and_every_skill(api: Api, tmp_path: Path) -> None:
    tree = f"file://{tmp_path}/host/acme/skills/tree/main/skills"
    answer = await api.client.post("/v1/skills/install", json={"source": tree, "skills": ["*"]})
    assert answer.status_code == 201, answer.text
    assert {item["name"] for item in answer.json()} == {"pdf-tool", "make-tool"}
    assert {item["origin"]["ref"] for item in answer.json()} == {"main"}


async def test_the_allowlist_judges_the_canonical_url_before_anything_is_read(
    api: Api,
) -> None:
    answers = [
        await api.client.post(path, json={"source": source})
        for path in ("/v1/skills/install", "/v1/skills/install/preview")
        for source in ("evil/skills", "acme/..", "https://github.com/acme/skills")
    ]
    assert [a.status_code for a in answers] == [403] * 6, [a.text for a in answers]
    assert len({a.json()["detail"] for a in answers}) == 1


async def test_unknown_plugins_and_disagreeing_options_are_one_line(api: Api) -> None:
    plugin = await api.client.post(
        "/v1/skills/install", json={"source": "acme/skills", "plugins": ["nope"]}
    )
    assert plugin.status_code == 422, plugin.text
    assert "its plugins: documents, builders" in plugin.json()["detail"]
    disagree = await api.client.post(
        "/v1/skills/install/preview",
        json={"source": "acme/skills/skills/pdf-tool", "path": "skills/make-tool"},
    )
    assert disagree.status_code == 422, disagree.text
    assert "disagrees with the URL's path" in disagree.json()["detail"]
    assert await names(api) == set()


async def test_a_preview_lists_scans_and_stores_nothing(api: Api, tmp_path: Path) -> None:
    answer = await api.client.post("/v1/skills/install/preview", json={"source": "acme/skills"})
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    assert preview["source"] == f"file://{tmp_path}/host/acme/skills"
    assert len(preview["commit"]) == 40
    by_name = {item["name"]: item for item in preview["skills"]}
    assert by_name["pdf-tool"]["plugins"] == ["documents"]
    assert by_name["pdf-tool"]["scan_decision"]["decision"] == "clean"
    assert by_name["make-tool"]["scan"]["findings"]
    assert by_name["make-tool"]["scan_decision"]["decision"] != "clean"
    assert [p["name"] for p in preview["marketplace"]["plugins"]] == ["documents", "builders"]
    assert await names(api) == set()

    installed = await api.client.post(
        "/v1/skills/install", json={"source": "acme/skills", "skills": ["pdf-tool"]}
    )
    assert installed.json()[0]["version"] == by_name["pdf-tool"]["version"]
