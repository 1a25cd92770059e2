"""``skillweave``: the command line (typer + rich).

Commands print exact texts (catalog, activation payload) to stdout, tables and progress to
the terminal, and diagnostics to stderr; ``--json`` gives machine-readable output. Text that
comes from scripts, models, skill libraries or remote services is attacker-controlled: it is
printed through :func:`~skillweave.terminal.terminal_safe` (control characters shown as
escapes) and in a ``rich.text.Text`` (never read as markup or emoji codes), and JSON through
:func:`~skillweave.terminal.terminal_safe_json` (the same values, with the characters a
terminal would act on written as ``\\u`` escapes).
Exit codes: 0 success, 1 the command ran and found a problem (invalid skills, unknown skill),
2 bad usage (unknown option, missing path), 75 a follower of a Temporal job gave up waiting
for a worker (the job may still be running). Every error is one line plus what to do.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, get_args

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillweave import __version__
from skillweave.cli.runs import runs_app
from skillweave.config import (
    CatalogMode,
    ExecutionEngine,
    IsolationChoice,
    SandboxSettings,
    SelectionMode,
    bundled_skills_dir,
    get_settings,
    settings_problem,
)
from skillweave.errors import ConfigError, SkillweaveError
from skillweave.sandbox.models import describe_isolation
from skillweave.skills import (
    Diagnostic,
    Skill,
    SkillLibrary,
    SkillRegistry,
    build_catalog,
    extract_package,
    render_activation,
    validate_paths,
    write_package,
)
from skillweave.skills.package import PackageLimits
from skillweave.terminal import terminal_safe, terminal_safe_json

if TYPE_CHECKING:
    from skillweave.agent.events import AgentEvent
    from skillweave.agent.spec import AgentSpec
    from skillweave.cli.run import JobRun
    from skillweave.config import ModelSettings, Settings
    from skillweave.engines import JobResult
    from skillweave.engines.temporal import FollowNote, NoWorkerError

__all__ = ["app", "main"]

app = typer.Typer(
    name="skillweave",
    help="Durable skills for long-running LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
skills_app = typer.Typer(
    help="Validate, list, search and package skill libraries.", no_args_is_help=True
)
app.add_typer(skills_app, name="skills")
sandbox_app = typer.Typer(help="Run skill scripts in sandboxes.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(runs_app, name="runs")
agents_app = typer.Typer(
    help="Make and list agents on the API at SKILLWEAVE_API_URL.", no_args_is_help=True
)
app.add_typer(agents_app, name="agents")


def _print_version(value: bool) -> None:
    if value:
        out.print(f"skillweave {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Durable skills for long-running LLM agents."""


out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

