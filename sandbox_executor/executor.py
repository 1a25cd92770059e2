"""`Executor`: the one-shot life of a sandbox executor, from ready to done.

It owns the executor's folder, its sandbox user and isolation plan (decided once, at
construction), its warm stage and its single execution: ``ready`` → ``busy`` (preparing, then
running) → ``done``. A request refused before anything ran puts it back to ``ready``; anything
else makes it ``done`` for good: a second execution is refused (409), whatever the first came
to. The HTTP layer (``app``) only translates. Its collaborators: ``attempts`` (the warm
workspace and stage, prepared for the request and run), ``holdings`` (what it gives back
however it ends) and ``results`` (its answer, and the files it serves after the run).

*Ready* means warm: the empty workspace exists and the sandbox around it is running (sandbox
user, bubblewrap, the stage's interpreter waiting for its order), so a request only writes the
skill and the inputs into place and starts the script. A request whose memory limit sizes the
sandbox's tmpfs mounts differently from the warm one gets a sandbox started for it.

A development executor (``EXECUTOR__REUSABLE=true``, for the manager's static backend) goes
back to ``ready`` after each execution instead; its next request starts in a fresh workspace
and a fresh sandbox, and the previous run's files stay downloadable until then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import BinaryIO, Final, Literal

from sandbox_executor.attempts import Attempts
from sandbox_executor.egress_bridge import EgressBridge
from sandbox_executor.errors import ExecutorBusyError, ExecutorError, RequestRejectedError
from sandbox_executor.holdings import Holdings
from sandbox_executor.isolation import IsolationPlan, plan_isolation, write_etc
from sandbox_executor.results import (
    ServedFiles,
    cancelled_result,
    executor_result,
    report_dropped,
)
from sandbox_executor.runner import ScriptRunner
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import clear_workspace, rehearse
from skillweave.sandbox import (
    EXECUTOR_FOLDER_PREFIX,
    ExecutorRequest,
    ExecutorResult,
    Isolation,
    hold_entry,
)

__all__ = ["Executor", "ExecutorStatus", "folders_parent"]

logger = logging.getLogger(__name__)

ExecutorStatus = Literal["ready", "busy", "done"]
_CANCEL_WAIT_SECONDS: Final = 5.0


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
        parent = folders_parent(workdir)
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=EXECUTOR_FOLDER_PREFIX, dir=parent))
        except BaseException:
            if self.user is not None:
                self.user.release()
            raise
        self._holdings = Holdings(self.folder, self.user)
        self._finalizer = weakref.finalize(self, self._holdings.give_back)
        try:
            # Held until the folder is gone: a zygote's sweep removes it only once we died.
            self._holdings.alive = hold_entry(self.folder)
            os.chmod(self.folder, 0o711)
            _check_reachable(self.folder, self.user)
            self.etc_dir = write_etc(self.folder / "etc", self.user)
            self.plan: IsolationPlan = plan_isolation(
                settings, user=self.user, etc_dir=self.etc_dir, folder=self.folder
            )
            self._holdings.contained = self.plan.contained
            self._attempts = Attempts(
                folder=self.folder,
                settings=settings,
                user=self.user,
                plan=self.plan,
                etc_dir=self.etc_dir,
                holdings=self._holdings,
            )
            rehearse(self.folder / "rehearsal")
            self._attempts.current = self._attempts.new()
        except BaseException:
            self._finalizer()
            raise
        self.status: ExecutorStatus = "ready"
        self._runner: ScriptRunner | None = None
        self._cancel_requested = False
        self._cancelled_result_pending = False
        self._finished = asyncio.Event()
        self._files = ServedFiles()
        self._warming: asyncio.Task[None] | None = None
        self._executions = 0  # runs served (a reusable executor stops after max_executions)

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
            if self._runner is not None:  # a reusable executor's next execution
                self._begin_next_execution()
            return None
        if self.status == "done" and self._cancelled_result_pending:
            self._cancelled_result_pending = False
            if self.settings.reusable:
                self._cancel_requested = False
                self.status = "ready"
            return cancelled_result(self.isolation)
        if self.status != "done":
            raise ExecutorBusyError("this executor is running its execution")
        raise ExecutorBusyError(
            f"this executor has served its {self._executions} executions"
            if self.settings.reusable
            else "this executor is one-shot and has already taken its execution"
        )

    def _begin_next_execution(self) -> None:
        """A reusable executor's next execution: forget the last one's run and files (its
        attempt is retired already, and the next one warming: :meth:`_finish`)."""
        self._runner = None
        self._files.clear()
        self._finished = asyncio.Event()

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
        environment: BinaryIO | None = None,
        ended: Callable[[], Awaitable[None]] | None = None,
    ) -> ExecutorResult:
        """Fill the workspace, run the script, collect the outputs (after `claim`).

        With `ended`, the script is started only once it returns: the workspace is filled and
        the order made meanwhile. When it raises, the workspace is emptied again and the
        executor is ready (nothing ran), and its error goes on up.

        Raises:
            RequestRejectedError: Nothing ran; the executor is ready again.
        """
        bridge = EgressBridge(request.egress) if request.egress is not None else None
        try:
            return await self._execute(
                request,
                package=package,
                inputs=inputs,
                environment=environment,
                ended=ended,
                bridge=bridge,
            )
        finally:
            if bridge is not None:
                await bridge.aclose()

    async def _execute(
        self,
        request: ExecutorRequest,
        *,
        package: bytes,
        inputs: Sequence[tuple[str, BinaryIO]],
        environment: BinaryIO | None,
        ended: Callable[[], Awaitable[None]] | None,
        bridge: EgressBridge | None,
    ) -> ExecutorResult:
        """:meth:`execute`, with the run's egress bridge (closed by the caller)."""
        try:
            proxy_port = None
            if bridge is not None and not self.plan.contained:
                proxy_port = await bridge.start_loopback()
            attempt, stage, order = await self._attempts.prepare(
                request,
                package=package,
                inputs=inputs,
                environment=environment,
                proxy_port=proxy_port,
            )
        except RequestRejectedError:  # the workspace is fresh again: nothing ran
            self.unclaim()
            raise
        except BaseException:
            self._finish()
            raise
        workspace = attempt.workspace
        if ended is not None:
            try:
                await ended()
            except BaseException:
                await asyncio.shield(asyncio.to_thread(clear_workspace, workspace))
                self.unclaim()
                raise
        attempt.used = True

        runner = ScriptRunner(user=self.user, isolation=self.isolation)
        self._runner = runner
        if self._cancel_requested:
            runner.cancel()
        try:
            report = await self._attempts.run(
                attempt, stage, order, runner=runner, limits=request.limits, bridge=bridge
            )
        finally:
            self._files.clear()
            self._finish()
        report_dropped(attempt.stdout, attempt.stderr)
        self._files.serve(
            {"stdout": attempt.stdout, "stderr": attempt.stderr},
            workspace.outputs,
            report.collected.paths,
        )
        return executor_result(
            report, stdout=attempt.stdout, stderr=attempt.stderr, isolation=self.isolation
        )

    def _finish(self) -> None:
        current = self._attempts.current
        ran = current is not None and current.used
        self._executions += ran
        last = self.settings.max_executions
        if self.settings.reusable and ran and (last is None or self._executions < last):
            self.status = "ready"
            # The next execution's fresh workspace and sandbox start now, not when it comes.
            self._attempts.retire_current()
            self._warming = asyncio.get_running_loop().create_task(self._attempts.warm())
            self._warming.add_done_callback(_said_if_failed)
        else:
            self.status = "done"
        self._finished.set()

    def _mark_cancelled_before_start(self) -> None:
        self._cancelled_result_pending = True
        self._finish()

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
        return self._files.open(name)

    async def close(self) -> None:
        """Kill anything running, remove the folder, free the sandbox uid."""
        self.kill_now()
        if self.status == "busy" and self._runner is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._finished.wait(), _CANCEL_WAIT_SECONDS)
        if self._warming is not None:  # its stage is in the holdings once it started
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._warming), _CANCEL_WAIT_SECONDS)
        await asyncio.to_thread(self._finalizer)


def folders_parent(workdir: Path | None) -> Path:
    """Where executors make their folders: `workdir`, or the temp dir (what a zygote
    sweeps for the folders of killed executors: ``skillweave.sandbox.leftovers``)."""
    return workdir or Path(tempfile.gettempdir())


def _said_if_failed(warming: asyncio.Task[None]) -> None:
    """Log a next attempt that could not be made ahead; the next request makes it again (and
    says why it cannot)."""
    if not warming.cancelled() and (failure := warming.exception()) is not None:
        logger.warning("the next sandbox could not be made ahead: %s", failure)


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
