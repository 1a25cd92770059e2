"""``skillweave run``: an agent run on TASK, on the engine of ``--engine`` (default
``WORKFLOW__EXECUTION_ENGINE``), or on the API at ``SKILLWEAVE_API_URL`` (``--agent ag-…``).

The command reads and checks the run's inputs (:mod:`skillweave.cli.agent_run`), says where the run
runs (on Temporal once the engine is open: it knows the task queue routed to the run's store),
opens the engine (:func:`~skillweave.cli.compose.open_engine`) and follows the run with the
live view or JSON lines (:class:`~skillweave.cli.view.RunOutput`); a direct run's approvals are
decided here (:mod:`skillweave.cli.direct_approvals`). ``skillweave demo``
(:mod:`skillweave.cli.demo`) shows its run with the same pieces: :func:`announce_run`,
:func:`announce_isolation`, :func:`follow_shown` and :func:`run_to_end`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, assert_never

import typer
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.exits import (
    EXIT_INTERRUPTED,
    EXIT_PROBLEM,
    EXIT_USAGE,
    errors,
    fail,
    follower_gives_up,
    spec_errors,
)
from skillweave.cli.library import DirsOption, registry_of
from skillweave.cli.view import RunOutput
from skillweave.config import (
    ExecutionEngine,
    IsolationChoice,
    ModelSettings,
    get_settings,
)
from skillweave.errors import AgentSpecError, ConfigError
from skillweave.sandbox import Isolation, describe_isolation, isolation_of_health
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.agent import AgentEvent, AgentSpec
    from skillweave.cli.agent_run import FinishedRun
    from skillweave.cli.compose import OpenedEngine
    from skillweave.engines import Engine

__all__ = [
    "announce_isolation",
    "announce_run",
    "follow_shown",
    "manager_isolation",
    "run_command",
    "run_to_end",
]

TaskArgument = Annotated[str, typer.Argument(help="What the agent should do.")]


def run_command(
    task: TaskArgument,
    *,
    agent: Annotated[
        Path | None,
        typer.Option(
            "--agent",
            "-a",
            help="Agent spec (YAML): skills, limits…; or an agent id (ag-…) of the API at "
            "SKILLWEAVE_API_URL, to run it there.",
        ),
    ] = None,
    dirs: DirsOption = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="A model profile (MODEL__PROFILES__<NAME>__*) or PROVIDER:NAME, e.g. "
            "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or scripted:FILE.yaml (overrides "
            "the agent spec and MODEL__*; on Temporal the worker resolves it).",
        ),
    ] = None,
    files: Annotated[
        list[Path] | None,
        typer.Option("--file", "-f", help="Attach a file to the task (repeatable)."),
    ] = None,
    engine: Annotated[
        ExecutionEngine | None,
        typer.Option(
            help="temporal | direct (default: WORKFLOW__EXECUTION_ENGINE, temporal unless set); "
            "direct runs it in this process, not durably."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Copy the output artifacts into this folder.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each event, then the result, as JSON lines.")
    ] = False,
) -> None:
    """Start a run of an agent on TASK: the live view of every step, then the answer and outputs.

    Temporal engine (the default): the run is a durable workflow on
    WORKFLOW__TEMPORAL_ADDRESS, run by a worker (`skillweave worker`, or `skillweave dev` for
    the whole stack) with the worker's store, on the model the run names (resolved by the
    worker) or the worker's default; the result ends with the run's page in the Temporal UI.
    While no worker answers (one was killed or is restarting) the command says it waits for
    one and goes on following. No server at the address: exit 2, naming both remedies.
    Direct engine (--engine direct or WORKFLOW__EXECUTION_ENGINE=direct, for local
    development): the run goes on in this process and ends with it; scripts run in sandboxes
    through SANDBOX__MANAGER_URL when set, otherwise through a manager with a local warm pool
    started here; an approval the run asks for is asked here, after its line (approve? y/N,
    a note after a space), and denied at once when stdin or stderr is not a terminal.
    Exit 0 when the run completes, 1 when it fails, is cancelled or runs out of budget, 2 for
    bad input, 75 when no worker answered for WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS (the run
    may still be running), 130 on Ctrl-C (a direct run is cancelled; a Temporal run keeps
    going).
    """
    from skillweave.cli.agent_run import check_files, choose_model, load_agent, run_model
    from skillweave.cli.compose import open_engine
    from skillweave.cli.direct_approvals import deciding
    from skillweave.cli.remote import is_agent_id
    from skillweave.cli.versions import resolve_spec_pins
    from skillweave.engines import new_run_id

    files = files or []
    if agent is not None and is_agent_id(str(agent)) and not agent.exists():
        if model is not None or engine is not None:
            raise fail(
                "--model and --engine do not apply to a run on the API: its agent and "
                "configured engine decide",
                code=EXIT_USAGE,
            )
        _run_on_api(task, str(agent), files=files, out_dir=out_dir, as_json=as_json)
        return
    settings = get_settings()
    chosen_engine = engine if engine is not None else settings.workflow.execution_engine
    registry = registry_of(dirs)
    with errors(), spec_errors():
        spec = load_agent(agent, registry)
        problem = spec.acquisition.registries_problem(
            [source.label for source in settings.skills.registries]
        )
        if problem is not None:
            raise AgentSpecError(str(agent), problem)
        chosen = choose_model(settings.model, option=model, spec=spec, spec_path=agent)
        # The run names its model wherever it runs (a worker resolves it with its settings).
        spec = spec.model_copy(
            update={"model": run_model(option=model, spec=spec, spec_path=agent)}
        )
    with errors():
        check_files(files)
    run_id = new_run_id()
    interrupted, hint, header = _say_where(chosen_engine, run_id, spec, chosen, as_json=as_json)
    shown = RunOutput(as_json=as_json, out_dir=out_dir)
    workflow = settings.workflow.model_copy(update={"execution_engine": chosen_engine})
    on_engine = settings.model_copy(update={"workflow": workflow})

    async def main() -> FinishedRun:
        with shown.live(), _without_temporal(chosen_engine):
            async with open_engine(on_engine, registry=registry, model=chosen) as opened:
                if header is not None:
                    header(opened.engine)
                if opened.services is not None and opened.services.models is not None:
                    # A direct engine's runs are this user's: a script they name may be any file.
                    opened.services.models.any_script = True
                pinned = await resolve_spec_pins(spec, opened.store, registry, source=str(agent))
                return await follow_shown(
                    opened,
                    shown,
                    run_id=run_id,
                    task=task,
                    agent=pinned,
                    files=files,
                    on_event=deciding(opened.engine, run_id, shown),
                )

    done = run_to_end(main(), interrupted=interrupted, hint=hint)
    shown.report(done)
    if done.result.status != "completed":
        raise typer.Exit(EXIT_PROBLEM)


def _say_where(
    engine: ExecutionEngine, run_id: str, spec: AgentSpec, model: ModelSettings, *, as_json: bool
) -> tuple[str, str | None, Callable[[Engine], None] | None]:
    """What the run's engine needs checked, and the run's header (without --json); returns
    what to say when the run is interrupted (the line and its hint), and the header to say
    once the engine is open (None: said already, or --json): on Temporal it names the task
    queue the run runs on, the configured one routed to its store, which the engine knows."""
    from skillweave.cli.agent_run import check_model, scripted_note

    settings = get_settings()
    workflow = settings.workflow
    match engine:
        case "direct":
            with errors():
                check_model(model)
            if settings.sandbox.manager_url:  # the run's scripts run there: can they?
                from skillweave.cli.checks import preflight

                preflight(settings, "run", show_ok=False)
            if not as_json:
                if warning := scripted_note(model):
                    err.print(Text(warning, style="bold yellow"), soft_wrap=True)
                announce_run(run_id, spec, "engine direct")
            return f"interrupted: run {run_id} was cancelled", None, None
        case "temporal":
            from skillweave.cli.checks import client_limits_check, print_checks
            from skillweave.engines.temporal import TemporalEngine, configure_logging

            if (told := client_limits_check(settings)) is not None:
                print_checks([told])  # the run runs under its worker's limits, not these

            def header(opened: Engine) -> None:
                # The worker's manager runs its scripts: nothing to say of it here.
                on = f"model {spec.model}" if spec.model else "the worker's default model"
                # Its store's queue (the configured one while the store's id is not read).
                queue = workflow.task_queue
                if isinstance(opened, TemporalEngine):
                    queue = opened.task_queue
                announce_run(
                    run_id,
                    spec,
                    f"engine temporal at {workflow.temporal_address}, task queue {queue!r} ({on})",
                )

            configure_logging(verbose=False)
            hint = (
                f"Follow it with `skillweave runs logs {run_id} --follow`, stop it with "
                f"`skillweave runs cancel {run_id}`."
            )
            interrupted = f"interrupted: run {run_id} keeps running on Temporal"
            return interrupted, hint, None if as_json else header
        case _:
            assert_never(engine)


@contextlib.contextmanager
def _without_temporal(engine: ExecutionEngine) -> Iterator[None]:
    """No Temporal server for a run on the temporal engine: the line that names both
    remedies (start one, or run the run on the direct engine)."""
    try:
        yield
    except ConfigError as exc:
        if engine == "temporal":
            # Raised by the Temporal engine only, so its module is loaded by then.
            from skillweave.engines.temporal import TemporalUnreachableError

            if isinstance(exc, TemporalUnreachableError):
                raise ConfigError(
                    exc.or_direct("--engine direct (or WORKFLOW__EXECUTION_ENGINE=direct)")
                ) from None
        raise


# --- what `run` and `demo` share -------------------------------------------------------------


def announce_run(run_id: str, agent: AgentSpec, where: str) -> None:
    """The run's header line on stderr: its id, agent and engine."""
    shown_run = terminal_safe(f"run {run_id} · agent {agent.name} · {where}")
    err.print(Text(shown_run, style="dim"), soft_wrap=True)


