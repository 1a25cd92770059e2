"""Network egress on the kubernetes backend (issue 26): a sandbox pod's executor has no sandbox
of its own (isolation ``none``; the pod's network namespace and its NetworkPolicy are the
boundary), so it serves the run's proxy on the pod's loopback itself and bridges it to the
manager's egress gateway at the address the manager advertises. On the fake cluster the pods
are real executor processes; the approved skill reaches the fake "external API" through the
gateway, which adds the bearer token its script never holds, and the gateway refuses what was
not approved. (The NetworkPolicy that lets pods reach only the gateway is checked in
``tests/deploy/test_manifests.py``.)"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionResult
from skillweave.sandbox.packages import publish_library
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager
from tests.integration.kubernetes.cluster import FakeCluster
from tests.integration.kubernetes.conftest import kubernetes_settings
from tests.integration.manager.test_egress import CURL, FETCH, NODE
from tests.mcp_manager.egress_support import external_api

pytestmark = pytest.mark.timeout(120)

TOKEN = "s3cret-pod-token-4567"


async def _run(manager: Manager, skill: SkillRegistry, script: str, url: str) -> ExecutionResult:
    found = skill.get("sales-report")
    return await manager.client.execute(
        ExecuteRequest(
            execution_id=f"pod-egress/{time.monotonic_ns()}",
            run_id="run-pod-egress",
            skill=found.name,
            version=found.version,
            script=script,
            args=[url],
        )
    )


async def test_a_pods_script_reaches_its_approved_api_through_the_managers_gateway(
    cluster: FakeCluster, store: LocalArtifactStore, tmp_path: Path
) -> None:
    async with external_api(TOKEN) as api:
        destination = f"127.0.0.1:{api}"
        write_skill(
            tmp_path / "skills" / "sales-report",
            description="Reads the sales API. Use when sales figures are needed.",
            extra=f'metadata:\n  network:\n    "{destination}": the sales API',
            files={"scripts/fetch.py": FETCH, "scripts/fetch.sh": CURL, "scripts/fetch.js": NODE},
        )
        library = SkillRegistry.from_scan(SkillScanner([tmp_path / "skills"]).scan())
        await publish_library(store, library)
        base = kubernetes_settings(cluster, manager_id="manager-egress", target=1, maximum=4)
        sandbox = base.sandbox.model_dump(mode="python")
        sandbox["manager_token"] = base.sandbox.manager_token
        sandbox["skill_secrets"] = {"sales-report": {"SALES_TOKEN": SecretStr(TOKEN)}}
        sandbox["egress"] = {
            "approvals": {
                "sales-report": {"destinations": [destination], "private": [destination]}
            },
            "credentials": {
                "sales-report": [
                    {
                        "destination": destination,
                        "header": "Authorization",
                        "value": "Bearer ${SALES_TOKEN}",
                    }
                ]
            },
        }
        # The manager's own library holds the skill: its secrets bind to that version.
        settings = Settings(
            _env_file=None, sandbox=sandbox, skills={"dirs": [str(tmp_path / "skills")]}
        )
        async with Manager.serving(settings, store=store, registry=library) as manager:
            url = f"http://{destination}/q4"
            by_python = await _run(manager, library, "scripts/fetch.py", url)
            by_curl = await _run(manager, library, "scripts/fetch.sh", url)
            by_node = await _run(manager, library, "scripts/fetch.js", url)
            wrong_port = await _run(
                manager, library, "scripts/fetch.py", f"http://127.0.0.1:{api + 1}/"
            )

    assert by_python.status == "succeeded", by_python.stderr
    assert by_python.stdout.splitlines() == ["token in env: False", "200 figures for /q4"]
    assert by_curl.stdout.strip() == "figures for /q4 exit=0", by_curl.stderr
    assert by_node.stdout.strip() == "200 figures for /q4", by_node.stdout + by_node.stderr
    assert wrong_port.stdout.splitlines()[1].startswith("403 skillweave egress refused")

    records = []
    for ref in await store.list("runs/run-pod-egress/"):
        if ref.key.endswith("/egress.jsonl"):
            records += [json.loads(line) for line in (await store.get_bytes(ref)).splitlines()]
    assert sorted(r["allowed"] for r in records) == [False, True, True, True]
    assert all(TOKEN not in json.dumps(r) for r in records)
