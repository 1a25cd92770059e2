"""Errors as one line plus what to do, and the CLI's exit codes.

Exit codes: 0 success; :data:`EXIT_PROBLEM` the command ran and found a problem (invalid
skills, unknown skill, a run that failed); :data:`EXIT_USAGE` bad usage or input (unknown
option, missing path, invalid setting or agent spec); :data:`EXIT_NO_WORKER` a follower of a
Temporal run gave up waiting for a worker (the run may still be running);
:data:`EXIT_INTERRUPTED` Ctrl-C.

Commands wrap their work in :func:`errors` (and :func:`spec_errors` where they read an agent
spec); a follower of a run runs inside :func:`follower_gives_up`. A warning (the command goes
on) is one line too (:func:`warn`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, NoReturn

import typer
from rich.text import Text

from skillweave.cli.console import err
from skillweave.errors import AgentError, AgentSpecError, ConfigError, SkillweaveError
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.engines.temporal import NoWorkerError

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_NO_WORKER",
    "EXIT_PROBLEM",
    "EXIT_USAGE",
    "errors",
    "fail",
    "follower_gives_up",
    "spec_errors",
    "warn",
]

EXIT_PROBLEM: Final = 1
EXIT_USAGE: Final = 2
EXIT_NO_WORKER: Final = 75
"""A follower gave up waiting for a worker: the run may still be running (sysexits'
EX_TEMPFAIL, "try again later"; 1 means the run failed)."""
EXIT_INTERRUPTED: Final = 130


def fail(message: str, *, hint: str | None = None, code: int = EXIT_PROBLEM) -> typer.Exit:
    """Print `message` as one error line on stderr (and `hint` under it); the exit to raise."""
    # Messages quote skill files, script output, model text and remote answers.
    err.print(Text(f"error: {terminal_safe(message)}", style="bold red"), soft_wrap=True)
    if hint:
        err.print(Text(terminal_safe(hint), style="dim"))
    return typer.Exit(code)


def warn(message: str) -> None:
    """Print `message` as one warning line on stderr; the command goes on."""
    err.print(Text(f"warning: {terminal_safe(message)}", style="yellow"), soft_wrap=True)


@contextmanager
def errors() -> Iterator[None]:
    """Turn skillweave errors into one clear line and an exit code: a configuration error is
    bad usage, any other the problem the command found."""
    try:
        yield
    except ConfigError as exc:
        raise fail(str(exc), code=EXIT_USAGE) from None
    except SkillweaveError as exc:
        raise fail(str(exc)) from None


@contextmanager
def spec_errors() -> Iterator[None]:
    """A bad agent spec is bad input: one line naming the file, exit 2."""
    try:
        yield
    except AgentSpecError as exc:
        raise fail(f"agent spec {exc}", code=EXIT_USAGE) from None


@contextmanager
def follower_gives_up() -> Iterator[None]:
    """Around a follower of a run, inside its event loop: when it gives up waiting for a
    worker, the process ends there with :data:`EXIT_NO_WORKER` (see :func:`_gave_up`)."""
    try:
        yield
    except AgentError as exc:
        # Only the Temporal engine raises it, so its module is loaded by then; importing it
        # here would load temporalio for every direct run.
        temporal = sys.modules.get("skillweave.engines.temporal")
        if temporal is not None and isinstance(exc, temporal.NoWorkerError):
            _gave_up(exc)
        raise


def _gave_up(exc: NoWorkerError) -> NoReturn:
    """A follower of a Temporal run gave up waiting for a worker: the run may still be running,
    so not the exit code of a run that failed.

    The process ends here, at once: the Temporal client still holds a long poll on the run,
    and ending the interpreter the usual way tears its runtime down under that call, which
    can abort the process (SIGABRT) instead of exiting with this code.
    """
    fail(
        str(exc),
        hint=f"Follow it again with `skillweave runs logs {exc.run_id} --follow` once a worker "
        f"(`skillweave worker`, or `skillweave dev`) polls task queue {exc.task_queue!r}; "
        "WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS sets how long to wait (0: for ever).",
        code=EXIT_NO_WORKER,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_NO_WORKER)
