"""The scale benchmark's worker: its tuning, and the subprocess that runs one framework's worker.

``bench/scale_bench.py`` starts one worker per batch as a subprocess (``python -m
bench.scale_bench worker --framework F --address A --task-queue Q --root R --metrics-port P
[tuning]``, served by :func:`worker_main`), so that the worker's CPU and memory are its own. The
subprocess builds the framework's worker as the peer benchmark does (skillweave's through
``workflows.worker.build_worker``, a peer's from ``bench.peers_bench.peers``), with the same
:class:`Tuning` for every framework (skillweave's defaults unless told otherwise), serves the
SDK's runtime metrics on loopback (``temporalio.runtime`` with a ``PrometheusConfig``), prints
one :data:`READY` line once it polls, and runs until SIGTERM. :func:`spawned_worker` is the
driver's side: it starts one, waits for the line, and stops it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final

import httpx
from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import (
    PollerBehaviorSimpleMaximum,
    UnsandboxedWorkflowRunner,
    Worker,
    WorkflowRunner,
)
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.peers_bench import FRAMEWORKS, SKILLWEAVE, peers, skillweave_services
from bench.processes import metric_totals
from skillweave.cli.temporal_server import free_port
from skillweave.config import WorkflowSettings
from skillweave.engines.converter import data_converter
from skillweave.storage import store_identity
from workflows.worker import build_worker, sandbox_runner, worker_tuning

__all__ = [
    "READY",
    "TASK_QUEUE",
    "Tuning",
    "WorkerProcess",
    "add_tuning_options",
    "spawned_worker",
    "tuning_of",
    "worker_main",
]

REPO: Final = Path(__file__).resolve().parents[1]
TASK_QUEUE: Final = "scale-bench"
READY: Final = "ready"
READY_TIMEOUT_SECONDS: Final = 120.0
STOP_SECONDS: Final = 15.0
LOG_TAIL_LINES: Final = 15

_TUNING_OPTIONS: Final = {
    "cache": ("--cache", ("max_cached_workflows",), "workflows in the sticky cache"),
    "workflow_slots": ("--workflow-slots", ("max_concurrent_workflow_tasks",), "workflow tasks"),
    "activity_slots": ("--activity-slots", ("max_concurrent_activities",), "activities"),
    "local_activity_slots": (
        "--local-activity-slots",
        ("max_concurrent_local_activities",),
        "local activities",
    ),
    "pollers": (
        "--pollers",
        ("workflow_task_poller_behavior", "activity_task_poller_behavior"),
        "long polls of each kind (workflow, activity)",
    ),
}
"""Each tuning field: its option, the ``Worker`` arguments it sets, and what it bounds."""


def _shown(value: object) -> str:
    return str(value.maximum if isinstance(value, PollerBehaviorSimpleMaximum) else value)


@dataclass(frozen=True)
class Tuning:
    """The worker's tuning, the same for every framework: skillweave's defaults
    (``workflows.worker.worker_tuning`` of the default ``WorkflowSettings``), and over them
    the fields that are set."""

    cache: int | None = None
    workflow_slots: int | None = None
    activity_slots: int | None = None
    local_activity_slots: int | None = None
    pollers: int | None = None
    sandbox: bool | None = None
    local_reads: bool = False
    """skillweave's worker answers ``run_limits`` without ``model_calls_read``, so its runs
    read skill files with local activities of their own, as a run an earlier worker started
    does: what a read riding with the model call saves is the difference."""

    @property
    def sandboxed(self) -> bool:
        """Whether workflow code runs in Temporal's sandbox (skillweave's default:
        ``WORKFLOW__WORKER_WORKFLOW_SANDBOX``), for every framework alike."""
        return WorkflowSettings().worker_workflow_sandbox if self.sandbox is None else self.sandbox

    def runner(self, framework: str) -> WorkflowRunner:
        """The workflow runner of `framework`'s worker: skillweave's own (its sandbox passes
        its pure modules through), a peer's the SDK's sandbox (its plugins adjust it), or,
        when not :attr:`sandboxed`, no sandbox for either."""
        if not self.sandboxed:
            return UnsandboxedWorkflowRunner()
        return sandbox_runner() if framework == SKILLWEAVE else SandboxedWorkflowRunner()

    def worker_options(self) -> dict[str, Any]:
        """The ``temporalio.worker.Worker`` arguments every framework's worker gets."""
        options = worker_tuning(WorkflowSettings())
        for name, (_, arguments, _) in _TUNING_OPTIONS.items():
            if (value := getattr(self, name)) is None:
                continue
            for argument in arguments:
                poller = argument.endswith("_poller_behavior")
                options[argument] = PollerBehaviorSimpleMaximum(value) if poller else value
        return options

    def argv(self) -> list[str]:
        """The command-line options that give this tuning (to the worker subprocess)."""
        found: list[str] = []
        for name, (option, _, _) in _TUNING_OPTIONS.items():
            if (value := getattr(self, name)) is not None:
                found += [option, str(value)]
        if self.sandbox is not None:
            found.append("--sandbox" if self.sandbox else "--no-sandbox")
        if self.local_reads:
            found.append("--local-reads")
        return found

    def describe(self) -> str:
        """One line: each argument's value, ``(default)`` when it is skillweave's."""
        options = self.worker_options()
        return (
            " · ".join(
                f"{argument} {_shown(options[argument])}"
                + (" (default)" if getattr(self, name) is None else "")
                for name, (_, arguments, _) in _TUNING_OPTIONS.items()
                for argument in arguments
            )
            + (f" · workflow sandbox {'on' if self.sandboxed else 'off'}")
            + (" (default)" if self.sandbox is None else "")
            + (" · skillweave's reads: local activities" if self.local_reads else "")
        )


