"""``skillweave sandbox run``: one script of a skill through a manager, from the command line;
and the environment build behind ``skillweave skills build``.

The manager is :func:`~skillweave.cli.compose.open_manager`'s: ``SANDBOX__MANAGER_URL`` when
set (it must share this machine's artifact store settings, since the CLI publishes the skill
and uploads inputs there), otherwise one started inside this process with a local warm pool,
on a loopback port, for the duration of the command. Everything the script wrote, its file
names included, is shown with its control characters escaped.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.panel import Panel
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, err, out
from skillweave.cli.exits import EXIT_PROBLEM, EXIT_USAGE, errors, fail
from skillweave.cli.library import DirsOption, registry_of
from skillweave.config import Settings, get_settings
from skillweave.terminal import counted, terminal_safe

if TYPE_CHECKING:
    from skillweave.sandbox import ExecutionResult
    from skillweave.skills import Skill
    from skillweave.storage import ArtifactStore

__all__ = ["SandboxRun", "prepare_environment", "print_script_result", "run_script", "sandbox_app"]

sandbox_app = typer.Typer(help="Run skill scripts in sandboxes.", no_args_is_help=True)


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
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Wall time in seconds (default: the manager's SANDBOX__TIMEOUT_SECONDS)."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Copy the output files into this folder.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run SKILL's SCRIPT in a one-shot sandbox: `skillweave sandbox run SKILL SCRIPT -- ARGS`.

    Uses SANDBOX__MANAGER_URL when set, otherwise starts a manager with a local warm pool in
    this process. Prints the result and where the output artifacts were stored.
    """
    missing = [str(p) for p in inputs or [] if not p.is_file()]
    if missing:
        raise fail(f"no such input file: {', '.join(missing)}", code=EXIT_USAGE)
    settings = get_settings()
    registry = registry_of(dirs)
    with errors():
        target = registry.get(skill)
        running = Text(terminal_safe(f"Running {skill}/{script} in a sandbox…"))
        with err.status(running, spinner="dots"):
            run = asyncio.run(
                run_script(
                    settings,
                    target,
                    script,
                    args=ctx.args,
                    inputs=inputs or [],
                    timeout=timeout,
                    out_dir=out_dir,
                )
            )
    if as_json:
        dump(run.result.model_dump(mode="json"))
    else:
        print_script_result(run)
    if run.result.status != "succeeded":
        raise typer.Exit(EXIT_PROBLEM)


@dataclass(frozen=True)
class SandboxRun:
    """What ``sandbox run`` did: the result, the run's id, the files its outputs were copied
    to."""

    result: ExecutionResult
    run_id: str
    copied: tuple[Path, ...] = ()


async def run_script(
    settings: Settings,
    skill: Skill,
    script: str,
    *,
    args: Sequence[str] = (),
    inputs: Sequence[Path] = (),
    timeout: float | None = None,
    out_dir: Path | None = None,
) -> SandboxRun:
    """Publish `skill`, upload `inputs`, run `script` through a manager, and copy the output
    artifacts into `out_dir`; returns the outcome."""
    from skillweave.cli.compose import open_manager, open_store
    from skillweave.sandbox import ExecuteRequest, ExecutionLimits, publish_skill
    from skillweave.storage import keys

    async with open_store(settings) as store:
        await publish_skill(store, skill)
        run_id = f"cli-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        refs = []
        for path in inputs:
            data = await asyncio.to_thread(path.read_bytes)
            refs.append(await store.put_bytes(keys.run_input_key(run_id, path.name), data))
        request = ExecuteRequest(
            execution_id=f"{run_id}/1",
            run_id=run_id,
            skill=skill.name,
            version=skill.version,
            script=script,
            args=list(args),
            inputs=refs,
            # --timeout for this try-out; otherwise the manager's own limit.
            limits=ExecutionLimits(timeout_seconds=timeout) if timeout else None,
        )
        async with open_manager(settings) as manager:
            result = await manager.client.execute(request)
        copied = await _copy_outputs(store, result, out_dir) if out_dir is not None else []
    return SandboxRun(result=result, run_id=run_id, copied=tuple(copied))


async def _copy_outputs(
    store: ArtifactStore, result: ExecutionResult, destination: Path
) -> list[Path]:
    """Copy the output artifacts of `result` into `destination`; returns the files written."""
    written: list[Path] = []
    for output in result.outputs:
        target = destination / output.path
        target.parent.mkdir(parents=True, exist_ok=True)
        await store.get_file(output.ref, str(target))
        written.append(target)
    return written


async def prepare_environment(settings: Settings, skill: Skill) -> dict[str, object]:
    """Publish `skill` and have a manager build its environment of dependencies (once)."""
    from skillweave.cli.compose import open_manager, open_store
    from skillweave.sandbox import publish_skill

    async with open_store(settings) as store:
        await publish_skill(store, skill)
    async with open_manager(settings, pool_target=0) as manager:
        return await manager.client.prepare_environment(skill.name, skill.version)


def print_script_result(run: SandboxRun) -> None:
    """The outcome of ``sandbox run``: status, exit code, the script's stdout and stderr,
    its error, output artifacts, stored logs and copied files."""
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
        shown = f"output {output.path} → {output.ref.key} ({counted(output.ref.size, 'byte')})"
        out.print(Text(terminal_safe(shown)), soft_wrap=True)
    for ref in (result.stdout_ref, result.stderr_ref):
        if ref is not None:
            out.print(Text(terminal_safe(f"full log → {ref.key} ({counted(ref.size, 'byte')})")))
    for path in run.copied:
        out.print(Text(terminal_safe(f"copied → {path}")), soft_wrap=True)
