"""Budgets before work (issue 20, class 4) on real servers, each a process of its own on
loopback: the control API (``skillweave api``), the MCP manager (``skillweave manager``) and a
sandbox executor (``python -m sandbox_executor``).

For each: a 400 MiB body without a token is answered 401 while the client has sent a few KiB
of it; a client pushing that body as fast as it can is cut off after a few MiB, and the
server's peak RSS does not grow; with the token, a body over the cap is 413, declared or
chunked; a wrong or Basic token is 401; ordinary requests still work. The requests are written
on raw sockets, so that the test, not an HTTP client, decides how much of a body is sent.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import select
import socket
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import pytest

from tests.integration.conftest import StartExecutor
from tests.reliability.stack import Service
from tests.sandbox_executor.support import AUTH as EXECUTOR_AUTH
from tests.sandbox_executor.support import TOKEN as EXECUTOR_TOKEN
from tests.sandbox_executor.support import execute_form, make_package

KIB: Final = 1024
MIB: Final = 1024 * KIB
HUGE: Final = 400 * MIB
"""The body of the review's finding: 400 MiB took the manager from 158 MB to 1 GB of RSS."""
FIRST: Final = 16 * KIB
"""What a stalling client sends of its body before it waits for the answer."""
PUSHED_AT_MOST: Final = 64 * MIB
"""A client pushing a refused body is cut off before this (socket buffers, not the body)."""
PEAK_GROWTH_AT_MOST_KIB: Final = 32 * 1024
"""How much a refused 400 MiB body may raise the server's peak RSS (VmHWM)."""
API_JSON_CAP: Final = 64 * KIB
API_UPLOAD_CAP: Final = 1 * MIB
MANAGER_CAP: Final = 64 * KIB
EXECUTOR_CAP: Final = 1 * MIB  # the least EXECUTOR__MAX_BODY_BYTES takes


@dataclass(frozen=True)
class Served:
    """A service process: where it listens and the path of it that takes a body."""

    name: str
    port: int
    pid: int
    token: str
    path: str
    content_type: str
    cap: int


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, object]:
        assert self.headers["content-type"] == "application/problem+json", self.headers
        return json.loads(self.body)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _head(served: Served, *, authorization: str | None, length: int | None) -> bytes:
    lines = [
        f"POST {served.path} HTTP/1.1",
        f"Host: 127.0.0.1:{served.port}",
        f"Content-Type: {served.content_type}",
    ]
    if authorization is not None:
        lines.append(f"Authorization: {authorization}")
    if length is None:
        lines.append("Transfer-Encoding: chunked")
    else:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _connect(served: Served) -> socket.socket:
    return socket.create_connection(("127.0.0.1", served.port), timeout=10)


def _read_answer(sock: socket.socket) -> Answer:
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise AssertionError(f"the connection ended before an answer: {data!r}")
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        more = sock.recv(65536)
        if not more:
            break
        body += more
    return Answer(int(status_line.split()[1]), headers, body[:length])


def stall(served: Served, *, authorization: str | None, length: int = HUGE) -> Answer:
    """Declare a `length`-byte body, send the head and its first :data:`FIRST` bytes in one
    write, then wait for the answer without sending more."""
    with _connect(served) as sock:
        first = b"x" * min(FIRST, length)
        sock.sendall(_head(served, authorization=authorization, length=length) + first)
        return _read_answer(sock)


@dataclass(frozen=True)
class Pushed:
    sent: int
    """Bytes of the body sent before the server ended the connection (all, if it did not)."""
    answer: Answer | None
    """The answer read after the push, if the connection still gave one."""


def push(served: Served, *, authorization: str | None, length: int = HUGE) -> Pushed:
    """Send a `length`-byte body as fast as the server takes it, then read the answer."""
    block = b"\0" * MIB
    sent = 0
    with _connect(served) as sock:
        sock.sendall(_head(served, authorization=authorization, length=length))
        try:
            while sent < length:
                sock.sendall(block[: min(len(block), length - sent)])
                sent += min(len(block), length - sent)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except TimeoutError as exc:  # neither reading nor answering: also a failure
            raise AssertionError(f"{served.name} stopped reading after {sent} bytes") from exc
        try:
            answer: Answer | None = _read_answer(sock)
        except (AssertionError, ConnectionResetError):
            answer = None
    return Pushed(sent, answer)


