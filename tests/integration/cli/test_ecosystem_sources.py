"""Skill sources in the ecosystem's forms, as a user types them (issue 45, first must-show): a
local git repository laid out like a public skill library (``skills/<name>/SKILL.md`` with
scripts, a README, ``.claude-plugin/marketplace.json`` with two plugins listing different
skill folders and one from another repository) placed at ``{host}/acme/skills``, with
``SKILLS__GIT_HOST=file://{host}``: ``--list`` (the skills and their verdicts; nothing
installed), install by shorthand, by tree URL and by ``--plugin``, the lock made again, and a
``skills-lock.json`` written as the open ``skills`` CLI writes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_skill

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
MARKETPLACE = {
    "name": "acme-agent-skills",
    "owner": {"name": "Acme", "email": "skills@acme.example"},
    "metadata": {"description": "Acme's skills", "version": "1.0.0"},
    "plugins": [
        {
            "name": "document-skills",
            "description": "PDF and spreadsheet skills",
            "source": "./",
            "strict": False,
            "skills": ["./skills/pdf", "./skills/xlsx"],
        },
        {
            "name": "example-skills",
            "description": "Examples",
            "source": "./",
            "strict": False,
            "skills": ["./skills/shell-runner"],
        },
        {
            "name": "remote-tools",
            "description": "Kept in another repository",
            "source": {"source": "github", "repo": "acme/remote-tools"},
        },
    ],
}


def cli(tmp_path: Path, host: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`skillweave ARGS` in a subprocess, in `tmp_path/work`, with a store of the test's and
    `host` as the git host."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            "SKILLS__GIT_HOST": f"file://{host}",
            "COLUMNS": "200",
        },
        cwd=work,
        timeout=200,
        check=False,
    )


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


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A folder standing in for a git host, holding acme/skills as a public library is."""
    host = tmp_path / "host"
    repo = host / "acme" / "skills"
    repo.mkdir(parents=True)
    (repo / "README.md").write_text("# Acme skills\n\nInstall with `npx skills add acme/skills`.\n")
    (repo / ".claude-plugin").mkdir()
    (repo / ".claude-plugin" / "marketplace.json").write_text(json.dumps(MARKETPLACE, indent="\t"))
    write_skill(
        repo / "skills" / "pdf",
        description="Read and fill PDF forms. Use when a PDF must be read or filled.",
        files={
            "scripts/extract.py": "import sys\nprint(open(sys.argv[1], 'rb').read(4))\n",
            "reference.md": "# PDF reference\n",
        },
    )
    write_skill(
        repo / "skills" / "xlsx",
        description="Recalculate spreadsheets. Use when an .xlsx needs its formulas computed.",
        files={"scripts/recalc.py": "print('recalculated')\n"},
    )
    write_skill(
        repo / "skills" / "shell-runner",
        description="Runs the command it is given. Use to run a command.",
        files={"scripts/run.py": "import os, sys\nos.system(sys.argv[1])\n"},
    )
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "skills")
    return host


