"""The ``namespaces`` isolation mode's child side: the fallback where bubblewrap is missing.

The same view of the system as bubblewrap's, made the same way: new user, mount, pid,
network, IPC, UTS and cgroup namespaces; a tmpfs root holding read-only binds of the system
folders, a fresh /proc of the new pid namespace, a minimal /dev, tmpfs /tmp and /dev/shm, the
generated /etc files and the workspace; pivot_root into it, the old root detached, the new
root read-only. Processes: the launcher (the monitor, outside the new pid namespace) waits for
pid 1, which builds the view, loses every capability, enters the seccomp filter (no new
namespaces, no mounts, ...) and execs the stage, which splits off the script's process
and stays as the sealed reaper, as under bubblewrap (``--as-pid-1``). Files the view
copies in (``file``) are written to the root's tmpfs, not bound, so their host paths are
not in the sandbox's mount table.

Called by the launcher (``_launcher``, exec mode with a ``namespaces`` view: `contain`), whose
program imports it before it drops to the sandbox user; the view it builds is described by
``isolation`` (``contained_argv``). Stdlib only, like the launcher.
"""

from __future__ import annotations

import os

if __package__:
    from sandbox_executor._stage_program import (
        PR_SET_DUMPABLE,
        PR_SET_PDEATHSIG,
        close_all_but_stderr,
        exit_like,
    )
else:  # imported by the launcher's own program start (see ``_launcher``)
    from _stage_program import (  # type: ignore[no-redef]
        PR_SET_DUMPABLE,
        PR_SET_PDEATHSIG,
        close_all_but_stderr,
        exit_like,
    )

__all__ = ["contain"]

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
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 24, 38
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


def contain(view: dict[str, object], seccomp_fd: int) -> None:
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
    _libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    _check(_libc().unshare(flags), "unshare")
    with open("/proc/self/setgroups", "w") as file:
        file.write("deny")
    with open("/proc/self/uid_map", "w") as file:
        file.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as file:
        file.write(f"{gid} {gid} 1")
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    first = os.fork()
    if first:
        close_all_but_stderr()
        os.close(2)
        _, status = os.waitpid(first, 0)
        exit_like(status)
    # pid 1 of the new pid namespace. (Its parent is outside: getppid() says 0, so a monitor
    # that died first cannot be told from here; until setsid() below it is in the group the
    # executor kills, and from then on this death signal covers it.)
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _build_view(view)
    # It execs the stage as bubblewrap's --as-pid-1 does, with no capability and under the
    # filter: the stage, pid 1, splits off the script's process and seals itself as the
    # reaper (see ``_stage_program``), so no process of the sandbox runs unfiltered.
    os.setsid()
    _drop_capabilities()
    _install_filter(seccomp_fd)
