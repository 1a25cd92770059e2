"""Where sandboxes come from: the :class:`SandboxBackend` protocol and its local and static
implementations (Kubernetes arrives with its own issue, behind the same protocol).

A backend creates one sandbox (an executor answering on some URL with a token only the manager
knows), reports it once healthy, and destroys it. The pool decides when; backends only do.

- :class:`LocalBackend` forks executors on loopback from the pool's zygote
  (``mcp_manager.zygote``: one process that imported the executor once, so a sandbox costs no
  interpreter start-up), each on a port of its own choosing (reported through a ready file, so
  there is no port race, with the isolation its ``/healthz`` would report, so its health costs
  no HTTP call), each with a fresh random token, in a session of its own, and tied to the
  zygote, which is tied to the manager, with ``PR_SET_PDEATHSIG``, so no executor outlives a
  manager that was killed. Runs reach them over their run channel, a Unix socket in the
  sandbox's private folder (``skillweave.sandbox.run_channel``), not HTTP.
- :class:`StaticBackend` hands out one configured development executor (``SANDBOX__EXECUTOR_URL``)
  one claim at a time and never destroys it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

import httpx

from mcp_manager.zygote import ForkedExecutor, Zygote, last_words
from skillweave.config import IsolationChoice
from skillweave.errors import SandboxStartError
from skillweave.sandbox import (
    EXECUTOR_FOLDER_PREFIX,
    EXIT_REFUSED,
    FETCH_FILE_PREFIX,
    POOL_FOLDER_PREFIX,
    SOCKET_NAME,
    TOKEN_FILE,
    hold_entry,
    isolation_allowed,
    sweep_leftovers,
)
from skillweave.skills import remove_tree

__all__ = ["LocalBackend", "Sandbox", "SandboxBackend", "StaticBackend"]

logger = logging.getLogger("skillweave.manager.backends")

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
    process: ForkedExecutor | None = field(default=None, repr=False)
    workdir: Path | None = None
    isolation: str | None = None
    channel: Path | None = None
    """The executor's run channel (a Unix socket), when it is on this host and has one: runs
    go there instead of ``POST /execute`` (``skillweave.sandbox.run_channel``)."""
    folder: Path | None = None
    """The executor's own folder on this host (its workspaces): removed on destroy, after the
    executor, however it ended (killed before its own clean-up was done, say)."""
    reuses_left: int = 0
    """How many more executions a one-shot backend's sandbox may serve after the one it is
    claimed for, each in a fresh workspace and sandbox (``SANDBOX__EXECUTIONS_PER_EXECUTOR``):
    the pool makes it ready again while this is above 0 and its process lives."""


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


def _checked_isolation(url: str, reported: object, *, isolation: IsolationChoice) -> str:
    """The isolation an executor reports, once the manager's setting allows it.

    Raises:
        SandboxStartError: it runs scripts under a mode the setting does not allow (never
            used: isolation is not downgraded silently), or reports none.
    """
    if not isinstance(reported, str) or not isolation_allowed(isolation, reported):
        raise SandboxStartError(
            f"executor at {url} runs scripts with isolation {reported!r}, which"
            f" SANDBOX__ISOLATION={isolation} does not allow; refusing it"
        )
    return reported


async def _wait_healthy(
    client: httpx.AsyncClient, url: str, deadline: float, *, isolation: IsolationChoice
) -> str:
    """Wait until the executor at `url` is ready; returns the isolation it reports.

    Raises:
        SandboxStartError: Not ready in time, or its isolation is refused
            (:func:`_checked_isolation`).
    """
    while True:
        health: object = None
        with contextlib.suppress(httpx.HTTPError, ValueError):
            response = await client.get(f"{url}/healthz", timeout=1.0)
            health = response.json() if response.status_code == 200 else None
        if isinstance(health, dict) and health.get("status") == "ready":
            return _checked_isolation(url, health.get("isolation"), isolation=isolation)
        if time.monotonic() > deadline:
            raise SandboxStartError(f"executor at {url} did not become healthy in time")
        await asyncio.sleep(_POLL_SECONDS)


class LocalBackend:
    """Executor processes on this host, one per sandbox, forked by the pool's zygote."""

    name = "local"
    one_shot = True

    def __init__(
        self,
        *,
        start_timeout: float = 20.0,
        python: str = sys.executable,
        environment_cache: bool = True,
        isolation: IsolationChoice = "auto",
        executions: int = 1,
    ) -> None:
        """`environment_cache`: the executors share a folder where each skill environment is
        unpacked once and hard-linked into runs (off: unpacked for every run). `isolation`:
        every executor's ``EXECUTOR__ISOLATION``, checked again in its health report.
        `executions`: how many executions one executor serves (``EXECUTOR__REUSABLE`` and
        ``EXECUTOR__MAX_EXECUTIONS`` above 1), each in a fresh workspace and sandbox, before the
        pool replaces it (after its last it makes no next one)."""
        if executions < 1:
            raise ValueError(f"an executor serves at least one execution, not {executions}")
        self._executions = executions
        self._start_timeout = start_timeout
        self.isolation: IsolationChoice = isolation
        self._python = python
        self._environment_cache = environment_cache
        temp = Path(tempfile.gettempdir())
        self._root = Path(tempfile.mkdtemp(prefix=POOL_FOLDER_PREFIX, dir=temp))
        self._alive: int | None = hold_entry(self._root)  # held until the root is gone
        # What pools and fetches of managers killed with SIGKILL left (their locks are free),
        # in a thread: a large sweep does not hold up the manager's start.
        threading.Thread(
            target=sweep_leftovers,
            args=(temp, (POOL_FOLDER_PREFIX, FETCH_FILE_PREFIX)),
            name="skillweave-sweep",
            daemon=True,
        ).start()
        self._zygote: Zygote | None = None
        self._zygote_lock = asyncio.Lock()

    def _environment(self) -> dict[str, str]:
        """The zygote's environment, which every executor it forks inherits (no token)."""
        return {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "EXECUTOR__ISOLATION": self.isolation,
            **(
                {"EXECUTOR__REUSABLE": "true", "EXECUTOR__MAX_EXECUTIONS": str(self._executions)}
                if self._executions > 1
                else {}
            ),
            # Skill environments unpacked once for all of this pool's executors.
            **(
                {"EXECUTOR__ENVIRONMENT_CACHE": str(self._root / "environments")}
                if self._environment_cache
                else {}
            ),
            # Tracing's configuration, for the executors' own spans (scripts never see these:
            # an executor starts them with an environment of their own).
            **{k: v for k, v in os.environ.items() if k.startswith("OTEL_")},
        }

    async def _running_zygote(self) -> Zygote:
        """The pool's zygote, started on first use and again after it died."""
        async with self._zygote_lock:
            if self._zygote is None or not self._zygote.alive:
                if self._zygote is not None:
                    logger.warning("the executor zygote exited; starting another")
                    await self._zygote.close()
                self._zygote = await Zygote.start(
                    python=self._python,
                    env=self._environment(),
                    folder=self._root,
                    start_niceness=_START_NICENESS,
                    timeout=self._start_timeout,
                )
            return self._zygote

    @property
    def zygote_pid(self) -> int | None:
        """The pid of the pool's zygote while it runs, None before: every executor is its
        child, so its reaped children's CPU is theirs (the sandbox benchmark reads it)."""
        zygote = self._zygote
        return zygote.process.pid if zygote is not None and zygote.alive else None

    async def settled_isolation(self) -> str | None:
        """The mode this host's executors run scripts in, as the pool's zygote settled it at
        its start (started now if it was not); None when it refused to start (the pool says
        why when it asks for a sandbox)."""
        try:
            return (await self._running_zygote()).isolation
        except SandboxStartError:
            return None

    async def create(self) -> Sandbox:
        deadline = time.monotonic() + self._start_timeout
        zygote = await self._running_zygote()
        sandbox_id = uuid.uuid4().hex[:12]
        workdir = self._root / sandbox_id
        workdir.mkdir(mode=0o700)
        token = secrets.token_urlsafe(32)
        # Only the forked executor reads it (then removes it): never the zygote, never argv.
        token_fd = os.open(
            workdir / TOKEN_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600
        )
        with os.fdopen(token_fd, "w", encoding="utf-8") as token_file:
            token_file.write(token)
        sandbox = Sandbox(sandbox_id, "", token, workdir=workdir, reuses_left=self._executions - 1)
        ready_file = workdir / "ready.json"
        try:
            process = await zygote.spawn(sandbox_id, workdir)
            sandbox.process = process
            while not ready_file.exists():
                if process.returncode is not None:
                    raise SandboxStartError(
                        f"executor exited with code {process.returncode}:"
                        f" {last_words(workdir / 'executor.err')}",
                        permanent=process.returncode == EXIT_REFUSED,
                    )
                if time.monotonic() > deadline:
                    raise SandboxStartError("executor did not report its port in time")
                await asyncio.sleep(_POLL_SECONDS)
            ready = json.loads(ready_file.read_text())
            sandbox.url = f"http://127.0.0.1:{ready['port']}"
            if ready.get("channel") == str(workdir / SOCKET_NAME):
                sandbox.channel = workdir / SOCKET_NAME
            sandbox.folder = _executor_folder(ready.get("folder"))
            # Written once the executor serves, ready and unused, by it alone (the folder is
            # the manager's and its): what its /healthz would answer, without an HTTP call.
            sandbox.isolation = _checked_isolation(
                sandbox.url, ready.get("isolation"), isolation=self.isolation
            )
        except BaseException:
            await self.destroy(sandbox)
            raise
        return sandbox

    async def destroy(self, sandbox: Sandbox) -> None:
        if sandbox.process is not None:
            await sandbox.process.stop(grace=2.0)
        if sandbox.workdir is not None:
            await asyncio.to_thread(remove_tree, sandbox.workdir)
        if sandbox.folder is not None and (
            sandbox.process is None or sandbox.process.returncode is not None
        ):
            await asyncio.to_thread(remove_tree, sandbox.folder)

    async def close(self) -> None:
        if self._zygote is not None:
            await self._zygote.close()
        await asyncio.to_thread(remove_tree, self._root)
        if self._alive is not None:
            os.close(self._alive)
            self._alive = None


def _executor_folder(value: object) -> Path | None:
    """The executor's own folder, from its ready file, if it is one an executor makes (an
    absolute path named ``skillweave-executor-…``); None otherwise: nothing else is ever
    removed for it."""
    if not isinstance(value, str) or not os.path.isabs(value):
        return None
    folder = Path(value)
    if ".." in folder.parts or not folder.name.startswith(EXECUTOR_FOLDER_PREFIX):
        return None
    return folder


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