def add_tuning_options(parser: argparse.ArgumentParser) -> None:
    """The tuning's options on `parser` (:class:`Tuning`'s fields)."""
    for name, (option, _, bounds) in _TUNING_OPTIONS.items():
        parser.add_argument(
            option, dest=name, type=int, default=None, help=f"most {bounds} (default: skillweave's)"
        )
    parser.add_argument(
        "--sandbox",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run workflow code in Temporal's sandbox, every framework (default: skillweave's)",
    )
    parser.add_argument(
        "--local-reads",
        action="store_true",
        help="skillweave's runs read skill files with local activities, not with the model "
        "call (as runs an earlier worker started do): to measure what riding saves",
    )


def tuning_of(options: argparse.Namespace) -> Tuning:
    """The :class:`Tuning` parsed by :func:`add_tuning_options`."""
    return Tuning(**{f.name: getattr(options, f.name) for f in fields(Tuning)})


# --- the worker subprocess ------------------------------------------------------------------


async def _worker(options: argparse.Namespace) -> None:
    """Poll `options.task_queue` with `options.framework`'s worker until SIGTERM."""
    runtime = Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"127.0.0.1:{options.metrics_port}")
        )
    )
    tuned = tuning_of(options)
    tuning = tuned.worker_options()
    runner = tuned.runner(options.framework)
    worker: Worker
    if options.framework == SKILLWEAVE:
        services = skillweave_services(Path(options.root))
        client = await Client.connect(
            options.address, data_converter=data_converter(services.store), runtime=runtime
        )
        store_id = await store_identity(services.store)
        worker = build_worker(
            client,
            services,
            task_queue=options.task_queue,
            store_id=store_id,
            drain_seconds=1.0,
            model_calls_read=not tuned.local_reads,
            workflow_runner=runner,
            **tuning,
        )
    else:
        peer = peers()[options.framework]
        client = await Client.connect(
            options.address, plugins=peer.client_plugins(), runtime=runtime
        )
        worker = Worker(
            client,
            task_queue=options.task_queue,
            workflow_runner=runner,
            **peer.worker_options(),
            **tuning,
        )
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with worker:
        print(READY, flush=True)
        # Nobody reads stdout after the ready line: whatever a framework prints from now on
        # goes to the log (stderr), or a full pipe would block the thread that printed it.
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        await stop.wait()


def worker_main(argv: Sequence[str]) -> int:
    """``python -m bench.scale_bench worker ...``: one framework's worker, until SIGTERM."""
    parser = argparse.ArgumentParser(prog="scale_bench worker")
    parser.add_argument("--framework", choices=FRAMEWORKS, required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--root", required=True, help="the batch's directory (skills, store)")
    parser.add_argument("--metrics-port", type=int, required=True)
    add_tuning_options(parser)
    asyncio.run(_worker(parser.parse_args(argv)))
    return 0


@dataclass
class WorkerProcess:
    """A worker subprocess: its process and where its stderr goes."""

    process: asyncio.subprocess.Process
    log: Path
    metrics_url: str

    @property
    def pid(self) -> int:
        """The worker's process id (the Python process: its threads are the SDK's too)."""
        return self.process.pid

    def log_tail(self) -> str:
        """The last lines the worker wrote to stderr."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:])
        return ""

    async def metrics(self) -> dict[str, float]:
        """The worker's runtime metrics now (empty when they cannot be read)."""
        with contextlib.suppress(httpx.HTTPError):
            async with httpx.AsyncClient(timeout=10) as http:
                response = await http.get(self.metrics_url)
                response.raise_for_status()
                return metric_totals(response.text)
        return {}

    async def stop(self) -> None:
        """SIGTERM (the worker stops polling and exits), SIGKILL if it lingers; reaped."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()


@contextlib.asynccontextmanager
async def spawned_worker(
    framework: str, address: str, root: Path, tuning: Tuning
) -> AsyncIterator[WorkerProcess]:
    """`framework`'s worker subprocess on the server at `address`, over the batch's directory
    `root` (its log there too), polling :data:`TASK_QUEUE`, ready; stopped at the end.

    Raises:
        RuntimeError: it exited before it was ready (the message ends with its log's tail).
        TimeoutError: it was not ready in :data:`READY_TIMEOUT_SECONDS`.
    """
    port = free_port()
    log = root / "worker.log"
    command = [
        sys.executable,
        "-m",
        "bench.scale_bench",
        "worker",
        "--framework",
        framework,
        "--address",
        address,
        "--task-queue",
        TASK_QUEUE,
        "--root",
        str(root),
        "--metrics-port",
        str(port),
        *tuning.argv(),
    ]
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=stderr
        )
    worker = WorkerProcess(process, log, f"http://127.0.0.1:{port}/metrics")
    try:
        assert process.stdout is not None
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), READY_TIMEOUT_SECONDS)
            if not line:
                raise RuntimeError(
                    f"the {framework} worker stopped before it was ready:\n{worker.log_tail()}"
                )
            if line.decode().strip() == READY:
                break
        yield worker
    finally:
        await worker.stop()
