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
fixed base), it reports ready on its ready pipe and blocks on stdin. (A stage started as pid
1 of its sandbox, in both contained modes, first splits in two: the parent stays as the
sandbox's reaper, sealed against the script (``_split_off_reaper``), the child goes on as the
stage.) When a request arrives the executor writes one *order* there and closes the pipe:
NUL-separated fields (no request value can hold a NUL),
``kind, cwd, n, n × (limit, value), n, argv..., n, n × (name, value)``. The stage lowers the
limits, sets the environment, and then either execs the interpreter (``exec``: node, bash, an
executable) or, for a Python script, runs it as ``__main__`` in this already started
interpreter (``python``), which saves the interpreter's start-up. What a Python script sees is
what ``python3 script.py`` gives it: ``sys.argv``, ``sys.path[0]`` (the script's folder, then
``PYTHONPATH``), ``__file__`` and ``__name__``, the environment, exit codes, and tracebacks
that start at the script. Stage mode imports nothing the interpreter has not loaded at start
(``resource`` aside), so the script finds the same modules loaded as under
``python3 script.py``, and exits as fast.

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
_EGRESS_VARIABLE = "SKILLWEAVE_EGRESS_SOCKET"  # skillweave.sandbox.egress.STAGE_EGRESS_VARIABLE
_EGRESS_PORT = 3128  # skillweave.sandbox.egress.SANDBOX_PROXY_PORT (stdlib-only file: no import)
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


def prepare(spec: dict[str, object]) -> None:
    """The steps before the exec: umask, limits, the sandbox user, death with the parent.

    Also called, imported, as the ``preexec_fn`` of an executor that starts a stage while it
    has a single thread (see ``runner.Stage``): the same steps, without this program's start.
    """
    # What _die_with imports, imported while the Python library is still readable.
    import ctypes  # noqa: F401
    import signal  # noqa: F401

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


def _exec(spec: dict[str, object], command: list[str]) -> None:
    prepare(spec)
    view = spec.get("namespaces")
    if isinstance(view, dict):
        seccomp_fd = spec.get("seccomp_fd")
        assert isinstance(seccomp_fd, int)
        try:
            _contain(view, seccomp_fd)  # returns in the sandbox, as the process to exec
        except OSError as exc:
            sys.stderr.write(f"sandbox_executor: cannot set up the namespaces: {exc}\n")
            sys.stderr.flush()
            os._exit(_EXIT_CANNOT_START)
    try:
        os.execve(command[0], command, os.environ)
    except OSError as exc:
        sys.stderr.write(f"sandbox_executor: cannot start {command[0]}: {exc.strerror}\n")
        sys.stderr.flush()
        os._exit(_EXIT_CANNOT_START)


# --- namespaces mode: the fallback built on kernel namespaces, where bubblewrap is missing ---
#
# The same view of the system as bubblewrap's, made the same way: new user, mount, pid,
# network, IPC, UTS and cgroup namespaces; a tmpfs root holding read-only binds of the system
# folders, a fresh /proc of the new pid namespace, a minimal /dev, tmpfs /tmp and /dev/shm, the
# generated /etc files and the workspace; pivot_root into it, the old root detached, the new
# root read-only. Processes: this one (the monitor, outside the new pid namespace) waits for
# pid 1, which builds the view, loses every capability, enters the seccomp filter (no new
# namespaces, no mounts, ...) and execs the stage, which splits off the script's process
# and stays as the sealed reaper, as under bubblewrap (``--as-pid-1``). Files the view
# copies in (``file``) are written to the root's tmpfs, not bound, so their host paths are
# not in the sandbox's mount table.

_CLONE_NEWNS = 0x00020000
_CLONE_NEWCGROUP = 0x02000000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_SLAVE = 32, 4096, 16384, 1 << 19
_MNT_DETACH = 2
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 4, 24, 38
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_LAST_CAP = 63
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_SYS_MOUNT_SETATTR = 442
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
# statvfs flags a read-only remount must keep (the kernel refuses to clear locked ones).
_KEPT_FLAGS = ((2, _MS_NOSUID), (4, _MS_NODEV), (8, _MS_NOEXEC), (1024, 1024), (2048, 2048))
_LIBC: list = []  # the C library, loaded once (ctypes is imported only by these modes)
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


