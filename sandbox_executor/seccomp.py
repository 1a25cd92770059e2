"""The syscall filter every contained script runs under: a classic BPF seccomp program.

Both real isolation modes load the same program: bubblewrap reads it from a file descriptor
(``--seccomp FD``), the namespaces launcher installs it itself (``PR_SET_SECCOMP``) right
before it execs the stage. It is written here by hand, as bytes, because it is small, the
executor must not need a compiler or libseccomp at run time, and the rules are easier to
review as a table than as generated code.

What it refuses, and why (everything else is allowed; the namespaces already hide the
host, this closes the kernel surfaces that namespaces do not):

=========================================  ==================================================
io_uring_setup/_enter/_register (ENOSYS)   a large, often-exploited kernel surface that also
                                           bypasses per-syscall filtering; libuv and Python
                                           fall back to plain I/O on ENOSYS
keyctl, add_key, request_key               kernel keyrings are not namespaced: a script could
                                           read or plant keys of other users of the host
ptrace, process_vm_readv/_writev, kcmp,    no reading or steering another process (the
pidfd_getfd, process_madvise               sandbox's reaper included: it is also
                                           non-dumpable, see ``_stage_program``); debuggers do
                                           not run. pidfd_open stays: a pidfd only waits
                                           for or signals a process, as kill() does
mount, umount2, pivot_root, chroot,        the script's view of files is fixed by the
open_tree, move_mount, fsopen, fsconfig,   sandbox; it may not remount, detach or rebuild it
fsmount, fspick, mount_setattr
unshare, setns, clone/clone3 with any      no new namespaces: nested user namespaces are how
CLONE_NEW* flag (clone3: ENOSYS, so libc   most container escapes start (clone3 passes its
falls back to clone, whose flags we see)   flags in memory a filter cannot read)
bpf, perf_event_open, userfaultfd          kernel programs, performance counters and fault
                                           handling: exploit primitives, no script needs them
kexec_*, *_module, reboot, swapon/off,     host administration: refused even where the
acct, quotactl(_fd), syslog, settimeofday, sandbox would hold the capability
clock_settime/adjtime, adjtimex,
sethostname, setdomainname, vhangup,
iopl, ioperm, modify_ldt, uselib, ustat,
sysfs, _sysctl, nfsservctl, lookup_dcookie,
fanotify_init, name_to_handle_at,
open_by_handle_at (handles reach files
outside the mount namespace)
socket/socketpair families other than      AF_VSOCK talks to the hypervisor, AF_PACKET and
AF_UNIX, AF_INET, AF_INET6, and AF_NETLINK  raw netlink families reach kernel subsystems;
only for NETLINK_ROUTE (EAFNOSUPPORT)      Python and Node need unix/inet sockets, and
                                           NETLINK_ROUTE for getifaddrs()
ioctl TIOCSTI, TIOCLINUX                   typing into a terminal the script does not own
any other architecture's calling           the filter is written for the host's one ABI
convention (the process is killed), and
x32 calls on x86-64 (EPERM)
=========================================  ==================================================

Refused calls fail with ``EPERM`` (``ENOSYS``/``EAFNOSUPPORT`` where noted), so a script gets
an ordinary error it can report. The tables cover x86-64 and aarch64; on another architecture
the executor refuses to start in a contained mode (it says so), never runs unfiltered.
"""

from __future__ import annotations

import errno
import os
import struct
from typing import Final

from sandbox_executor.errors import IsolationUnavailableError

__all__ = ["ARCHITECTURES", "DENIED", "filter_program", "write_filter"]

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS: Final = 0x00 | 0x00 | 0x20
_JEQ_K: Final = 0x05 | 0x10 | 0x00
_JGE_K: Final = 0x05 | 0x30 | 0x00
_JSET_K: Final = 0x05 | 0x40 | 0x00
_RET_K: Final = 0x06 | 0x00
_JA: Final = 0x05 | 0x00

# seccomp return values (linux/seccomp.h).
_KILL_PROCESS: Final = 0x80000000
_ERRNO: Final = 0x00050000
_ALLOW: Final = 0x7FFF0000

# Offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6] (little endian: an
# argument's low 32 bits come first).
_NR: Final = 0
_ARCH: Final = 4


def _arg(index: int) -> int:
    return 16 + 8 * index


_CLONE_NEW_FLAGS: Final = (
    0x00000080  # CLONE_NEWTIME
    | 0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_NETLINK_ROUTE: Final = 0
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_X32_SYSCALL_BIT: Final = 0x40000000

DENIED: Final = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "process_madvise",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "vhangup",
    "iopl",
    "ioperm",
    "modify_ldt",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "nfsservctl",
    "lookup_dcookie",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
)
"""Every call refused outright (the conditional rules are in `filter_program`)."""

_ENOSYS_CALLS: Final = frozenset({"io_uring_setup", "io_uring_enter", "io_uring_register"})

# Calls added since Linux 5.1 have one number on every architecture.
_COMMON: Final = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "mount_setattr": 442,
    "quotactl_fd": 443,
}

_X86_64: Final = {
    **_COMMON,
    "ioctl": 16,
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "ptrace": 101,
    "syslog": 103,
    "uselib": 134,
    "ustat": 136,
    "sysfs": 139,
    "vhangup": 153,
    "modify_ldt": 154,
    "pivot_root": 155,
    "_sysctl": 156,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "nfsservctl": 180,
    "lookup_dcookie": 212,
    "clock_settime": 227,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
}

# aarch64 uses the generic table (asm-generic/unistd.h); it has no iopl, ioperm, modify_ldt,
# uselib, ustat, sysfs or _sysctl.
_AARCH64: Final = {
    **_COMMON,
    "lookup_dcookie": 18,
    "ioctl": 29,
    "umount2": 39,
    "mount": 40,
    "pivot_root": 41,
    "nfsservctl": 42,
    "chroot": 51,
    "vhangup": 58,
    "quotactl": 60,
    "acct": 89,
    "unshare": 97,
    "kexec_load": 104,
    "init_module": 105,
    "delete_module": 106,
    "clock_settime": 112,
    "syslog": 116,
    "ptrace": 117,
    "reboot": 142,
    "sethostname": 161,
    "setdomainname": 162,
    "settimeofday": 170,
    "adjtimex": 171,
    "socket": 198,
    "socketpair": 199,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "clone": 220,
    "swapon": 224,
    "swapoff": 225,
    "perf_event_open": 241,
    "fanotify_init": 262,
    "name_to_handle_at": 264,
    "open_by_handle_at": 265,
    "clock_adjtime": 266,
    "setns": 268,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "kcmp": 272,
    "finit_module": 273,
    "bpf": 280,
    "userfaultfd": 282,
    "kexec_file_load": 294,
}

ARCHITECTURES: Final = {
    # machine (uname -m): (AUDIT_ARCH_*, syscall numbers, x32 calls to refuse)
    "x86_64": (0xC000003E, _X86_64, True),
    "aarch64": (0xC00000B7, _AARCH64, False),
}


class _Program:
    """A BPF program built backwards: jumps are offsets to later instructions, so each
    instruction is prepended once everything after it is known."""

    def __init__(self) -> None:
        self._reversed: list[bytes] = []

    def __len__(self) -> int:
        return len(self._reversed)

    def add(self, code: int, k: int, jt: int = 0, jf: int = 0) -> int:
        """Prepend an instruction; returns its position counted from the end."""
        self._reversed.append(struct.pack("=HBBI", code, jt, jf, k & 0xFFFFFFFF))
        return len(self._reversed)

    def jump_to(self, target: int) -> int:
        """The offset from the next instruction to prepend to `target` (from `add`)."""
        offset = len(self._reversed) - target
        if offset > 0xFF:
            raise ValueError("seccomp program too long for a short jump")
        return offset

    def bytes(self) -> bytes:
        return b"".join(reversed(self._reversed))


