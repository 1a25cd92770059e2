"""The stage program: the waiting process of a warm sandbox. Runs as its own program, inside.

The executor copies this stdlib-only file into its folder (``stage.Stage`` binds the copy into
a contained sandbox) and starts it, through the launcher (``_launcher``), while the sandbox is
idle (inside bubblewrap or the namespaces mode, as the sandbox user, with the script
environment's fixed base); it reports ready on its ready pipe and blocks on stdin. (A stage
started as pid 1 of its sandbox, in both contained modes, first splits in two: the parent stays
as the sandbox's reaper, sealed against the script (``_split_off_reaper``), the child goes on as
the stage.) When a request arrives the executor writes one *order* there and closes the pipe:
NUL-separated fields (no request value can hold a NUL),
``kind, cwd, n, n × (limit, value), n, argv..., n, n × (name, value)``. The stage lowers the
limits, sets the environment, and then either execs the interpreter (``exec``: node, bash, an
executable) or, for a Python script, runs it as ``__main__`` in this already started
interpreter (``python``), which saves the interpreter's start-up. What a Python script sees is
what ``python3 script.py`` gives it: ``sys.argv``, ``sys.path[0]`` (the script's folder, then
``PYTHONPATH``), ``__file__`` and ``__name__``, the environment, exit codes, and tracebacks
that start at the script. The stage imports nothing the interpreter has not loaded at start
(``resource`` aside), so the script finds the same modules loaded as under
``python3 script.py``, and exits as fast; which is why this file imports no sibling, and holds
the few process steps the launcher (``_launcher``, ``_namespaces``) shares with it: the
resource limits, death with the parent, waiting for a child and ending like it.

    python3 _stage_program.py stage READY_FD                     (inside the sandbox)
"""

from __future__ import annotations

import _signal  # built in, loaded at start: ``signal`` would load enum, functools, re...
import gc  # built in
import io  # loaded by every interpreter at start
import os
import resource
import sys

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
# skillweave.sandbox.egress_policy's STAGE_EGRESS_VARIABLE and SANDBOX_PROXY_PORT, written out:
# this stdlib-only file imports nothing of skillweave.
_EGRESS_VARIABLE = "SKILLWEAVE_EGRESS_SOCKET"
_EGRESS_PORT = 3128
EXIT_CANNOT_START = 127


def set_limits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        which = getattr(resource, name)
        _, hard = resource.getrlimit(which)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            # Without privileges a limit cannot rise above the current hard limit.
            capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (capped, capped))


def die_with(parent: int) -> None:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    # The executor may have died before the request took effect.
    if os.getppid() != parent:
        os._exit(EXIT_CANNOT_START)


def exit_like(status: int) -> None:
    """Exit as a shell reports a child's end: its code, or 128 + the signal that killed it."""
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else EXIT_CANNOT_START)


