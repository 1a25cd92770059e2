"""How each field of ``ExecutionLimits`` is enforced on one script run.

=================  ==========================================================================
timeout_seconds    Wall clock, in the executor: SIGKILL to the process group (under bubblewrap
                   that is bwrap, whose death takes the whole pid namespace with it), then to
                   every process of the sandbox uid; ``timed_out`` is set.
memory_mb          RLIMIT_DATA (private writable memory: heap, anonymous mmap, thread stacks).
                   RLIMIT_AS is not used: it counts address space merely *reserved*, and V8
                   reserves far more than it uses (measured with node 20: ``node -e 1`` dies
                   under RLIMIT_AS=256 MiB and needs about 1 GiB). Under RLIMIT_DATA node
                   starts from 48 MiB (below about 40 MiB it hangs at startup until the wall
                   timeout) and a Buffer or object flood fails at the limit; Python 3.11
                   starts under 8 MiB and raises MemoryError at the limit. Cgroups are not
                   used: this host has only cgroup v1 controllers (the v2 hierarchy has none),
                   out of an executor's reach in a pod anyway, where the pod's memory limit is
                   the outer bound. Not counted: tmpfs and shared memory, so /tmp and /dev/shm
                   are tmpfs mounts capped at memory_mb each.
max_processes      RLIMIT_NPROC for the sandbox uid, which is a uid of its own (see
                   ``identity``), so the count is exactly this sandbox's tasks. Threads count
                   (node 20 runs 7). The stage sets it inside the sandbox, and Linux (5.14
                   on) counts RLIMIT_NPROC per user namespace: under bubblewrap that counts
                   the script's tasks and the sandbox's reaper (pid 1, see ``_stage_program``),
                   which is added on top, not bwrap's monitor outside (the namespaces mode
                   adds its monitor and the reaper, both inside). With ``none``, a non-root
                   executor shares its uid with its sandbox: its current task count is added
                   so the limit still means the script's own tasks.
max_open_files     RLIMIT_NOFILE.
max_file_mb        RLIMIT_FSIZE (Python gets EFBIG; other programs die of SIGXFSZ).
max_output_bytes   The executor reads stdout and stderr through pipes into files (up to
                   ``EXECUTOR__CAPTURE_MAX_BYTES``, 512 MiB, each; the rest is drained and
                   dropped) and returns the first max_output_bytes of each inline.
max_output_files   Checked when outputs are collected; over it, no outputs are listed and the
                   result's ``error`` says so.
=================  ==========================================================================

Core dumps are always off (RLIMIT_CORE=0): a dump would land in the workspace.
"""

from __future__ import annotations

import os
from typing import Final

from skillweave.sandbox import ExecutionLimits, Isolation

__all__ = ["SANDBOX_HELPERS", "rlimits_for", "tmpfs_bytes"]

_MIB: Final = 1024 * 1024
SANDBOX_HELPERS: Final = {"bubblewrap": 1, "namespaces": 2}
"""Processes of the sandbox's own that share its user namespace with the script: the reaper
(pid 1); in the namespaces mode also the launcher's monitor."""


def rlimits_for(
    limits: ExecutionLimits, *, isolation: Isolation, dedicated_user: bool
) -> dict[str, int]:
    """The resource limits (names of the ``resource`` module) the stage sets for a script."""
    processes = limits.max_processes
    if isolation in SANDBOX_HELPERS:
        processes += SANDBOX_HELPERS[isolation]
    elif not dedicated_user:
        processes += _tasks_of(os.getuid())
    return {
        "RLIMIT_DATA": limits.memory_mb * _MIB,
        "RLIMIT_NPROC": processes,
        "RLIMIT_NOFILE": limits.max_open_files,
        "RLIMIT_FSIZE": limits.max_file_mb * _MIB,
        "RLIMIT_CORE": 0,
    }


def tmpfs_bytes(limits: ExecutionLimits) -> int:
    """Size of each tmpfs the sandbox gets (/tmp, /dev/shm): RAM that RLIMIT_DATA misses."""
    return limits.memory_mb * _MIB


def _tasks_of(uid: int) -> int:
    """How many tasks (threads included, as RLIMIT_NPROC counts them) `uid` runs now."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        real = fields.get("Uid", "").split()
        if real and int(real[0]) == uid:
            total += int(fields.get("Threads", "1").strip() or 1)
    return total