DirsOption = Annotated[
    list[Path] | None,
    typer.Option("--dir", "-d", help="Skill library root (repeatable; overrides SKILLS__DIRS)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
_MAX_SHOWN_WARNINGS = 20


def _fail(message: str, *, hint: str | None = None, code: int = 1) -> typer.Exit:
    # Messages quote skill files, script output, model text and remote answers.
    err.print(Text(f"error: {terminal_safe(message)}", style="bold red"), soft_wrap=True)
    if hint:
        err.print(Text(terminal_safe(hint), style="dim"))
    return typer.Exit(code)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn skillweave errors into one clear line and an exit code."""
    try:
        yield
    except ConfigError as exc:
        raise _fail(str(exc), code=2) from None
    except SkillweaveError as exc:
        raise _fail(str(exc)) from None


def _gave_up(exc: NoWorkerError) -> NoReturn:
    """A follower of a Temporal job gave up waiting for a worker: the job may still be running,
    so not the exit code of a job that failed.

    The process ends here, at once: the Temporal client still holds a long poll on the job,
    and ending the interpreter the usual way tears its runtime down under that call, which
    can abort the process (SIGABRT) instead of exiting with this code.
    """
    from skillweave.cli.run import EXIT_NO_WORKER

    _fail(
        str(exc),
        hint=f"Follow it again with `skillweave runs logs {exc.job_id} --follow` once a worker "
        f"(`skillweave worker`, or `skillweave dev`) polls task queue {exc.task_queue!r}; "
        "WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS sets how long to wait (0: for ever).",
        code=EXIT_NO_WORKER,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_NO_WORKER)


def _start_tracing(service: str) -> None:
    """Tracing for a long-running command, when the OTEL_* variables ask for it (see
    ``skillweave.telemetry.tracing``); an exporter we do not ship is a usage error."""
    from skillweave.telemetry import tracing

    with _errors():
        tracing.setup(service)


def _print_diagnostics(diagnostics: Sequence[Diagnostic], *, limit: int | None = None) -> None:
    shown = diagnostics if limit is None else diagnostics[:limit]
    for diagnostic in shown:
        # At load time a fatal diagnostic means the skill was left out, so say exactly that.
        label, style = ("skipped", "red") if diagnostic.fatal else ("warning", "yellow")
        err.print(Text(terminal_safe(f"{label}: {diagnostic}"), style=style), soft_wrap=True)
    if len(diagnostics) > len(shown):
        rest = len(diagnostics) - len(shown)
        err.print(Text(f"… {rest} more; run `skillweave skills validate` to see all", style="dim"))


def _library(dirs: list[Path] | None) -> SkillLibrary:
    settings = get_settings().skills
    if dirs:
        missing = [str(d) for d in dirs if not d.is_dir()]
        if missing:
            raise _fail(f"not a directory: {', '.join(missing)}", code=2)
    with _errors():
        return SkillLibrary(settings, dirs=dirs or None)


def _registry(dirs: list[Path] | None) -> SkillRegistry:
    library = _library(dirs)
    if err.is_terminal:
        with err.status("Scanning skill libraries…", spinner="dots"):
            registry = library.refresh()
    else:
        registry = library.refresh()
    _print_diagnostics(registry.diagnostics, limit=_MAX_SHOWN_WARNINGS)
    return registry


def _skill_json(skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "path": str(skill.path),
        "version": skill.version,
        "type": skill.type,
        "parent": skill.parent,
        "children": list(skill.children),
        "enabled": skill.enabled,
        "source": str(skill.source) if skill.source else None,
    }


def _dump(data: object) -> None:
    sys.stdout.write(terminal_safe_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


@skills_app.command("validate")
def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="Skill folders, SKILL.md files or library roots.")
    ],
    strict: Annotated[bool, typer.Option(help="Report every spec violation as an error.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Check skills against the Agent Skills spec. Exit 1 when any error is found.

    Without --strict only what the runtime would refuse (no description, unparseable YAML)
    is an error; other violations are warnings.
    """
    with _errors():
        report = validate_paths(paths, strict=strict)
    if as_json:
        _dump(
            {
                "ok": report.ok,
                "strict": strict,
                "skills_checked": report.skills_checked,
                "errors": [_diagnostic_json(d) for d in report.errors],
                "warnings": [_diagnostic_json(d) for d in report.warnings],
            }
        )
    else:
        # One diagnostic per line, never wrapped, so that the output can be grepped.
        for diagnostic in report.errors:
            out.print(Text(terminal_safe(f"{diagnostic}"), style="red"), soft_wrap=True)
        for diagnostic in report.warnings:
            out.print(Text(terminal_safe(f"warning: {diagnostic}"), style="yellow"), soft_wrap=True)
        summary = (
            f"{report.skills_checked} skill folder(s) checked: "
            f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
            + (" (strict)" if strict else "")
        )
        out.print(Text(summary, style="green" if report.ok else "bold red"))
    if not report.ok:
        raise typer.Exit(1)


def _diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "path": diagnostic.path,
        "field": diagnostic.field,
        "message": diagnostic.message,
        "fatal": diagnostic.fatal,
    }


@skills_app.command("list")
def list_skills(dirs: DirsOption = None, as_json: JsonOption = False) -> None:
    """List every skill found, as a tree."""
    registry = _registry(dirs)
    if as_json:
        _dump([_skill_json(skill) for skill in registry])
        return
    if not len(registry):
        err.print("No skills found. Point --dir at a skill library or set SKILLS__DIRS.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("skill", "type", "version", "description"):
        table.add_column(column, overflow="fold" if column == "description" else "ellipsis")

    def add(skill: Skill, depth: int) -> None:
        name = Text("  " * depth + ("└ " if depth else "") + terminal_safe(skill.name))
        if not registry.is_enabled(skill.name):
            name.stylize("dim")
        table.add_row(
            name,
            Text(terminal_safe(skill.type)),
            Text(terminal_safe(skill.short_version)),
            Text(terminal_safe(skill.description)),
        )
        for child in registry.children_of(skill.name):
            add(child, depth + 1)

    for root in registry.roots():
        add(root, 0)
    out.print(table)
    out.print(Text(f"{len(registry)} skills in {len(registry.roots())} roots", style="dim"))


@skills_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="What the task is about.")],
    dirs: DirsOption = None,
    top: Annotated[int, typer.Option("--top", "-k", min=1, help="How many results.")] = 5,
    selection: Annotated[
        SelectionMode | None,
        typer.Option(help="auto | keyword | bm25 | embeddings | hybrid (default: the setting)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Rank skills by relevance to QUERY, with the configured selection strategy."""
    registry = _registry(dirs)
    if selection is not None:
        registry.selection = selection
    with _errors():
        hits = registry.search(query, top_k=top)
        strategy = registry.selector.strategy
    if as_json:
        _dump(
            [{"name": hit.name, "score": round(hit.score, 4), "strategy": strategy} for hit in hits]
        )
        return
    if not hits:
        err.print("No skill matches that query.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("score", justify="right")
    table.add_column("skill")
    table.add_column("description", overflow="fold")
    for hit in hits:
        skill = registry.get(hit.name)
        table.add_row(
            f"{hit.score:.2f}",
            Text(terminal_safe(skill.name)),
            Text(terminal_safe(skill.description)),
        )
    out.print(table)
    out.print(Text(f"ranked by {strategy}", style="dim"))


@skills_app.command("catalog")
def catalog(
    dirs: DirsOption = None,
    mode: Annotated[CatalogMode | None, typer.Option(help="all | enabled | auto")] = None,
    query: Annotated[str | None, typer.Option(help="The task, for auto mode.")] = None,
    top: Annotated[int | None, typer.Option("--top", "-k", min=1, help="Auto: how many.")] = None,
    max_chars: Annotated[
        int | None, typer.Option(min=0, help="Character budget (0 = none; default from settings).")
    ] = None,
) -> None:
    """Print the exact tier-1 catalog text the model gets (control characters escaped)."""
    settings = get_settings().skills
    registry = _registry(dirs)
    result = build_catalog(
        registry,
        mode=mode or settings.catalog_mode,
        query=query,
        top_k=top or settings.catalog_top_k,
        max_chars=settings.catalog_max_chars if max_chars is None else max_chars,
    )
    sys.stdout.write(terminal_safe(result.text))
    if result.shortened or result.hidden:
        err.print(
            Text(
                f"{len(result.names)} listed, {result.hidden} behind search_skills, "
                f"{result.shortened} description(s) shortened to fit {len(result.text)} chars",
                style="dim",
            ),
            soft_wrap=True,
        )


@skills_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Skill name.")],
    dirs: DirsOption = None,
) -> None:
    """Print the exact activation payload of a skill (what activate_skill returns), with
    control characters escaped."""
    settings = get_settings().skills
    registry = _registry(dirs)
    with _errors():
        skill = registry.get(name)
        children = registry.children_of(name, enabled_only=True)
    payload = render_activation(
        skill, children=children, max_listed=settings.activation_resource_listing
    )
    sys.stdout.write(terminal_safe(payload))


def _limits() -> PackageLimits:
    settings = get_settings().skills
    return PackageLimits(
        max_files=settings.package_max_files,
        max_bytes=settings.package_max_bytes,
        max_ratio=settings.package_max_ratio,
    )


@skills_app.command("pack")
def pack(
    directory: Annotated[Path, typer.Argument(help="The skill folder to pack.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The ZIP file to write.")],
) -> None:
    """Pack a skill folder (with its sub-skills) into a deterministic ZIP."""
    if not directory.is_dir():
        raise _fail(f"not a directory: {directory}", code=2)
    with _errors():
        written = write_package(directory, output, limits=_limits())
    size = written.stat().st_size
    out.print(Text(terminal_safe(f"packed {directory} → {written} ({size} bytes)")))


@skills_app.command("unpack")
def unpack(
    archive: Annotated[Path, typer.Argument(help="The ZIP file to extract.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to extract it.")],
) -> None:
    """Safely extract a skill package (refuses traversal, symlinks, bombs, overwrites)."""
    if not archive.is_file():
        raise _fail(f"no such file: {archive}", code=2)
    with _errors():
        found = extract_package(archive, output, limits=_limits())
    for skill_dir in found:
        out.print(Text(terminal_safe(f"extracted skill folder {skill_dir}")), soft_wrap=True)


@skills_app.command("build")
def build(
    name: Annotated[str, typer.Argument(help="The skill whose dependencies to prepare.")],
    dirs: DirsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Prepare a skill's environment of declared dependencies (requirements.txt, PEP 723,
    package.json, its `dependencies` field) ahead of its first run: built once by the manager
    at SANDBOX__MANAGER_URL (or one started here), in a build sandbox, and stored."""
    import asyncio

    from skillweave.cli.sandbox import prepare_environment

    registry = _registry(dirs)
    with _errors():
        skill = registry.get(name)
        prepared = asyncio.run(prepare_environment(get_settings(), skill))
    if as_json:
        _dump(prepared)
        return
    if not prepared["needed"]:
        out.print(Text(terminal_safe(f"{name} declares no dependencies: nothing to build")))
        return
    python = prepared["dependencies"].get("python") or []
    node = prepared["dependencies"].get("node") or []
    how = "built" if prepared["built"] else "already built"
    out.print(
        Text(
            terminal_safe(
                f"{name} {skill.version[:12]}: environment ready, {how} ({len(python)} Python, "
                f"{len(node)} Node dependencies; {prepared['bytes']:,} bytes; "
                f"{prepared['seconds']:.1f} s)"
            )
        ),
        soft_wrap=True,
    )


@skills_app.command("upload")
def upload(
    archive: Annotated[Path, typer.Argument(help="The skill package (ZIP) to upload.")],
    *,
    name: Annotated[str | None, typer.Option(help="Override the skill's name.")] = None,
    description: Annotated[
        str | None, typer.Option(help="Override the skill's description.")
    ] = None,
) -> None:
    """Upload a skill package (ZIP, e.g. from `skills pack`) to the API at SKILLWEAVE_API_URL."""
    from skillweave.cli.remote import open_remote

    if not archive.is_file():
        raise _fail(f"no such file: {archive}", code=2)
    with _errors(), open_remote(get_settings()) as api:
        skill = api.upload_skill(archive, name=name, description=description)
    shown = terminal_safe(f"uploaded {skill['name']} version {skill['latest']}")
    out.print(Text(shown), soft_wrap=True)


@agents_app.command("create")
def agents_create(
    spec_file: Annotated[Path, typer.Argument(help="An agent spec (YAML), as for `run --agent`.")],
    as_json: JsonOption = False,
) -> None:
    """Make an agent on the API from an agent spec file; prints its id.

    The spec's model, skills and catalog.mode become the API's model_id, skill_ids and
    catalog_mode; fields the API does not take are named on stderr.
    """
    from skillweave.cli.remote import agent_body, open_remote

    settings = get_settings()
    with _errors(), _spec_errors():
        body, notes = agent_body(spec_file)
    for note in notes:
        err.print(Text(terminal_safe(f"note: {note}"), style="yellow"), soft_wrap=True)
    with _errors(), open_remote(settings) as api:
        agent = api.create_agent(body)
    if as_json:
        _dump(agent)
        return
    err.print(Text(terminal_safe(f"created agent {agent['name']}"), style="green"), soft_wrap=True)
    sys.stdout.write(terminal_safe(str(agent["id"])) + "\n")


@agents_app.command("list")
def agents_list(as_json: JsonOption = False) -> None:
    """List the agents on the API, oldest first."""
    from skillweave.cli.remote import open_remote

    with _errors(), open_remote(get_settings()) as api:
        agents = api.list_agents()
    if as_json:
        _dump(agents)
        return
    if not agents:
        err.print("No agents yet. Make one with `skillweave agents create SPEC.yaml`.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("id", "name", "model", "skills"):
        table.add_column(column, overflow="fold" if column == "skills" else "ellipsis")
    for agent in agents:
        cells = (
            agent["id"],
            agent["name"],
            agent.get("model_id") or "(server's)",
            ", ".join(agent.get("skill_ids") or []),
        )
        table.add_row(*(Text(terminal_safe(str(cell))) for cell in cells))
    out.print(table)


@agents_app.command("show")
def agents_show(agent_id: Annotated[str, typer.Argument(help="The agent's id (ag-…).")]) -> None:
    """Print one agent of the API as JSON."""
    from skillweave.cli.remote import open_remote

    with _errors(), open_remote(get_settings()) as api:
        _dump(api.get_agent(agent_id))


TaskArgument = Annotated[str, typer.Argument(help="What the agent should do.")]
DEMO_TASK = "Profile the attached sales.csv and write a short data-quality report"


def _demo_folder() -> Path:
    """``examples/demo`` of the source tree this package runs from."""
    folder = Path(__file__).resolve().parents[2] / "examples" / "demo"
    needed = ("agent.yaml", "script.yaml", "sales.csv")
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise _fail(
            f"the demo needs {', '.join(missing)} in {folder}, which is not there",
            hint="`skillweave demo` runs from a source checkout (git clone, then `make demo`).",
            code=2,
        )
    return folder


def _shown_path(path: Path) -> str:
    """`path` relative to the working directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@contextmanager
def _spec_errors() -> Iterator[None]:
    """A bad agent spec is bad input: one line naming the file, exit 2."""
    from skillweave.errors import AgentSpecError

    try:
        yield
    except AgentSpecError as exc:
        raise _fail(f"agent spec {exc}", code=2) from None


class _JobOutput:
    """What a job shows: its events (live view or JSON lines), its UI link, its result."""

    def __init__(self, *, as_json: bool, out_dir: Path | None) -> None:
        from skillweave.cli.run import EventView

        self.as_json = as_json
        self.out_dir = out_dir
        self.view = EventView(err)
        self.reported = False
        self.ui_base: tuple[str, str] | None = None  # (UI URL, namespace)

    def live(self) -> AbstractContextManager[object]:
        """The live view (a spinner on a terminal) while the job runs."""
        return nullcontext() if self.as_json else self.view

    def event(self, event: AgentEvent) -> None:
        if self.as_json:
            sys.stdout.write(terminal_safe_json(event.model_dump_json()) + "\n")
            sys.stdout.flush()
        else:
            self.view(event)

    def note(self, note: FollowNote) -> None:
        """A follower's note (waiting for a worker…): in the live view, or on stderr beside
        JSON lines (stdout keeps only events and the result)."""
        if self.as_json:
            from skillweave.cli.run import EventView

            err.print(EventView.note_line(note), soft_wrap=True)
        else:
            self.view.note(note)

    def started(self, job_id: str) -> None:
        if self.as_json or self.ui_base is None:
            return
        from skillweave.engines.temporal import ui_link

        link = ui_link(self.ui_base[0], self.ui_base[1], job_id)
        err.print(Text(f"Temporal UI: {link}", style="dim"), soft_wrap=True)

    def report(self, done: JobRun) -> None:
        from skillweave.cli.run import print_result

        self.reported = True
        if not self.as_json:
            print_result(done, out=out)
            return
        line = {"kind": "result", **done.result.model_dump(mode="json")}
        if self.out_dir is not None:
            line["copied"] = [str(path) for path in done.copied]
        if done.ui_url is not None:
            line["ui_url"] = done.ui_url
        sys.stdout.write(terminal_safe_json(json.dumps(line, ensure_ascii=False)) + "\n")


async def _temporal_job(settings: Settings, shown: _JobOutput, **job: Any) -> JobRun:
    from skillweave.cli.run import run_temporal_job, store_of
    from skillweave.engines.temporal import NoWorkerError, connect_engine

    shown.ui_base = (settings.workflow.ui_url, settings.workflow.namespace)
    async with store_of(settings) as store:
        engine = await connect_engine(settings, store)
        try:
            with shown.live():
                return await run_temporal_job(
                    settings,
                    engine=engine,
                    store=store,
                    on_start=shown.started,
                    on_note=shown.note,
                    **job,
                )
        except NoWorkerError as exc:
            _gave_up(exc)


async def _embedded_job(
    settings: Settings,
    shown: _JobOutput,
    *,
    registry: SkillRegistry,
    model: ModelSettings,
    keep: bool,
    **job: Any,
) -> JobRun:
    import asyncio

    from skillweave.cli.run import interrupt_cancels, run_temporal_job
    from skillweave.cli.stack import embedded_stack

    starting = (
        err.status("starting the embedded stack (Temporal, MCP manager, worker)…")
        if err.is_terminal and not shown.as_json
        else nullcontext()
    )
    async with AsyncExitStack() as parts:
        with starting:
            stack = await parts.enter_async_context(
                embedded_stack(settings, registry=registry, model=model, any_port=True)
            )
        workflow = stack.settings.workflow
        shown.ui_base = (workflow.ui_url, workflow.namespace)
        if not shown.as_json:
            err.print(
                Text(
                    f"embedded stack: Temporal {stack.address} · UI {stack.ui_url} · "
                    f"MCP manager {stack.manager_url} · task queue {stack.task_queue}",
                    style="dim",
                ),
                soft_wrap=True,
            )
        current = asyncio.current_task()
        with interrupt_cancels(current), shown.live():
            done = await run_temporal_job(
                stack.settings,
                engine=stack.engine,
                store=stack.services.store,
                on_start=shown.started,
                on_note=shown.note,
                model=stack.services.provider.name,
                detach=False,
                check_workers=False,
                **job,
            )
        if keep:
            shown.report(done)
            err.print(
                Text(
                    f"The embedded stack stays up (UI {stack.ui_url}) until Ctrl-C.", style="bold"
                ),
                soft_wrap=True,
            )
            with interrupt_cancels(current):
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    if current is not None:
                        current.uncancel()
        return done


JobEngine = Literal["direct", "temporal", "embedded"]
"""Where ``_run_job`` runs a job: in-process, on the configured Temporal server, or on an
embedded stack started for it."""


def _interrupted(engine: JobEngine, job_id: str) -> typer.Exit:
    match engine:
        case "direct":
            return _fail(f"interrupted: job {job_id} was cancelled", code=130)
        case "temporal":
            return _fail(
                f"interrupted: job {job_id} keeps running on Temporal",
                hint=f"Follow it with `skillweave runs logs {job_id} --follow`, stop it with "
                f"`skillweave runs cancel {job_id}`.",
                code=130,
            )
        case "embedded":
            return _fail(
                f"interrupted: job {job_id} was cancelled and the embedded stack stopped",
                code=130,
            )


def _manager_isolation(sandbox: SandboxSettings) -> IsolationChoice | None:
    """The isolation the job's manager requires: this process's setting when it starts the
    manager itself, else what the remote manager's ``/healthz`` says (None: it did not say)."""
    if sandbox.manager_url is None:
        return sandbox.isolation
    import httpx

    try:
        health = httpx.get(f"{sandbox.manager_url.rstrip('/')}/healthz", timeout=3.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    reported = health.get("isolation") if isinstance(health, dict) else None
    return reported if reported in get_args(IsolationChoice) else None


def _run_job(
    task: str,
    *,
    registry: SkillRegistry,
    agent: AgentSpec,
    model: ModelSettings,
    files: Sequence[Path],
    out_dir: Path | None,
    as_json: bool,
    note: bool = True,
    engine: JobEngine = "direct",
    keep: bool = False,
) -> JobResult:
    """Run a job with the live view (or JSON lines), print how it ended; returns the result.

    ``keep`` (embedded only): after the job, keep the stack (and its UI) up until Ctrl-C.
    """
    import asyncio

    from skillweave.cli.run import check_files, check_job_inputs, new_job_id, run_job, scripted_note

    settings = get_settings()
    with _errors():
        if engine == "temporal":
            check_files(files)
        else:
            check_job_inputs(model, files)
    job_id = new_job_id()
    if not as_json:
        warning = scripted_note(model) if note and engine != "temporal" else None
        if warning:
            err.print(Text(warning, style="bold yellow"), soft_wrap=True)
        where = {
            "direct": "engine direct",
            "temporal": f"engine temporal at {settings.workflow.temporal_address}, task queue "
            f"{settings.workflow.task_queue} (the worker's model)",
            "embedded": "engine temporal (embedded stack)",
        }[engine]
        shown_job = terminal_safe(f"job {job_id} · agent {agent.name} · {where}")
        err.print(Text(shown_job, style="dim"), soft_wrap=True)
        if engine != "temporal":
            # Say how the manager this job uses contains scripts (a worker's is its own).
            isolation = _manager_isolation(settings.sandbox)
            style = "bold red" if isolation in ("none", None) else "dim"
            note = (
                describe_isolation(isolation)
                if isolation is not None
                else f"the manager at {settings.sandbox.manager_url} did not say how it"
                " contains scripts (GET /healthz)"
            )
            err.print(Text(terminal_safe(note), style=style), soft_wrap=True)
    shown = _JobOutput(as_json=as_json, out_dir=out_dir)
    job: dict[str, Any] = {
        "task": task,
        "agent": agent,
        "files": files,
        "job_id": job_id,
        "on_event": shown.event,
        "out_dir": out_dir,
    }

    if engine != "direct":
        from skillweave.engines.temporal import configure_logging

        configure_logging(verbose=False)

    async def direct() -> JobRun:
        with shown.live():
            return await run_job(settings, registry=registry, model=model, **job)

    try:
        with _errors():
            match engine:
                case "direct":
                    done = asyncio.run(direct())
                case "temporal":
                    done = asyncio.run(_temporal_job(settings, shown, **job))
                case "embedded":
                    done = asyncio.run(
                        _embedded_job(
                            settings, shown, registry=registry, model=model, keep=keep, **job
                        )
                    )
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise _interrupted(engine, job_id) from None
    if not shown.reported:
        shown.report(done)
    return done.result


def _run_on_api(
    task: str, agent_id: str, *, files: Sequence[Path], out_dir: Path | None, as_json: bool
) -> None:
    """`run --agent ag-…`: a run of an agent on the API at SKILLWEAVE_API_URL, followed live."""
    from skillweave.cli.remote import open_remote, run_remote

    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise _fail(f"no such file: {', '.join(missing)}", code=2)
    shown = _JobOutput(as_json=as_json, out_dir=out_dir)
    started: list[str] = []

    def on_start(run: dict[str, Any]) -> None:
        started.append(run["id"])
        if not as_json:
            shown_run = f"run {run['id']} · agent {run['agent']['name']} ({agent_id}) · API {url}"
            err.print(Text(terminal_safe(shown_run)), style="dim", soft_wrap=True)

    try:
        with _errors(), open_remote(get_settings()) as api:
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
                )
    except KeyboardInterrupt:
        where = f"run {started[0]} keeps running on the API" if started else "no run was started"
        raise _fail(f"interrupted: {where}", code=130) from None
    shown.report(done)
    if done.result.status != "completed":
        raise typer.Exit(1)


@app.command("run")
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
            help="PROVIDER:NAME, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or "
            "scripted:FILE.yaml (overrides the agent spec and MODEL__*; direct engine only: on "
            "Temporal the worker's model runs the job).",
        ),
    ] = None,
    files: Annotated[
        list[Path] | None,
        typer.Option("--file", "-f", help="Attach a file to the task (repeatable)."),
    ] = None,
    engine: Annotated[
        ExecutionEngine | None,
        typer.Option(help="direct | temporal (default: WORKFLOW__EXECUTION_ENGINE)."),
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Copy the output artifacts into this folder.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print each event, then the result, as JSON lines.")
    ] = False,
) -> None:
    """Run an agent job on TASK: the live view of every step, then the answer and outputs.

    Direct engine: the job runs in this process; scripts run in sandboxes through
    SANDBOX__MANAGER_URL when set, otherwise through a manager with a local warm pool started
    here. Temporal engine: the job is a workflow on WORKFLOW__TEMPORAL_ADDRESS, run by a worker
    (`skillweave worker`, or `skillweave dev` for the whole stack) with the worker's model and
    store; the result ends with the job's page in the Temporal UI. While no worker answers (one
    was killed or is restarting) the command says it waits for one and goes on following.
    Exit 0 when the job completes, 1 when it fails, is cancelled or runs out of budget, 2 for
    bad input, 75 when no worker answered for WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS (the job
    may still be running), 130 on Ctrl-C (a direct job is cancelled; a Temporal job keeps
    running).
    """
    from skillweave.cli.remote import is_agent_id
    from skillweave.cli.run import choose_engine, choose_model, load_agent

    if agent is not None and is_agent_id(str(agent)) and not agent.exists():
        if model is not None or engine is not None:
            raise _fail(
                "--model and --engine do not apply to a run on the API: its agent and "
                "configured engine decide",
                code=2,
            )
        _run_on_api(task, str(agent), files=files or [], out_dir=out_dir, as_json=as_json)
        return
    settings = get_settings()
    chosen_engine = choose_engine(engine, settings.workflow)
    if chosen_engine == "temporal" and model is not None:
        raise _fail(
            "--model: a job on Temporal runs with the worker's model",
            hint="Set MODEL__* (or --model) where `skillweave worker` or `skillweave dev` "
            "runs, or use --engine direct.",
            code=2,
        )
    registry = _registry(dirs)
    with _errors(), _spec_errors():
        spec = load_agent(agent, registry)
        chosen = choose_model(settings.model, option=model, spec=spec, spec_path=agent)
    if chosen_engine == "temporal" and spec.model is not None and not as_json:
        err.print(
            Text(
                terminal_safe(
                    f"note: the agent spec's model ({spec.model}) is not used on Temporal: the "
                    "worker's model runs the job"
                ),
                style="yellow",
            ),
            soft_wrap=True,
        )
    result = _run_job(
        task,
        registry=registry,
        agent=spec,
        model=chosen,
        files=files or [],
        out_dir=out_dir,
        as_json=as_json,
        engine=chosen_engine,
    )
    if result.status != "completed":
        raise typer.Exit(1)


