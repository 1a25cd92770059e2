"""Skill registries as a user types the commands (issue 45): ``registry build`` of a git
repository laid out like a public skill library (with a marketplace file), unsigned and with a
key; ``skills find`` against the built index, a marketplace registry and an unreachable one;
the install command it prints, run as printed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillweave.cli.temporal_server import free_port
from skillweave.skills.signing import generate_keypair, write_private_key
from tests.conftest import write_skill

pytestmark = pytest.mark.timeout(300)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
MARKETPLACE = {
    "name": "acme-skills",
    "owner": {"name": "Acme"},
    "plugins": [
        {"name": "documents", "source": "./", "skills": ["./skills/pdf-forms"]},
        {"name": "tools", "source": "./", "skills": ["./skills/length-converter"]},
    ],
}


def cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`skillweave ARGS` in a subprocess, with a store and a registry cache of the test's."""
    return subprocess.run(
        [sys.executable, "-m", "skillweave.cli", *args],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
            "SKILLS__REGISTRY_CACHE_DIR": str(tmp_path / "registry-cache"),
            "SKILLS__SELECTION": "bm25",
            **env,
        },
        cwd=tmp_path,
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
def repository(tmp_path: Path) -> tuple[Path, str]:
    """A git repository like a public skill library: skills/ and a marketplace file."""
    repo = tmp_path / "acme-skills"
    write_skill(
        repo / "skills" / "length-converter",
        description="Convert units of length, mass and temperature.",
        files={"scripts/convert.py": "print('converted')\n"},
    )
    write_skill(repo / "skills" / "pdf-forms", description="Fill in PDF forms.")
    write_skill(repo / "skills" / "csv-report", description="Summarise a CSV file.")
    (repo / ".claude-plugin").mkdir()
    (repo / ".claude-plugin" / "marketplace.json").write_text(json.dumps(MARKETPLACE))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "skills")
    return repo, git(repo, "rev-parse", "HEAD")


