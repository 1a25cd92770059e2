"""The checks behind ``skillweave doctor`` and the start of every long-running command: which
each role runs, running them, printing them, and :func:`preflight`.

Each check answers one question about this process's configuration with one line, ``ok``,
``warn`` or ``fail``, and what to do. The checks of what a process works with (**temporal**,
**store**, **workers**, **manager**, **agree**, **isolation**) are
:mod:`skillweave.cli.service_checks`; the **model** and **agents** checks are
:mod:`skillweave.cli.model_checks`; what they share (:class:`Check`, :data:`Role`) is
:mod:`skillweave.cli.probe`. Called by ``doctor`` (:mod:`skillweave.cli.doctor`), the
long-running commands (:mod:`skillweave.cli.serve`) and ``run`` (:mod:`skillweave.cli.run_command`).

A failure that may pass by itself (a service not reachable *yet*) is ``transient``: ``doctor``
shows it as a failure, while a long-running command starting up says it and goes on, then waits
for it (services start in any order: :mod:`skillweave.cli.startup`, the manager's lifespan);
any other failure stops the command before it serves (:func:`preflight`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.exits import fail
from skillweave.cli.model_checks import agents_check, model_check
from skillweave.cli.probe import Check, Probe, Role
from skillweave.cli.service_checks import (
    agree_check,
    client_limits_check,
    isolation_check,
    manager_check,
    store_check,
    temporal_check,
    workers_check,
)
from skillweave.config import Settings
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    import typer

__all__ = ["Check", "Role", "client_limits_check", "preflight", "print_checks", "run_checks"]

_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


_CheckFn = Callable[[Probe], Awaitable[Check]]
_ALL: tuple[_CheckFn, ...] = (
    temporal_check,
    store_check,
    workers_check,
    manager_check,
    agree_check,
    model_check,
    isolation_check,
)
_BY_ROLE: dict[Role, tuple[_CheckFn, ...]] = {
    "doctor": (*_ALL, agents_check),
    "worker": _ALL,
    # The embedded stack starts its own Temporal (attributes registered) and manager.
    "dev": (store_check, model_check, isolation_check),
    "api": (temporal_check, store_check, workers_check, manager_check, agree_check),
    "manager": (store_check, isolation_check),
    "mcp": (store_check, manager_check, agree_check, isolation_check),
    # A run about to start on this process's own engine (direct), with a remote manager.
    "run": (manager_check, agree_check, workers_check),
}


async def run_checks(settings: Settings, role: Role = "doctor") -> list[Check]:
    """The checks `role` needs, in order, against `settings`."""
    if role == "worker":  # a worker is Temporal's, whatever WORKFLOW__EXECUTION_ENGINE says
        workflow = settings.workflow.model_copy(update={"execution_engine": "temporal"})
        settings = settings.model_copy(update={"workflow": workflow})
    probe = Probe(settings, role)
    checks = _BY_ROLE[role]
    if role == "api" and settings.workflow.execution_engine == "direct":
        checks = (*checks, model_check, isolation_check)  # its runs run in the API's process
    elif role == "api" and not settings.sandbox.manager_url:
        checks = (
            temporal_check,
            store_check,
            workers_check,
        )  # its runs run on the workers, with theirs
        if client_limits_check(settings) is not None:
            checks = (*checks, agree_check)  # and under their limits: say so
    return [await check(probe) for check in checks]


def print_checks(checks: list[Check], *, to: Console = err, starting: bool = False) -> None:
    """One line each (on stderr unless `to` says); when `starting`, a transient failure shows
    as a warning: the command goes on."""
    for check in checks:
        status = "warn" if starting and check.status == "fail" and check.transient else check.status
        line = Text(f"{status:<5}", style=_STYLES[status])
        line.append(terminal_safe(f"{check.name}: {check.detail}"))
        to.print(line, soft_wrap=True)


def preflight(settings: Settings, role: Role, *, show_ok: bool = True) -> None:
    """The start-up checks of a long-running command (or of a run about to start): each said
    on stderr (`show_ok` False: only what is not ok); a failure that will not pass by itself
    stops it here.

    Raises:
        typer.Exit: one line naming the first such failure, and what to do (that check's
            own line is this one: not said twice).
    """
    checks = asyncio.run(run_checks(settings, role))
    red = [c for c in checks if c.status == "fail" and not c.transient]
    shown = [c for c in checks if (show_ok or c.status != "ok") and c not in red[:1]]
    print_checks(shown, starting=True)
    if red:
        raise _refused(role, red[0])


def _refused(role: Role, check: Check) -> typer.Exit:
    what = "the run was not started" if role == "run" else f"{role} not started"
    return fail(f"{what}: {check.name}: {check.detail}", hint="`skillweave doctor` checks all.")
