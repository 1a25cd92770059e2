"""The hostile scripts of the corpus (``tests/data/hostile/sandbox/``), run through a real
manager and its executor processes in each contained isolation mode.

The scripts belong to one skill with a configured secret. Each prints ``ESCAPED …`` for an
attack that worked; none may. Around them the test keeps what an attacker would aim at: a host
process holding a canary in its environment and command line, a loopback service, a
world-readable host file, host folders whose paths no sandbox may show (`_host_paths`; the
workspace's own mount is the one documented exception, ``sandbox_executor.isolation``). After
each run: no process of it is left, the secret is in no result, stored log or store file in
any form the masker claims (:data:`SECRET_FORMS`), and a case that names an error failed with
it and kept no outputs. The manager's ``SANDBOX__ISOLATION`` is the mode under test, which
also shows that it reaches the executors the manager starts.

The skill may reach one destination (issue 38): a storing upstream on the host's loopback
(``tests.mcp_manager.egress_support``, which keeps every byte it receives), declared under
``metadata.network``, approved as private for the skill's version, with a bound
``Authorization: Bearer`` credential from a secret the scripts never hold; the manager's egress
proxy looks names up through a resolver that logs every name it is asked and resolves none
itself. After every run: no name but that destination's was asked, every upstream connection
holds exactly one request, the proxy's, with the credential once in its head and nowhere else,
and the credential is in no result or store file. For the *egress* cases (which end with
``EGRESS sent=N refused=M``): one egress record per request, every refused one among them, and
one upstream connection per request the proxy forwarded.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import pytest_asyncio
from pydantic import SecretStr

from skillweave.config import Settings
from skillweave.sandbox.models import ExecuteRequest, ExecutionLimits, ExecutionResult
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill
from tests.integration.harness import Manager, eventually
from tests.mcp_manager.egress_support import Upstream, storing_upstream
from tests.sandbox_executor.support import assert_eventually, processes_with

CORPUS = Path(__file__).resolve().parents[1] / "data" / "hostile"
CASES: list[dict[str, Any]] = json.loads((CORPUS / "sandbox.json").read_text(encoding="utf-8"))
SKILL = "hostile-scripts"
SECRET = secrets.token_urlsafe(24)
TOKEN = "hostile-sandbox-token"
_RAW = SECRET.encode()
UPSTREAM_TOKEN = secrets.token_urlsafe(24)
"""The credential the proxy adds for the upstream (a secret bound to it: the script's never)."""
SECRET_FORMS: dict[str, str] = {
    "raw": SECRET,
    "json": json.dumps(SECRET)[1:-1],
    "url": quote(SECRET, safe=""),
    "base64": base64.b64encode(_RAW).decode(),
    "base64url": base64.urlsafe_b64encode(_RAW).decode(),
    "hex": _RAW.hex(),
    "HEX": _RAW.hex().upper(),
    "base32": base64.b32encode(_RAW).decode(),
    "base32-unpadded": base64.b32encode(_RAW).decode().rstrip("="),
    "reversed": SECRET[::-1],
    "upper": SECRET.upper(),
    "lower": SECRET.lower(),
}
"""Every form of the secret the masker says it masks (``skillweave.telemetry.masker``), written
out here rather than asked of the masker."""
ASYNC = pytest.mark.asyncio(loop_scope="module")
pytestmark = pytest.mark.timeout(300)


@dataclass
class Host:
    """What the scripts aim at on the host."""

    canary: str
    host_file: Path


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    canary = f"CANARY-{uuid.uuid4().hex}"
    folder = tmp_path_factory.mktemp("host")
    host_file = folder / "readable.txt"
    host_file.write_text("a host file\n", encoding="utf-8")
    host_file.chmod(0o644)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", canary],
        env={**os.environ, "MODEL__API_KEY": canary},
    )
    try:
        yield Host(canary, host_file)
    finally:
        holder.kill()
        holder.wait()


@dataclass
class Egress:
    """The one destination the skill may reach, and every name the managers' egress proxies
    asked their resolver (shared by both modes' managers)."""

    upstream: Upstream
    asked: list[str]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def egress() -> AsyncIterator[Egress]:
    async with storing_upstream() as served:
        yield Egress(served, [])


