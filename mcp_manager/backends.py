"""Where sandboxes come from: the :class:`SandboxBackend` protocol and its local and static
implementations (Kubernetes arrives with its own issue, behind the same protocol).

A backend creates one sandbox (an executor answering on some URL with a token only the manager
knows), reports it once healthy, and destroys it. The pool decides when; backends only do.

- :class:`LocalBackend` spawns ``python -m sandbox_executor`` processes on loopback, each on a
  port of its own choosing (reported through a ready file, so there is no port race), each with
  a fresh random token, in a process group of its own, and tied to the manager with
  ``PR_SET_PDEATHSIG`` (which the executor asks for itself, so the spawn needs no code between
  fork and exec and is a cheap ``vfork``) so no executor outlives a manager that was killed.
- :class:`StaticBackend` hands out one configured development executor (``SANDBOX__EXECUTOR_URL``)
  one claim at a time and never destroys it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

import httpx

from skillweave.config import IsolationChoice
from skillweave.errors import SandboxStartError
from skillweave.sandbox.models import isolation_allowed
from skillweave.skills.files import remove_tree

__all__ = ["LocalBackend", "Sandbox", "SandboxBackend", "StaticBackend"]

_POLL_SECONDS: Final = 0.01
_START_NICENESS: Final = 10
"""Executors start at low CPU priority: a refill must not slow the scripts running now."""


@dataclass(eq=False)
class Sandbox:
    """One executor the manager may use for exactly one execution."""

    id: str
    url: str
    token: str = field(repr=False)
    started_at: float = field(default_factory=time.monotonic)
    process: asyncio.subprocess.Process | None = field(default=None, repr=False)
    workdir: Path | None = None
    isolation: str | None = None


class SandboxBackend(Protocol):
    """Creates and destroys sandboxes."""

    name: str
    one_shot: bool

    async def create(self) -> Sandbox:
        """Start a sandbox and return it once it answers its health check."""
        ...

    async def destroy(self, sandbox: Sandbox) -> None:
        """Stop the sandbox and everything running in it."""
        ...

    async def close(self) -> None:
        """Release what the backend holds."""
        ...


async def _wait_healthy(
    client: httpx.AsyncClient, url: str, deadline: float, *, isolation: IsolationChoice
) -> str:
    """Wait until the executor at `url` is ready; returns the isolation it reports.

    Raises:
        SandboxStartError: Not ready in time, or it runs scripts under a mode the manager's
            setting does not allow (never used: isolation is not downgraded silently).
    """
    while True:
        health: object = None
        with contextlib.suppress(httpx.HTTPError, ValueError):
            response = await client.get(f"{url}/healthz", timeout=1.0)
            health = response.json() if response.status_code == 200 else None
        if isinstance(health, dict) and health.get("status") == "ready":
            reported = health.get("isolation")
            if not isolation_allowed(isolation, reported):
                raise SandboxStartError(
                    f"executor at {url} runs scripts with isolation {reported!r}, which"
                    f" SANDBOX__ISOLATION={isolation} does not allow; refusing it"
                )
            return str(reported)
        if time.monotonic() > deadline:
            raise SandboxStartError(f"executor at {url} did not become healthy in time")
        await asyncio.sleep(_POLL_SECONDS)


_EXIT_REFUSED: Final = 2
"""What ``python -m sandbox_executor`` exits with when it cannot run here (configuration)."""


def _exited(code: int, errors: Path) -> SandboxStartError:
    """The error of an executor that exited before it was ready, with its last words."""
    try:
        lines = errors.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    said = lines[-1].removeprefix("error: ") if lines else "no message"
    return SandboxStartError(
        f"executor exited with code {code}: {said}", permanent=code == _EXIT_REFUSED
    )


class LocalBackend:
    """Executor processes on this host, one per sandbox."""

    name = "local"
    one_shot = True

    def __init__(
        self,
        *,
        start_timeout: float = 20.0,
        python: str = sys.executable,
        environment_cache: bool = True,
        isolation: IsolationChoice = "auto",
    ) -> None:
        """`environment_cache`: the executors share a folder where each skill environment is
        unpacked once and hard-linked into runs (off: unpacked for every run). `isolation`:
        every executor's ``EXECUTOR__ISOLATION``, checked again in its health report."""
        self._start_timeout = start_timeout
        self.isolation: IsolationChoice = isolation
        self._python = python
        self._environment_cache = environment_cache
        self._client = httpx.AsyncClient()
        self._root = Path(tempfile.mkdtemp(prefix="skillweave-pool-"))

    async def create(self) -> Sandbox:
        sandbox_id = uuid.uuid4().hex[:12]
        workdir = self._root / sandbox_id
        workdir.mkdir()
        ready_file = workdir / "ready.json"
        # What an executor that refuses to start says (one line: what to install or set).
        errors = os.open(workdir / "executor.err", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        token = secrets.token_urlsafe(32)
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "EXECUTOR__TOKEN": token,
            "EXECUTOR__ISOLATION": self.isolation,
            # Skill environments unpacked once for all of this pool's executors.
            **(
                {"EXECUTOR__ENVIRONMENT_CACHE": str(self._root / "environments")}
                if self._environment_cache
                else {}
            ),
            # Tracing's configuration, for the executor's own spans (scripts never see these:
            # the executor starts them with an environment of their own).
            **{k: v for k, v in os.environ.items() if k.startswith("OTEL_")},
        }
        process = await asyncio.create_subprocess_exec(
            self._python,
            "-m",
            "sandbox_executor",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--ready-file",
            str(ready_file),
            "--parent-pid",
            str(os.getpid()),
            "--start-niceness",
            str(_START_NICENESS),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=errors,
            env=env,
            cwd=workdir,
            start_new_session=True,
        )
        os.close(errors)
        sandbox = Sandbox(sandbox_id, "", token, process=process, workdir=workdir)
        deadline = time.monotonic() + self._start_timeout
        try:
            while not ready_file.exists():
                if process.returncode is not None:
                    raise _exited(process.returncode, workdir / "executor.err")
                if time.monotonic() > deadline:
                    raise SandboxStartError("executor did not report its port in time")
                await asyncio.sleep(_POLL_SECONDS)
            port = json.loads(ready_file.read_text())["port"]
            sandbox.url = f"http://127.0.0.1:{port}"
            sandbox.isolation = await _wait_healthy(
                self._client, sandbox.url, deadline, isolation=self.isolation
            )
        except BaseException:
            await self.destroy(sandbox)
            raise
        return sandbox

    async def destroy(self, sandbox: Sandbox) -> None:
        process = sandbox.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=2.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        if sandbox.workdir is not None:
            await asyncio.to_thread(remove_tree, sandbox.workdir)

    async def close(self) -> None:
        await self._client.aclose()
        await asyncio.to_thread(remove_tree, self._root)


class StaticBackend:
    """One long-lived development executor, claimed by one execution at a time."""

    name = "static"
    one_shot = False

    def __init__(
        self,
        *,
        url: str,
        token: str,
        start_timeout: float = 20.0,
        isolation: IsolationChoice = "auto",
    ) -> None:
        self.isolation: IsolationChoice = isolation
        self._url = url.rstrip("/")
        self._token = token
        self._start_timeout = start_timeout
        self._client = httpx.AsyncClient()

    async def create(self) -> Sandbox:
        reported = await _wait_healthy(
            self._client,
            self._url,
            time.monotonic() + self._start_timeout,
            isolation=self.isolation,
        )
        return Sandbox(id="static", url=self._url, token=self._token, isolation=reported)

    async def destroy(self, sandbox: Sandbox) -> None:
        return None

    async def close(self) -> None:
        await self._client.aclose()
