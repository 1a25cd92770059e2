"""`Executor`: the one-shot life of a sandbox executor, from ready to done.

It owns the executor's folder, its sandbox user and isolation plan (decided once, at
construction), its warm stage and its single execution: ``ready`` → ``busy`` (preparing, then
running) → ``done``. A request refused before anything ran puts it back to ``ready``; anything
else makes it ``done`` for good: a second execution is refused (409), whatever the first came
to. The HTTP layer (``app``) only translates.

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
import functools
import logging
import os
import shutil
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final, Literal

from sandbox_executor.disk import usage as disk_usage
from sandbox_executor.egress import EgressBridge
from sandbox_executor.errors import ExecutorBusyError, ExecutorError, RequestRejectedError
from sandbox_executor.identity import LAUNCHER, SandboxUser
from sandbox_executor.isolation import IsolationPlan, plan_isolation, write_etc
from sandbox_executor.runner import (
    Capture,
    RunOrder,
    RunOutcome,
    ScriptRunner,
    Stage,
    build_order,
    check_request,
)
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.workspace import (
    MAX_INPUT_FILES,
    READ_ONLY_DIRS,
    CollectedOutputs,
    Workspace,
    clear_workspace,
    collect_outputs,
    create_workspace,
    fill_workspace,
    open_beneath,
    rehearse,
    relative_parts,
    remove_tree,
)
from skillweave.sandbox.egress import EGRESS_SOCKET
from skillweave.sandbox.models import ExecutionLimits, ExecutorRequest, ExecutorResult, Isolation
from skillweave.sandbox.zygote_protocol import EXECUTOR_FOLDER_PREFIX

__all__ = ["Executor", "ExecutorStatus"]

logger = logging.getLogger(__name__)

ExecutorStatus = Literal["ready", "busy", "done"]
_CANCEL_WAIT_SECONDS: Final = 5.0
_FILL_INLINE_BYTES: Final = 1024 * 1024
"""A package and inputs up to this size (and no environment) are written on the event loop."""


def _sizes(files: Iterable[BinaryIO]) -> int:
    """The bytes left to read in `files` (each read from where it stands)."""
    total = 0
    for data in files:
        position = data.tell()
        total += data.seek(0, os.SEEK_END) - position
        data.seek(position)
    return total


@dataclass(frozen=True)
class _ServedFile:
    root: Path
    parts: tuple[str, ...]


@dataclass
class _Holdings:
    """What an executor gives back however it ends (the state of its finalizer): its stages,
    its folder and its sandbox uid.

    The uid goes back marked clean (so its next holder need not sweep it first: see
    ``identity``) when nothing of it can run any more. In a contained mode every process of
    the sandbox user runs inside a stage's pid namespace, and a stage that ended by itself
    took its namespace along before it could be reaped: then no sweep is needed. A stage
    killed here, or killed during its run with a sweep that failed, or no namespace at all:
    sweep, and clean only if the sweep saw nothing alive.
    """

    folder: Path
    user: SandboxUser | None
    stages: list[Stage] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    contained: bool = False
    killed_running: bool = False

    def kill_stage(self, stage: Stage) -> None:
        """Kill a stage now (blocking briefly) and forget it."""
        self.killed_running |= stage.kill()
        self.stages.remove(stage)

    def give_back(self) -> None:
        for stage in list(self.stages):
            self.kill_stage(stage)
        for capture in self.captures:
            capture.close()
        clean = False
        if self.user is not None:
            sweep = not self.contained or self.killed_running or self.user.sweep_failed
            clean = self.user.kill_all() if sweep else True
        remove_tree(self.folder)
        if self.user is not None:
            self.user.release(clean=clean)


@dataclass
class _Attempt:
    """One execution's folder, workspace, warm stage and captures (made ready ahead, like
    the stage: only the run is left for the request)."""

    folder: Path
    workspace: Workspace
    captures: Path
    stdout: Capture
    stderr: Capture
    stage: Stage | None = None
    used: bool = False


def _collect_within_budget(
    workspace: Workspace,
    disk: list[tuple[Path, tuple[str, ...]]],
    limits: ExecutionLimits,
    outcome: RunOutcome,
) -> CollectedOutputs:
    """The run's outputs, or none and why when it went over its disk budget (while running,
    or in its last moments, between two polls) or could not be collected."""
    try:
        used = sum(disk_usage(root, skip=skip) for root, skip in disk)
        if outcome.disk_exceeded or used > limits.max_disk_mb * 1024 * 1024:
            return CollectedOutputs(
                [],
                {},
                error=(
                    f"the run wrote more than its disk budget of {limits.max_disk_mb} MiB to its"
                    " workspace (limits.max_disk_mb, apparent sizes: sparse files count in"
                    " full); it was stopped and no outputs were kept"
                ),
            )
        return collect_outputs(workspace, max_files=limits.max_output_files)
    except Exception as exc:  # the script ran: an answer that says why, never a lost sandbox
        logger.exception("collecting the outputs failed")
        return CollectedOutputs(
            [],
            {},
            error=f"collecting the outputs failed ({type(exc).__name__}: {exc});"
            " no outputs were kept",
        )


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
            self.folder = Path(tempfile.mkdtemp(prefix=EXECUTOR_FOLDER_PREFIX, dir=parent))
        except BaseException:
            if self.user is not None:
                self.user.release()
            raise
        self._holdings = _Holdings(self.folder, self.user)
        self._finalizer = weakref.finalize(self, self._holdings.give_back)
        try:
            os.chmod(self.folder, 0o711)
            _check_reachable(self.folder, self.user)
            self.etc_dir = write_etc(self.folder / "etc", self.user)
            self.plan: IsolationPlan = plan_isolation(
                settings, user=self.user, etc_dir=self.etc_dir, folder=self.folder
            )
            self._holdings.contained = self.plan.contained
            self.launcher = self.folder / "stage.py"
            shutil.copyfile(LAUNCHER, self.launcher)
            os.chmod(self.launcher, 0o644)
            rehearse(self.folder / "rehearsal")
            self._attempts = 0
            self._attempt: _Attempt | None = self._new_attempt()
        except BaseException:
            self._finalizer()
            raise
        self.status: ExecutorStatus = "ready"
        self._runner: ScriptRunner | None = None
        self._cancel_requested = False
        self._cancelled_result_pending = False
        self._finished = asyncio.Event()
        self._files: dict[str, _ServedFile] = {}
        self._stale: list[_Attempt] = []

    def _new_attempt(self, limits: ExecutionLimits | None = None) -> _Attempt:
        """A fresh workspace with a warm stage around it (blocking: the stage starts)."""
        self._attempts += 1
        folder = self.folder / f"attempt-{self._attempts}"
        folder.mkdir(mode=0o711)
        workspace = create_workspace(folder, user=self.user)
        captures = folder / "capture"
        captures.mkdir(mode=0o700)
        max_bytes = self.settings.capture_max_bytes
        stdout = Capture(captures / "stdout", max_bytes=max_bytes)
        stderr = Capture(captures / "stderr", max_bytes=max_bytes)
        self._holdings.captures += (stdout, stderr)
        attempt = _Attempt(folder, workspace, captures, stdout=stdout, stderr=stderr)
        attempt.stage = self._start_stage(attempt.workspace, limits or ExecutionLimits())
        return attempt

    def _start_stage(self, workspace: Workspace, limits: ExecutionLimits) -> Stage:
        stage = Stage.start(
            workspace=workspace,
            plan=self.plan,
            user=self.user,
            etc_dir=self.etc_dir,
            launcher=self.launcher,
            limits=limits,
        )
        self._holdings.stages.append(stage)
        return stage

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
            if self._attempt is None or self._attempt.used:
                self._begin_next_execution()
            return None
        if self.status == "done" and self._cancelled_result_pending:
            self._cancelled_result_pending = False
            if self.settings.reusable:
                self._cancel_requested = False
                self.status = "ready"
            return self._cancelled_result()
        raise ExecutorBusyError(
            "this executor is one-shot and has already taken its execution"
            if self.status == "done"
            else "this executor is running its execution"
        )

    def _begin_next_execution(self) -> None:
        """A reusable executor's next execution: forget the last one's run and files."""
        if self._attempt is not None:
            self._stale.append(self._attempt)
            self._attempt = None
        self._runner = None
        self._files = {}
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
            attempt, stage, order = await self._prepare(
                request,
                package=package,
                inputs=inputs,
                environment=environment,
                proxy_port=proxy_port,
            )
        except RequestRejectedError:
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
        max_bytes = self.settings.capture_max_bytes
        captures, stdout, stderr = attempt.captures, attempt.stdout, attempt.stderr
        # What the script may fill: its workspace (not what the executor put there) and, with
        # no sandbox of its own, its TMPDIR.
        disk = [(workspace.root, READ_ONLY_DIRS), (workspace.tmp, ())]
        try:
            if bridge is not None and self.plan.contained:
                await bridge.start(workspace.root / EGRESS_SOCKET)
            outcome = await runner.run(
                stage, order, limits=request.limits, stdout=stdout, stderr=stderr, disk=disk
            )
            if bridge is not None:
                await bridge.aclose()  # the script is done: so are its connections
            collected = await asyncio.to_thread(
                _collect_within_budget, workspace, disk, request.limits, outcome
            )
            inline = min(request.limits.max_output_bytes, max_bytes)
            stdout_text, stdout_truncated = stdout.head(inline)
            stderr_text, stderr_truncated = stderr.head(inline)
        finally:
            self._files = {}
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
            "stdout": _ServedFile(captures, ("stdout",)),
            "stderr": _ServedFile(captures, ("stderr",)),
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
            skipped_outputs=collected.skipped,
            full_stdout=stdout.describe("stdout") if stdout_truncated else None,
            full_stderr=stderr.describe("stderr") if stderr_truncated else None,
            error=collected.error,
        )

    async def _prepare(
        self,
        request: ExecutorRequest,
        *,
        package: bytes,
        inputs: Sequence[tuple[str, BinaryIO]],
        environment: BinaryIO | None = None,
        proxy_port: int | None = None,
    ) -> tuple[_Attempt, Stage, RunOrder]:
        """Fill the warm workspace and make the order; a refusal leaves it fresh and ready."""
        attempt = await self._ready_attempt()
        workspace = attempt.workspace
        try:
            script_parts = check_request(request)
            if len(inputs) > MAX_INPUT_FILES:
                raise RequestRejectedError(f"more than {MAX_INPUT_FILES} input files")
            checked = [(relative_parts(name, what="input"), data) for name, data in inputs]
            fill = functools.partial(
                fill_workspace,
                workspace,
                package=package,
                inputs=checked,
                environment=environment,
                environment_sha256=request.environment_sha256,
                environment_cache=self.settings.environment_cache,
            )
            # The loop serves this one execution: a small fill runs on it (a thread hop costs
            # more than the work); an environment or large inputs go to a thread, so that
            # /healthz and a cancel are still answered meanwhile.
            if environment is None and len(package) + _sizes(data for _, data in inputs) <= (
                _FILL_INLINE_BYTES
            ):
                fill()
            else:
                await asyncio.to_thread(fill)
            order = build_order(
                request,
                script_parts=script_parts,
                workspace=workspace,
                plan=self.plan,
                user=self.user,
                proxy_port=proxy_port,
            )
        except RequestRejectedError:
            await asyncio.to_thread(clear_workspace, workspace)
            self.unclaim()
            raise
        stage = attempt.stage
        if stage is None or not stage.fits(request.limits):
            if stage is not None:
                await asyncio.to_thread(self._holdings.kill_stage, stage)
            stage = await asyncio.to_thread(self._start_stage, workspace, request.limits)
            attempt.stage = stage
        return attempt, stage, order

    async def _ready_attempt(self) -> _Attempt:
        """The warm attempt; a reusable executor's next one is made here, the last removed."""
        if self._attempt is None:
            self._attempt = await asyncio.to_thread(self._new_attempt)
        stale, self._stale = self._stale, []
        for attempt in stale:
            for capture in (attempt.stdout, attempt.stderr):
                capture.close()
                self._holdings.captures.remove(capture)
            if attempt.stage is not None:
                await asyncio.to_thread(self._holdings.kill_stage, attempt.stage)
            await asyncio.to_thread(remove_tree, attempt.folder)
        return self._attempt

    def _finish(self) -> None:
        if self.settings.reusable and self._attempt is not None and self._attempt.used:
            self.status = "ready"
        else:
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
        served = self._files.get(name)
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