def names_in_store(tmp_path: Path, host: Path) -> set[str]:
    listed = cli(tmp_path, host, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return {item["name"] for item in json.loads(listed.stdout)}


def test_list_shows_the_skills_and_verdicts_and_installs_nothing(
    tmp_path: Path, host: Path
) -> None:
    before = names_in_store(tmp_path, host)
    shown = cli(tmp_path, host, "skills", "install", "acme/skills", "--list")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    for name in ("pdf", "xlsx", "shell-runner"):
        assert name in text
    assert "skills/pdf (plugin document-skills)" in text
    assert "skills/shell-runner (plugin example-skills)" in text
    assert "clean: no findings" in text  # pdf's verdict
    assert "Read and fill PDF forms." in text
    assert "3 skills in file://" in text
    assert "nothing installed" in text
    # The shell runner's finding and the policy's decision, as an install would show them.
    assert "shell-runner: " in text
    assert "plugin remote-tools: not installable here" in text
    assert "skillweave skills install acme/remote-tools" in text

    as_json = cli(tmp_path, host, "skills", "install", "acme/skills", "--list", "--json")
    listing = json.loads(as_json.stdout)
    assert listing["source"] == f"file://{host}/acme/skills"
    assert len(listing["commit"]) == 40
    by_name = {row["name"]: row for row in listing["skills"]}
    assert by_name["pdf"]["decision"] == "clean"
    assert by_name["shell-runner"]["decision"] != "clean"
    assert by_name["shell-runner"]["findings"]
    assert by_name["xlsx"]["plugins"] == ["document-skills"]
    assert [p["name"] for p in listing["marketplace"]["plugins"]] == [
        "document-skills",
        "example-skills",
        "remote-tools",
    ]

    # Nothing stored, locked or audited.
    assert names_in_store(tmp_path, host) == before
    assert not (tmp_path / "work" / "skills.lock").exists()
    audit = cli(tmp_path, host, "audit", "list", "--json")
    if audit.returncode == 0:
        assert "pdf" not in audit.stdout

    # --list narrows as an install would.
    one = cli(tmp_path, host, "skills", "install", "acme/skills", "--list", "--skill", "xlsx")
    assert "1 skill in" in " ".join(one.stdout.split())


def test_install_by_shorthand_tree_url_and_plugin_then_again_from_the_lock(
    tmp_path: Path, host: Path
) -> None:
    by_shorthand = cli(tmp_path, host, "skills", "install", "acme/skills", "--skill", "pdf")
    assert by_shorthand.returncode == 0, by_shorthand.stderr
    assert "installed 1 skill" in by_shorthand.stdout

    tree = f"file://{host}/acme/skills/tree/main/skills/xlsx"
    by_tree = cli(tmp_path, host, "skills", "install", tree, "--json")
    assert by_tree.returncode == 0, by_tree.stderr
    [xlsx] = json.loads(by_tree.stdout)
    assert (xlsx["name"], xlsx["source"], xlsx["ref"], xlsx["path"]) == (
        "xlsx",
        f"file://{host}/acme/skills",
        "main",
        "skills/xlsx",
    )

    by_plugin = cli(
        tmp_path, host, "skills", "install", "acme/skills", "--plugin", "example-skills"
    )
    assert by_plugin.returncode == 0, by_plugin.stderr
    assert "shell-runner" in by_plugin.stdout
    assert names_in_store(tmp_path, host) >= {"pdf", "xlsx", "shell-runner"}

    # The lock keeps the canonical git URL, ref and path: what `skills install` reads again.
    lock = json.loads((tmp_path / "work" / "skills.lock").read_text())
    assert lock["skills"]["pdf"]["source"] == f"file://{host}/acme/skills"
    assert lock["skills"]["pdf"]["path"] == "skills/pdf"
    assert lock["skills"]["xlsx"]["ref"] == "main"
    shutil.rmtree(tmp_path / "store")  # another machine, with the project's lock
    again = cli(tmp_path, host, "skills", "install", "--json")
    assert again.returncode == 0, again.stderr
    assert {row["name"] for row in json.loads(again.stdout)} == {"pdf", "xlsx", "shell-runner"}


def test_unknown_plugins_and_skills_name_those_there_are(tmp_path: Path, host: Path) -> None:
    plugin = cli(tmp_path, host, "skills", "install", "acme/skills", "--plugin", "nope")
    assert plugin.returncode == 1
    assert (
        "the marketplace 'acme-agent-skills' has no plugin 'nope'; its plugins: "
        "document-skills, example-skills, remote-tools"
    ) in " ".join(plugin.stderr.split())
    remote = cli(tmp_path, host, "skills", "install", "acme/skills", "--plugin", "remote-tools")
    assert remote.returncode == 1
    assert "skillweave skills install acme/remote-tools" in " ".join(remote.stderr.split())
    skill = cli(tmp_path, host, "skills", "install", "acme/skills", "--skill", "nope")
    assert skill.returncode == 1
    assert "no skill named 'nope'; its skills: pdf, shell-runner, xlsx" in " ".join(
        skill.stderr.split()
    )
    every = cli(tmp_path, host, "skills", "install", "acme/skills", "--skill", "*", "--json")
    assert every.returncode == 0, every.stderr
    assert {row["name"] for row in json.loads(every.stdout)} == {"pdf", "xlsx", "shell-runner"}
    assert names_in_store(tmp_path, host) >= {"pdf", "xlsx", "shell-runner"}


def test_a_folder_here_named_like_a_shorthand_is_refused_with_both_spellings(
    tmp_path: Path, host: Path
) -> None:
    write_skill(tmp_path / "work" / "acme" / "skills")
    both = cli(tmp_path, host, "skills", "install", "acme/skills")
    assert both.returncode == 1
    line = " ".join(both.stderr.split())
    assert "write ./acme/skills for the path" in line
    assert f"file://{host}/acme/skills for the repository" in line
    folder = cli(tmp_path, host, "skills", "install", "./acme/skills")
    assert folder.returncode == 0, folder.stderr


NODE_HASH = r"""
const {createHash} = require('crypto');
const fs = require('fs');
const path = require('path');
// The open skills CLI's computedHash, written from its description: every regular file
// but those under .git and node_modules, sorted by relative path with localeCompare, each
// hashed as its path then its bytes.
function collect(base, dir, out) {
  for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '.git' && entry.name !== 'node_modules') collect(base, full, out);
    } else if (entry.isFile()) {
      out.push({rel: path.relative(base, full), content: fs.readFileSync(full)});
    }
  }
}
const files = [];
collect(process.argv[1], process.argv[1], files);
files.sort((a, b) => a.rel.localeCompare(b.rel));
const hash = createHash('sha256');
for (const f of files) { hash.update(f.rel); hash.update(f.content); }
process.stdout.write(hash.digest('hex'));
"""


def skills_cli_hash(folder: Path) -> str:
    done = subprocess.run(
        ["node", "-e", NODE_HASH, str(folder)], capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="node computes the open CLI's hash")
def test_a_skills_lock_json_of_the_open_cli_installs_and_its_hash_is_checked(
    tmp_path: Path, host: Path
) -> None:
    repo = host / "acme" / "skills"
    # As that CLI installs a skill: the folder copied without README.md and `_` files.
    installed = tmp_path / "installed-pdf"
    shutil.copytree(repo / "skills" / "pdf", installed)
    entry = {
        "source": "acme/skills",
        "ref": "main",
        "sourceType": "github",
        "skillPath": "skills/pdf/SKILL.md",
        "computedHash": skills_cli_hash(installed),
    }
    xlsx = {  # no ref (its HEAD), skillPath as a folder
        "source": "acme/skills",
        "sourceType": "github",
        "skillPath": "skills/xlsx",
        "computedHash": skills_cli_hash(repo / "skills" / "xlsx"),
    }
    work = tmp_path / "work"
    work.mkdir()
    written = {"version": 1, "skills": {"pdf": entry, "xlsx": xlsx}}
    (work / "skills-lock.json").write_text(json.dumps(written, indent=2) + "\n")

    done = cli(tmp_path, host, "skills", "install")
    assert done.returncode == 0, done.stderr
    assert "installed 2 skills" in done.stdout
    shown = " ".join(done.stderr.split())
    assert (
        "pdf: skills-lock.json's computedHash " + entry["computedHash"][:12] + " verified" in shown
    )
    assert (
        "xlsx: skills-lock.json's computedHash " + xlsx["computedHash"][:12] + " verified" in shown
    )
    assert names_in_store(tmp_path, host) >= {"pdf", "xlsx"}
    ours = json.loads((work / "skills.lock").read_text())
    assert ours["skills"]["pdf"]["source"] == f"file://{host}/acme/skills"
    assert ours["skills"]["pdf"]["path"] == "skills/pdf"
    assert len(ours["skills"]["pdf"]["version"]) == 64
    assert json.loads((work / "skills-lock.json").read_text()) == written  # theirs, untouched

    # A skill whose files changed since that lock was written is refused, nothing stored.
    assert cli(tmp_path, host, "skills", "remove", "pdf", "xlsx").returncode == 0
    (work / "skills.lock").unlink()
    entry["computedHash"] = "0" * 64
    (work / "skills-lock.json").write_text(json.dumps(written, indent=2) + "\n")
    refused = cli(tmp_path, host, "skills", "install", "--lock", "skills-lock.json")
    assert refused.returncode == 1
    assert "not the computedHash 000000000000 of skills-lock.json" in " ".join(
        refused.stderr.split()
    )
    assert not {"pdf", "xlsx"} & names_in_store(tmp_path, host)  # all or none
