"""`Attempts`: an executor's warm attempts, each a workspace with its sandbox made ready ahead.

An attempt is one execution's folder, workspace, warm stage and captures: made ready before the
request (`Attempts.new`), so only the run is left for it. When the request comes, `prepare`
writes its skill and inputs into the workspace, makes the order and gives it a stage sized for
its limits, and `run` runs the order there and collects what it left. A
reusable executor's used attempts are retired and removed before the next one is made. The
executor (``executor``) owns one `Attempts` and calls it; everything it makes is recorded in
the executor's ``holdings``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from sandbox_executor.capture import Capture
from sandbox_executor.egress_bridge import EgressBridge
from sandbox_executor.errors import RequestRejectedError
from sandbox_executor.holdings import Holdings
from sandbox_executor.isolation import IsolationPlan
from sandbox_executor.results import RunReport, collect_within_budget
from sandbox_executor.run_order import RunOrder, build_order, check_request
from sandbox_executor.runner import ScriptRunner
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.settings import ExecutorSettings
from sandbox_executor.stage import STAGE_PROGRAM, Stage
from sandbox_executor.workspace import (
    MAX_INPUT_FILES,
    READ_ONLY_DIRS,
    Workspace,
    clear_workspace,
    create_workspace,
    fill_workspace,
    relative_parts,
    remove_tree,
)
from skillweave.sandbox import EGRESS_SOCKET, ExecutionLimits, ExecutorRequest

__all__ = ["Attempt", "Attempts"]

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


@dataclass
class Attempt:
    """One execution's folder, workspace, warm stage and captures (made ready ahead, like
    the stage: only the run is left for the request)."""

    folder: Path
    workspace: Workspace
    stdout: Capture
    stderr: Capture
    stage: Stage | None = None
    used: bool = False


class Attempts:
    """The warm attempts of one executor: the current one, and used ones waiting removal.

    Args:
        folder: The executor's folder; each attempt gets a folder in it.
        settings: The executor's settings (capture cap, environment cache).
        user: The sandbox user, or None.
        plan: The executor's isolation plan.
        etc_dir: The generated /etc files of its sandboxes.
        holdings: Where every stage and capture made here is recorded.
    """

    def __init__(
        self,
        *,
        folder: Path,
        settings: ExecutorSettings,
        user: SandboxUser | None,
        plan: IsolationPlan,
        etc_dir: Path,
        holdings: Holdings,
    ) -> None:
        self.folder = folder
        self.settings = settings
        self.user = user
        self.plan = plan
        self.etc_dir = etc_dir
        self._holdings = holdings
        self.launcher = folder / "stage.py"
        shutil.copyfile(STAGE_PROGRAM, self.launcher)
        os.chmod(self.launcher, 0o644)
        self._count = 0
        self.current: Attempt | None = None
        self._stale: list[Attempt] = []
        self._making = asyncio.Lock()  # one attempt made at a time (`warm`)

    def new(self, limits: ExecutionLimits | None = None) -> Attempt:
        """A fresh workspace with a warm stage around it (blocking: the stage starts)."""
        self._count += 1
        folder = self.folder / f"attempt-{self._count}"
        folder.mkdir(mode=0o711)
        workspace = create_workspace(folder, user=self.user, contained=self.plan.contained)
        max_bytes = self.settings.capture_max_bytes
        stdout = Capture(folder / "stdout", max_bytes=max_bytes)
        stderr = Capture(folder / "stderr", max_bytes=max_bytes)
        self._holdings.captures += (stdout, stderr)
        attempt = Attempt(folder, workspace, stdout=stdout, stderr=stderr)
        attempt.stage = self._start_stage(attempt.workspace, limits or ExecutionLimits())
        return attempt

    def _start_stage(self, workspace: Workspace, limits: ExecutionLimits) -> Stage:
        """A stage around `workspace` sized for `limits` (blocking: it starts)."""
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

    def retire_current(self) -> None:
        """A reusable executor's next execution: the current attempt is removed before the
        next one is made (by `prepare`)."""
        if self.current is not None:
            self._stale.append(self.current)
            self.current = None

    async def warm(self) -> None:
        """Make the next attempt ready now (a reusable executor, once an execution ended):
        the used ones stay until the next request, which may still fetch their files."""
        async with self._making:
            if self.current is None:
                self.current = await asyncio.to_thread(self.new)

    async def _ready(self) -> Attempt:
        """The warm attempt (made here if it is not yet); the used ones are removed."""
        await self.warm()
        assert self.current is not None
        stale, self._stale = self._stale, []
        for attempt in stale:
            for capture in (attempt.stdout, attempt.stderr):
                capture.close()
                self._holdings.captures.remove(capture)
            if attempt.stage is not None:
                await asyncio.to_thread(self._holdings.kill_stage, attempt.stage)
            await asyncio.to_thread(remove_tree, attempt.folder)
        return self.current

    async def prepare(
        self,
        request: ExecutorRequest,
        *,
        package: bytes,
        inputs: Sequence[tuple[str, BinaryIO]],
        environment: BinaryIO | None = None,
        proxy_port: int | None = None,
    ) -> tuple[Attempt, Stage, RunOrder]:
        """Fill the warm workspace and make the order; a refusal leaves it fresh and ready.

        Raises:
            RequestRejectedError: Refused; the workspace is emptied again first.
        """
        attempt = await self._ready()
        order = await self._fill(
            attempt,
            request,
            package=package,
            inputs=inputs,
            environment=environment,
            proxy_port=proxy_port,
        )
        stage = await self._stage_for(attempt, request.limits)
        return attempt, stage, order

    async def _fill(
        self,
        attempt: Attempt,
        request: ExecutorRequest,
        *,
        package: bytes,
        inputs: Sequence[tuple[str, BinaryIO]],
        environment: BinaryIO | None,
        proxy_port: int | None,
    ) -> RunOrder:
        """Write the skill and the inputs into the attempt's workspace and make the order.

        Raises:
            RequestRejectedError: Refused; the workspace is emptied again first.
        """
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
            return build_order(
                request,
                script_parts=script_parts,
                workspace=workspace,
                plan=self.plan,
                user=self.user,
                proxy_port=proxy_port,
            )
        except RequestRejectedError:
            await asyncio.to_thread(clear_workspace, workspace)
            raise

    async def _stage_for(self, attempt: Attempt, limits: ExecutionLimits) -> Stage:
        """The attempt's warm stage when it fits `limits`, else a stage started for them."""
        stage = attempt.stage
        if stage is None or not stage.fits(limits):
            if stage is not None:
                await asyncio.to_thread(self._holdings.kill_stage, stage)
            stage = await asyncio.to_thread(self._start_stage, attempt.workspace, limits)
            attempt.stage = stage
        return stage

    async def run(
        self,
        attempt: Attempt,
        stage: Stage,
        order: RunOrder,
        *,
        runner: ScriptRunner,
        limits: ExecutionLimits,
        bridge: EgressBridge | None,
    ) -> RunReport:
        """Run `order` on `stage` with `runner` (and the run's egress `bridge`), then collect
        what it left: its outputs, within its disk budget, and the heads of its streams."""
        workspace = attempt.workspace
        stdout, stderr = attempt.stdout, attempt.stderr
        # What the script may fill: its workspace (not what the executor put there) and, with
        # no sandbox of its own, its TMPDIR.
        disk = [(workspace.root, READ_ONLY_DIRS)]
        if workspace.tmp is not None:
            disk.append((workspace.tmp, ()))
        if bridge is not None and self.plan.contained:
            await bridge.start(workspace.root / EGRESS_SOCKET)
        outcome = await runner.run(
            stage, order, limits=limits, stdout=stdout, stderr=stderr, disk=disk
        )
        if bridge is not None:
            await bridge.aclose()  # the script is done: so are its connections
        collected = await asyncio.to_thread(collect_within_budget, workspace, disk, limits, outcome)
        inline = min(limits.max_output_bytes, self.settings.capture_max_bytes)
        return RunReport(outcome, collected, stdout=stdout.head(inline), stderr=stderr.head(inline))
