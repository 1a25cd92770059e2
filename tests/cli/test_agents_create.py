"""``skillweave agents create SPEC`` passes the spec's approvals, authoring and acquisition to
the API, as a user types it (a subprocess against the agents API on a loopback port): the
stored agent has them, and an acquisition naming a registry the server lacks is one line
naming the labels it has, with nothing stored."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from skillweave.cli.agents import agent_body
from skillweave.storage.local import LocalArtifactStore
from tests.api.test_agent_options import REGISTRIES, TOKEN, served_agents

SKILLWEAVE = str(Path(sys.executable).with_name("skillweave"))

SPEC = """\
name: asker
instruction: Find what you lack.
skills: [csv-tools]
approvals: {skills: [csv-tools], timeout_seconds: 120}
authoring: {enabled: true, max_drafts: 3}
acquisition: {enabled: true, registries: [REGISTRY], max_installs: 2, offer: always}
"""


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    store = LocalArtifactStore(tmp_path / "store")
    async for client in served_agents(tmp_path, store, REGISTRIES):
        yield client


async def _skillweave(api: httpx.AsyncClient, cwd: Path, *args: str) -> tuple[int, str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "SKILLWEAVE_API_URL": str(api.base_url).rstrip("/"),
        "SKILLWEAVE_API_TOKEN": TOKEN,
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    process = await asyncio.create_subprocess_exec(
        SKILLWEAVE,
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def test_the_spec_body_carries_them(tmp_path: Path) -> None:
    spec = tmp_path / "asker.yaml"
    spec.write_text(SPEC.replace("REGISTRY", "lab"), encoding="utf-8")
    body, notes = agent_body(spec)
    assert body["approvals"] == {"skills": ["csv-tools"], "timeout_seconds": 120}
    assert body["authoring"] == {"enabled": True, "max_drafts": 3}
    assert body["acquisition"] == {
        "enabled": True,
        "registries": ["lab"],
        "max_installs": 2,
        "offer": "always",
    }
    assert not [note for note in notes if "approvals" in note]


async def test_agents_create_stores_them(api: httpx.AsyncClient, tmp_path: Path) -> None:
    spec = tmp_path / "asker.yaml"
    spec.write_text(SPEC.replace("REGISTRY", "lab"), encoding="utf-8")
    code, out, err = await _skillweave(api, tmp_path, "agents", "create", str(spec))
    assert code == 0, err
    agent = (await api.get(f"/v1/agents/{out.strip()}")).json()
    assert agent["approvals"] == {"skills": ["csv-tools"], "timeout_seconds": 120}
    assert agent["authoring"] == {"enabled": True, "max_drafts": 3}
    assert agent["acquisition"]["registries"] == ["lab"]
    assert agent["acquisition"]["offer"] == "always"
    assert "not taken" not in err


async def test_a_registry_the_server_lacks_is_one_line_naming_those_it_has(
    api: httpx.AsyncClient, tmp_path: Path
) -> None:
    spec = tmp_path / "asker.yaml"
    spec.write_text(SPEC.replace("REGISTRY", "acme"), encoding="utf-8")
    code, out, err = await _skillweave(api, tmp_path, "agents", "create", str(spec))
    assert code != 0
    assert out == ""
    said = " ".join(err.split())
    assert "no registry labelled 'acme' in SKILLS__REGISTRIES; configured: 'team', 'lab'" in said
    assert "Traceback" not in err
    assert (await api.get("/v1/agents/")).json()["total"] == 0
