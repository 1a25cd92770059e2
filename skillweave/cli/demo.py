"""``skillweave demo``: the example run of ``examples/demo`` offline, a scripted model and real
everything else, on an embedded Temporal stack started for it (or the direct engine).

It shows its run as ``run`` does (:mod:`skillweave.cli.run_command`); ``skillweave dev`` borrows
its script (:func:`demo_folder`) when no model is configured.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal, assert_never

import typer
from rich.text import Text

from skillweave.cli.console import err, out, shown_path
from skillweave.cli.exits import EXIT_USAGE, errors, fail, spec_errors
from skillweave.cli.library import DirsOption, registry_of
from skillweave.cli.run_command import announce_run, follow_shown, run_to_end
from skillweave.cli.view import RunOutput
from skillweave.config import ModelSettings, Settings, bundled_skills_dir, get_settings
from skillweave.errors import ConfigError

if TYPE_CHECKING:
    from skillweave.agent import AgentSpec
    from skillweave.cli.agent_run import FinishedRun
    from skillweave.cli.compose import OpenedEngine
    from skillweave.engines import Engine, RunResult
    from skillweave.engines.temporal import TemporalEngine
    from skillweave.skills import SkillRegistry

__all__ = ["DEMO_TASK", "demo", "demo_folder", "real_model_commands"]

DEMO_TASK: Final = "Profile the attached sales.csv and write a short data-quality report"

DemoEngine = Literal["temporal", "direct"]
"""temporal: an embedded stack started for the demo; direct: the loop in this process."""


def demo_folder() -> Path:
    """``examples/demo`` of the source tree this package runs from."""
    folder = Path(__file__).resolve().parents[2] / "examples" / "demo"
    needed = ("agent.yaml", "script.yaml", "sales.csv")
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise fail(
            f"the demo needs {', '.join(missing)} in {folder}, which is not there",
            hint="`skillweave demo` runs from a source checkout (git clone, then `make demo`).",
            code=EXIT_USAGE,
        )
    return folder


def demo(
    dirs: DirsOption = None,
    engine: Annotated[
        DemoEngine,
        typer.Option(
            help="temporal: an embedded Temporal stack started for the demo; direct: the loop "
            "in this process."
        ),
    ] = "temporal",
    keep: Annotated[
        bool,
        typer.Option(
            "--keep", help="temporal: keep the stack and its UI up after the run, until Ctrl-C."
        ),
    ] = False,
) -> None:
    """Run the example run (examples/demo) offline: a scripted model, real everything else.

    The agent profiles examples/demo/sales.csv and writes a data-quality report with the
    bundled data-toolkit skills. By default the run is a Temporal workflow on an embedded
    stack started for the demo (a dev server on a free port if 7233 is taken, in memory; a
    worker and an MCP manager with a local warm pool in this process); --engine direct runs
    the loop in-process instead. The scripts run in one-shot sandboxes, the artifacts go to
    the configured store. Only the model is scripted (it replays examples/demo/script.yaml);
    `skillweave run` takes a real one.
    """
    from skillweave.cli.agent_run import check_files, load_agent
    from skillweave.cli.compose import open_direct_engine
    from skillweave.engines import new_run_id

    folder = demo_folder()
    settings = get_settings()
    if engine == "temporal":
        from skillweave.cli.temporal_server import temporal_binary

        try:
            temporal_binary()
        except ConfigError as exc:
            raise fail(
                str(exc), hint="Or run `skillweave demo --engine direct`.", code=EXIT_USAGE
            ) from None
    registry = registry_of(dirs or [bundled_skills_dir()])
    with spec_errors():
        spec = load_agent(folder / "agent.yaml", registry)
    script, data = folder / "script.yaml", folder / "sales.csv"
    model = settings.model.model_copy(update={"provider": "scripted", "name": str(script)})
    _introduce(folder, spec, engine)
    with errors():
        check_files([data])
    run_id = new_run_id()
    shown = RunOutput(as_json=False, out_dir=None)

    async def follow(opened: OpenedEngine[Engine]) -> FinishedRun:
        return await follow_shown(
            opened, shown, run_id=run_id, task=DEMO_TASK, agent=spec, files=[data]
        )

    async def on_embedded_stack() -> FinishedRun:
        async with _embedded_stack(settings, registry=registry, model=model) as opened:
            with shown.live():
                done = await follow(opened)
            if keep:
                await _stay_up(opened, shown, done)
            return done

    async def in_this_process() -> FinishedRun:
        with shown.live():
            async with open_direct_engine(settings, registry=registry, model=model) as opened:
                return await follow(opened)

    match engine:
        case "temporal":
            announce_run(run_id, spec, "engine temporal (embedded stack)")
            done = run_to_end(
                on_embedded_stack(),
                interrupted=f"interrupted: run {run_id} was cancelled and the embedded stack "
                "stopped",
            )
        case "direct":
            announce_run(run_id, spec, "engine direct")
            done = run_to_end(
                in_this_process(), interrupted=f"interrupted: run {run_id} was cancelled"
            )
        case _:
            assert_never(engine)
    if not shown.reported:
        shown.report(done)
    _conclude(folder, done.result, engine, kept=keep)


def _introduce(folder: Path, spec: AgentSpec, engine: DemoEngine) -> None:
    """What the demo does, and that its model is a script."""
    script, data = folder / "script.yaml", folder / "sales.csv"
    out.rule("[bold]skillweave demo[/]")
    out.print(f"task:  {DEMO_TASK}", soft_wrap=True)
    out.print(
        f"agent: {shown_path(folder / 'agent.yaml')} (skills: {', '.join(spec.skills or ())})"
        f" · file: {shown_path(data)}",
        soft_wrap=True,
    )
    where = (
        "a Temporal workflow on an embedded stack (dev server, worker, MCP manager)"
        if engine == "temporal"
        else "the agent loop in this process (direct engine)"
    )
    out.print(
        Text(
            f"model: SCRIPTED, not a real model: it replays {shown_path(script)}. Everything "
            f"else is real: {where}, skill activation, scripts in one-shot sandboxes from a "
            "local warm pool, artifacts in the store.",
            style="bold yellow",
        ),
        soft_wrap=True,
    )


_REAL_MODEL_ENV: Final = "MODEL__PROVIDER=openai MODEL__NAME=gpt-4o-mini MODEL__API_KEY=sk-…"


def real_model_commands(folder: Path, engine: DemoEngine) -> list[str]:
    """The commands that run the demo's task with a real model on `engine`, named explicitly
    so that they mean the same whatever WORKFLOW__EXECUTION_ENGINE's default is: on Temporal,
    a stack whose worker has the model (``dev``) and the run; direct, the run alone."""
    run = (
        f'skillweave run --engine {engine} "{DEMO_TASK}" '
        f"--agent {shown_path(folder / 'agent.yaml')} --file {shown_path(folder / 'sales.csv')}"
    )
    match engine:
        case "temporal":
            # A run on Temporal names its model; the worker resolves it, with its own key.
            return [f"{_REAL_MODEL_ENV} skillweave dev", run]
        case "direct":
            return [f"{_REAL_MODEL_ENV} {run}"]
        case _:
            assert_never(engine)


def _conclude(folder: Path, result: RunResult, engine: DemoEngine, *, kept: bool) -> None:
    """How to run the task with a real model, on the engine the demo used; exit 1 unless the
    run completed."""
    from skillweave.cli.agent_run import REAL_MODEL_HINT

    script = folder / "script.yaml"
    commands = real_model_commands(folder, engine)
    if engine == "temporal":
        gone = (
            "The embedded stack stopped with the demo."
            if kept
            else "The Temporal server above lived in memory and stopped with the demo, and "
            "its UI with it (`skillweave demo --keep` keeps them up)."
        )
        how = (
            f"{gone} To keep runs and the UI, run the first command below in one terminal "
            f"(`skillweave dev`, with a real model) and the second (`skillweave run --engine "
            f"temporal …`) in another."
        )
        out.print(Text(how, style="dim"), soft_wrap=True)
    out.print(
        Text(
            f"The model above was scripted ({shown_path(script)}); {REAL_MODEL_HINT}, e.g.:",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    for command in commands:
        out.print(Text(f"  {command}"), soft_wrap=True)
    if result.status != "completed":
        raise fail(
            f"the demo run did not complete: {result.status}: {result.reason}",
            hint="Run `make test` to see which part is broken.",
        )


@asynccontextmanager
async def _embedded_stack(
    settings: Settings, *, registry: SkillRegistry, model: ModelSettings
) -> AsyncIterator[OpenedEngine[TemporalEngine]]:
    """An embedded stack for the demo, on the usual ports unless they are taken (by
    `skillweave dev`, say), its server in memory; a spinner while it starts."""
    from skillweave.cli.compose import open_embedded_engine
    from skillweave.cli.temporal_server import port_or_free
    from skillweave.engines.temporal import configure_logging

    configure_logging(verbose=False)
    starting = (
        err.status("starting the embedded stack (Temporal, MCP manager, worker)…")
        if err.is_terminal
        else nullcontext()
    )
    async with AsyncExitStack() as parts:
        with starting:
            opened = await parts.enter_async_context(
                open_embedded_engine(
                    settings,
                    registry=registry,
                    model=model,
                    port=port_or_free(7233),
                    ui_port=port_or_free(8233),
                )
            )
        workflow = opened.settings.workflow
        err.print(
            Text(
                f"embedded stack: Temporal {workflow.temporal_address} · UI {opened.ui_url} · "
                f"MCP manager {opened.manager_url} · task queue {opened.engine.task_queue}",
                style="dim",
            ),
            soft_wrap=True,
        )
        yield opened


async def _stay_up(opened: OpenedEngine[Engine], shown: RunOutput, done: FinishedRun) -> None:
    """`--keep`: the run's result now, then the stack (and its UI) stays up until Ctrl-C."""
    from skillweave.cli.signals import interrupt_cancels

    shown.report(done)
    err.print(
        Text(f"The embedded stack stays up (UI {opened.ui_url}) until Ctrl-C.", style="bold"),
        soft_wrap=True,
    )
    current = asyncio.current_task()
    with interrupt_cancels(current):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if current is not None:
                current.uncancel()
