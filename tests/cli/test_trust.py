"""``skillweave skills keygen``, ``sign`` and ``verify`` end to end: a key made, a folder and
a ZIP signed and verified against ``skills.trust``, and a tampered folder exiting 1."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.config import get_settings
from skillweave.skills.signing import SIGNATURE_FILE
from tests.conftest import REPO, write_skill

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    get_settings.cache_clear()  # each invocation reads the environment as the test set it
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _no_trust_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SKILLS__TRUST__KEYS", "SKILLS__TRUST__UNSIGNED", "SKILLWEAVE_SIGNING_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    top = write_skill(tmp_path / "kit", files={"scripts/run.py": "print('run')\n"})
    write_skill(top / "csv-stats", files={"references/r.md": "R\n"})
    return top


def _keygen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key_id: str = "ops-2026") -> Path:
    key = tmp_path / "signing.pem"
    code, out, _ = run("skills", "keygen", "--out", str(key), "--key-id", key_id)
    assert code == 0
    variable, _, value = out.strip().partition("=")
    assert variable == "SKILLS__TRUST__KEYS"
    keys = json.loads(value.strip("'"))
    assert list(keys) == [key_id]
    monkeypatch.setenv("SKILLS__TRUST__KEYS", json.dumps(keys))
    return key


def test_keygen_writes_a_0600_key_and_never_overwrites_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _keygen(tmp_path, monkeypatch)
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    before = key.read_bytes()

    code, _, err = run("skills", "keygen", "--out", str(key))

    assert code == 2
    assert "never overwritten" in err
    assert key.read_bytes() == before


def test_keygen_without_a_key_id_uses_the_fingerprint(tmp_path: Path) -> None:
    code, out, _ = run("skills", "keygen", "--out", str(tmp_path / "k.pem"), "--json")
    assert code == 0
    made = json.loads(out)
    assert len(made["key_id"]) == 16
    assert made["encrypted"] is False
    assert (
        made["setting"]
        == f"SKILLS__TRUST__KEYS='{json.dumps({made['key_id']: made['public_key']})}'"
    )


def test_keygen_refuses_a_malformed_key_id(tmp_path: Path) -> None:
    code, _, err = run("skills", "keygen", "--out", str(tmp_path / "k.pem"), "--key-id", "a b")
    assert code == 2
    assert "key id 'a b' is not valid" in err
    assert not (tmp_path / "k.pem").exists()


def test_a_signed_folder_verifies_and_a_tampered_one_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    key = _keygen(tmp_path, monkeypatch)

    code, out, _ = run("skills", "sign", str(skill), "--key", str(key), "--key-id", "ops-2026")
    assert code == 0
    assert "signed kit " in out
    assert "signed csv-stats " in out
    assert (skill / SIGNATURE_FILE).is_file()
    assert (skill / "csv-stats" / SIGNATURE_FILE).is_file()

    code, out, _ = run("skills", "verify", str(skill))
    assert code == 0
    assert "valid: kit " in out
    assert "signed by ops-2026" in out

    (skill / "scripts" / "run.py").write_text("print('rum')\n")  # one byte
    code, out, err = run("skills", "verify", str(skill))
    assert code == 1
    assert "error: skill 'kit' version" in err
    assert "does not match its signature" in err
    assert "valid: csv-stats " in out  # the child's own files did not change

    code, out, _ = run("skills", "verify", str(skill), "--json")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert [s["status"] for s in report["skills"]] == ["mismatch", "valid"]


def test_unsigned_follows_the_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    code, out, _ = run("skills", "verify", str(skill))
    assert code == 0
    assert "warning: skill 'kit' version" in out
    assert "is not signed" in out

    monkeypatch.setenv("SKILLS__TRUST__UNSIGNED", "refuse")
    code, _, err = run("skills", "verify", str(skill))
    assert code == 1
    assert "skills.trust.unsigned=refuse" in err

    monkeypatch.setenv("SKILLS__TRUST__UNSIGNED", "allow")
    code, out, _ = run("skills", "verify", str(skill))
    assert code == 0
    assert "unsigned: kit " in out


def test_a_signature_by_a_key_not_in_the_settings_is_untrusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    key = tmp_path / "other.pem"
    assert run("skills", "keygen", "--out", str(key))[0] == 0
    code, _, err = run("skills", "sign", str(skill), "--key", str(key))
    assert code == 0
    assert "skills.trust.keys does not trust key" in err  # the signer is told

    monkeypatch.setenv("SKILLS__TRUST__UNSIGNED", "refuse")
    code, _, err = run("skills", "verify", str(skill))
    assert code == 1
    assert "which skills.trust.keys does not trust" in err


def test_a_zip_is_signed_beside_it_and_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    key = _keygen(tmp_path, monkeypatch)
    archive = tmp_path / "kit.zip"
    assert run("skills", "pack", str(skill), "-o", str(archive))[0] == 0

    code, out, _ = run("skills", "sign", str(archive), "--key", str(key), "--key-id", "ops-2026")
    assert code == 0
    assert (tmp_path / "kit.zip.sig.json").is_file()

    code, out, _ = run("skills", "verify", str(archive), "--json")
    assert code == 0
    (checked,) = json.loads(out)["skills"]
    assert checked["status"] == "valid"
    assert checked["name"] == "kit"

    write_skill(skill / "extra")  # a new child skill: another package
    assert run("skills", "pack", str(skill), "-o", str(tmp_path / "kit2.zip"))[0] == 0
    (tmp_path / "kit2.zip").replace(archive)
    code, _, err = run("skills", "verify", str(archive))
    assert code == 1
    assert "does not match its signature" in err


def test_an_encrypted_key_is_read_with_the_passphrase_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    monkeypatch.setenv("SKILLWEAVE_SIGNING_PASSPHRASE", "correct horse")
    key = _keygen(tmp_path, monkeypatch)
    assert key.read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    assert run("skills", "sign", str(skill), "--key", str(key), "--key-id", "ops-2026")[0] == 0
    assert run("skills", "verify", str(skill))[0] == 0

    monkeypatch.delenv("SKILLWEAVE_SIGNING_PASSPHRASE")
    code, _, err = run("skills", "sign", str(skill), "--key", str(key))
    assert code == 1
    assert "set SKILLWEAVE_SIGNING_PASSPHRASE" in err


def test_a_malformed_trusted_key_is_bad_usage_naming_it(
    monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    monkeypatch.setenv("SKILLS__TRUST__KEYS", '{"ops-2026": "dG9vIHNob3J0"}')
    code, _, err = run("skills", "verify", str(skill))
    assert code == 2
    assert "skills.trust.keys['ops-2026']" in err


def test_bad_paths_are_bad_usage(tmp_path: Path) -> None:
    assert run("skills", "verify", str(tmp_path / "missing"))[0] == 2
    code, _, err = run("skills", "verify", str(tmp_path))
    assert code == 2
    assert "not a skill folder" in err


def test_the_real_command_refuses_a_tampered_folder(tmp_path: Path, skill: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLS__", "SKILLWEAVE_SIGN"))}
    command = [sys.executable, "-m", "skillweave.cli", "skills"]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )

    made = cli("keygen", "--out", str(tmp_path / "k.pem"), "--key-id", "ci")
    assert made.returncode == 0, made.stderr
    env["SKILLS__TRUST__KEYS"] = made.stdout.strip().partition("=")[2].strip("'")
    env["SKILLS__TRUST__UNSIGNED"] = "refuse"
    assert (
        cli("sign", str(skill), "--key", str(tmp_path / "k.pem"), "--key-id", "ci").returncode == 0
    )
    assert cli("verify", str(skill)).returncode == 0

    with (skill / "SKILL.md").open("a") as file:
        file.write(" ")
    refused = cli("verify", str(skill))
    assert refused.returncode == 1
    assert "does not match its signature" in refused.stderr


def test_signing_never_replaces_a_trusted_signature_with_an_untrusted_one_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    key = _keygen(tmp_path, monkeypatch)
    archive = tmp_path / "kit.zip"
    assert run("skills", "pack", str(skill), "-o", str(archive))[0] == 0
    assert run("skills", "sign", str(archive), "--key", str(key), "--key-id", "ops-2026")[0] == 0
    document = tmp_path / "kit.zip.sig.json"
    trusted = document.read_bytes()

    # The same key without --key-id would sign under its fingerprint, which is not trusted.
    code, out, err = run("skills", "sign", str(archive), "--key", str(key))
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith(f"error: {archive} is signed by trusted key 'ops-2026', and a signature")
    assert "sign with --key-id ops-2026 (this key's id in skills.trust.keys)" in line
    assert "or pass --replace" in line
    assert document.read_bytes() == trusted

    # Named by its trusted id, it re-signs (a new signing time), and the result is trusted.
    assert run("skills", "sign", str(archive), "--key", str(key), "--key-id", "ops-2026")[0] == 0
    assert json.loads(document.read_text())["key_id"] == "ops-2026"

    # Another key, which skills.trust.keys does not list, neither, until --replace says so.
    other = tmp_path / "other.pem"
    assert run("skills", "keygen", "--out", str(other), "--key-id", "dev")[0] == 0
    code, _, err = run("skills", "sign", str(archive), "--key", str(other), "--key-id", "dev")
    assert code == 2
    assert "sign with a key skills.trust.keys trusts and its --key-id" in err
    assert json.loads(document.read_text())["key_id"] == "ops-2026"
    code, _, err = run("skills", "sign", str(archive), "--key", str(other), "--replace")
    assert code == 0, err
    assert json.loads(document.read_text())["key_id"] != "ops-2026"

    # A signature no trusted key made is no obstacle: signing over it loses nothing.
    code, _, err = run("skills", "sign", str(archive), "--key", str(key), "--key-id", "dev")
    assert code == 0, err


def test_a_folder_keeps_a_child_skills_trusted_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skill: Path
) -> None:
    key = _keygen(tmp_path, monkeypatch)
    child = skill / "csv-stats"
    assert run("skills", "sign", str(child), "--key", str(key), "--key-id", "ops-2026")[0] == 0
    signed = (child / SIGNATURE_FILE).read_bytes()
    other = tmp_path / "other.pem"
    assert run("skills", "keygen", "--out", str(other))[0] == 0

    code, _, err = run("skills", "sign", str(skill), "--key", str(other))

    assert code == 2
    assert "csv-stats is signed by trusted key 'ops-2026'" in err
    assert not (skill / SIGNATURE_FILE).exists()  # nothing of the tree was signed
    assert (child / SIGNATURE_FILE).read_bytes() == signed