@pytest.fixture(scope="module", params=["bubblewrap", "namespaces"])
def isolation(request: pytest.FixtureRequest) -> str:
    """The contained isolation mode under test, the manager's ``SANDBOX__ISOLATION``."""
    mode: str = request.param
    if mode == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed; the namespaces cases run instead")
    return mode


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def manager(
    isolation: str,
    tmp_path_factory: pytest.TempPathFactory,
    egress: Egress,
) -> AsyncIterator[Manager]:
    root = tmp_path_factory.mktemp(f"manager-{isolation}")
    library = root / "library"
    scripts = {
        f"scripts/{case['file']}": (CORPUS / "sandbox" / case["file"]).read_text(encoding="utf-8")
        for case in CASES
    }
    destination = f"127.0.0.1:{egress.upstream.port}"
    write_skill(
        library / SKILL,
        description="Hostile scripts. Use when testing containment.",
        extra=f'metadata:\n  network:\n    "{destination}": a storing upstream',
        files=scripts,
    )
    registry = SkillRegistry.from_scan(SkillScanner([library]).scan())
    approval = {
        "destinations": [destination],
        "private": [destination],
        "version": registry.get(SKILL).version,
    }
    binding = {
        "destination": destination,
        "header": "Authorization",
        "value": "Bearer ${UPSTREAM_KEY}",
    }

    async def logging_resolver(host: str, port: int) -> list[str]:
        egress.asked.append(host)
        return ["127.0.0.1"] if host == "127.0.0.1" else []  # no real query, ever

    settings = Settings(
        _env_file=None,
        sandbox={
            "manager_token": SecretStr(TOKEN),
            "isolation": isolation,
            "pool_target": 1,
            "pool_max": 2,
            "skill_secrets": {
                SKILL: {
                    "HOSTILE_KEY": SecretStr(SECRET),
                    "UPSTREAM_KEY": SecretStr(UPSTREAM_TOKEN),
                }
            },
            "egress": {"approvals": {SKILL: approval}, "credentials": {SKILL: [binding]}},
        },
        skills={"dirs": [str(library)], "uploaded_dir": str(root / "uploaded")},
    )
    store = LocalArtifactStore(root / "store")
    async with Manager.serving(
        settings, store=store, registry=registry, publish=True, egress_resolver=logging_resolver
    ) as served:
        yield served


def _args(case: dict[str, Any], host: Host, *, port: int, marker: str, upstream: int) -> list[str]:
    values = {
        "{upstream}": f"127.0.0.1:{upstream}",
        "{canary}": host.canary,
        "{port}": str(port),
        "{host_file}": str(host.host_file),
        "{marker}": marker,
        "{host_paths}": json.dumps(_host_paths(host)),
    }
    return [values.get(arg, arg) for arg in case["args"]]


def _host_paths(host: Host) -> list[str]:
    """Host folders no sandbox may show: the executors' folders (by prefix: local executors
    make theirs in the temp folder), the executor's install and interpreter, this test's
    temp folder."""
    executors = {f"{temp}/skillweave-executor-" for temp in ("/tmp", tempfile.gettempdir())}
    install = {str(Path(__file__).resolve().parents[2]), sys.prefix, sys.base_prefix}
    return sorted({*executors, *install, str(host.host_file.parent.parent)} - {"/usr"})


def _assert_skipped(result: ExecutionResult, reasons: list[str]) -> None:
    """`result` skipped one output for each of `reasons` (a part of its reason), no more."""
    left = [item.reason for item in result.skipped_outputs]
    assert len(left) == len(reasons), result.skipped_outputs
    for reason in reasons:
        match = next((why for why in left if reason in why), None)
        assert match is not None, f"no output skipped for {reason!r}: {result.skipped_outputs}"
        left.remove(match)


def _left_behind(marker: str) -> list[Path]:
    """The folders a script named `marker` (top of its workspace or of outputs/) still on
    the host, in any executor's folder (local executors make theirs in the temp folder)."""
    found: list[Path] = []
    for temp in {Path("/tmp"), Path(tempfile.gettempdir())}:
        for executor in _listed(temp, "skillweave-executor-"):
            for attempt in _listed(executor, "attempt-"):
                for where in ("workspace", "workspace/outputs"):
                    found += [p for p in _listed(attempt / where, marker) if p.name == marker]
    return found


def _listed(folder: Path, prefix: str) -> list[Path]:
    """What `folder` holds whose name starts with `prefix` (nothing if it went meanwhile:
    other runs' folders come and go while this looks)."""
    try:
        return [folder / name for name in os.listdir(folder) if name.startswith(prefix)]
    except OSError:
        return []


async def _stored_text(manager: Manager, result: ExecutionResult) -> str:
    texts = []
    for ref in (result.stdout_ref, result.stderr_ref):
        if ref is not None:
            texts.append((await manager.store.get_bytes(ref)).decode("utf-8", "replace"))
    return "\n".join(texts)


