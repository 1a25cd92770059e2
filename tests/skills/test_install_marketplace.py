"""A Claude Code plugin marketplace file read as hostile input: its plugins, their skill folders,
and what is not installable here (``skills.install._marketplace``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skillweave.errors import PackageError
from skillweave.skills.install import (
    MARKETPLACE_FILE,
    Marketplace,
    plugin_skill_folders,
    read_marketplace,
)

# As the anthropics/skills repository writes it (tabs, an owner object, metadata, strict).
ANTHROPIC_LAYOUT = {
    "name": "anthropic-agent-skills",
    "owner": {"name": "Keith", "email": "k@example.com"},
    "metadata": {"description": "Example skills", "version": "1.0.0"},
    "plugins": [
        {
            "name": "document-skills",
            "description": "Documents",
            "source": "./",
            "strict": False,
            "skills": ["./skills/xlsx", "./skills/pdf"],
        },
        {
            "name": "example-skills",
            "description": "Examples",
            "source": "./",
            "strict": False,
            "skills": ["./skills/art"],
        },
    ],
}


def _skill(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nbody\n")


def _repo(tmp_path: Path, document: object, *, raw: str | None = None) -> Path:
    (tmp_path / ".claude-plugin").mkdir(exist_ok=True)
    text = raw if raw is not None else json.dumps(document, indent="\t")
    (tmp_path / MARKETPLACE_FILE).write_text(text)
    for name in ("xlsx", "pdf", "art"):
        _skill(tmp_path / "skills" / name, name)
    return tmp_path


def test_the_anthropics_layout_lists_each_plugins_skill_folders(tmp_path: Path) -> None:
    root = _repo(tmp_path, ANTHROPIC_LAYOUT)
    market = read_marketplace(root)
    assert isinstance(market, Marketplace)
    assert market.name == "anthropic-agent-skills"
    assert market.owner == "Keith"
    assert market.description == "Example skills"
    documents = market.plugin("document-skills")
    assert documents.folder == "."
    assert documents.skills == ("skills/xlsx", "skills/pdf")
    assert plugin_skill_folders(root, documents) == [
        (root / "skills/xlsx").resolve(),
        (root / "skills/pdf").resolve(),
    ]
    assert plugin_skill_folders(root, market.plugin("example-skills")) == [
        (root / "skills/art").resolve()
    ]


def test_no_marketplace_file_is_none(tmp_path: Path) -> None:
    assert read_marketplace(tmp_path) is None


def test_an_unknown_plugin_lists_the_plugins_there_are(tmp_path: Path) -> None:
    market = read_marketplace(_repo(tmp_path, ANTHROPIC_LAYOUT))
    assert market is not None
    with pytest.raises(PackageError, match="no plugin 'nope'; its plugins: document-skills, "):
        market.plugin("nope")


def test_a_plugin_without_a_skills_list_uses_its_skills_folders(tmp_path: Path) -> None:
    document = {
        "name": "m",
        "owner": {"name": "o"},
        "metadata": {"pluginRoot": "./plugins"},
        "plugins": [{"name": "tools", "source": "tools"}, {"name": "empty", "source": "./empty"}],
    }
    root = _repo(tmp_path, document)
    _skill(root / "plugins/tools/skills/beta", "beta")
    _skill(root / "plugins/tools/skills/alpha", "alpha")
    (root / "plugins/tools/skills/notes").mkdir()  # no SKILL.md: not a skill
    (root / "plugins/empty").mkdir(parents=True)
    market = read_marketplace(root)
    assert market is not None
    tools = market.plugin("tools")
    assert tools.folder == "plugins/tools"
    assert [p.name for p in plugin_skill_folders(root, tools)] == ["alpha", "beta"]
    with pytest.raises(PackageError, match="lists no skills and plugins/empty/skills/ holds"):
        plugin_skill_folders(root, market.plugin("empty"))


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ({"source": "github", "repo": "acme/other"}, "skillweave skills install acme/other"),
        ({"source": "url", "url": "https://git.example/x.git"}, "https://git.example/x.git"),
        ({"source": "npm", "package": "@acme/x"}, "its source (npm) is not a folder"),
        ("acme/other", "skillweave skills install acme/other"),
        ("https://git.example/x.git", "another repository"),
        ("git@git.example:x.git", "another repository"),
        ("../outside", "not a folder inside this repository"),
        ("./a/../../outside", "not a folder inside this repository"),
        ("/etc", "not a folder inside this repository"),
        ("./a\\..\\..", "not a folder inside this repository"),
    ],
)
def test_a_plugin_from_elsewhere_is_listed_as_not_installable(
    tmp_path: Path, source: object, reason: str
) -> None:
    root = _repo(tmp_path, {"name": "m", "plugins": [{"name": "p", "source": source}]})
    market = read_marketplace(root)
    assert market is not None
    (plugin,) = market.plugins
    assert plugin.folder is None
    assert plugin.unavailable is not None
    assert reason in plugin.unavailable
    with pytest.raises(PackageError, match="plugin 'p': "):
        market.plugin("p")
    with pytest.raises(PackageError, match="plugin 'p': "):
        plugin_skill_folders(root, plugin)


@pytest.mark.parametrize("listed", ["../../etc", "/etc", "./skills/../../x", ""])
def test_a_skill_path_leaving_the_repository_makes_the_plugin_not_installable(
    tmp_path: Path, listed: str
) -> None:
    document = {"name": "m", "plugins": [{"name": "p", "source": "./", "skills": [listed]}]}
    market = read_marketplace(_repo(tmp_path, document))
    assert market is not None
    assert market.plugins[0].unavailable is not None
    assert "not a folder inside this repository" in market.plugins[0].unavailable


def test_a_symlinked_skill_folder_leading_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _skill(outside / "x", "x")
    root = tmp_path / "repo"
    root.mkdir()
    document = {"name": "m", "plugins": [{"name": "p", "source": "./", "skills": ["./link"]}]}
    _repo(root, document)
    os.symlink(outside / "x", root / "link")
    market = read_marketplace(root)
    assert market is not None
    with pytest.raises(PackageError, match="link leads outside the repository"):
        plugin_skill_folders(root, market.plugin("p"))


def test_a_listed_folder_without_skill_md_stands_for_the_skills_in_it(tmp_path: Path) -> None:
    document = {
        "name": "m",
        "plugins": [
            {"name": "p", "source": "./", "skills": ["./skills", "./skills/pdf"]},
            {"name": "empty", "source": "./", "skills": ["./docs"]},
        ],
    }
    root = _repo(tmp_path, document)
    (root / "docs" / "notes").mkdir(parents=True)
    market = read_marketplace(root)
    assert market is not None
    assert [f.name for f in plugin_skill_folders(root, market.plugin("p"))] == [
        "art",
        "pdf",
        "xlsx",
    ]
    with pytest.raises(PackageError, match=r"lists docs, which holds no SKILL\.md nor skill"):
        plugin_skill_folders(root, market.plugin("empty"))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{", "not a plugin marketplace"),
        ("[]", "not a plugin marketplace"),
        ('{"name": "m"}', "plugins: Field required"),
        ('{"name": "m", "plugins": [{"name": "p"}]}', "plugins.0.source"),
        ('{"name": "m", "plugins": [{"name": 3, "source": "./"}]}', "plugins.0.name"),
        ('{"name": "m", "plugins": [{"name": "p", "source": "./", "skills": 3}]}', "skills"),
        ('{"name": "m", "plugins": [{"name": "-p", "source": "./"}]}', "not a plugin name"),
        ('{"name": "m", "plugins": [{"name": "../p", "source": "./"}]}', "not a plugin name"),
        (
            '{"name": "m", "plugins": [{"name": "p", "source": "./"},'
            ' {"name": "p", "source": "./"}]}',
            "named twice",
        ),
    ],
)
def test_a_malformed_file_is_one_line_naming_the_field(
    tmp_path: Path, raw: str, message: str
) -> None:
    root = _repo(tmp_path, None, raw=raw)
    with pytest.raises(PackageError, match=message) as caught:
        read_marketplace(root)
    assert "\n" not in str(caught.value)


def test_too_many_plugins_or_bytes_are_refused(tmp_path: Path) -> None:
    plugins = [{"name": f"p{i}", "source": "./"} for i in range(501)]
    with pytest.raises(PackageError, match="plugins"):
        read_marketplace(_repo(tmp_path, {"name": "m", "plugins": plugins}))
    big = {"name": "m", "plugins": [], "padding": "x" * (1024 * 1024)}
    with pytest.raises(PackageError, match="over 1048576 bytes"):
        read_marketplace(_repo(tmp_path, big))


def test_a_symlinked_marketplace_file_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(ANTHROPIC_LAYOUT))
    root = tmp_path / "repo"
    (root / ".claude-plugin").mkdir(parents=True)
    os.symlink(elsewhere, root / MARKETPLACE_FILE)
    with pytest.raises(PackageError, match="a symlink"):
        read_marketplace(root)