def _libc():  # type: ignore[no-untyped-def]
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    def encoded(text: str | None) -> bytes | None:
        return text.encode() if text else None

    result = _libc().mount(encoded(source), encoded(target), encoded(fstype), flags, encoded(data))
    _check(result, f"mount {target}")


def _make_read_only(path: str, *, recursive: bool) -> None:
    import ctypes

    # mount_setattr (Linux 5.12) changes only the read-only bit, below every submount too.
    attr = (ctypes.c_uint64 * 4)(_MOUNT_ATTR_RDONLY, 0, 0, 0)
    flags = _AT_RECURSIVE if recursive else 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(
        ctypes.c_long(_SYS_MOUNT_SETATTR),
        ctypes.c_int(_AT_FDCWD),
        path.encode(),
        ctypes.c_uint(flags),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    if result == 0:
        return
    if ctypes.get_errno() not in (38, 22):  # ENOSYS, EINVAL: an older kernel
        _check(-1, f"read-only {path}")
    kept = 0
    for vfs_flag, mount_flag in _KEPT_FLAGS:
        if os.statvfs(path).f_flag & vfs_flag:
            kept |= mount_flag
    _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept)


def _mount_point(path: str, *, is_file: bool) -> None:
    if is_file:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.lexists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
    else:
        os.makedirs(path, exist_ok=True)


def _bind(source: str, target: str, *, read_only: bool) -> None:
    _mount_point(target, is_file=not os.path.isdir(source))
    _mount(source, target, None, _MS_BIND | _MS_REC)
    if read_only:
        _make_read_only(target, recursive=True)


def _copy_in(source: str, target: str) -> None:
    """A host file's bytes as a file of the root's tmpfs: unlike a bind, no host path shows
    in the sandbox's mount table."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(source, "rb") as file:
        data = file.read()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _make_dev(target: str) -> None:
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NOEXEC, "mode=0755,size=65536")
    for name in _DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(f"/dev/{name}", f"{target}/{name}", read_only=False)
    for name, link in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("ptmx", "pts/ptmx"),
    ):
        os.symlink(link, f"{target}/{name}")
    os.mkdir(f"{target}/shm")
    os.mkdir(f"{target}/pts")
    import contextlib

    # A terminal of its own, as under bubblewrap; optional.
    with contextlib.suppress(OSError):
        _mount(
            "devpts",
            f"{target}/pts",
            "devpts",
            _MS_NOSUID | _MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=620",
        )


def _build_view(view: dict[str, object]) -> None:
    """Pid 1: the sandbox's file system, entered with pivot_root."""
    root = view["root"]
    assert isinstance(root, str)
    _mount(None, "/", None, _MS_SLAVE | _MS_REC)  # nothing done here reaches the host
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=1048576")
    operations = view["operations"]
    assert isinstance(operations, list)
    for operation in operations:
        kind, *fields = operation
        inside = root + fields[-1] if kind != "tmpfs" else root + fields[0]
        if kind in ("bind", "ro-bind", "ro-bind-try"):
            if kind == "ro-bind-try" and not os.path.exists(fields[0]):
                continue
            _bind(fields[0], inside, read_only=kind != "bind")
        elif kind == "file":
            _copy_in(fields[0], inside)
        elif kind == "symlink":
            os.makedirs(os.path.dirname(inside), exist_ok=True)
            os.symlink(fields[0], inside)
        elif kind == "dir":
            os.makedirs(inside, exist_ok=True)
        elif kind == "proc":
            os.makedirs(inside, exist_ok=True)
            _mount("proc", inside, "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        elif kind == "dev":
            _make_dev(inside)
        elif kind == "tmpfs":
            os.makedirs(inside, exist_ok=True)
            _mount("tmpfs", inside, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=1777,size={fields[1]}")
        else:
            raise OSError(22, f"unknown view operation {kind!r}")
    hostname = str(view.get("hostname", "sandbox")).encode()
    _check(_libc().sethostname(hostname, len(hostname)), "sethostname")
    _loopback_up()
    os.chdir(root)
    pivot = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if pivot is None:
        raise OSError(38, f"no pivot_root number for {os.uname().machine}")
    _check(_libc().syscall(pivot, b".", b"."), "pivot_root")
    _check(_libc().umount2(b".", _MNT_DETACH), "detach the host's root")
    os.chdir("/")
    _make_read_only("/", recursive=False)


def _loopback_up() -> None:
    """The network namespace's own loopback, up (it starts down); nothing else exists."""
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, siocgifflags, request))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


