"""`Executor`: the one-shot life of a sandbox executor, from ready to done.

It owns the executor's folder, its sandbox user and isolation plan (decided once, at
construction), and its single execution: ``ready`` → ``busy`` (preparing, then running) →
``done``. A request refused before anything ran puts it back to ``ready``; anything else makes
it ``done`` for good: a second execution is refused (409), whatever the first came to. The HTTP
layer (``app``) only translates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final, Literal

from sandbox_executor.errors import ExecutorBusyError, ExecutorError, RequestRejectedError
from sandbox_executor.identity import SandboxUser
from sandbox_executor.isolation import IsolationPlan, plan_isolation, write_etc
from sandbox_executor.runner import Capture, ScriptRunner, build_command, check_request
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import (
    MAX_INPUT_FILES,
    collect_outputs,
    open_beneath,
    prepare_workspace,
    relative_parts,
    remove_tree,
)
from skillweave.sandbox.models import ExecutorRequest, ExecutorResult, Isolation

__all__ = ["Executor", "ExecutorStatus"]

logger = logging.getLogger(__name__)

ExecutorStatus = Literal["ready", "busy", "done"]
_CANCEL_WAIT_SECONDS: Final = 5.0


@dataclass(frozen=True)
class _ServedFile:
    root: Path
    parts: tuple[str, ...]


class Executor:
    """One sandbox executor: at most one execution in its lifetime.

    Args:
        settings: The executor's settings.
        workdir: Where the executor makes its own fresh folder (default: the temp dir). The
            sandbox user must be able to traverse to it, so it may not sit under a private
            folder such as pytest's or /root.

    Raises:
        ExecutorError: No sandbox uid is free, the folder is unreachable, or bubblewrap was
            required and does not work here.
    """

    def __init__(self, *, settings: ExecutorSettings, workdir: Path | None = None) -> None:
        self.settings = settings
        self.user = SandboxUser.acquire(settings)
        parent = workdir or Path(tempfile.gettempdir())
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix="skillweave-executor-", dir=parent))
        except BaseException:
            if self.user is not None:
                self.user.release()
            raise
        self._finalizer = weakref.finalize(self, _remove, self.folder, self.user)
        try:
            os.chmod(self.folder, 0o711)
            _check_reachable(self.folder, self.user)
            self.etc_dir = write_etc(self.folder / "etc", self.user)
            self.captures = self.folder / "capture"
            self.captures.mkdir(mode=0o700)
            self.plan: IsolationPlan = plan_isolation(
                settings, user=self.user, etc_dir=self.etc_dir
            )
        except BaseException:
            self._finalizer()
            raise
        self.status: ExecutorStatus = "ready"
        self._attempts = 0
        self._runner: ScriptRunner | None = None
        self._cancel_requested = False
        self._cancelled_result_pending = False
        self._finished = asyncio.Event()
        self._files: dict[str, _ServedFile] = {}

    @property
    def isolation(self) -> Isolation:
        return self.plan.isolation

    def claim(self) -> ExecutorResult | None:
        """Take the executor for an /execute request.

        Returns:
            None when the caller may go on; a ``cancelled`` result when a cancel arrived
            before the execution did (the manager's /execute then completes coherently).

        Raises:
            ExecutorBusyError: It is running, or has run, its one execution.
        """
        if self.status == "ready":
            self.status = "busy"
            return None
        if self.status == "done" and self._cancelled_result_pending:
            self._cancelled_result_pending = False
            return self._cancelled_result()
        raise ExecutorBusyError(
            "this executor is one-shot and has already taken its execution"
            if self.status == "done"
            else "this executor is running its execution"
        )

    def unclaim(self) -> None:
        """Give back a claim whose request was refused before anything ran."""
        if self.status != "busy" or self._runner is not None:
            return
        if self._cancel_requested:
            self._mark_cancelled_before_start()
        else:
            self.status = "ready"

    async def execute(
        self,
        request: ExecutorRequest,
        *,
        package: bytes,
        inputs: Sequence[tuple[str, BinaryIO]],
    ) -> ExecutorResult:
        """Prepare the workspace, run the script, collect the outputs (after `claim`).

        Raises:
            RequestRejectedError: Nothing ran; the executor is ready again.
        """
        self._attempts += 1
        attempt = self.folder / f"attempt-{self._attempts}"
        try:
            script_parts = check_request(request)
            if len(inputs) > MAX_INPUT_FILES:
                raise RequestRejectedError(f"more than {MAX_INPUT_FILES} input files")
            checked = [(relative_parts(name, what="input"), data) for name, data in inputs]
            attempt.mkdir(mode=0o711)
            workspace = await asyncio.to_thread(
                prepare_workspace, attempt, package=package, inputs=checked, user=self.user
            )
            command = build_command(
                request,
                script_parts=script_parts,
                workspace=workspace,
                plan=self.plan,
                user=self.user,
                etc_dir=self.etc_dir,
            )
        except RequestRejectedError:
            await asyncio.to_thread(remove_tree, attempt)
            self.unclaim()
            raise
        except BaseException:
            self._finish()
            raise

        runner = ScriptRunner(user=self.user)
        self._runner = runner
        if self._cancel_requested:
            runner.cancel()
        max_bytes = self.settings.capture_max_bytes
        stdout = Capture(self.captures / "stdout", max_bytes=max_bytes)
        stderr = Capture(self.captures / "stderr", max_bytes=max_bytes)
        try:
            outcome = await runner.run(command, limits=request.limits, stdout=stdout, stderr=stderr)
            collected = await asyncio.to_thread(
                collect_outputs, workspace, max_files=request.limits.max_output_files
            )
            inline = min(request.limits.max_output_bytes, max_bytes)
            stdout_text, stdout_truncated = await asyncio.to_thread(stdout.head, inline)
            stderr_text, stderr_truncated = await asyncio.to_thread(stderr.head, inline)
        finally:
            self._finish()
        for capture in (stdout, stderr):
            if capture.dropped:
                logger.warning(
                    "%s: kept %d bytes, dropped %d over the capture cap",
                    capture.path.name,
                    capture.size,
                    capture.dropped,
                )
        self._files = {
            "stdout": _ServedFile(self.captures, ("stdout",)),
            "stderr": _ServedFile(self.captures, ("stderr",)),
            **{
                name: _ServedFile(workspace.outputs, parts)
                for name, parts in collected.paths.items()
            },
        }
        return ExecutorResult(
            exit_code=outcome.exit_code,
            stdout=stdout_text,
            stderr=stderr_text,
            stdout_truncated=stdout_truncated,
            stderr_truncated=stderr_truncated,
            timed_out=outcome.timed_out,
            cancelled=outcome.cancelled,
            duration_ms=outcome.duration_ms,
            isolation=self.isolation,
            outputs=collected.files,
            full_stdout=stdout.describe("stdout") if stdout_truncated else None,
            full_stderr=stderr.describe("stderr") if stderr_truncated else None,
            error=collected.error,
        )

    def _finish(self) -> None:
        self.status = "done"
        self._finished.set()

    def _mark_cancelled_before_start(self) -> None:
        self._cancelled_result_pending = True
        self._finish()

    def _cancelled_result(self) -> ExecutorResult:
        return ExecutorResult(
            exit_code=None,
            stdout="",
            stderr="",
            cancelled=True,
            duration_ms=0,
            isolation=self.isolation,
        )

    async def cancel(self) -> bool:
        """Cancel the execution: kill it now and wait (bounded) until it has answered.

        Returns:
            True when something was cancelled: the running execution, or the one that had not
            arrived yet (it will answer ``cancelled``); False when it had already finished.
        """
        if self.status == "done":
            return False
        self._cancel_requested = True
        if self.status == "ready":
            self._mark_cancelled_before_start()
            return True
        if self._runner is not None:
            self._runner.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), _CANCEL_WAIT_SECONDS)
        return True

    def kill_now(self) -> None:
        """Synchronous kill, safe in a signal handler: the process tree goes at once."""
        self._cancel_requested = True
        if self._runner is not None:
            self._runner.kill()

    def open_file(self, name: str) -> int:
        """Open ``stdout``, ``stderr`` or a listed ``outputs/...`` file after the run.

        Raises:
            FileNotFoundError: Anything else, or before the run is done.
        """
        served = self._files.get(name) if self.status == "done" else None
        if served is None:
            raise FileNotFoundError(name)
        return open_beneath(served.root, served.parts)

    async def close(self) -> None:
        """Kill anything running, remove the folder, free the sandbox uid."""
        self.kill_now()
        if self.status == "busy" and self._runner is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._finished.wait(), _CANCEL_WAIT_SECONDS)
        await asyncio.to_thread(self._finalizer)


def _remove(folder: Path, user: SandboxUser | None) -> None:
    remove_tree(folder)
    if user is not None:
        user.release()


def _check_reachable(folder: Path, user: SandboxUser | None) -> None:
    """bwrap runs as the sandbox user and binds the workspace by path: it must get there."""
    if user is None:
        return
    for parent in folder.parents:
        info = parent.stat()
        if not (info.st_mode & 0o001 or (info.st_uid == user.uid and info.st_mode & 0o100)):
            raise ExecutorError(
                f"{folder}: the sandbox user (uid {user.uid}) cannot traverse {parent};"
                " give the executor a workdir under a world-traversable folder such as /tmp"
            )