def chunked(served: Served, *, authorization: str, total: int, chunk: int = 32 * KIB) -> Answer:
    """Stream `total` bytes as chunks of no declared length, waiting briefly after each for an
    answer (so that nothing is left unread in the socket when the server answers)."""
    with _connect(served) as sock:
        sock.sendall(_head(served, authorization=authorization, length=None))
        if served.content_type.startswith("multipart/"):  # a part the parser reads on into
            part = (
                b'--x\r\nContent-Disposition: form-data; name="package"; filename="p.zip"\r\n'
                b"Content-Type: application/zip\r\n\r\n"
            )
            sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        sent = 0
        while sent < total:
            size = min(chunk, total - sent)
            sock.sendall(f"{size:x}\r\n".encode() + b"x" * size + b"\r\n")
            sent += size
            if select.select([sock], [], [], 0.05)[0]:
                break
        else:
            sock.sendall(b"0\r\n\r\n")
        return _read_answer(sock)


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def peak_growth_kib(pid: int, work: object) -> tuple[int, int, int]:
    """(RSS before, peak RSS after, growth of the peak) of process `pid` around `work()`."""
    before = _status_kib(pid, "VmRSS")
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # peak := current
        baseline = before
    except OSError:
        baseline = _status_kib(pid, "VmHWM")
    work()  # type: ignore[operator]
    time.sleep(0.2)
    peak = _status_kib(pid, "VmHWM")
    return before, peak, peak - baseline


def _bearer(token: str) -> str:
    return f"Bearer {token}"


def _passthrough() -> dict[str, str]:
    return {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}


async def _healthy(port: int) -> bool:
    try:
        async with httpx.AsyncClient(timeout=2) as http:
            return (await http.get(f"http://127.0.0.1:{port}/healthz")).status_code == 200
    except httpx.HTTPError:
        return False


def _serve(name: str, argv: list[str], env: dict[str, str], root: Path, port: int) -> Service:
    async def ready(_: object) -> bool:
        return await _healthy(port)

    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    service = Service(name, argv, env, logs, ready)  # type: ignore[arg-type]
    asyncio.run(service.start())
    return service


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Served]]:
    """``skillweave manager`` (no warm sandboxes) and ``skillweave api`` (direct engine, on that
    manager), with small caps."""
    root = tmp_path_factory.mktemp("gate")
    (root / "skills").mkdir()
    (root / "model.yaml").write_text('turns:\n  - say: "done"\n')
    manager_port, api_port = _free_port(), _free_port()
    common = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "STORAGE__LOCAL_DIR": str(root / "store"),
        "SKILLS__DIRS": json.dumps([str(root / "skills")]),
        "SANDBOX__MANAGER_TOKEN": "manager-token",
        **_passthrough(),
    }
    manager = _serve(
        "manager",
        ["manager"],
        {
            **common,
            "SANDBOX__PORT": str(manager_port),
            "SANDBOX__POOL_TARGET": "0",
            "SANDBOX__MANAGER_MAX_BODY_BYTES": str(MANAGER_CAP),
        },
        root,
        manager_port,
    )
    try:
        api = _serve(
            "api",
            ["api"],
            {
                **common,
                "API__PORT": str(api_port),
                "API__TOKEN": "api-token",
                "WORKFLOW__EXECUTION_ENGINE": "direct",  # its runs on that manager, here
                "API__EXTRA_TOKENS": json.dumps(["api-old-token"]),
                "API__MAX_JSON_BYTES": str(API_JSON_CAP),
                "API__MAX_UPLOAD_BYTES": str(API_UPLOAD_CAP),
                "MODEL__PROVIDER": "scripted",
                "MODEL__NAME": str(root / "model.yaml"),
                "SANDBOX__MANAGER_URL": f"http://127.0.0.1:{manager_port}",
                "SKILLS__UPLOADED_DIR": str(root / "uploaded"),
            },
            root,
            api_port,
        )
        try:
            assert manager.process is not None
            assert api.process is not None
            yield {
                "manager": Served(
                    "manager",
                    manager_port,
                    manager.process.pid,
                    "manager-token",
                    "/sandbox/execute",
                    "application/json",
                    MANAGER_CAP,
                ),
                "mcp": Served(
                    "manager /mcp",
                    manager_port,
                    manager.process.pid,
                    "manager-token",
                    "/mcp",
                    "application/json",
                    MANAGER_CAP,
                ),
                "api": Served(
                    "api",
                    api_port,
                    api.process.pid,
                    "api-token",
                    "/v1/agents/",
                    "application/json",
                    API_JSON_CAP,
                ),
                "api upload": Served(
                    "api upload",
                    api_port,
                    api.process.pid,
                    "api-token",
                    "/v1/skills/upload",
                    "multipart/form-data; boundary=x",
                    API_UPLOAD_CAP,
                ),
            }
        finally:
            api.stop()
    finally:
        manager.stop()