@ASYNC
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
async def test_a_hostile_script_stays_contained(
    case: dict[str, Any], manager: Manager, isolation: str, host: Host, egress: Egress
) -> None:
    upstream = egress.upstream
    marker = f"hostile-marker-{uuid.uuid4().hex}"
    reached_before, asked_before = len(upstream.connections), len(egress.asked)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        request = ExecuteRequest(
            execution_id=f"hostile/{isolation}/{case['id']}",
            run_id=f"hostile-{isolation}",
            skill=SKILL,
            version=manager.version(SKILL),
            script=f"scripts/{case['file']}",
            args=_args(
                case, host, port=listener.getsockname()[1], marker=marker, upstream=upstream.port
            ),
            limits=ExecutionLimits(timeout_seconds=60, **case["limits"]),
        )
        ran_before = await manager.executions()
        result = await manager.client.execute(request)
        ran = await manager.executions() - ran_before
        listener.settimeout(0.1)
        with pytest.raises(TimeoutError):
            listener.accept()

    assert result.isolation == isolation
    assert "ESCAPED" not in result.stdout, result.stdout
    if case["error"]:
        assert result.error is not None, result
        assert case["error"] in result.error
        assert result.outputs == []
    else:
        assert result.status == "succeeded", (result.error, result.stderr[-2000:])
        assert "CONTAINED" in result.stdout
    assert_eventually(lambda: processes_with(marker) == [], timeout=5, what="no leftover")
    assert ran == 1, f"the script was handed to a sandbox {ran} times"
    if case.get("kept") is not None:
        assert sorted(output.path for output in result.outputs) == sorted(case["kept"])
        _assert_skipped(result, case["skipped"])
    assert_eventually(
        lambda: _left_behind(marker) == [], timeout=15, what="no folder of the run left"
    )

    shown = "\n".join([result.stdout, result.stderr, result.error or ""])
    stored = await _stored_text(manager, result)
    files = {p: p.read_bytes() for p in manager.store.root.rglob("*") if p.is_file()}
    for name, form in SECRET_FORMS.items():
        assert form not in shown, f"the result shows the secret ({name})"
        assert form not in stored, f"a stored log holds the secret ({name})"
        for path, data in files.items():
            assert form.encode() not in data, f"{path} holds the secret ({name})"
    assert UPSTREAM_TOKEN not in shown + stored, "the result shows the upstream's credential"
    for path, data in files.items():
        assert UPSTREAM_TOKEN.encode() not in data, f"{path} holds the upstream's credential"

    _assert_the_upstream_got_only_the_proxys_requests(upstream)
    asked = sorted(set(egress.asked[asked_before:]))
    assert set(asked) <= {"127.0.0.1"}, f"names looked up: {asked}"
    forwarded = upstream.connections[reached_before:]
    if case.get("egress"):
        sent, refused = _egress_counts(result.stdout)
        records = await eventually(
            lambda: _egress_records(manager, request), timeout=10, what="the egress records"
        )
        assert len(records) == sent, records  # one a request
        assert all(r["status"] for r in records if not r["allowed"]), records
        assert sum(not r["allowed"] for r in records) == refused, records
        assert len(forwarded) == sent - refused
    else:
        assert forwarded == [], "a run that made no request reached the upstream"


def _assert_the_upstream_got_only_the_proxys_requests(upstream: Upstream) -> None:
    """Each upstream connection holds one request, as the proxy wrote it: the credential once,
    in its head, nowhere else; no second request after it. Nothing stored holds it."""
    credential = f"\r\nAuthorization: Bearer {UPSTREAM_TOKEN}\r\n".encode()
    for received in upstream.connections:
        head, _, after = bytes(received).partition(b"\r\n\r\n")
        assert (head + b"\r\n").count(credential) == 1, head
        assert UPSTREAM_TOKEN.encode() not in after
        assert b" HTTP/1.1\r\n" not in after, "a second request reached the upstream"
    assert all(UPSTREAM_TOKEN.encode() not in body for body in upstream.bodies)


def _egress_counts(stdout: str) -> tuple[int, int]:
    """The requests an egress case sent and those not answered 200, from its last line."""
    line = next(line for line in reversed(stdout.splitlines()) if line.startswith("EGRESS "))
    fields = dict(field.split("=") for field in line.split()[1:])
    return int(fields["sent"]), int(fields["refused"])


async def _egress_records(manager: Manager, request: ExecuteRequest) -> list[dict[str, Any]]:
    """The run's egress records as the manager stored them (none yet: empty)."""
    key = keys.egress_log_key(request.run_id, request.execution_id)
    records: list[dict[str, Any]] = []
    for ref in await manager.store.list(key):
        if ref.key == key:
            records += [
                json.loads(line) for line in (await manager.store.get_bytes(ref)).splitlines()
            ]
    return records