def _exit_like(status: int) -> None:
    """Exit as a shell reports a child's end: its code, or 128 + the signal that killed it."""
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else _EXIT_CANNOT_START)


def _wait_for(child: int) -> None:
    """Reap every child (pid 1 inherits orphans) until `child` ends, then end like it."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(_EXIT_CANNOT_START)
        if pid == child:
            _exit_like(status)


def _close_all_but_stderr() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.closerange(3, 65536)


def _install_filter(seccomp_fd: int) -> None:
    import ctypes

    chunks: list[bytes] = []
    while chunk := os.read(seccomp_fd, 1 << 16):
        chunks.append(chunk)
    os.close(seccomp_fd)
    program = b"".join(chunks)
    if not program or len(program) % 8:
        raise OSError(22, "the seccomp filter is empty or malformed")

    class _Fprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = _libc()
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")


def _drop_capabilities() -> None:
    libc = _libc()
    for cap in range(_LAST_CAP + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last: fine
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _contain(view: dict[str, object], seccomp_fd: int) -> None:
    """Enter fresh namespaces; returns only in the stage process, inside the sandbox."""
    import signal

    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        raise OSError(1, "refusing to run a sandbox as root: the executor must drop to its uid")
    flags = (
        _CLONE_NEWUSER
        | _CLONE_NEWNS
        | _CLONE_NEWPID
        | _CLONE_NEWNET
        | _CLONE_NEWIPC
        | _CLONE_NEWUTS
        | _CLONE_NEWCGROUP
    )
    # Dropping to the sandbox user made this process non-dumpable, which gives its /proc
    # files to root: it could not write its own maps.
    _libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    _check(_libc().unshare(flags), "unshare")
    with open("/proc/self/setgroups", "w") as file:
        file.write("deny")
    with open("/proc/self/uid_map", "w") as file:
        file.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as file:
        file.write(f"{gid} {gid} 1")
    _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    first = os.fork()
    if first:
        _close_all_but_stderr()
        os.close(2)
        _, status = os.waitpid(first, 0)
        _exit_like(status)
    # pid 1 of the new pid namespace. (Its parent is outside: getppid() says 0, so a monitor
    # that died first cannot be told from here; until setsid() below it is in the group the
    # executor kills, and from then on this death signal covers it.)
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _build_view(view)
    # It execs the stage as bubblewrap's --as-pid-1 does, with no capability and under the
    # filter: the stage, pid 1, splits off the script's process and seals itself as the
    # reaper (see `_split_off_reaper`), so no process of the sandbox runs unfiltered.
    os.setsid()
    _drop_capabilities()
    _install_filter(seccomp_fd)


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
        os._exit(_EXIT_CANNOT_START)
    os.write(seal, b"S")
    os.close(seal)
    _close_all_but_stderr()
    os.close(2)
    _wait_for(stage)
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
        os._exit(_EXIT_CANNOT_START)


def _seal_reaper() -> None:
    import ctypes
    import signal

    for number in range(1, signal.NSIG):
        try:
            if signal.getsignal(number) not in (signal.SIG_DFL, signal.SIG_IGN, None):
                signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            continue
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def _start_forwarder(path: str) -> None:
    """Start the run's egress forwarder (see ``sandbox_executor.egress``): a child that
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
        _die_with(stage)
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
    if argv[1] == "stage":
        _stage(int(argv[2]))
        return
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