@pytest.fixture
def executor(start_executor: StartExecutor) -> Served:
    """A fresh one-shot executor process with a small cap on ``/execute``."""
    running = start_executor(env={"EXECUTOR__MAX_BODY_BYTES": str(EXECUTOR_CAP)})
    return Served(
        "executor",
        running.port,
        running.process.pid,
        EXECUTOR_TOKEN,
        "/execute",
        "multipart/form-data; boundary=x",
        EXECUTOR_CAP,
    )


SERVICES: Final = ["manager", "mcp", "api", "api upload", "executor"]


@pytest.fixture(params=SERVICES)
def served(request: pytest.FixtureRequest) -> Served:
    if request.param == "executor":
        return request.getfixturevalue("executor")
    return request.getfixturevalue("services")[request.param]


def assert_unauthorized(answer: Answer) -> None:
    assert answer.status == 401, answer
    assert answer.headers["www-authenticate"] == "Bearer"
    assert answer.problem()["detail"] == "missing or wrong bearer token"


# --- (a) a large body without a token: 401, unread -------------------------------------------


def test_a_400_mib_body_without_a_token_is_401_after_a_few_kib(served: Served) -> None:
    assert_unauthorized(stall(served, authorization=None))


def test_a_400_mib_body_without_a_token_is_cut_off_unread(served: Served) -> None:
    pushed: list[Pushed] = []
    before, peak, growth = peak_growth_kib(
        served.pid, lambda: pushed.append(push(served, authorization=None))
    )
    sent = pushed[0].sent
    print(f"{served.name}: pushed {sent:,} of {HUGE:,} bytes; RSS {before} kB, peak {peak} kB")
    assert sent < PUSHED_AT_MOST, f"{served.name} read {sent:,} bytes unauthenticated"
    assert growth < PEAK_GROWTH_AT_MOST_KIB, f"{served.name}: peak RSS +{growth} kB"


# --- (b) with the token, over the cap: 413, declared or chunked ------------------------------


def test_a_declared_body_over_the_cap_is_413_at_once(served: Served) -> None:
    answer = stall(served, authorization=_bearer(served.token), length=HUGE)
    assert answer.status == 413, answer
    assert answer.problem()["detail"] == f"the request body is over the {served.cap:,}-byte limit"


def test_a_chunked_body_over_the_cap_is_413(served: Served) -> None:
    answer = chunked(served, authorization=_bearer(served.token), total=served.cap + 64 * KIB)
    assert answer.status == 413, answer
    assert answer.problem()["title"] == "Request too large"


def test_a_400_mib_body_with_the_token_is_413_and_dropped_unbuffered(served: Served) -> None:
    # A caller with the token may send it all (the server reads it off the socket and drops
    # it, so that the caller reads a 413, not a reset); none of it is kept.
    pushed: list[Pushed] = []
    before, peak, growth = peak_growth_kib(
        served.pid, lambda: pushed.append(push(served, authorization=_bearer(served.token)))
    )
    print(f"{served.name}: 413 after {pushed[0].sent:,} bytes; RSS {before} kB, peak {peak} kB")
    assert pushed[0].answer is not None
    assert pushed[0].answer.status == 413
    assert growth < PEAK_GROWTH_AT_MOST_KIB, f"{served.name}: peak RSS +{growth} kB"


# --- (c) a wrong token, or not a bearer one: 401 ---------------------------------------------