def wait_for(child: int) -> None:
    """Reap every child (pid 1 inherits orphans) until `child` ends, then end like it."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(EXIT_CANNOT_START)
        if pid == child:
            exit_like(status)


def close_all_but_stderr() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.closerange(3, 65536)


def _stage(ready_fd: int) -> None:
    import builtins

    # Pid 1 splits: the stage goes on in the child (pid 2); see _split_off_reaper.
    seal = _split_off_reaper(ready_fd) if os.getpid() == 1 else None
    # compile() of source text first checks whether it was given an AST, which builds the
    # interpreter's AST types on the first call (about 0.6 ms); done here, before the order.
    # No module is imported by it, and `python3 script.py` has no such cost to compare with.
    compile(b"", "<stage>", "exec")
    # What the stage allocated is frozen out of the collector's sight: the script's
    # collections, and the interpreter's exit, no longer walk it.
    gc.freeze()
    _report_ready(ready_fd, seal)
    order = _read_order()
    if seal is not None:
        _await_seal(seal[1])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    kind, cwd, limits, argv, env = order
    egress = env.pop(_EGRESS_VARIABLE, None)
    if egress:
        _start_forwarder(egress)
    os.chdir(cwd)
    set_limits(limits)
    os.environ.clear()
    os.environ.update(env)
    if kind != "python":
        try:
            os.execve(argv[0], argv, env)
        except OSError as exc:
            sys.stderr.write(f"sandbox_executor: cannot start {argv[0]}: {exc.strerror}\n")
            sys.stderr.flush()
            os._exit(EXIT_CANNOT_START)
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


def _split_off_reaper(ready_fd: int) -> tuple[int, int]:
    """Pid 1 of its sandbox (bubblewrap's ``--as-pid-1``, or the namespaces mode's exec):
    fork; the child returns as the stage, this process stays as the sandbox's reaper.

    The child gets two descriptors: one it closes once it reported ready, the other tells it
    the reaper is sealed (`_await_seal`). The reaper seals itself in between, while the stage
    waits for its order (sealing takes a few ms of loading ctypes, kept off the time a sandbox
    takes to be ready), and the stage runs nothing of the order's before the seal is done, so
    no script ever meets an unsealed reaper. It is made non-dumpable, which gives its
    ``/proc/1`` files to root (outside the sandbox's user namespace) and refuses every
    ptrace-mode access to a process without capabilities, which the script is: no
    ``/proc/1/mem``, ``environ``, ``fd/*``, ``cwd`` or ``root``, no ``pidfd_getfd`` nor
    ``process_vm_*`` (the filter refuses those too). Its signal handlers go back to the
    defaults, so every signal sent from inside the sandbox is dropped (from inside its pid
    namespace, pid 1 gets only the signals it handles, SIGKILL and SIGSTOP never). It ends when
    the stage does, like it, and holds none of the run's descriptors meanwhile (its stdin,
    stdout and stderr are /dev/null). What a script can still see of it is harmless: its
    command line (this program's, by its paths in the sandbox), its ``status`` and ``stat``,
    and a pidfd (``pidfd_open``) that only tells when it exits or signals it, which is dropped
    as any signal is. It runs under the same uid as the script (the sandbox's user namespace
    maps one uid), which the seal makes moot: non-dumpable, capability-less and without signal
    handlers, it gives that uid nothing over it.
    """
    started, stage_started = os.pipe()
    sealed, seal = os.pipe()
    stage = os.fork()
    if stage == 0:
        os.close(started)
        os.close(seal)
        return stage_started, sealed
    for fd in (stage_started, sealed, ready_fd):
        os.close(fd)
    os.read(started, 1)  # end of file: the stage reported ready (or ended)
    os.close(started)
    try:
        _seal_reaper()
    except Exception as exc:  # whatever it is, no script may run
        sys.stderr.write(f"sandbox_executor: cannot seal the sandbox's reaper: {exc}\n")
        sys.stderr.flush()
        os._exit(EXIT_CANNOT_START)
    os.write(seal, b"S")
    os.close(seal)
    close_all_but_stderr()
    os.close(2)
    wait_for(stage)
    raise AssertionError("unreachable: the reaper exits like the stage")


def _report_ready(ready_fd: int, seal: tuple[int, int] | None) -> None:
    os.write(ready_fd, b"R")
    os.close(ready_fd)
    if seal is not None:
        os.close(seal[0])  # the reaper seals itself from now on


def _await_seal(sealed: int) -> None:
    """Block until the reaper says it is sealed; end here if it could not be (no script
    runs: the reaper wrote why on stderr, and the run fails with exit 127)."""
    word = os.read(sealed, 1)
    os.close(sealed)
    if word != b"S":
        os._exit(EXIT_CANNOT_START)


def _seal_reaper() -> None:
    import ctypes

    for number in range(1, _signal.NSIG):
        try:
            if _signal.getsignal(number) not in (_signal.SIG_DFL, _signal.SIG_IGN, None):
                _signal.signal(number, _signal.SIG_DFL)
        except (OSError, ValueError):
            continue
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def _start_forwarder(path: str) -> None:
    """Start the run's egress forwarder (see ``sandbox_executor.egress_bridge``): a child that
    listens on the sandbox's own ``127.0.0.1:3128`` and relays each connection to the Unix
    socket `path`, which the executor bridges to the manager's egress proxy. Returns once it
    listens, so that the script's first request finds it. The child imports what it needs
    itself: the script's interpreter keeps the modules of a bare start. It dies with the
    sandbox (the pid namespace's end) or with this process (``PR_SET_PDEATHSIG``)."""
    ready, told = os.pipe()
    stage = os.getpid()
    if os.fork() != 0:
        os.close(told)
        os.read(ready, 1)  # b"R", or b"" when the child could not listen: the script finds out
        os.close(ready)
        return
    os.close(ready)
    try:
        die_with(stage)
        _forward_until_killed(path, told)
    finally:
        os._exit(0)


def _forward_until_killed(path: str, told: int) -> None:
    import contextlib
    import socket
    import threading

    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the script's streams are the executor's to read: not held open here
        os.dup2(null, fd)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", _EGRESS_PORT))
        server.listen(64)
    except OSError:
        os.close(told)
        return
    os.write(told, b"R")
    os.close(told)

    def copy(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

    def relay(client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            return
        back = threading.Thread(target=copy, args=(upstream, client), daemon=True)
        back.start()
        copy(client, upstream)
        back.join()
        client.close()
        upstream.close()

    while True:
        client, _ = server.accept()
        threading.Thread(target=relay, args=(client,), daemon=True).start()


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
    if len(argv) != 3 or argv[1] != "stage":
        raise SystemExit("usage: _stage_program.py stage READY_FD")
    _stage(int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