def filter_program(machine: str | None = None) -> bytes:
    """The filter for `machine` (default: this host's), as ``struct sock_filter`` records.

    Raises:
        IsolationUnavailableError: No syscall table for this architecture.
    """
    machine = machine or os.uname().machine
    if machine not in ARCHITECTURES:
        raise IsolationUnavailableError(
            f"no syscall filter for the {machine} architecture (only {', '.join(ARCHITECTURES)});"
            " set EXECUTOR__ISOLATION=none only if scripts are trusted"
        )
    audit_arch, numbers, refuse_x32 = ARCHITECTURES[machine]
    program = _Program()
    # Built from the last instruction to the first.
    allow = program.add(_RET_K, _ALLOW)
    eperm = program.add(_RET_K, _ERRNO | errno.EPERM)
    enosys = program.add(_RET_K, _ERRNO | errno.ENOSYS)
    eafnosupport = program.add(_RET_K, _ERRNO | errno.EAFNOSUPPORT)

    # ioctl: refuse TIOCSTI/TIOCLINUX (the request is an unsigned int: the low word is all).
    program.add(_JEQ_K, _TIOCLINUX, jt=program.jump_to(eperm), jf=program.jump_to(allow))
    program.add(_JEQ_K, _TIOCSTI, jt=program.jump_to(eperm))
    ioctl_checks = program.add(_LD_W_ABS, _arg(1))

    # socket/socketpair: unix, inet, inet6, and netlink for NETLINK_ROUTE only.
    program.add(_JEQ_K, _NETLINK_ROUTE, jt=program.jump_to(allow), jf=program.jump_to(eafnosupport))
    program.add(_LD_W_ABS, _arg(2))
    netlink = len(program)
    program.add(_JEQ_K, _AF_NETLINK, jt=program.jump_to(netlink), jf=program.jump_to(eafnosupport))
    program.add(_JEQ_K, _AF_INET6, jt=program.jump_to(allow))
    program.add(_JEQ_K, _AF_INET, jt=program.jump_to(allow))
    program.add(_JEQ_K, _AF_UNIX, jt=program.jump_to(allow))
    socket_checks = program.add(_LD_W_ABS, _arg(0))

    # clone: refuse any CLONE_NEW* flag (they are all in the low word of the flags).
    program.add(_JSET_K, _CLONE_NEW_FLAGS, jt=program.jump_to(eperm), jf=program.jump_to(allow))
    clone_checks = program.add(_LD_W_ABS, _arg(0))

    # The dispatch on the syscall number, in front of the rules above; a call it does not
    # name falls through to the unconditional jump to `allow`.
    program.add(_JA, program.jump_to(allow))
    for name in reversed(DENIED):
        if name not in numbers:
            continue  # not a call of this architecture
        target = enosys if name in _ENOSYS_CALLS else eperm
        program.add(_JEQ_K, numbers[name], jt=program.jump_to(target))
    program.add(_JEQ_K, numbers["clone3"], jt=program.jump_to(enosys))
    program.add(_JEQ_K, numbers["clone"], jt=program.jump_to(clone_checks))
    program.add(_JEQ_K, numbers["socketpair"], jt=program.jump_to(socket_checks))
    program.add(_JEQ_K, numbers["socket"], jt=program.jump_to(socket_checks))
    program.add(_JEQ_K, numbers["ioctl"], jt=program.jump_to(ioctl_checks))
    if refuse_x32:
        program.add(_JGE_K, _X32_SYSCALL_BIT, jt=program.jump_to(eperm))
    program.add(_LD_W_ABS, _NR)
    # A call made through another architecture's convention has other numbers: kill it.
    program.add(_RET_K, _KILL_PROCESS)
    program.add(_JEQ_K, audit_arch, jt=1)
    program.add(_LD_W_ABS, _ARCH)
    return program.bytes()


def write_filter(path: os.PathLike[str] | str) -> None:
    """Write this host's filter to `path` (read by bubblewrap and the launcher as a fd).

    Raises:
        IsolationUnavailableError: No syscall table for this architecture.
    """
    data = filter_program()
    with open(path, "xb") as file:
        file.write(data)
    os.chmod(path, 0o644)