async def announce_isolation(manager_url: str) -> None:
    """How the manager a run's scripts run on (one this process started, or
    ``SANDBOX__MANAGER_URL``) contains them: the mode in force, as its ``/healthz`` says (in
    red when scripts are not contained, or it did not say)."""
    told = await manager_isolation(manager_url)
    if told is None:
        note = f"the manager at {manager_url} did not say how it contains scripts (GET /healthz)"
        style = "bold red"
    else:
        mode, setting = told
        note = describe_isolation(mode, setting=setting)
        style = "bold red" if mode in ("none", "rlimits") else "dim"
    err.print(Text(terminal_safe(note), style=style), soft_wrap=True)


async def manager_isolation(manager_url: str) -> tuple[Isolation | None, IsolationChoice] | None:
    """The isolation mode in force and the setting of the manager at `manager_url`, as its
    ``/healthz`` says (:func:`~skillweave.sandbox.models.isolation_of_health`; None: it did
    not say, or cannot be reached)."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=3.0) as client:
            health = (await client.get(f"{manager_url.rstrip('/')}/healthz")).json()
    except (httpx.HTTPError, ValueError):
        return None
    return isolation_of_health(health)


async def follow_shown(
    opened: OpenedEngine[Engine],
    shown: RunOutput,
    *,
    run_id: str,
    task: str,
    agent: AgentSpec,
    files: Sequence[Path],
    on_event: Callable[[AgentEvent], None] | None = None,
) -> FinishedRun:
    """Run the run on `opened` (:func:`~skillweave.cli.agent_run.run_agent`) with `shown` following
    it, after saying how its manager contains scripts when this process chose that manager
    (:func:`announce_isolation`), each event told to `on_event` (default: `shown`); a follower
    that gives up waiting for a worker ends the process (exit 75)."""
    from skillweave.cli.agent_run import run_agent

    if opened.manager_url is not None and not shown.as_json:
        await announce_isolation(opened.manager_url)
    with follower_gives_up():
        return await run_agent(
            opened,
            run_id=run_id,
            task=task,
            agent=agent,
            files=files,
            out_dir=shown.out_dir,
            on_event=shown.event if on_event is None else on_event,
            on_note=shown.note,
            on_start=lambda started: shown.started(opened.ui_link(started)),
        )


def run_to_end(
    main: Coroutine[Any, Any, FinishedRun], *, interrupted: str, hint: str | None = None
) -> FinishedRun:
    """Run `main` in an event loop; its errors become one line and an exit code, and Ctrl-C
    the `interrupted` line (and `hint`) with exit 130."""
    try:
        with errors():
            return asyncio.run(main)
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise fail(interrupted, hint=hint, code=EXIT_INTERRUPTED) from None


# --- run --agent ag-… ---------------------------------------------------------------------------


def _run_on_api(
    task: str, agent_id: str, *, files: Sequence[Path], out_dir: Path | None, as_json: bool
) -> None:
    """`run --agent ag-…`: a run of an agent on the API at SKILLWEAVE_API_URL, followed live."""
    from skillweave.cli.remote import open_remote
    from skillweave.cli.remote_runs import run_remote

    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise fail(f"no such file: {', '.join(missing)}", code=EXIT_USAGE)
    shown = RunOutput(as_json=as_json, out_dir=out_dir)
    started: list[str] = []

    def on_start(run: dict[str, Any]) -> None:
        started.append(run["id"])
        if not as_json:
            shown_run = f"run {run['id']} · agent {run['agent']['name']} ({agent_id}) · API {url}"
            err.print(Text(terminal_safe(shown_run)), style="dim", soft_wrap=True)

    try:
        with errors(), open_remote(get_settings()) as api:
            url = api.url
            with shown.live():
                done = run_remote(
                    api,
                    agent_id=agent_id,
                    task=task,
                    files=files,
                    out_dir=out_dir,
                    on_start=on_start,
                    on_event=shown.event,
                    on_note=shown.note,
                )
    except KeyboardInterrupt:
        where = f"run {started[0]} keeps running on the API" if started else "no run was started"
        raise fail(f"interrupted: {where}", code=EXIT_INTERRUPTED) from None
    shown.report(done)
    if done.result.status != "completed":
        raise typer.Exit(EXIT_PROBLEM)
