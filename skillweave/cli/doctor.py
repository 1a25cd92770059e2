"""``skillweave doctor``: is this process's configuration one that runs can run on? And
``skillweave temporal setup``: register what a Temporal namespace needs.

The checks are :mod:`skillweave.cli.checks` (the long-running commands run them at start-up
too); here they all run, one line each, and the command exits 1 when any fails.
"""

from __future__ import annotations

import asyncio

import typer
from rich.text import Text

from skillweave.cli.checks import print_checks, run_checks
from skillweave.cli.console import JsonOption, dump, out
from skillweave.cli.exits import EXIT_PROBLEM, errors
from skillweave.config import get_settings
from skillweave.terminal import terminal_safe

__all__ = ["doctor", "temporal_app"]

temporal_app = typer.Typer(help="The Temporal namespace skillweave's runs run in.")


def doctor(as_json: JsonOption = False) -> None:
    """Check that runs can run with this configuration: Temporal (the default engine), the
    store, the manager, that settings shared with it agree, the models, script isolation and
    the stored agents without a model, one line each with what to do."""
    settings = get_settings()
    with errors():
        checks = asyncio.run(run_checks(settings))
    if as_json:
        dump([{"check": c.name, "status": c.status, "detail": c.detail} for c in checks])
    else:
        print_checks(checks, to=out)
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(EXIT_PROBLEM)


@temporal_app.command("setup")
def setup() -> None:
    """Register skillweave's search attributes in the configured namespace (idempotent); a
    namespace that does not exist is one line saying how to create it."""
    from skillweave.engines.temporal import connect, register_search_attributes

    workflow = get_settings().workflow

    async def register() -> list[str]:
        client = await connect(workflow)
        return await register_search_attributes(client, workflow.namespace)

    with errors():
        added = asyncio.run(register())
    if added:
        out.print(
            Text(terminal_safe(f"registered in {workflow.namespace}: {', '.join(added)}")),
            soft_wrap=True,
        )
    else:
        out.print(
            Text(terminal_safe(f"{workflow.namespace}: every search attribute is registered")),
            soft_wrap=True,
        )
