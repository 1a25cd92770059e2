"""The open ``skills`` CLI's ``skills-lock.json`` read as hostile input, each entry's source,
and its ``computedHash`` reproduced (``skills.install._skills_cli_lock``)."""

from __future__ import annotations

import json
import random
import shutil
import string
import subprocess
from pathlib import Path

import pytest

from skillweave.errors import PackageError
from skillweave.skills.install import SkillsCliLock, skills_cli_hash
from skillweave.skills.install._skills_cli_lock import _collation_key
from tests.conftest import write_skill

HASH = "ab" * 32
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is the reference")


def write_lock(folder: Path, skills: dict[str, object], *, version: object = 1) -> Path:
    path = folder / "skills-lock.json"
    # As the CLI writes it: JSON.stringify(lock, null, 2) + "\n", skills sorted by name.
    path.write_text(json.dumps({"version": version, "skills": skills}, indent=2) + "\n")
    return path


def test_each_kind_of_entry_reads_as_a_source(tmp_path: Path) -> None:
    (tmp_path / "vendor" / "mine").mkdir(parents=True)
    write_skill(tmp_path / "vendor" / "mine" / "local-one")
    path = write_lock(
        tmp_path,
        {
            "from-github": {
                "source": "acme/skills",
                "ref": "v1",
                "sourceType": "github",
                "skillPath": "skills/pdf/SKILL.md",
                "computedHash": HASH,
            },
            "from-git": {
                "source": "https://git.example/x/skills.git",
                "sourceType": "git",
                "skillPath": "pdf",
                "computedHash": HASH,
            },
            "from-gitlab": {
                "source": "group/skills",
                "sourceUrl": "https://gitlab.example/group/skills.git",
                "sourceType": "gitlab",
                "computedHash": HASH,
            },
            "acme/skills::keyed": {
                "source": "acme/skills",
                "sourceType": "github",
                "computedHash": HASH,
            },
            "local-one": {"source": "vendor/mine", "sourceType": "local", "computedHash": HASH},
        },
    )
    requests = SkillsCliLock.load(path).requests(lock_path=path, git_host="https://github.com")
    by_name = {r.name: (r.source, r.computed_hash) for r in requests}
    github, digest = by_name["from-github"]
    assert (github.location, github.ref, github.path) == (
        "https://github.com/acme/skills.git",
        "v1",
        "skills/pdf",
    )
    assert digest == HASH
    assert by_name["from-git"][0].location == "https://git.example/x/skills.git"
    assert by_name["from-git"][0].path == "pdf"
    assert by_name["from-gitlab"][0].location == "https://gitlab.example/group/skills.git"
    assert by_name["keyed"][0].location == "https://github.com/acme/skills.git"
    local = by_name["local-one"][0]
    assert (local.kind, local.location) == ("folder", str(tmp_path / "vendor" / "mine"))


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"source": "x", "sourceType": "node_modules"}, "'node_modules', which skillweave does"),
        ({"source": "g/s", "sourceType": "gitlab"}, "without its URL"),
        ({"source": "-evil/x", "sourceType": "github"}, "no such file or folder"),
        ({"source": "acme/..", "sourceType": "github"}, "not a valid repository name"),
        (
            {"source": "acme/skills", "sourceType": "github", "skillPath": "../../etc"},
            "must be a relative path inside the source",
        ),
        ({"source": "http://x.example/a.git", "sourceType": "git"}, "carry no integrity"),
    ],
)
def test_entries_skillweave_cannot_install_are_named(
    tmp_path: Path, entry: dict[str, str], message: str
) -> None:
    path = write_lock(tmp_path, {"one": {**entry, "computedHash": HASH}})
    with pytest.raises(PackageError, match=r"skills-lock\.json: one: ") as caught:
        SkillsCliLock.load(path).requests(lock_path=path, git_host="https://github.com")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not a skills-lock.json"),
        ('{"skills": {}}', "version"),
        ('{"version": "1", "skills": {}}', "version"),
        ('{"version": 1, "skills": {"a": {"sourceType": "github"}}}', "skills.a.source"),
        (
            '{"version": 1, "skills": {"a": {"source": "x/y", "sourceType": "github",'
            ' "computedHash": "nothex"}}}',
            "computedHash",
        ),
        (
            '{"version": 1, "skills": {"../x": {"source": "x/y", "sourceType": "github"}}}',
            "is not a skill name",
        ),
        ('<<<<<<< ours\n{"version": 1}\n=======\n{}\n>>>>>>> theirs\n', "merge conflict"),
    ],
)
def test_a_malformed_lock_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "skills-lock.json"
    path.write_text(text)
    with pytest.raises(PackageError) as caught:
        SkillsCliLock.load(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def node_hash(folder: Path) -> str:
    """The CLI's computedHash, computed by node: every regular file but those under .git and
    node_modules, sorted with localeCompare, each as its path then its bytes."""
    script = r"""
    const {createHash} = require('crypto'); const fs = require('fs'); const p = require('path');
    const out = [];
    (function walk(dir) {
      for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
        const full = p.join(dir, e.name);
        if (e.isDirectory()) { if (e.name !== '.git' && e.name !== 'node_modules') walk(full); }
        else if (e.isFile()) out.push([p.relative(process.argv[1], full), fs.readFileSync(full)]);
      }
    })(process.argv[1]);
    out.sort((a, b) => a[0].localeCompare(b[0]));
    const h = createHash('sha256'); for (const [r, c] of out) { h.update(r); h.update(c); }
    process.stdout.write(h.digest('hex'));
    """
    done = subprocess.run(
        ["node", "-e", script, str(folder)], capture_output=True, text=True, check=True
    )
    return done.stdout


@needs_node
def test_the_hash_is_the_clis_for_the_folder_it_installed(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path / "skill",
        files={
            "scripts/Run.py": "print(1)\n",
            "scripts/run_all.py": "print(2)\n",
            "scripts/run-all.py": "print(3)\n",
            "Reference.md": "# R\n",
            "a b.txt": "space\n",
            "README.md": "left out by the CLI's installer\n",
            "_notes/draft.md": "left out too\n",
            "node_modules/x/index.js": "never hashed\n",
        },
    )
    installed = tmp_path / "installed"
    shutil.copytree(
        skill, installed, ignore=shutil.ignore_patterns("README.md", "metadata.json", "_*")
    )
    readings = skills_cli_hash(skill)
    assert readings is not None
    assert readings[0] == node_hash(installed)  # as that CLI's installer copied it
    assert readings[1] == node_hash(skill)  # an older CLI, which copied everything


@needs_node
def test_the_collation_is_javascripts_locale_compare() -> None:
    rng = random.Random(45)
    alphabet = string.ascii_letters + string.digits + " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(2000)]
    script = (
        "const w = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "w.sort((a, b) => a.localeCompare(b)); process.stdout.write(JSON.stringify(w));"
    )
    done = subprocess.run(
        ["node", "-e", script], input=json.dumps(words), capture_output=True, text=True, check=True
    )
    assert sorted(words, key=_collation_key) == json.loads(done.stdout)


def test_a_folder_it_cannot_reproduce_answers_none(tmp_path: Path) -> None:
    accented = write_skill(tmp_path / "accented", files={"résumé.md": "x\n"})
    assert skills_cli_hash(accented) is None
    linked = write_skill(tmp_path / "linked")
    (linked / "link.md").symlink_to(linked / "SKILL.md")
    assert skills_cli_hash(linked) is None
