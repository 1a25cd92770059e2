"""Child side of a sandboxed start: limits, identity, then exec. Runs as its own program.

The executor is a multi-threaded asyncio server, where running Python code between fork and
exec (``preexec_fn``) may deadlock. So the executor starts this small stdlib-only file with
``python -I -S`` in a new session instead; it lowers the resource limits, drops to the sandbox
user (when started as root), asks the kernel to kill it with the executor, and execs the real
command (bubblewrap, or the interpreter directly; in the namespaces mode it first enters the
sandbox it builds itself, see ``_namespaces``). The same program, in ``kill`` mode, becomes
the sandbox user and sends SIGKILL to every process of that user (``kill(-1)``), which reaches
processes that left the process group. What it execs in the end is the stage program
(``_stage_program``), or ``true`` for the isolation probe.

Started by ``stage.Stage``, ``isolation`` (the probe) and ``identity`` (the sweep), through
``identity.launcher_argv``; ``stage`` also imports `prepare`. Started as a program, its folder
is not on ``sys.path`` (``-I``): it appends it, after the standard library, to import its two
siblings, before it drops to the sandbox user.

    python -I -S _launcher.py '{"mode": "exec", ...}' COMMAND [ARG...]
    python -I -S _launcher.py '{"mode": "kill", "uid": U, "gid": G}'
"""

from __future__ import annotations

import os
import sys

if __package__:  # imported by the executor (``prepare``, see ``stage``)
    from sandbox_executor._namespaces import contain
    from sandbox_executor._stage_program import EXIT_CANNOT_START, die_with, set_limits
else:  # its own program: ``-I`` left its folder off sys.path
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from _namespaces import contain  # type: ignore[no-redef]
    from _stage_program import EXIT_CANNOT_START, die_with, set_limits  # type: ignore[no-redef]

__all__ = ["main", "prepare"]

_KILL_ROUNDS = 100


def _drop_to(uid: int | None, gid: int | None) -> None:
    if uid is None or os.geteuid() != 0:
        return
    group = uid if gid is None else gid
    os.setgroups([])
    os.setresgid(group, group, group)
    os.setresuid(uid, uid, uid)


def prepare(spec: dict[str, object]) -> None:
    """The steps before the exec: umask, limits, the sandbox user, death with the parent.

    Also called, imported, as the ``preexec_fn`` of an executor that starts a stage while it
    has a single thread (see ``stage.Stage``): the same steps, without this program's start.
    """
    # What die_with imports, imported while the Python library is still readable.
    import ctypes  # noqa: F401
    import signal  # noqa: F401

    limits = spec.get("rlimits") or {}
    assert isinstance(limits, dict)
    uid = spec.get("uid")
    gid = spec.get("gid")
    parent = spec.get("parent")
    os.umask(0o022)
    set_limits(limits)
    _drop_to(uid if isinstance(uid, int) else None, gid if isinstance(gid, int) else None)
    # Set after the identity change, which clears it.
    if isinstance(parent, int):
        die_with(parent)


def _exec(spec: dict[str, object], command: list[str]) -> None:
    prepare(spec)
    view = spec.get("namespaces")
    if isinstance(view, dict):
        seccomp_fd = spec.get("seccomp_fd")
        assert isinstance(seccomp_fd, int)
        try:
            contain(view, seccomp_fd)  # returns in the sandbox, as the process to exec
        except OSError as exc:
            sys.stderr.write(f"sandbox_executor: cannot set up the namespaces: {exc}\n")
            sys.stderr.flush()
            os._exit(EXIT_CANNOT_START)
    try:
        os.execve(command[0], command, os.environ)
    except OSError as exc:
        sys.stderr.write(f"sandbox_executor: cannot start {command[0]}: {exc.strerror}\n")
        sys.stderr.flush()
        os._exit(EXIT_CANNOT_START)


def _kill_all(uid: int, gid: int | None) -> None:
    import signal
    import time

    _drop_to(uid, gid)
    if os.getuid() != uid:
        raise SystemExit("kill mode needs to become the sandbox user")
    for _ in range(_KILL_ROUNDS):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return  # ESRCH: nothing of this user is left
        # kill(-1) also "reaches" zombies waiting for their parent, so look for the living.
        if not _living_processes_of(uid):
            return
        time.sleep(0.005)
    raise SystemExit(f"processes of uid {uid} are still alive after {_KILL_ROUNDS} rounds")


def _living_processes_of(uid: int) -> list[int]:
    me = os.getpid()
    living: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            # Bytes: once the user is dropped, the stdlib (codecs included) may be unreadable.
            with open(f"/proc/{name}/status", "rb") as status:
                fields = dict(line.split(b":", 1) for line in status if b":" in line)
        except OSError:
            continue
        real_uid = fields.get(b"Uid", b"").split()
        state = fields.get(b"State", b"").split()
        if real_uid and int(real_uid[0]) == uid and state and state[0] != b"Z":
            living.append(int(name))
    return living


def main(argv: list[str]) -> None:
    # Everything the other modes use is imported here, while still the executor's user: once
    # dropped to the sandbox user, the executor's Python library may be out of reach.
    import contextlib  # noqa: F401
    import ctypes  # noqa: F401
    import fcntl  # noqa: F401
    import json
    import signal  # noqa: F401
    import socket  # noqa: F401
    import struct  # noqa: F401
    import time  # noqa: F401

    spec = json.loads(argv[1])
    if spec["mode"] == "kill":
        _kill_all(int(spec["uid"]), spec.get("gid"))
        return
    command = argv[2:]
    if not command:
        raise SystemExit("no command to run")
    _exec(spec, command)


if __name__ == "__main__":
    main(sys.argv)