@pytest.mark.parametrize("scheme", ["Bearer wrong", "Basic", "bare", "Bearer "])
def test_a_wrong_or_basic_token_is_401(served: Served, scheme: str) -> None:
    authorization = {
        "Bearer wrong": "Bearer wrong",
        "Basic": "Basic " + base64.b64encode(f"user:{served.token}".encode()).decode(),
        "bare": served.token,
        "Bearer ": "Bearer ",
    }[scheme]
    assert_unauthorized(stall(served, authorization=authorization))
    assert_unauthorized(stall(served, authorization=authorization, length=10))


# --- (d) ordinary requests still work --------------------------------------------------------


def test_the_api_still_serves(services: dict[str, Served]) -> None:
    api = services["api"]
    base = f"http://127.0.0.1:{api.port}"
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/openapi.json").status_code == 401  # API__DOCS_OPEN is unset
    for token in ("api-token", "api-old-token"):  # the rotation token too
        auth = {"Authorization": _bearer(token)}
        assert httpx.get(f"{base}/openapi.json", headers=auth).status_code == 200
        assert httpx.get(f"{base}/v1/agents/", headers=auth).status_code == 200
    auth = {"Authorization": _bearer("api-token")}
    agent = {"name": "gatekeeper", "instruction": "Say done.", "skill_ids": []}
    created = httpx.post(f"{base}/v1/agents/", json=agent, headers=auth)
    assert created.status_code == 201, created.text
    # An upload over the JSON cap and under the upload cap: the larger cap is per path.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "gated/SKILL.md", "---\nname: gated\ndescription: A gated upload. Use in tests.\n---\n"
        )
        archive.writestr("gated/references/blob.bin", os.urandom(API_JSON_CAP * 2))
    data = buffer.getvalue()
    assert API_JSON_CAP < len(data) < API_UPLOAD_CAP
    uploaded = httpx.post(
        f"{base}/v1/skills/upload",
        files={"file": ("skill.zip", data, "application/zip")},
        headers=auth,
    )
    assert uploaded.status_code in (200, 201), uploaded.text
    too_big = httpx.post(f"{base}/v1/agents/", content=b" " * (API_JSON_CAP + 1), headers=auth)
    assert too_big.status_code == 413


def test_the_manager_still_serves(services: dict[str, Served]) -> None:
    manager = services["manager"]
    base = f"http://127.0.0.1:{manager.port}"
    auth = {"Authorization": _bearer(manager.token)}
    assert httpx.get(f"{base}/healthz").status_code == 200
    assert httpx.get(f"{base}/openapi.json").status_code == 401  # the documents need the token
    assert httpx.get(f"{base}/openapi.json", headers=auth).status_code == 200
    assert httpx.get(f"{base}/sandbox/pool", headers=auth).status_code == 200
    assert httpx.get(f"{base}/metrics").status_code == 401
    request = {
        "execution_id": "gate/1",
        "run_id": "gate",
        "skill": "absent",
        "version": "0" * 64,
        "script": "scripts/x.py",
    }
    refused = httpx.post(f"{base}/sandbox/execute", json=request, headers=auth)
    assert refused.status_code == 404, refused.text  # the body was read and understood
    assert "not published" in refused.json()["detail"]
    mcp = httpx.post(
        f"{base}/mcp",
        headers={**auth, "Accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "gate-test", "version": "1"},
            },
        },
    )
    assert mcp.status_code == 200, mcp.text


def test_the_executor_still_runs_a_script(executor: Served) -> None:
    base = f"http://127.0.0.1:{executor.port}"
    # Refusals first (the executor is one-shot): none of them took its one execution.
    assert_unauthorized(stall(executor, authorization=None))
    assert (
        chunked(
            executor, authorization=_bearer(executor.token), total=executor.cap + 64 * KIB
        ).status
        == 413
    )
    assert httpx.get(f"{base}/healthz").json()["status"] == "ready"
    form = execute_form({"script": "run.py"}, make_package({"run.py": "print('through the gate')"}))
    ran = httpx.post(f"{base}/execute", headers=EXECUTOR_AUTH, timeout=60, **form)
    assert ran.status_code == 200, ran.text
    assert ran.json()["exit_code"] == 0
    assert "through the gate" in ran.json()["stdout"]
