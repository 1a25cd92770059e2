"""``python -m sandbox_executor``: run one sandbox executor (see ``server.run_executor``).

The token comes from ``EXECUTOR__TOKEN`` or ``--token-file`` (never the command line, which
every user on the host can read in ``ps``); it is removed from the environment once read.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import signal
import sys
from pathlib import Path

from pydantic import ValidationError

from sandbox_executor.errors import ExecutorError
from sandbox_executor.server import run_executor
from sandbox_executor.settings import ExecutorSettings
from skillweave.config import ObservabilitySettings, unknown_settings
from skillweave.errors import ConfigError
from skillweave.sandbox import EXIT_REFUSED
from skillweave.telemetry import logs, tracing

_PR_SET_PDEATHSIG = 1


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox_executor",
        description="Run one one-shot skillweave sandbox executor.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="0 = any free port (reported)")
    parser.add_argument(
        "--ready-file", type=Path, default=None, help='write {"port": N, "pid": P} here once up'
    )
    parser.add_argument(
        "--channel",
        type=Path,
        default=None,
        help="also take runs on a Unix socket here (the run channel of a manager on this host)",
    )
    parser.add_argument(
        "--token-file", type=Path, default=None, help="read the token here (else EXECUTOR__TOKEN)"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="parent of the work folder")
    parser.add_argument(
        "--log-level", default="info", choices=("debug", "info", "warning", "error")
    )
    parser.add_argument(
        "--log-format",
        default="text",
        choices=("text", "json"),
        help="json: one JSON object per line (skillweave.telemetry.logs)",
    )
    parser.add_argument(
        "--start-niceness",
        type=int,
        default=0,
        help="start up at this lower CPU priority, then go back to normal (needs root)",
    )
    parser.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="die (SIGKILL) with this process; exit at once if it is already gone",
    )
    return parser


def die_with(parent: int) -> None:
    """Ask the kernel for SIGKILL when the parent dies (set here, not between fork and exec,
    so the manager can spawn executors with vfork, without copying its memory)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # it died before the request took effect
        raise SystemExit(f"error: the parent process {parent} is gone")


def setting_problem(exc: ValidationError) -> str:
    """The first invalid ``EXECUTOR__*`` variable, its value and what is accepted, on one line."""
    error = exc.errors()[0]
    name = "EXECUTOR__" + "__".join(str(part).upper() for part in error["loc"])
    return f"{name}={error.get('input')!r}: {error['msg']}"


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.parent_pid is not None:
        die_with(args.parent_pid)
    try:
        settings = ExecutorSettings()
    except ValidationError as exc:
        print(f"error: {setting_problem(exc)}", file=sys.stderr)
        return EXIT_REFUSED
    os.environ.pop("EXECUTOR__TOKEN", None)
    if args.token_file is not None:
        token = args.token_file.read_text(encoding="utf-8").strip()
    else:
        token = settings.token.get_secret_value() if settings.token else ""
    return serve(args, settings=settings, token=token)


def serve(args: argparse.Namespace, *, settings: ExecutorSettings, token: str) -> int:
    """Run one executor with its parsed flags, settings and token: the second half of `main`,
    where the zygote's executors start (with the settings the zygote read once).

    Returns:
        The exit code: 0 once stopped, `EXIT_REFUSED` when it cannot run here (why: on
        stderr).
    """
    # The flags, not skillweave's Settings, which the executor never reads (see .settings).
    logs.configure_logging(
        ObservabilitySettings(log_format=args.log_format, log_level=args.log_level.upper()),
        service="skillweave-executor",
    )
    logs.register_secrets([token])
    for line in unknown_settings(ExecutorSettings):
        logging.getLogger("sandbox_executor").warning(line)
    try:
        # Tracing when the OTEL_* variables ask for it; each span is exported as it ends,
        # since a one-shot executor is killed once used.
        tracing.setup("skillweave-executor", batch=False)
        run_executor(
            host=args.host,
            port=args.port,
            token=token,
            ready_file=args.ready_file,
            workdir=args.workdir,
            settings=settings,
            log_level=args.log_level,
            start_niceness=args.start_niceness,
            channel=args.channel,
        )
    except (ConfigError, ExecutorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    return 0


if __name__ == "__main__":
    sys.exit(main())
