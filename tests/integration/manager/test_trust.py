"""What the manager runs (issue 27): only a package whose files are the version it is stored
under (one changed byte in the store is refused), only a version the signature policy admits
(``skills.trust``; the signature travels beside the package), and every run recorded in the
audit log with its arguments' digest, never the arguments."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.skills.signing import generate_keypair, sign_version, signature_bytes
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(120)


def _request(registry: SkillRegistry, name: str, *args: str) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=f"trust/{name}/{time.monotonic_ns()}",
        run_id="run-trust",
        skill=name,
        version=registry.get(name).version,
        script="scripts/hello.py",
        args=list(args),
    )


def _tampered(package: bytes) -> bytes:
    """The same package with one byte of its script changed."""
    source = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("hello.py"):
                data = data.replace(b"hello", b"hellO")
            target.writestr(info, data)
    return out.getvalue()


async def test_a_package_changed_in_the_store_is_not_run(tmp_path: Path) -> None:
    library = tmp_path / "library"
    write_skill(library / "greeter", files={"scripts/hello.py": "print('hello')\n"})
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, registry)
    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr("t" * 16)})
    async with Manager.serving(settings, store=store, registry=registry) as manager:
        ran = await manager.client.execute(_request(registry, "greeter"))
        key = keys.skill_package_key("greeter", registry.get("greeter").version)
        await store.put_bytes(key, _tampered(await store.get_bytes(await store.stat(key))))
        # A fresh manager: nothing cached from the honest package.
    async with Manager.serving(settings, store=store, registry=registry) as manager:
        with pytest.raises(ExecutionRejectedError, match="changed after it was published"):
            await manager.client.execute(_request(registry, "greeter"))
    assert ran.stdout.strip() == "hello"


async def test_the_signature_policy_decides_what_runs_and_every_run_is_audited(
    tmp_path: Path,
) -> None:
    library = tmp_path / "library"
    for name in ("signed", "unsigned", "resigned"):
        write_skill(library / name, files={"scripts/hello.py": f"print('hello from {name}')\n"})
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    store = LocalArtifactStore(tmp_path / "store")
    await publish_library(store, registry)
    pem, public = generate_keypair()
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(pem, password=None)
    signed = registry.get("signed")
    good = sign_version(key, name="signed", version=signed.version, key_id="ops")  # type: ignore[arg-type]
    await store.put_bytes(keys.skill_signature_key("signed", signed.version), signature_bytes(good))
    # A signature of another version, beside this one: the package is not what was signed.
    other = sign_version(key, name="resigned", version="0" * 64, key_id="ops")  # type: ignore[arg-type]
    resigned = registry.get("resigned")
    await store.put_bytes(
        keys.skill_signature_key("resigned", resigned.version), signature_bytes(other)
    )
    settings = Settings(
        _env_file=None,
        sandbox={"manager_token": SecretStr("t" * 16)},
        skills={"trust": {"keys": {"ops": public}, "unsigned": "refuse"}},
    )
    async with Manager.serving(settings, store=store, registry=registry) as manager:
        ok = await manager.client.execute(_request(registry, "signed", "s3cret-arg"))
        with pytest.raises(
            ExecutionRejectedError, match=r"unsigned|no signature|not signed"
        ) as unsigned:
            await manager.client.execute(_request(registry, "unsigned"))
        with pytest.raises(ExecutionRejectedError) as mismatched:
            await manager.client.execute(_request(registry, "resigned"))

    assert ok.stdout.strip() == "hello from signed"
    assert unsigned.value.status_code == 403
    assert mismatched.value.status_code == 403
    records = [record async for record in AuditLog(store).read(event="execution")]
    assert [(r.skill, r.details["script"]) for r in records] == [("signed", "scripts/hello.py")]
    assert "args_digest" in records[0].details
    assert "s3cret-arg" not in str(records[0].model_dump())
    assert (await AuditLog(store).verify()).intact
