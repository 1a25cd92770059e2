"""``skillweave``: the command line (typer + rich).

Commands print exact texts (catalog, activation payload) to stdout untouched, tables and
progress to the terminal, and diagnostics to stderr; ``--json`` gives machine-readable output.
Exit codes: 0 success, 1 the command ran and found a problem (invalid skills, unknown skill),
2 bad usage (unknown option, missing path). Every error is one line plus what to do.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from skillweave import __version__
from skillweave.config import CatalogMode, ExecutionEngine, bundled_skills_dir, get_settings
from skillweave.errors import ConfigError, SkillweaveError
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

if TYPE_CHECKING:
    from skillweave.agent.events import AgentEvent
    from skillweave.agent.spec import AgentSpec
    from skillweave.cli.run import JobRun
    from skillweave.config import ModelSettings
    from skillweave.engines import JobResult

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
    err.print(Text(f"error: {message}", style="bold red"), soft_wrap=True)
    if hint:
        err.print(Text(hint, style="dim"))
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


def _print_diagnostics(diagnostics: Sequence[Diagnostic], *, limit: int | None = None) -> None:
    shown = diagnostics if limit is None else diagnostics[:limit]
    for diagnostic in shown:
        # At load time a fatal diagnostic means the skill was left out, so say exactly that.
        label, style = ("skipped", "red") if diagnostic.fatal else ("warning", "yellow")
        err.print(Text(f"{label}: {diagnostic}", style=style), soft_wrap=True)
    if len(diagnostics) > len(shown):
        rest = len(diagnostics) - len(shown)
        err.print(Text(f"… {rest} more; run `skillweave skills validate` to see all", style="dim"))


def _library(dirs: list[Path] | None) -> SkillLibrary:
    settings = get_settings().skills
    if dirs:
        missing = [str(d) for d in dirs if not d.is_dir()]
        if missing:
            raise _fail(f"not a directory: {', '.join(missing)}", code=2)
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
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


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
            out.print(Text(f"{diagnostic}", style="red"), soft_wrap=True)
        for diagnostic in report.warnings:
            out.print(Text(f"warning: {diagnostic}", style="yellow"), soft_wrap=True)
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
        name = Text("  " * depth + ("└ " if depth else "") + skill.name)
        if not registry.is_enabled(skill.name):
            name.stylize("dim")
        table.add_row(name, skill.type, skill.short_version, Text(skill.description))
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
    as_json: JsonOption = False,
) -> None:
    """Rank skills by BM25 relevance to QUERY (name, description, headings)."""
    registry = _registry(dirs)
    hits = registry.search(query, top_k=top)
    if as_json:
        _dump([{"name": hit.name, "score": round(hit.score, 4)} for hit in hits])
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
        table.add_row(f"{hit.score:.2f}", skill.name, Text(skill.description))
    out.print(table)


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
    """Print the exact tier-1 catalog text the model gets."""
    settings = get_settings().skills
    registry = _registry(dirs)
    result = build_catalog(
        registry,
        mode=mode or settings.catalog_mode,
        query=query,
        top_k=top or settings.catalog_top_k,
        max_chars=settings.catalog_max_chars if max_chars is None else max_chars,
    )
    sys.stdout.write(result.text)
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
    """Print the exact activation payload of a skill (what activate_skill returns)."""
    settings = get_settings().skills
    registry = _registry(dirs)
    with _errors():
        skill = registry.get(name)
        children = registry.children_of(name, enabled_only=True)
    sys.stdout.write(
        render_activation(skill, children=children, max_listed=settings.activation_resource_listing)
    )


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
    out.print(f"packed {directory} → {written} ({written.stat().st_size} bytes)")


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
        out.print(f"extracted skill folder {skill_dir}")


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
) -> JobResult:
    """Run a job with the live view (or JSON lines), print how it ended; returns the result."""
    import asyncio

    from skillweave.cli.run import (
        EventView,
        check_job_inputs,
        new_job_id,
        print_result,
        run_job,
        scripted_note,
    )

    settings = get_settings()
    with _errors():
        check_job_inputs(model, files)
    job_id = new_job_id()
    if not as_json:
        warning = scripted_note(model) if note else None
        if warning:
            err.print(Text(warning, style="bold yellow"), soft_wrap=True)
        err.print(
            Text(f"job {job_id} · agent {agent.name} · engine direct", style="dim"), soft_wrap=True
        )

    def json_line(event: AgentEvent) -> None:
        sys.stdout.write(event.model_dump_json() + "\n")
        sys.stdout.flush()

    async def job() -> JobRun:
        return await run_job(
            settings,
            task=task,
            registry=registry,
            agent=agent,
            model=model,
            files=files,
            job_id=job_id,
            on_event=json_line if as_json else view,
            out_dir=out_dir,
        )

    view = EventView(err)
    try:
        with _errors(), nullcontext() if as_json else view:
            done = asyncio.run(job())
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise _fail(f"interrupted: job {job_id} was cancelled", code=130) from None
    if as_json:
        line = {"kind": "result", **done.result.model_dump(mode="json")}
        if out_dir is not None:
            line["copied"] = [str(path) for path in done.copied]
        sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    else:
        print_result(done, out=out)
    return done.result


@app.command("run")
def run_command(
    task: TaskArgument,
    *,
    agent: Annotated[
        Path | None, typer.Option("--agent", "-a", help="Agent spec (YAML): skills, limits…")
    ] = None,
    dirs: DirsOption = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="PROVIDER:NAME, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or "
            "scripted:FILE.yaml (overrides the agent spec and MODEL__*).",
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

    Scripts run in sandboxes through SANDBOX__MANAGER_URL when set, otherwise through a
    manager with a local warm pool started in this process. Exit 0 when the job completes,
    1 when it fails, is cancelled or runs out of budget, 2 for bad input, 130 on Ctrl-C
    (the job is cancelled and the sandboxes stopped).
    """
    from skillweave.cli.run import choose_engine, choose_model, load_agent

    settings = get_settings()
    with _errors():
        choose_engine(engine, settings.workflow)
    registry = _registry(dirs)
    with _errors(), _spec_errors():
        spec = load_agent(agent, registry)
        chosen = choose_model(settings.model, option=model, spec=spec, spec_path=agent)
    result = _run_job(
        task,
        registry=registry,
        agent=spec,
        model=chosen,
        files=files or [],
        out_dir=out_dir,
        as_json=as_json,
    )
    if result.status != "completed":
        raise typer.Exit(1)


