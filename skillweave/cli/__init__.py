"""``skillweave``: the command line (typer + rich).

This module only builds the app: the root options, the command groups and the commands, each
from the module of its concern, and :func:`main`, the console script. No module of this
package imports this one (an import-linter contract in ``pyproject.toml`` says so), so they
can be read, tested and imported on their own.

- :mod:`~skillweave.cli.skills`, :mod:`~skillweave.cli.agents`, :mod:`~skillweave.cli.runs`,
  :mod:`~skillweave.cli.sandbox`, :mod:`~skillweave.cli.audit`: the ``skills``, ``agents``,
  ``runs``, ``sandbox`` and ``audit`` groups;
- :mod:`~skillweave.cli.run_command` and :mod:`~skillweave.cli.demo`: ``run`` and ``demo``, over
  :mod:`~skillweave.cli.agent_run` (a run's inputs and its run) and :mod:`~skillweave.cli.view`
  (what a run shows);
- :mod:`~skillweave.cli.serve`: ``worker``, ``dev``, ``api``, ``manager``, ``mcp``,
  ``executor``;
- :mod:`~skillweave.cli.compose`: the one composition that opens an engine from settings;
- :mod:`~skillweave.cli.console` and :mod:`~skillweave.cli.exits`: the consoles, how text
  from others is printed, one-line errors and warnings and the exit codes (0 success, 1 a
  problem found, 2 bad usage, 75 a follower gave up waiting for a worker, 130 Ctrl-C).

Every command first warns, one line each, of variables that name a settings section but no
setting in it (``SKILLS__DIRZ``; :func:`skillweave.config.unknown_settings`).
"""

from __future__ import annotations

import gc
import logging
import sys
from typing import Annotated

import typer

from skillweave import __version__
from skillweave.cli import (
    agents,
    artifacts,
    audit,
    demo,
    doctor,
    evals,
    install,
    registry,
    run_command,
    runs,
    sandbox,
    serve,
    skills,
    trust,
    versions,
)
from skillweave.cli.console import out
from skillweave.cli.exits import EXIT_USAGE, fail, warn
from skillweave.config import unknown_settings
from skillweave.errors import ConfigError

__all__ = ["app", "main"]

app = typer.Typer(
    name="skillweave",
    help="Durable skills for long-running LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(skills.skills_app, name="skills")
skills.skills_app.command("install")(install.install)
skills.skills_app.command("update")(install.update)
skills.skills_app.command("remove")(install.remove)
skills.skills_app.command("approve")(install.approve)
skills.skills_app.command("versions")(versions.versions)
skills.skills_app.command("rollback")(versions.rollback)
skills.skills_app.command("keygen")(trust.keygen)
skills.skills_app.command("sign")(trust.sign)
skills.skills_app.command("verify")(trust.verify)
skills.skills_app.command("find")(registry.find)
skills.skills_app.command("eval")(evals.eval_command)
app.add_typer(registry.registry_app, name="registry")
app.add_typer(sandbox.sandbox_app, name="sandbox")
app.add_typer(runs.runs_app, name="runs")
runs.runs_app.command("artifacts")(artifacts.artifacts)
app.add_typer(agents.agents_app, name="agents")
app.add_typer(audit.audit_app, name="audit")
app.add_typer(doctor.temporal_app, name="temporal")
app.command("doctor")(doctor.doctor)
app.command("run")(run_command.run_command)
app.command("demo")(demo.demo)
app.command("worker")(serve.worker)
app.command("dev")(serve.dev)
app.command("manager")(serve.manager)
app.command("mcp")(serve.mcp)
app.command("api")(serve.api)
app.command("executor")(serve.executor)


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
    # Before any command reads its settings: a misspelt variable is ignored by them, so say so
    # (servers log it too, once their logging is set up: serve._service_logging).
    for line in unknown_settings():
        warn(line)


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
        # `errors()`: an invalid one is still one line naming the variable, and bad usage.
        code = fail(str(exc), code=EXIT_USAGE).exit_code
    # A failed Temporal call leaves its client reachable from the exception chain; collected
    # during interpreter finalization, its Rust runtime aborts the process (temporalio
    # sdk-python#300). The chain is gone once the handler above ends: collect it now.
    gc.collect()
    sys.exit(code)
