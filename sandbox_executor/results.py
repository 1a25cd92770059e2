"""What one execution answers, and the files it serves after its run.

`collect_within_budget` collects the run's outputs unless it went over its disk budget (the
attempt, ``attempts``, does it after the run and reports a `RunReport`); `executor_result`
makes the ``ExecutorResult`` of a run from its report (`cancelled_result`: of one cancelled
before it started);
`ServedFiles` are what ``/files`` may open afterwards (the captured streams and the listed
outputs). Called by the executor (``executor``) at the end of each execution.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sandbox_executor.capture import Capture
from sandbox_executor.disk import usage as disk_usage
from sandbox_executor.runner import RunOutcome
from sandbox_executor.workspace import (
    CollectedOutputs,
    Workspace,
    collect_outputs,
    open_beneath,
)
from skillweave.sandbox import ExecutionLimits, ExecutorResult, Isolation

__all__ = [
    "RunReport",
    "ServedFiles",
    "cancelled_result",
    "collect_within_budget",
    "executor_result",
    "report_dropped",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunReport:
    """What a run left: how it ended, its outputs, and the inline heads of its captured
    streams (the text, and whether it was cut)."""

    outcome: RunOutcome
    collected: CollectedOutputs
    stdout: tuple[str, bool]
    stderr: tuple[str, bool]


@dataclass(frozen=True)
class _ServedFile:
    root: Path
    parts: tuple[str, ...]


class ServedFiles:
    """The files an execution serves after its run: ``stdout``, ``stderr`` and the listed
    ``outputs/...`` files; none before the run is done."""

    def __init__(self) -> None:
        self._files: dict[str, _ServedFile] = {}
        self._captures: dict[str, Capture] = {}

    def clear(self) -> None:
        """Serve nothing (a run starts, or a reusable executor's next execution)."""
        self._files = {}
        self._captures = {}

    def serve(
        self, captures: Mapping[str, Capture], outputs: Path, paths: Mapping[str, tuple[str, ...]]
    ) -> None:
        """Serve the captured streams by name (``stdout``, ``stderr``: each its capture's
        file, written out when it is first asked for) and the outputs at `paths` in
        `outputs`."""
        self._captures = dict(captures)
        self._files = {
            **{
                name: _ServedFile(capture.path.parent, (capture.path.name,))
                for name, capture in captures.items()
            },
            **{name: _ServedFile(outputs, parts) for name, parts in paths.items()},
        }

    def open(self, name: str) -> int:
        """Open a served file (read-only, beneath its root).

        Raises:
            FileNotFoundError: It is not served.
        """
        served = self._files.get(name)
        if served is None:
            raise FileNotFoundError(name)
        capture = self._captures.get(name)
        if capture is not None:
            capture.write_out()  # a small stream lived in memory until now
        return open_beneath(served.root, served.parts)


def collect_within_budget(
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


def report_dropped(*captures: Capture) -> None:
    """Log what each capture dropped over its cap."""
    for capture in captures:
        if capture.dropped:
            logger.warning(
                "%s: kept %d bytes, dropped %d over the capture cap",
                capture.path.name,
                capture.size,
                capture.dropped,
            )


def executor_result(
    report: RunReport, *, stdout: Capture, stderr: Capture, isolation: Isolation
) -> ExecutorResult:
    """The answer of a run; a captured stream whose head was cut is described in full."""
    outcome, collected = report.outcome, report.collected
    (stdout_text, stdout_truncated), (stderr_text, stderr_truncated) = report.stdout, report.stderr
    return ExecutorResult(
        exit_code=outcome.exit_code,
        stdout=stdout_text,
        stderr=stderr_text,
        stdout_truncated=stdout_truncated,
        stderr_truncated=stderr_truncated,
        timed_out=outcome.timed_out,
        cancelled=outcome.cancelled,
        duration_ms=outcome.duration_ms,
        isolation=isolation,
        outputs=collected.files,
        skipped_outputs=collected.skipped,
        full_stdout=stdout.describe("stdout") if stdout_truncated else None,
        full_stderr=stderr.describe("stderr") if stderr_truncated else None,
        error=collected.error,
    )


def cancelled_result(isolation: Isolation) -> ExecutorResult:
    """The answer of an execution cancelled before it started."""
    return ExecutorResult(
        exit_code=None,
        stdout="",
        stderr="",
        cancelled=True,
        duration_ms=0,
        isolation=isolation,
    )
