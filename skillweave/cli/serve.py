"""The long-running commands: ``worker``, ``dev``, ``api``, ``manager``, ``mcp`` and
``executor``.

Each sets up tracing and logging for its service, then runs until Ctrl-C (SIGTERM too for a
worker and ``dev``): the worker and the embedded stack of ``dev`` on
:mod:`skillweave.cli.compose`, the API on :mod:`skillweave.cli.api`, the MCP front door on
:mod:`skillweave.cli.mcp`, the manager and the executor on their own packages. What they
need is imported when they start, not when the CLI does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.table import Table
from rich.text import Text

from skillweave.cli.checks import preflight
from skillweave.cli.console import err, out, shown_path
from skillweave.cli.exits import EXIT_USAGE, errors, fail, warn
from skillweave.cli.in_flight import say_stopped, stopping_at_once, stopping_worker
from skillweave.cli.library import DirsOption, roots_of
from skillweave.config import get_settings, settings_problem, unknown_settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillweave.cli.compose import OpenedEngine
    from skillweave.cli.worker import WorkerInfo
    from skillweave.config import ModelSettings
    from skillweave.engines.temporal import TemporalEngine
    from skillweave.skills import SkillLibrary

__all__ = ["api", "dev", "executor", "manager", "mcp", "worker"]

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="The worker's model, PROVIDER:NAME (e.g. openai:gpt-4o-mini or "
        "scripted:FILE.yaml); default MODEL__*.",
    ),
]


def _start_tracing(service: str) -> None:
    """Tracing for a long-running command, when the OTEL_* variables ask for it (see
    ``skillweave.telemetry.tracing``); an exporter we do not ship is a usage error."""
    from skillweave.telemetry import tracing

    with errors():
        tracing.setup(service)


def _service_logging(service: str) -> None:
    """The service's log records go to the process's handler (its format, its redaction)."""
    from skillweave.telemetry import logs

    settings = get_settings()
    logs.configure_logging(settings.observability, service=service, secrets=settings)
    for line in unknown_settings():  # the CLI said it on stderr; this is for the service's log
        logging.getLogger("skillweave.config").warning(line)


def _configured_model(option: str | None) -> ModelSettings:
    """The model a worker executes runs with: --model, else MODEL__*."""
    from skillweave.agent import AgentSpec
    from skillweave.cli.agent_run import choose_model

    with errors():
        return choose_model(get_settings().model, option=option, spec=AgentSpec())


def _is_runnable(model: ModelSettings) -> bool:
    """A model that can drive runs: a real one, or a scripted one whose script is a file."""
    return model.provider != "scripted" or Path(model.name).is_file()


def worker(dirs: DirsOption = None, model: ModelOption = None) -> None:
    """Run a Temporal worker: agent runs of WORKFLOW__TASK_QUEUE on WORKFLOW__TEMPORAL_ADDRESS.

    Activities use the model each run names, else the default of MODEL__* (or --model); with
    no default the worker starts all the same and fails, for good, a run that names none. The
    configured store, and the manager at SANDBOX__MANAGER_URL, or one with a local warm pool
    started in this process. Runs until Ctrl-C; the activities in flight are cancelled and
    retried on another worker. Its tuning: WORKFLOW__WORKER_MAX_CACHED_WORKFLOWS (runs kept in
    memory), WORKFLOW__WORKER_MAX_CONCURRENT_WORKFLOW_TASKS, …_ACTIVITIES and
    …_LOCAL_ACTIVITIES (task slots), WORKFLOW__WORKER_WORKFLOW_POLLERS and …_ACTIVITY_POLLERS
    (docs/SCALING.md sizes them).
    """
    _start_tracing("skillweave-worker")
    from skillweave.cli.agent_run import REAL_MODEL_HINT
    from skillweave.cli.signals import stop_signals_cancel
    from skillweave.cli.worker import open_worker
    from skillweave.engines.temporal import configure_logging, sdk_metrics_address

    settings = get_settings()
    chosen = _configured_model(model)
    # Without --model the worker starts with no default model too (runs name theirs, and it
    # says so); a --model given must be one it can run.
    if model is not None and not _is_runnable(chosen):
        raise fail(
            f"the worker's model script {chosen.name!r} is not a file",
            hint=f"{REAL_MODEL_HINT}, or --model scripted:FILE.yaml to replay a script.",
            code=EXIT_USAGE,
        )
    roots = roots_of(dirs)
    preflight(settings.model_copy(update={"model": chosen}), "worker")
    _service_logging("skillweave-worker")
    configure_logging(verbose=True, metrics_address=sdk_metrics_address(settings.observability))

    def ready(info: WorkerInfo) -> None:
        out.print(
            f"worker on {info.address} · namespace {info.namespace} · task queue "
            f"{info.task_queue}\n  model {info.model} · MCP manager {info.manager_url}\n"
            "Ctrl-C stops it.",
            soft_wrap=True,
            markup=False,
        )

    async def main() -> None:
        default = chosen if model is not None else None  # MODEL__*: it may be absent
        async with open_worker(settings, model=default, roots=roots) as info:
            ready(info)
            # Once it polls: Ctrl-C stops the worker (draining it), then its manager.
            with stop_signals_cancel(asyncio.current_task()):
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    # Its runs are on its store's queue (``contract.store_task_queue``).
                    on = settings.workflow.model_copy(update={"task_queue": info.task_queue})
                    left.append(await stopping_worker(on))
                    raise

    left: list[list[str] | None] = []  # the runs of its task queue in flight when stopped
    try:
        with errors():
            asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        queue = settings.workflow.task_queue
        resumes = f"when a worker on this store polls task queue {queue!r}"
        say_stopped("worker", left, resumes=resumes)


def dev(
    *,
    port: Annotated[int, typer.Option(help="Temporal's gRPC port.")] = 7233,
    ui_port: Annotated[int, typer.Option(help="The Temporal UI's port.")] = 8233,
    db_file: Annotated[
        Path | None,
        typer.Option(help="Where Temporal keeps runs (default WORKFLOW__DEV_DB_FILE)."),
    ] = None,
    ephemeral: Annotated[
        bool, typer.Option("--ephemeral", help="Keep Temporal's state in memory only.")
    ] = False,
    dirs: DirsOption = None,
    model: ModelOption = None,
) -> None:
    """Run the embedded stack until Ctrl-C: a Temporal dev server with its UI, a worker and an
    MCP manager with a local warm pool, all on this machine.

    Runs started with `skillweave run --engine temporal` run here and survive a restart (the
    server's state is in a file under ~/.skillweave/ unless --ephemeral). Ctrl-C (or SIGTERM)
    cancels the activities in flight at once (unless WORKFLOW__WORKER_DRAIN_SECONDS is set),
    stops the stack and ends with one line naming the runs left in flight; exit 0.
    """
    _start_tracing("skillweave-dev")
    from skillweave.cli.compose import open_embedded_engine
    from skillweave.cli.library import opened_library
    from skillweave.engines.temporal import configure_logging, sdk_metrics_address
    from skillweave.skills import owned_folder

    if ephemeral and db_file is not None:
        raise fail("--ephemeral and --db-file exclude each other", code=EXIT_USAGE)
    settings = stopping_at_once(get_settings())
    chosen = _configured_model(model)
    if not _is_runnable(chosen):
        chosen = _demo_model(chosen)
    roots = roots_of(dirs)
    preflight(settings.model_copy(update={"model": chosen}), "dev")
    _service_logging("skillweave-dev")
    configure_logging(verbose=True, metrics_address=sdk_metrics_address(settings.observability))
    state = None if ephemeral else (db_file or settings.workflow.dev_db_file).expanduser()

    def ready(opened: OpenedEngine[TemporalEngine]) -> None:
        workflow = opened.settings.workflow
        address = workflow.temporal_address
        lines = Table.grid(padding=(0, 2))
        lines.add_row("Temporal gRPC", f"{address} (namespace {workflow.namespace})")
        lines.add_row("Temporal UI", opened.ui_url or "")
        lines.add_row("MCP manager", opened.manager_url or "")
        lines.add_row("worker", f"task queue {opened.engine.task_queue} · model {opened.model}")
        lines.add_row("state", str(state) if state is not None else "in memory (--ephemeral)")
        out.rule("[bold]skillweave dev[/]")
        out.print(lines)
        env = []
        if address != "127.0.0.1:7233":
            env.append(f"WORKFLOW__TEMPORAL_ADDRESS={address}")
        if opened.ui_url and opened.ui_url != settings.workflow.ui_url:
            env.append(f"WORKFLOW__UI_URL={opened.ui_url}")
        if env:
            out.print(f"In other terminals: export {' '.join(env)}", soft_wrap=True, markup=False)
        out.print(
            'Start a run on it: skillweave run --engine temporal "TASK" [--agent A.yaml] '
            "[--file F]\nList runs: skillweave runs list · Ctrl-C stops everything.",
            soft_wrap=True,
            markup=False,
        )

    async def main() -> None:
        # The whole library (the store's skills too) in a folder of this process's own.
        with owned_folder(settings, "dev") as own:
            async with (
                opened_library(own, roots=roots) as library,
                open_embedded_engine(
                    own,
                    registry=library.registry,
                    model=chosen,
                    port=port,
                    ui_port=ui_port,
                    db_file=state,
                ) as opened,
            ):
                await _serve_embedded(opened, library, ready=ready, left=left)

    left: list[list[str] | None] = []  # the runs in flight when it was stopped
    try:
        with errors():
            asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        resumes = None if ephemeral else "at the next `skillweave dev`"
        say_stopped("worker, MCP manager, Temporal", left, resumes=resumes)


async def _serve_embedded(
    opened: OpenedEngine[TemporalEngine],
    library: SkillLibrary,
    *,
    ready: Callable[[OpenedEngine[TemporalEngine]], None],
    left: list[list[str] | None],
) -> None:
    """``dev``'s stack until cancelled: its worker serves the whole `library`, reloaded; the
    runs then in flight are put in `left` (:func:`~skillweave.cli.in_flight.runs_in_flight`)
    before anything stops."""
    from skillweave.cli.in_flight import runs_in_flight
    from skillweave.cli.signals import stop_signals_cancel
    from skillweave.skills import reloading

    services = opened.services  # the embedded stack's runs run in this process
    if services is None:  # pragma: no cover - an embedded engine always has them
        raise RuntimeError("the embedded stack has no services")
    services.serve_library(library)
    every = opened.settings.skills.reload_seconds
    async with reloading(library, services.use_registry, every=every):
        ready(opened)
        with stop_signals_cancel(asyncio.current_task()):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                engine = opened.engine
                left.append(await runs_in_flight(engine.client, engine.task_queue))
                raise


def _demo_model(configured: ModelSettings) -> ModelSettings:
    """`dev` without a model (a scripted one without its script): the demo's script, said
    loudly."""
    from skillweave.cli.agent_run import REAL_MODEL_HINT
    from skillweave.cli.demo import demo_folder

    script = demo_folder() / "script.yaml"
    err.print(
        Text(
            f"model: SCRIPTED, replaying {shown_path(script)} (the demo's script; no model "
            f"is configured): only the demo task completes. {REAL_MODEL_HINT}.",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    return configured.model_copy(update={"name": str(script)})


def manager() -> None:
    """Serve the MCP manager (SANDBOX__HOST, SANDBOX__PORT; SANDBOX__MANAGER_TOKEN required)."""
    _start_tracing("skillweave-manager")
    from mcp_manager.server import run_manager

    settings = get_settings()
    preflight(settings, "manager")
    # A service: its own records (pool refills, reaped pods, lost sandboxes) are for its logs.
    _service_logging("skillweave-manager")
    with errors():
        run_manager(settings)


def mcp(
    skills: Annotated[
        str | None,
        typer.Option(
            help="Serve only these skills: comma-separated names, ns.name or ns.* (a "
            "namespace), e.g. 'web.*,notes'. Default: the whole library."
        ),
    ] = None,
    files_root: Annotated[
        list[Path] | None,
        typer.Option(
            help="A folder whose files a client may give scripts by local path (input_files; "
            "repeatable). Default: the working directory, unless that is /."
        ),
    ] = None,
) -> None:
    """Serve the skill library over MCP on stdio (for MCP clients that start a command);
    scripts run on SANDBOX__MANAGER_URL, or a local warm pool started here."""
    _start_tracing("skillweave-mcp")
    from skillweave.cli.mcp import serve_mcp_stdio

    scope = None if skills is None else [part.strip() for part in skills.split(",")]
    if scope is not None and not all(scope):
        raise fail("--skills: give comma-separated names, ns.name or ns.*", code=EXIT_USAGE)
    roots = files_root if files_root else [Path.cwd()]
    roots = [root for root in roots if root.resolve() != Path("/")]
    for root in roots:
        if not root.is_dir():
            raise fail(f"--files-root: not a folder: {shown_path(root)}", code=EXIT_USAGE)
    roots_of(None)  # a SKILLS__DIRS root that is not a folder: say so, do not start
    # stdout is the protocol's: checks and log lines go to stderr.
    preflight(get_settings(), "mcp")
    _service_logging("skillweave-mcp")
    with contextlib.suppress(KeyboardInterrupt), errors():
        asyncio.run(serve_mcp_stdio(get_settings(), scope=scope, file_roots=roots))


def api() -> None:
    """Serve the control-plane REST API (API__HOST, API__PORT; API__TOKEN required) on the
    engine of WORKFLOW__EXECUTION_ENGINE."""
    _start_tracing("skillweave-api")
    from skillweave.cli.api import serve_api

    settings = get_settings()
    roots_of(None)  # a SKILLS__DIRS root that is not a folder: say so, do not start
    preflight(settings, "api")
    _service_logging("skillweave-api")

    def ready(url: str) -> None:
        err.print(
            f"skillweave API on {url} (engine {settings.workflow.execution_engine}); "
            + (
                f"OpenAPI at {url}/docs"
                if settings.api.docs_open
                else f"OpenAPI at {url}/openapi.json with the token (API__DOCS_OPEN=true: open)"
            )
        )

    try:
        with errors():
            asyncio.run(serve_api(settings, on_ready=ready))
    except (KeyboardInterrupt, asyncio.CancelledError):
        err.print("API stopped")


def executor(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port; 0 picks a free one and reports it.")] = 0,
    ready_file: Annotated[
        Path | None, typer.Option(help="Where to write {port, pid} once accepting.")
    ] = None,
) -> None:
    """Serve one sandbox executor (token from EXECUTOR__TOKEN; one execution per process).

    The executor reads only its own EXECUTOR__* settings: it must never hold the store or
    model credentials of skillweave's main settings.
    """
    from sandbox_executor.server import run_executor
    from sandbox_executor.settings import ExecutorSettings

    try:
        settings = ExecutorSettings()
    except ValidationError as exc:
        raise fail(settings_problem(exc, ExecutorSettings), code=EXIT_USAGE) from None
    for line in unknown_settings(ExecutorSettings):
        warn(line)
    if settings.token is None:
        raise fail(
            "set EXECUTOR__TOKEN: the executor accepts only the manager's token", code=EXIT_USAGE
        )
    with errors():
        run_executor(
            host=host,
            port=port,
            token=settings.token.get_secret_value(),
            ready_file=ready_file,
            settings=settings,
        )