@app.command("demo")
def demo(dirs: DirsOption = None) -> None:
    """Run the example job (examples/demo) offline: a scripted model, real everything else.

    The agent profiles examples/demo/sales.csv and writes a data-quality report with the
    bundled data-toolkit skills: the agent loop on the direct engine, the scripts in one-shot
    sandboxes from a local warm pool, the artifacts in the configured store. Only the model
    is scripted (it replays examples/demo/script.yaml); `skillweave run` takes a real one.
    """
    from skillweave.cli.run import REAL_MODEL_HINT, load_agent

    folder = _demo_folder()
    settings = get_settings()
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
    out.print(
        Text(
            f"model: SCRIPTED, not a real model: it replays {_shown_path(script)}. Everything "
            "else is real: skill activation, sandboxed scripts from a local warm pool, "
            "artifacts in the store.",
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


@app.command("manager")
def manager() -> None:
    """Serve the MCP manager (SANDBOX__HOST, SANDBOX__PORT; SANDBOX__MANAGER_TOKEN required)."""
    from mcp_manager.server import run_manager

    with _errors():
        run_manager(get_settings())


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

    settings = ExecutorSettings()
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
        with err.status(f"Running {skill}/{script} in a sandbox…", spinner="dots"):
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
        out.print(Panel(Text(result.stdout.rstrip()), title=title))
    if result.stderr:
        title = "stderr" + (" (truncated; full output stored)" if result.stderr_truncated else "")
        out.print(Panel(Text(result.stderr.rstrip()), title=title))
    if result.error:
        out.print(Text(f"error: {result.error}", style="red"))
    for output in result.outputs:
        out.print(f"output {output.path} → {output.ref.key} ({output.ref.size} bytes)")
    for ref in (result.stdout_ref, result.stderr_ref):
        if ref is not None:
            out.print(f"full log → {ref.key} ({ref.size} bytes)")
    for path in copied:
        out.print(f"copied → {path}")


def main() -> None:
    """Console-script entry point."""
    # The CLI shows diagnostics itself; keep library log records from printing them twice.
    logging.getLogger("skillweave").setLevel(logging.ERROR)
    app()
