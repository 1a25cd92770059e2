"""Child side of a sandboxed start: limits, identity, then exec. Runs as its own program.

The executor is a multi-threaded asyncio server, where running Python code between fork and
exec (``preexec_fn``) may deadlock. So the executor starts this small stdlib-only file with
``python -I -S`` in a new session instead; it lowers the resource limits, drops to the sandbox
user (when started as root), asks the kernel to kill it with the executor, and execs the real
command (bubblewrap, or the interpreter directly). The same program, in ``kill`` mode, becomes
the sandbox user and sends SIGKILL to every process of that user (``kill(-1)``), which reaches
processes that left the process group.

In ``stage`` mode it is the waiting process of a warm sandbox: the executor starts it while
the sandbox is idle (inside bubblewrap, as the sandbox user, with the script environment's
fixed base), it reports ready on its ready pipe and blocks on stdin. When a request arrives
the executor writes one *order* there and closes the pipe: NUL-separated fields (no request
value can hold a NUL), ``kind, cwd, n, n × (limit, value), n, argv..., n, n × (name, value)``.
The stage lowers the limits, sets the environment, and then either execs the interpreter
(``exec``: node, bash, an executable) or, for a Python script, runs it as ``__main__`` in this
already started interpreter (``python``), which saves the interpreter's start-up. What a
Python script sees is what ``python3 script.py`` gives it: ``sys.argv``, ``sys.path[0]`` (the
script's folder, then ``PYTHONPATH``), ``__file__`` and ``__name__``, the environment, exit
codes, and tracebacks that start at the script. Stage mode imports nothing the interpreter
has not loaded at start (``resource`` aside), so the script finds the same modules loaded as
under ``python3 script.py``, and exits as fast.

    python -I -S _launcher.py '{"mode": "exec", ...}' COMMAND [ARG...]
    python -I -S _launcher.py '{"mode": "kill", "uid": U, "gid": G}'
    python3 _launcher.py stage READY_FD                          (inside the sandbox)
"""

from __future__ import annotations

import gc  # built in
import io  # loaded by every interpreter at start
import os
import resource
import sys

_PR_SET_PDEATHSIG = 1
_EXIT_CANNOT_START = 127
_KILL_ROUNDS = 100


def _drop_to(uid: int | None, gid: int | None) -> None:
    if uid is None or os.geteuid() != 0:
        return
    group = uid if gid is None else gid
    os.setgroups([])
    os.setresgid(group, group, group)
    os.setresuid(uid, uid, uid)


def _set_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        which = getattr(resource, name)
        _, hard = resource.getrlimit(which)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            # Without privileges a limit cannot rise above the current hard limit.
            capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (capped, capped))


def _die_with(parent: int) -> None:
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    # The executor may have died before the request took effect.
    if os.getppid() != parent:
        os._exit(_EXIT_CANNOT_START)


def _exec(spec: dict[str, object], command: list[str]) -> None:
    limits = spec.get("rlimits") or {}
    assert isinstance(limits, dict)
    uid = spec.get("uid")
    gid = spec.get("gid")
    parent = spec.get("parent")
    os.umask(0o022)
    _set_limits(limits)
    _drop_to(uid if isinstance(uid, int) else None, gid if isinstance(gid, int) else None)
    # Set after the identity change, which clears it.
    if isinstance(parent, int):
        _die_with(parent)
    try:
        os.execve(command[0], command, os.environ)
    except OSError as exc:
        sys.stderr.write(f"sandbox_executor: cannot start {command[0]}: {exc.strerror}\n")
        sys.stderr.flush()
        os._exit(_EXIT_CANNOT_START)


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


def _stage(ready_fd: int) -> None:
    import builtins

    # What the stage allocated is frozen out of the collector's sight: the script's
    # collections, and the interpreter's exit, no longer walk it.
    gc.freeze()
    os.write(ready_fd, b"R")
    os.close(ready_fd)
    order = _read_order()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    kind, cwd, limits, argv, env = order
    os.chdir(cwd)
    _set_limits(limits)
    os.environ.clear()
    os.environ.update(env)
    if kind != "python":
        try:
            os.execve(argv[0], argv, env)
        except OSError as exc:
            sys.stderr.write(f"sandbox_executor: cannot start {argv[0]}: {exc.strerror}\n")
            sys.stderr.flush()
            os._exit(_EXIT_CANNOT_START)
    script = argv[0]
    sys.argv = argv
    sys.path[0] = os.path.dirname(script)
    # This interpreter started before the order: PYTHONPATH entries the order adds (the skill's
    # prepared environment) go where `python3 script.py` would have put them, after the first.
    added = [p for p in env.get("PYTHONPATH", "").split(":") if p and p not in sys.path]
    sys.path[1:1] = added
    main = type(sys)("__main__")
    main.__dict__.update(__file__=script, __builtins__=builtins, __cached__=None)
    sys.modules["__main__"] = main
    status = 0
    try:
        with open(script, "rb") as source:  # bytes, as `python3 script.py`: PEP 263 applies
            code = compile(source.read(), script, "exec")
        exec(code, main.__dict__)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException as exc:
        # Start the traceback at the script, as `python3 script.py` prints it.
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        status = 1
    _exit(main, status)


def _exit_status(exc: SystemExit) -> int:
    """The exit status the interpreter makes of an uncaught SystemExit (printing a message)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code if -(2**31) <= code < 2**31 else -1
    sys.stderr.write(f"{code}\n")
    return 1


def _exit(main: object, status: int) -> None:
    """End as the interpreter's own exit would, as a script can observe it, but quicker.

    In the interpreter's order: non-daemon threads are joined, atexit callbacks run, then the
    script's globals go (files it left open are flushed and closed by their finalizers, as is
    any other object they held), and every file object still open is flushed. What is left is
    the teardown of the other modules, which has no effect a script may count on (Python does
    not promise ``__del__`` at exit) and would cost more than a small script's whole run, so
    the process exits there.
    """
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    vars(main).clear()
    gc.collect()
    for item in gc.get_objects():
        if isinstance(item, io.IOBase) and not item.closed:
            _flush(item)
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    os._exit(status)


def _flush(stream: io.IOBase) -> None:
    # As at exit, a file that cannot be flushed is left as it is. (No contextlib: the stage
    # imports nothing a bare interpreter has not loaded.)
    try:  # noqa: SIM105
        stream.flush()
    except Exception:
        pass


def _read_order() -> tuple[str, str, dict[str, int], list[str], dict[str, str]]:
    chunks: list[bytes] = []
    while chunk := os.read(0, 1 << 16):
        chunks.append(chunk)
    fields = iter(os.fsdecode(field) for field in b"".join(chunks).split(b"\0"))
    kind = next(fields)
    cwd = next(fields)
    limits = {next(fields): int(next(fields)) for _ in range(int(next(fields)))}
    argv = [next(fields) for _ in range(int(next(fields)))]
    env = {next(fields): next(fields) for _ in range(int(next(fields)))}
    return kind, cwd, limits, argv, env


def main(argv: list[str]) -> None:
    if argv[1] == "stage":
        _stage(int(argv[2]))
        return
    # Everything the other modes use is imported here, while still the executor's user: once
    # dropped to the sandbox user, the executor's Python library may be out of reach.
    import ctypes  # noqa: F401
    import json
    import signal  # noqa: F401
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
