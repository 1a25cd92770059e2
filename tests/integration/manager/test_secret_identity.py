"""Secrets follow identity (``skillweave.sandbox.bindings``), through a real manager and real
sandboxes in both contained isolation modes: what ``SANDBOX__SKILL_SECRETS`` holds for
``probe-a`` reaches a run of exactly ``probe-a`` at a version its owner holds, and nothing else.

The attacks: a directory skill named ``PROBE-A`` (or ``ｐｒｏｂｅ-ａ``) in the default
``./.agents/skills`` library of the manager's working folder; a package published under
``probe-a`` by something that does not own the name (as an agent's draft or a worker with
another library would); a configured name no owner is known for. Each script prints its whole
environment; a secret that arrived shows as ``PROBE_TOKEN = ***`` (masked).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import SkillScanner, build_package
from skillweave.skills.names import NOT_BOUND
from skillweave.skills.stored import StoredSkills
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(300)

TOKEN = "identity-manager-token"
SECRET = secrets.token_urlsafe(18)
ENV = "import os\nfor k in sorted(os.environ):\n    print(k, '=', os.environ[k])\n"
ARRIVED = "PROBE_TOKEN = ***"


@pytest.fixture(params=["bubblewrap", "namespaces"])
def isolation(request: pytest.FixtureRequest) -> str:
    mode: str = request.param
    if mode == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return mode


def _settings(isolation: str, secrets_of: list[str], **skills: object) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(TOKEN),
            "isolation": isolation,
            "pool_target": 1,
            "pool_max": 2,
            "skill_secrets": {name: {"PROBE_TOKEN": SecretStr(SECRET)} for name in secrets_of},
        },
        **({"skills": skills} if skills else {}),
    )


def _request(skill: str, version: str, tag: str) -> ExecuteRequest:
    return ExecuteRequest(
        execution_id=f"identity/{tag}/{secrets.token_hex(4)}",
        run_id="run-identity",
        skill=skill,
        version=version,
        script="scripts/env.py",
    )


def _env_skill(folder: Path, name: str, note: str = "") -> Path:
    return write_skill(
        folder,
        name=name,
        description="Prints its environment. Use when a test looks at a script's secrets.",
        body=f"# Env\n\n{note}\n",
        files={"scripts/env.py": ENV},
    )


async def _unbound_records(store: LocalArtifactStore, skill: str) -> list[str]:
    return [
        str(record.details["unbound"])
        async for record in AuditLog(store).read(skill=skill, event="execution")
        if "unbound" in record.details
    ]


@pytest.mark.parametrize(("name", "gets_it"), [("probe-a", True), ("PROBE-A", False)])
async def test_the_default_library_in_the_working_folder_binds_secrets_to_the_canonical_name(
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    isolation: str,
    name: str,
    gets_it: bool,
) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    _env_skill(work / ".agents" / "skills" / name, name)
    home.mkdir()
    monkeypatch.chdir(work)  # SKILLS__DIRS' default ./.agents/skills is this one
    monkeypatch.setenv("HOME", str(home))
    caplog.set_level(logging.WARNING)
    store = LocalArtifactStore(tmp_path / "store")
    settings = _settings(isolation, ["probe-a"])  # SKILLS__* all default
    async with Manager.serving(settings, store=store, publish=True) as manager:
        skill = SkillScanner(settings.skills.resolved_dirs()).scan().skills[name]
        result = await manager.client.execute(_request(name, skill.version, "default"))
    assert result.status == "succeeded", result
    assert result.isolation == isolation
    assert (ARRIVED in result.stdout) is gets_it, result.stdout
    assert SECRET not in result.stdout
    unbound = await _unbound_records(store, name)
    if gets_it:
        assert not unbound
    else:
        assert unbound == [NOT_BOUND]
        flagged = [r.getMessage() for r in caplog.records if NOT_BOUND in r.getMessage()]
        assert any("PROBE-A" in line for line in flagged), flagged  # loading and the run


async def test_a_compatibility_form_of_the_name_is_flagged_and_never_runs_with_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    name = "ｐｒｏｂｅ-ａ"
    work, home = tmp_path / "work", tmp_path / "home"
    _env_skill(work / ".agents" / "skills" / name, name)
    home.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    caplog.set_level(logging.WARNING)
    store = LocalArtifactStore(tmp_path / "store")
    settings = _settings("namespaces", ["probe-a"])
    async with Manager.serving(settings, store=store, publish=True) as manager:
        skill = SkillScanner(settings.skills.resolved_dirs()).scan().skills[name]
        answer = await manager.http.post(
            "/sandbox/execute",
            json=_request(name, skill.version, "fullwidth").model_dump(mode="json"),
        )
    assert answer.status_code == 422, answer.text  # no key holds the name: nothing runs
    assert SECRET not in answer.text
    flagged = [r.getMessage() for r in caplog.records if NOT_BOUND in r.getMessage()]
    assert any(name in line for line in flagged), flagged


async def test_secrets_reach_only_the_versions_the_names_owner_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, isolation: str
) -> None:
    library = tmp_path / "library"
    _env_skill(library / "probe-a", "probe-a")
    elsewhere = tmp_path / "elsewhere"
    _env_skill(elsewhere / "probe-a", "probe-a", note="Not the owner's: another source.")
    _env_skill(elsewhere / "stray-a", "stray-a")
    _env_skill(tmp_path / "upload" / "upl-a", "upl-a")
    _env_skill(elsewhere / "upl-a", "upl-a", note="Not the upload's.")
    store = LocalArtifactStore(tmp_path / "store")
    uploaded = await StoredSkills(store).add_package(build_package(tmp_path / "upload" / "upl-a"))
    others = SkillScanner([elsewhere]).scan().skills
    for skill in others.values():  # what a worker with its own library or a draft publishes
        await publish_skill(store, skill)
    caplog.set_level(logging.WARNING, logger="skillweave.manager")
    settings = _settings(
        isolation,
        ["probe-a", "stray-a", "upl-a"],
        dirs=[str(library)],
        uploaded_dir=str(tmp_path / "uploaded"),
    )
    async with Manager.serving(settings, store=store, publish=True) as manager:
        owned = SkillScanner([library]).scan().skills["probe-a"]
        runs = {
            "owner's directory version": (owned.name, owned.version, True),
            "another source's version": ("probe-a", others["probe-a"].version, False),
            "uploaded version": ("upl-a", uploaded.latest, True),
            "not the upload's version": ("upl-a", others["upl-a"].version, False),
            "no owner known": ("stray-a", others["stray-a"].version, False),
        }
        assert owned.version != others["probe-a"].version
        assert uploaded.latest != others["upl-a"].version
        results = {
            what: await manager.client.execute(_request(skill, version, what.replace(" ", "-")))
            for what, (skill, version, _) in runs.items()
        }
    for what, (_, _, gets_it) in runs.items():
        result = results[what]
        assert result.status == "succeeded", (what, result)
        assert (ARRIVED in result.stdout) is gets_it, (what, result.stdout)
        assert SECRET not in result.stdout
    refused = [r.getMessage() for r in caplog.records if "runs without secrets" in r.getMessage()]
    assert len(refused) == 3, refused
    assert len(await _unbound_records(store, "probe-a")) == 1
    assert len(await _unbound_records(store, "upl-a")) == 1
    assert len(await _unbound_records(store, "stray-a")) == 1


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SANDBOX__SKILL_SECRETS", {"PROBE-A": {"PROBE_TOKEN": SECRET}}),
        ("SANDBOX__EGRESS__APPROVALS", {"PROBE-A": {"destinations": ["api.example:443"]}}),
        (
            "SANDBOX__EGRESS__CREDENTIALS",
            {"ｐｒｏｂｅ-ａ": [{"destination": "api.example:443", "header": "X-K", "value": "v"}]},
        ),
    ],
)
def test_a_configured_name_that_is_not_canonical_stops_the_manager_in_one_line(
    tmp_path: Path, variable: str, value: dict[str, object]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "manager"],
        cwd=tmp_path,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "SANDBOX__MANAGER_TOKEN": TOKEN,
            "SANDBOX__PORT": "9",  # never listened on: it stops before
            variable: json.dumps(value),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(f"error: {variable} names ")
    assert "write it as 'probe-a'" in errors[0]
    assert done.stderr.rstrip().endswith(errors[0])  # the last line: nothing started after it
