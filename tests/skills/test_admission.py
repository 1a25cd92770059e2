"""New versions pass their signature and their scan before they are stored (issue 27, parts 2
and 3): at install (CLI and library) and at upload (the API). A version the scan policy
blocks is refused with its findings; one it holds is stored off until approved; a changed
or forged signature is refused whatever the policy; every step is in the audit log."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.config import Settings
from skillweave.errors import SignatureError, SkillScanError
from skillweave.skills import build_package
from skillweave.skills.admission import Admissions
from skillweave.skills.install import install_skills, parse_source
from skillweave.skills.signing import generate_keypair, load_private_key, sign_folder
from skillweave.skills.stored import StoredSkills
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

CORPUS = Path(__file__).parents[1] / "data" / "scan" / "malicious"


def settings(**skills: object) -> Settings:
    return Settings(_env_file=None, skills=skills)


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "store")


def copy_case(name: str, dest: Path) -> Path:
    return Path(shutil.copytree(CORPUS / name, dest / name))


async def test_a_version_the_scan_blocks_is_refused_with_its_findings(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    folder = copy_case("port-checker", tmp_path)  # a reverse shell: critical
    admissions = Admissions(settings().skills, store, audit=AuditLog(store))
    with pytest.raises(SkillScanError, match=r"critical exec\.reverse-shell at scripts/") as exc:
        await install_skills(StoredSkills(store), parse_source(str(folder)), admissions=admissions)
    assert "\n" not in str(exc.value)
    assert await StoredSkills(store).list() == []
    [scan] = [r async for r in AuditLog(store).read(event="scan")]
    assert (scan.skill, scan.details["decision"]) == ("port-checker", "block")


async def test_a_held_version_is_stored_off_until_an_operator_approves_it(
    store: LocalArtifactStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_case("hosts-manager", tmp_path)  # writes /etc/hosts: high
    admissions = Admissions(settings().skills, store, audit=AuditLog(store))
    [item] = await install_skills(
        StoredSkills(store), parse_source(str(folder)), admissions=admissions
    )
    assert item.record.enabled is False
    report = json.loads(await store.get_bytes(await store.stat(keys.skill_scan_key(
        "hosts-manager", item.version
    ))))  # fmt: skip
    assert any(f["rule"] == "fs.write-outside" for f in report["findings"])

    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "store"))
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["skills", "approve", "hosts-manager", "--note", "read it"]
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    stored = await StoredSkills(store).get("hosts-manager")
    assert stored is not None
    assert stored.enabled is True
    events = [(r.event, r.skill) async for r in AuditLog(store).read()]
    assert events == [
        ("scan", "hosts-manager"),
        ("signature", "hosts-manager"),
        ("install", "hosts-manager"),
        ("approval", "hosts-manager"),
    ]


async def test_signatures_decide_at_install_and_travel_beside_the_package(
    store: LocalArtifactStore, tmp_path: Path
) -> None:
    pem, public = generate_keypair()
    key_file = tmp_path / "ops.pem"
    key_file.write_bytes(pem)
    key = load_private_key(key_file)
    signed = write_skill(tmp_path / "src" / "signed-tool", files={"scripts/a.py": "print(1)\n"})
    sign_folder(signed, key, key_id="ops")
    changed = write_skill(tmp_path / "src" / "changed-tool", files={"scripts/a.py": "print(1)\n"})
    sign_folder(changed, key, key_id="ops")
    (changed / "scripts" / "a.py").write_text("print(2)\n")  # one byte, after signing
    unsigned = write_skill(tmp_path / "src" / "plain-tool")
    refusing = settings(trust={"keys": {"ops": public}, "unsigned": "refuse"}).skills
    allowing = settings(trust={"keys": {"ops": public}, "unsigned": "allow"}).skills
    stored = StoredSkills(store)

    [item] = await install_skills(
        stored, parse_source(str(signed)), admissions=Admissions(refusing, store)
    )
    sidecar = await store.stat(keys.skill_signature_key("signed-tool", item.version))
    assert sidecar is not None
    with pytest.raises(SignatureError, match="not signed"):
        await install_skills(
            stored, parse_source(str(unsigned)), admissions=Admissions(refusing, store)
        )
    for policy in (refusing, allowing):  # a changed package is refused whatever the policy
        with pytest.raises(SignatureError):
            await install_skills(
                stored, parse_source(str(changed)), admissions=Admissions(policy, store)
            )
    assert [r.name for r in await stored.list()] == ["signed-tool"]


async def test_the_api_checks_an_uploads_signature_and_shows_its_scan(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from mcp_manager.server import LoopbackServer
    from skillweave.api import skills
    from skillweave.api.app import create_api

    pem, public = generate_keypair()
    key_file = tmp_path / "ops.pem"
    key_file.write_bytes(pem)
    folder = write_skill(tmp_path / "src" / "shipped", files={"scripts/a.py": "print(1)\n"})
    archive = tmp_path / "shipped.zip"
    archive.write_bytes(build_package(folder))
    from skillweave.skills.signing import sign_archive, signature_bytes

    _, document = sign_archive(archive, load_private_key(key_file), key_id="ops")
    config = Settings(
        _env_file=None,
        api={"token": SecretStr("t")},
        skills={
            "dirs": [str(tmp_path / "none")],
            "uploaded_dir": str(tmp_path / "uploaded"),
            "trust": {"keys": {"ops": public}, "unsigned": "refuse"},
        },
    )
    store = LocalArtifactStore(tmp_path / "store")
    api = create_api(config, store=store, routers=[skills.router], on_startup=[skills.open_skills])
    async with LoopbackServer(api) as server:
        headers = {"Authorization": "Bearer t"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers) as client:
            files = {"file": ("shipped.zip", archive.read_bytes(), "application/zip")}
            unsigned = await client.post("/v1/skills/upload", files=files)
            forged = document.model_copy(update={"version": "0" * 64})
            mismatched = await client.post(
                "/v1/skills/upload",
                files=files,
                data={"signature": signature_bytes(forged).decode()},
            )
            accepted = await client.post(
                "/v1/skills/upload",
                files=files,
                data={"signature": signature_bytes(document).decode()},
            )
            detail = (await client.get("/v1/skills/shipped")).json()

    assert (unsigned.status_code, mismatched.status_code) == (403, 403)
    assert "not signed" in unsigned.json()["detail"]
    assert accepted.status_code == 201, accepted.text
    assert detail["signature"]["status"] == "valid"
    assert detail["signature"]["key_id"] == "ops"
    assert detail["scan"]["version"] == detail["version"]
    uploads = [r.event async for r in AuditLog(store).read(skill="shipped")]
    assert uploads == ["scan", "signature", "upload"]