def test_build_unsigned_then_find_and_install_what_it_prints(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    repo, commit = repository
    built = cli(tmp_path, "registry", "build", str(repo), "--out", "index.json")
    assert built.returncode == 0, built.stderr
    assert "wrote 3 skills to index.json, unsigned" in built.stdout
    assert "length-converter" in built.stdout
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["format"] == 1
    assert index["name"] == "acme-skills"
    assert "signature" not in index
    entries = {entry["name"]: entry for entry in index["skills"]}
    unit = entries["length-converter"]
    assert unit["source"] == str(repo)
    assert unit["commit"] == commit
    assert unit["path"] == "skills/length-converter"
    assert unit["plugin"] == "tools"
    assert entries["pdf-forms"]["plugin"] == "documents"
    assert "plugin" not in entries["csv-report"]
    assert unit["scan"]["decision"] in ("clean", "warn", "approve")

    registries = json.dumps([f"index:{tmp_path / 'index.json'}"])
    found = cli(
        tmp_path, "skills", "find", "convert temperature", "-k", "2", SKILLS__REGISTRIES=registries
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].split() == [
        "name",
        "registry",
        "description",
        "version",
        "scan",
        "signed",
        "here",
    ]
    assert "length-converter" in found.stdout
    assert unit["version"][:12] in found.stdout
    command = next(
        line for line in found.stdout.splitlines() if line.startswith("skillweave skills install")
    )
    assert f"--ref {commit}" in command
    assert "--path skills/length-converter --skill length-converter" in command

    # The command, as printed, installs the version the index lists, naming its registry.
    installed = cli(tmp_path, *shlex.split(command)[1:], "--json", SKILLS__REGISTRIES=registries)
    assert installed.returncode == 0, installed.stderr
    rows = json.loads(installed.stdout)
    assert rows[0]["name"] == "length-converter"
    assert rows[0]["version"] == unit["version"]
    assert rows[0]["registry"] == str(tmp_path / "index.json")


def test_build_signed_then_find_verified_and_refuse_an_unsigned_index(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    repo, _ = repository
    pem, public = generate_keypair(passphrase=b"secret")
    write_private_key(tmp_path / "key.pem", pem)
    built = cli(
        tmp_path,
        "registry",
        "build",
        str(repo),
        "--out",
        "signed.json",
        "--name",
        "acme",
        "--key",
        "key.pem",
        "--key-id",
        "ops",
        "--passphrase-env",
        "MY_PASS",
        MY_PASS="secret",
    )
    assert built.returncode == 0, built.stderr
    assert "signed by key 'ops'" in built.stdout
    index = json.loads((tmp_path / "signed.json").read_text())
    assert index["signature"]["key_id"] == "ops"
    assert all(entry["signature"]["key_id"] == "ops" for entry in index["skills"])
    unsigned = cli(tmp_path, "registry", "build", str(repo), "--out", "unsigned.json")
    assert unsigned.returncode == 0, unsigned.stderr

    trust = json.dumps({"ops": public})
    registries = json.dumps(
        [
            {
                "kind": "index",
                "location": str(tmp_path / "signed.json"),
                "name": "signed",
                "key": "ops",
            },
            {
                "kind": "index",
                "location": str(tmp_path / "unsigned.json"),
                "name": "plain",
                "key": "ops",
            },
            {"kind": "index", "location": str(tmp_path / "nowhere.json"), "name": "gone"},
        ]
    )
    found = cli(
        tmp_path,
        "skills",
        "find",
        "pdf forms",
        "--json",
        SKILLS__REGISTRIES=registries,
        SKILLS__TRUST__KEYS=trust,
    )
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["hits"][0]["entry"]["name"] == "pdf-forms"
    assert answer["hits"][0]["registry"] == "signed"
    assert answer["hits"][0]["verified"] is True
    assert answer["hits"][0]["install"].startswith("skillweave skills install ")
    assert {hit["registry"] for hit in answer["hits"]} == {"signed"}
    stderr = " ".join(found.stderr.split())
    assert "registry 'plain': the index is not signed" in stderr
    assert "registry 'gone': no index file" in stderr

    table = cli(
        tmp_path,
        "skills",
        "find",
        "pdf forms",
        "--registry",
        "signed",
        SKILLS__REGISTRIES=registries,
        SKILLS__TRUST__KEYS=trust,
    )
    assert table.returncode == 0, table.stderr
    assert "yes (ops)" in table.stdout


def test_a_marketplace_registry_is_listed_scanned_and_cached(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    repo, commit = repository
    registries = json.dumps([{"kind": "marketplace", "location": str(repo), "name": "acme"}])
    found = cli(
        tmp_path, "skills", "find", "fill pdf forms", "--json", SKILLS__REGISTRIES=registries
    )
    assert found.returncode == 0, found.stderr
    hit = json.loads(found.stdout)["hits"][0]
    assert hit["registry"] == "acme"
    assert hit["entry"]["plugin"] == "documents"
    assert hit["entry"]["commit"] == commit
    assert hit["entry"]["scan"]["decision"] == "clean"
    assert list((tmp_path / "registry-cache").iterdir())
    # Fresh in the cache: answered without reading the repository.
    git(repo, "rm", "-rq", "skills/pdf-forms")
    git(repo, "commit", "-qm", "gone")
    again = cli(
        tmp_path, "skills", "find", "fill pdf forms", "--json", SKILLS__REGISTRIES=registries
    )
    assert json.loads(again.stdout)["hits"][0]["entry"]["commit"] == commit
    # Read afresh with no freshness: the skill is gone.
    afresh = cli(
        tmp_path,
        "skills",
        "find",
        "fill pdf forms",
        "--json",
        SKILLS__REGISTRIES=registries,
        SKILLS__REGISTRY_CACHE_SECONDS="0",
    )
    names = [h["entry"]["name"] for h in json.loads(afresh.stdout)["hits"]]
    assert "pdf-forms" not in names


def test_find_without_registries_and_hostile_entries(tmp_path: Path) -> None:
    none = cli(tmp_path, "skills", "find", "anything", SKILLS__REGISTRIES="[]")
    assert none.returncode == 2
    assert "set SKILLS__REGISTRIES" in none.stderr
    hostile = {
        "format": 1,
        "name": "evil",
        "generated_at": "2026-01-01T00:00:00Z",
        "skills": [
            {
                "name": "pdf-forms",
                "description": "Fill PDF forms \x1b[2J\x1b]0;owned\x07 now",
                "source": "https://example.com/x.git; rm -rf ~",
                "path": "a b/$(id)",
                "version": "a" * 64,
            }
        ],
    }
    (tmp_path / "evil.json").write_text(json.dumps(hostile))
    found = cli(
        tmp_path,
        "skills",
        "find",
        "pdf forms",
        SKILLS__REGISTRIES=json.dumps([f"index:{tmp_path / 'evil.json'}"]),
    )
    assert found.returncode == 0, found.stderr
    assert "\x1b" not in found.stdout
    assert "\x07" not in found.stdout
    command = next(line for line in found.stdout.splitlines() if "skills install" in line)
    assert shlex.split(command)[3] == "https://example.com/x.git; rm -rf ~"
    assert shlex.split(command)[5] == "a b/$(id)"


def test_skills_find_through_an_api_registry_served_by_skillweave_api(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    repo, commit = repository
    built = cli(tmp_path, "registry", "build", str(repo), "--out", "index.json")
    assert built.returncode == 0, built.stderr
    port, token = free_port(), "registry-test-token"
    (tmp_path / "own-skills").mkdir()
    server = subprocess.Popen(
        [sys.executable, "-m", "skillweave.cli", "api"],
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path / "home"),
            "PYTHONUNBUFFERED": "1",
            "STORAGE__LOCAL_DIR": str(tmp_path / "server-store"),
            "SKILLS__DIRS": json.dumps([str(tmp_path / "own-skills")]),
            "SKILLS__UPLOADED_DIR": str(tmp_path / "uploaded"),
            "SKILLS__REGISTRIES": json.dumps([f"index:{tmp_path / 'index.json'}"]),
            "SKILLS__REGISTRY_CACHE_DIR": str(tmp_path / "server-cache"),
            "SKILLS__SELECTION": "bm25",
            "SANDBOX__POOL_TARGET": "0",
            "WORKFLOW__EXECUTION_ENGINE": "direct",
            "API__TOKEN": token,
            "API__PORT": str(port),
        },
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        deadline, seen = time.monotonic() + 90, []
        for line in server.stdout:
            seen.append(line)
            if line.startswith("skillweave API on "):
                break
            assert time.monotonic() < deadline, "".join(seen)
        else:
            pytest.fail(f"skillweave api ended before its ready line:\n{''.join(seen)}")
        remote = {
            "kind": "api",
            "location": f"http://127.0.0.1:{port}",
            "name": "prod",
            "token": token,
        }
        found = cli(
            tmp_path,
            "skills",
            "find",
            "convert length",
            "--json",
            SKILLS__REGISTRIES=json.dumps([remote]),
        )
        assert found.returncode == 0, found.stderr
        answer = json.loads(found.stdout)
        assert answer["problems"] == []
        hit = answer["hits"][0]
        assert hit["registry"] == "prod"
        assert hit["entry"]["name"] == "length-converter"
        assert hit["entry"]["commit"] == commit
        wrong = {**remote, "token": "wrong"}
        refused = cli(
            tmp_path, "skills", "find", "convert length", SKILLS__REGISTRIES=json.dumps([wrong])
        )
        assert refused.returncode == 0, refused.stderr
        assert "registry 'prod'" in refused.stderr
        assert "HTTP 401" in refused.stderr
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()