DemoEngine = Literal["temporal", "direct"]


@app.command("demo")
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
            "--keep", help="temporal: keep the stack and its UI up after the job, until Ctrl-C."
        ),
    ] = False,
) -> None:
    """Run the example job (examples/demo) offline: a scripted model, real everything else.

    The agent profiles examples/demo/sales.csv and writes a data-quality report with the
    bundled data-toolkit skills. By default the job is a Temporal workflow on an embedded
    stack started for the demo (a dev server on a free port if 7233 is taken, in memory; a
    worker and an MCP manager with a local warm pool in this process); --engine direct runs
    the loop in-process instead. The scripts run in one-shot sandboxes, the artifacts go to
    the configured store. Only the model is scripted (it replays examples/demo/script.yaml);
    `skillweave run` takes a real one.
    """
    from skillweave.cli.run import REAL_MODEL_HINT, load_agent

    folder = _demo_folder()
    settings = get_settings()
    if engine == "temporal":
        from skillweave.cli.stack import temporal_binary

        try:
            temporal_binary()
        except ConfigError as exc:
            raise _fail(
                str(exc), hint="Or run `skillweave demo --engine direct`.", code=2
            ) from None
    registry = _registry(dirs or [bundled_skills_dir()])
    with _spec_errors():
        spec = load_agent(folder / "agent.yaml", registry)
    script, data = folder / "script.yaml", folder / "sales.csv"
    model = settings.model.model_copy(update={"provider": "scripted", "name": str(script)})
    out.rule("[bold]skillweave demo[/]")
    out.print(f"task:  {DEMO_TASK}", soft_wrap=True)
    out.print(
        f"agent: {_shown_path(folder / 'agent.yaml')} (skills: {', '.join(spec.skills or ())})"
        f" · file: {_shown_path(data)}",
        soft_wrap=True,
    )
    where = (
        "a Temporal workflow on an embedded stack (dev server, worker, MCP manager)"
        if engine == "temporal"
        else "the agent loop in this process (direct engine)"
    )
    out.print(
        Text(
            f"model: SCRIPTED, not a real model: it replays {_shown_path(script)}. Everything "
            f"else is real: {where}, skill activation, scripts in one-shot sandboxes from a "
            "local warm pool, artifacts in the store.",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    result = _run_job(
        DEMO_TASK,
        registry=registry,
        agent=spec,
        model=model,
        files=[data],
        out_dir=None,
        as_json=False,
        note=False,
        engine="embedded" if engine == "temporal" else "direct",
        keep=keep,
    )
    if engine == "temporal" and not keep:
        out.print(
            Text(
                "The Temporal server above lived in memory and stopped with the demo, and its "
                "UI with it. To keep jobs and the UI: `skillweave dev` in one terminal, then "
                "`skillweave run --engine temporal …` (below) in another; or `skillweave demo "
                "--keep`.",
                style="dim",
            ),
            soft_wrap=True,
        )
    out.print(
        Text(
            f"The model above was scripted ({_shown_path(script)}); {REAL_MODEL_HINT}, e.g.:",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    out.print(
        f'  MODEL__PROVIDER=openai MODEL__NAME=gpt-4o-mini MODEL__API_KEY=sk-… skillweave run "'
        f'{DEMO_TASK}" --agent {_shown_path(folder / "agent.yaml")} --file {_shown_path(data)}',
        soft_wrap=True,
        markup=False,
    )
    if result.status != "completed":
        raise _fail(
            f"the demo job did not complete: {result.status}: {result.reason}",
            hint="Run `make test` to see which part is broken.",
        )


ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="The worker's model, PROVIDER:NAME (e.g. openai:gpt-4o-mini or "
        "scripted:FILE.yaml); default MODEL__*.",
    ),
]


def _worker_model(option: str | None, *, dev: bool) -> ModelSettings:
    """The model a worker runs jobs with: --model, else MODEL__*. For `dev` only, a scripted
    model without a script falls back to the demo's script (said loudly)."""
    from skillweave.agent.spec import AgentSpec
    from skillweave.cli.run import REAL_MODEL_HINT, choose_model

    settings = get_settings()
    with _errors():
        chosen = choose_model(settings.model, option=option, spec=AgentSpec())
    if chosen.provider == "scripted" and not Path(chosen.name).is_file():
        if not dev:
            raise _fail(
                f"no model for the worker: MODEL__PROVIDER is scripted and {chosen.name!r} is "
                "not a script file",
                hint=f"{REAL_MODEL_HINT}, or --model scripted:FILE.yaml.",
                code=2,
            )
        script = _demo_folder() / "script.yaml"
        err.print(
            Text(
                f"model: SCRIPTED, replaying {_shown_path(script)} (the demo's script; no model "
                f"is configured): only the demo task completes. {REAL_MODEL_HINT}.",
                style="bold yellow",
            ),
            soft_wrap=True,
        )
        return chosen.model_copy(update={"name": str(script)})
    return chosen


@app.command("worker")
def worker(dirs: DirsOption = None, model: ModelOption = None) -> None:
    """Run a Temporal worker: agent jobs of WORKFLOW__TASK_QUEUE on WORKFLOW__TEMPORAL_ADDRESS.

    Activities use the model of MODEL__* (or --model), the configured store, and the manager
    at SANDBOX__MANAGER_URL, or one with a local warm pool started in this process. Runs until
    Ctrl-C; the activities in flight are cancelled and retried on another worker.
    """
    _start_tracing("skillweave-worker")
    import asyncio

    from skillweave.cli.stack import WorkerInfo, serve_worker
    from skillweave.engines.temporal import configure_logging
    from skillweave.telemetry import logs

    settings = get_settings()
    chosen = _worker_model(model, dev=False)
    roots = _library(dirs).roots
    registry = _registry(dirs)
    logs.configure_logging(settings.observability, service="skillweave-worker", secrets=settings)
    configure_logging(verbose=True)

    def ready(info: WorkerInfo) -> None:
        out.print(
            f"worker on {info.address} · namespace {info.namespace} · task queue "
            f"{info.task_queue}\n  model {info.model} · MCP manager {info.manager_url}\n"
            "Ctrl-C stops it.",
            soft_wrap=True,
            markup=False,
        )

    try:
        with _errors():
            asyncio.run(
                serve_worker(settings, registry=registry, model=chosen, on_ready=ready, roots=roots)
            )
    except (KeyboardInterrupt, asyncio.CancelledError):
        err.print("worker stopped")


@app.command("dev")
def dev(
    *,
    port: Annotated[int, typer.Option(help="Temporal's gRPC port.")] = 7233,
    ui_port: Annotated[int, typer.Option(help="The Temporal UI's port.")] = 8233,
    db_file: Annotated[
        Path | None,
        typer.Option(help="Where Temporal keeps jobs (default WORKFLOW__DEV_DB_FILE)."),
    ] = None,
    ephemeral: Annotated[
        bool, typer.Option("--ephemeral", help="Keep Temporal's state in memory only.")
    ] = False,
    dirs: DirsOption = None,
    model: ModelOption = None,
) -> None:
    """Run the embedded stack until Ctrl-C: a Temporal dev server with its UI, a worker and an
    MCP manager with a local warm pool, all on this machine.

    Jobs started with `skillweave run --engine temporal` run here and survive a restart (the
    server's state is in a file under ~/.skillweave/ unless --ephemeral).
    """
    _start_tracing("skillweave-dev")
    import asyncio

    from skillweave.cli.run import interrupt_cancels
    from skillweave.cli.stack import EmbeddedStack, embedded_stack
    from skillweave.engines.temporal import configure_logging
    from skillweave.telemetry import logs

    if ephemeral and db_file is not None:
        raise _fail("--ephemeral and --db-file exclude each other", code=2)
    settings = get_settings()
    chosen = _worker_model(model, dev=True)
    registry = _registry(dirs)
    logs.configure_logging(settings.observability, service="skillweave-dev", secrets=settings)
    configure_logging(verbose=True)
    state = None if ephemeral else (db_file or settings.workflow.dev_db_file).expanduser()

    def ready(stack: EmbeddedStack) -> None:
        address = stack.address
        lines = Table.grid(padding=(0, 2))
        lines.add_row("Temporal gRPC", f"{address} (namespace {stack.settings.workflow.namespace})")
        lines.add_row("Temporal UI", stack.ui_url or "")
        lines.add_row("MCP manager", stack.manager_url)
        lines.add_row(
            "worker", f"task queue {stack.task_queue} · model {stack.services.provider.name}"
        )
        lines.add_row("state", str(state) if state is not None else "in memory (--ephemeral)")
        out.rule("[bold]skillweave dev[/]")
        out.print(lines)
        env = []
        if address != "127.0.0.1:7233":
            env.append(f"WORKFLOW__TEMPORAL_ADDRESS={address}")
        if stack.ui_url and stack.ui_url != settings.workflow.ui_url:
            env.append(f"WORKFLOW__UI_URL={stack.ui_url}")
        if env:
            out.print(f"In other terminals: export {' '.join(env)}", soft_wrap=True, markup=False)
        out.print(
            'Run a job on it: skillweave run --engine temporal "TASK" [--agent A.yaml] '
            "[--file F]\nList jobs: skillweave runs list · Ctrl-C stops everything.",
            soft_wrap=True,
            markup=False,
        )

    async def main() -> None:
        async with embedded_stack(
            settings,
            registry=registry,
            model=chosen,
            port=port,
            ui_port=ui_port,
            db_file=state,
        ) as stack:
            ready(stack)
            with interrupt_cancels(asyncio.current_task(), stop=True):
                await asyncio.Event().wait()

    try:
        with _errors():
            asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        err.print("stopped: worker, MCP manager, Temporal")


@app.command("manager")
def manager() -> None:
    """Serve the MCP manager (SANDBOX__HOST, SANDBOX__PORT; SANDBOX__MANAGER_TOKEN required)."""
    _start_tracing("skillweave-manager")
    from mcp_manager.server import run_manager
    from skillweave.telemetry import logs

    # A service: its own records (pool refills, reaped pods, lost sandboxes) are for its logs.
    settings = get_settings()
    logs.configure_logging(settings.observability, service="skillweave-manager", secrets=settings)
    with _errors():
        run_manager(settings)


@app.command("mcp")
def mcp() -> None:
    """Serve the skill library over MCP on stdio (for MCP clients that start a command);
    scripts run on SANDBOX__MANAGER_URL, or a local warm pool started here."""
    _start_tracing("skillweave-mcp")
    import asyncio

    from skillweave.cli.mcp import serve_mcp_stdio
    from skillweave.telemetry import logs

    # stdout is the protocol's: log lines go to stderr (configure_logging's only default).
    settings = get_settings()
    logs.configure_logging(settings.observability, service="skillweave-mcp", secrets=settings)
    with contextlib.suppress(KeyboardInterrupt), _errors():
        asyncio.run(serve_mcp_stdio(settings))


@app.command("api")
def api() -> None:
    """Serve the control-plane REST API (API__HOST, API__PORT; API__TOKEN required) on the
    engine of WORKFLOW__EXECUTION_ENGINE."""
    _start_tracing("skillweave-api")
    import asyncio

    from skillweave.cli.api import serve_api
    from skillweave.telemetry import logs

    settings = get_settings()
    logs.configure_logging(settings.observability, service="skillweave-api", secrets=settings)

    def ready(url: str) -> None:
        err.print(
            f"skillweave API on {url} (engine {settings.workflow.execution_engine}); "
            f"OpenAPI at {url}/docs"
        )

    try:
        with _errors():
            asyncio.run(serve_api(settings, on_ready=ready))
    except (KeyboardInterrupt, asyncio.CancelledError):
        err.print("API stopped")


@app.command("executor")
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
        raise _fail(settings_problem(exc, ExecutorSettings), code=2) from None
    if settings.token is None:
        raise _fail("set EXECUTOR__TOKEN: the executor accepts only the manager's token", code=2)
    with _errors():
        run_executor(
            host=host,
            port=port,
            token=settings.token.get_secret_value(),
            ready_file=ready_file,
            settings=settings,
        )


@sandbox_app.command(
    "run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def sandbox_run(
    ctx: typer.Context,
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    script: Annotated[str, typer.Argument(help="Script path inside the skill, e.g. scripts/x.py")],
    *,
    inputs: Annotated[
        list[Path] | None, typer.Option("--input", "-i", help="A file for inputs/ (repeatable).")
    ] = None,
    dirs: DirsOption = None,
    timeout: Annotated[float | None, typer.Option(help="Wall time in seconds.")] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Copy the output files into this folder.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run SKILL's SCRIPT in a one-shot sandbox: `skillweave sandbox run SKILL SCRIPT -- ARGS`.

    Uses SANDBOX__MANAGER_URL when set, otherwise starts a manager with a local warm pool in
    this process. Prints the result and where the output artifacts were stored.
    """
    import asyncio

    from skillweave.cli.sandbox import copy_outputs, run_script

    missing = [str(p) for p in inputs or [] if not p.is_file()]
    if missing:
        raise _fail(f"no such input file: {', '.join(missing)}", code=2)
    settings = get_settings()
    registry = _registry(dirs)
    with _errors():
        target = registry.get(skill)
        running = Text(terminal_safe(f"Running {skill}/{script} in a sandbox…"))
        with err.status(running, spinner="dots"):
            run = asyncio.run(
                run_script(
                    settings, target, script, args=ctx.args, inputs=inputs or [], timeout=timeout
                )
            )
        copied = asyncio.run(copy_outputs(run, out_dir)) if out_dir is not None else []
    result = run.result
    if as_json:
        _dump(result.model_dump(mode="json"))
    else:
        _print_result(run, copied)
    if result.status != "succeeded":
        raise typer.Exit(1)


def _print_result(run: Any, copied: list[Path]) -> None:
    """The outcome of `sandbox run`; everything the script wrote, its file names included,
    is shown with its control characters escaped."""
    result = run.result
    style = "green" if result.status == "succeeded" else "bold red"
    out.print(
        Text(
            f"{result.status}: exit {result.exit_code}, {result.duration_ms} ms, "
            f"isolation {result.isolation or 'unknown'} (run {run.run_id})",
            style=style,
        )
    )
    if result.stdout:
        title = "stdout" + (" (truncated; full output stored)" if result.stdout_truncated else "")
        out.print(Panel(Text(terminal_safe(result.stdout.rstrip())), title=title))
    if result.stderr:
        title = "stderr" + (" (truncated; full output stored)" if result.stderr_truncated else "")
        out.print(Panel(Text(terminal_safe(result.stderr.rstrip())), title=title))
    if result.error:
        out.print(Text(terminal_safe(f"error: {result.error}"), style="red"), soft_wrap=True)
    for output in result.outputs:
        shown = f"output {output.path} → {output.ref.key} ({output.ref.size} bytes)"
        out.print(Text(terminal_safe(shown)), soft_wrap=True)
    for ref in (result.stdout_ref, result.stderr_ref):
        if ref is not None:
            out.print(Text(terminal_safe(f"full log → {ref.key} ({ref.size} bytes)")))
    for path in copied:
        out.print(Text(terminal_safe(f"copied → {path}")), soft_wrap=True)


def main() -> None:
    """Console-script entry point."""
    # The CLI shows diagnostics itself; keep library log records from printing them twice.
    logging.getLogger("skillweave").setLevel(logging.ERROR)
    code: str | int | None = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code
    except ConfigError as exc:
        # Settings are read where a command first needs them (get_settings), often outside
        # `_errors()`: an invalid one is still one line naming the variable, and bad usage.
        code = _fail(str(exc), code=2).exit_code
    # A failed Temporal call leaves its client reachable from the exception chain; collected
    # during interpreter finalization, its Rust runtime aborts the process (temporalio
    # sdk-python#300). The chain is gone once the handler above ends: collect it now.
    gc.collect()
    sys.exit(code)
