"""The sandbox boundary: bubblewrap, or the same view built on kernel namespaces, or none.

Three modes, one setting (``EXECUTOR__ISOLATION``, which the manager passes to every executor
it starts): ``bubblewrap``, ``namespaces`` (our own launcher, for hosts without bubblewrap),
and ``none``. ``auto`` (the default) takes bubblewrap when it runs a sandbox here, else
namespaces, and refuses to start when neither does: it never falls to ``none``, which runs
only when set explicitly, and is then announced on every surface.

In both contained modes a script sees a private root: the system folders needed to run
python3, node and bash (``/usr``, ``/bin``, ``/lib``, ``/lib64`` and the like, read-only), a
fresh ``/proc`` of its own pid namespace (no other process, nor its environment, is
visible), a minimal ``/dev``, tmpfs ``/tmp`` and ``/dev/shm`` capped in size, a generated
``/etc`` (passwd, group, hosts, plus the host's loader cache, timezone and alternatives
links) and the workspace at ``/workspace`` (``skill/`` and ``inputs/`` read-only, the rest
writable). Nothing else of the host exists there: not ``/root``, ``/home``, ``/work``, the
host's ``/tmp`` nor ``/etc/shadow``. Every namespace is unshared (no network: only a loopback
of its own, so the host's loopback services are out of reach), the root is read-only, the
script runs in a new session, it dies with its sandbox, which dies with the executor, and the
seccomp filter of ``seccomp`` refuses new namespaces, mounts and the other kernel surfaces
listed there. The view is described once (`sandbox_view`) and rendered either as bwrap's
command line or as the launcher's ``namespaces`` spec, so the two cannot drift.

The sandbox's pid 1 is its reaper: the stage program, which splits off the script's process
and seals itself (non-dumpable, no capability, no signal handler: see ``_stage_program``), in both
modes (bubblewrap runs with ``--as-pid-1``, so none of bwrap's own processes is inside). The
script cannot open its memory, descriptors, environment or links in ``/proc/1``, steal its
descriptors, read or write its memory, trace it or signal it; its command line is
``python3 /run/skillweave/stage.py stage N``, paths of the sandbox only.

Host paths a script can read, and why each is harmless: the mount table (``/proc/*/mountinfo``)
names, for each bind mount, the source's path inside its host file system. The view copies
its small files in (``file``: the generated ``/etc/passwd``, ``group`` and ``hosts``, the stage
program, the Node preload) instead of binding them, so those show no host path. What is left:
the system folders and files bound at their own paths (``/usr``, ``/etc/ld.so.cache``,
``/etc/alternatives``, ``/etc/localtime`` showing its target, e.g.
``/usr/share/zoneinfo/Etc/UTC``), which say nothing the sandbox's ``/usr`` does not; and the
workspace binds (``/workspace`` and its read-only ``skill``, ``deps``, ``inputs``), whose source
is the run's folder, ``<executor folder>/attempt-N/workspace``, e.g.
``/tmp/skillweave-executor-1a2b3c4d/attempt-1/workspace``, with the device and file system type
it is on. Hiding that would need a file system of its own per run (a bind always shows its
source's path); it names the executor's private folder (mode 0711, a random name), which the
script can neither reach (no host root in the view, ``open_by_handle_at`` and every mount call
refused) nor use elsewhere, and holds nothing secret (the generated ``/etc`` files, the stage
program, the filter, the run folders). ``/proc/mounts``
shows devices and mount points only (the sandbox's own paths).

Both run as the sandbox user (see ``identity``), unprivileged, through a user namespace; the
startup probe checks that this works on this host. The environment reaches the script
through the process environment, never ``--setenv``: arguments are visible to every user in
``ps``, secrets must not be.

``none`` runs the script with the resource limits, as the sandbox user when the executor is
root, in a new session: that contains runaway scripts, not malicious ones (they see the
host's files, processes and network).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sandbox_executor.errors import IsolationUnavailableError
from sandbox_executor.limits import rlimits_for, tmpfs_bytes
from sandbox_executor.sandbox_user import SandboxUser, launcher_argv
from sandbox_executor.seccomp import write_filter
from sandbox_executor.settings import ExecutorSettings
from skillweave.sandbox import ExecutionLimits, Isolation
from skillweave.skills import remove_tree

__all__ = [
    "NONE_WARNING",
    "SANDBOX_PATH",
    "SANDBOX_WORKSPACE",
    "ContainedLaunch",
    "IsolationPlan",
    "contained_argv",
    "plan_isolation",
    "probe_isolation",
    "sandbox_view",
    "settle_isolation",
    "write_etc",
]

logger = logging.getLogger(__name__)

SANDBOX_WORKSPACE: Final = "/workspace"
SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
_SYSTEM_DIRS: Final = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32")
_HOST_ETC: Final = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
_PROBE_TIMEOUT_SECONDS: Final = 15.0
NONE_WARNING: Final = (
    "SANDBOX ISOLATION IS OFF (EXECUTOR__ISOLATION=none): scripts run with resource limits"
    " only and see the host's files, processes and network. This is NOT a security boundary;"
    " run only trusted skills."
)
_HOW_TO_CONTAIN: Final = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or allow unprivileged"
    " user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0,"
    " kernel.apparmor_restrict_unprivileged_userns=0); EXECUTOR__ISOLATION=none runs scripts"
    " uncontained"
)

ViewOperation = tuple[str, ...]
"""One step of building the sandbox's file system: ``(kind, *fields)``, the path inside last
(``tmpfs`` is ``(kind, path, size)``). Kinds: ``bind``, ``ro-bind``, ``ro-bind-try``,
``file`` (a host file's bytes copied in, read-only: no bind, so no host path in the mount
table), ``symlink``, ``dir``, ``proc``, ``dev``, ``tmpfs``."""


@dataclass(frozen=True)
class IsolationPlan:
    """What the executor decided at startup.

    Attributes:
        isolation: The mode in force.
        bwrap: The bubblewrap binary, in ``bubblewrap`` mode.
        seccomp: The syscall filter file (``seccomp.filter_program``), in contained modes.
        root: An empty folder the ``namespaces`` mode mounts each sandbox's root on.
    """

    isolation: Isolation
    bwrap: str | None = None
    seccomp: Path | None = None
    root: Path | None = None

    @property
    def contained(self) -> bool:
        """Whether scripts run in a sandbox of their own (the paths they see are its paths)."""
        return self.isolation in ("bubblewrap", "namespaces")


def write_etc(folder: Path, user: SandboxUser | None) -> Path:
    """Write the sandbox's ``/etc`` files (passwd, group, hosts) into `folder`."""
    uid = user.uid if user else os.getuid()
    gid = user.gid if user else os.getgid()
    folder.mkdir(mode=0o755)
    files = {
        "passwd": (
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"sandbox:x:{uid}:{gid}:sandbox:{SANDBOX_WORKSPACE}:/usr/sbin/nologin\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        ),
        "group": f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n",
        "hosts": "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    }
    for name, text in files.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o644)
    return folder


def sandbox_view(
    *,
    etc_dir: Path,
    limits: ExecutionLimits,
    workspace: Path | None = None,
    read_only: Sequence[str] = (),
    files: Sequence[tuple[Path, str]] = (),
) -> list[ViewOperation]:
    """The sandbox's file system, step by step (the one description both modes build).

    Args:
        etc_dir: Folder from `write_etc`.
        limits: Sizes the tmpfs mounts.
        workspace: Host folder bound read-write at ``/workspace`` (the script's cwd and HOME).
        read_only: Names of subfolders of `workspace` bound read-only over themselves.
        files: Host files copied in, read-only, at the given sandbox paths (the stage
            program).
    """
    view: list[ViewOperation] = []
    for folder in _SYSTEM_DIRS:
        if os.path.islink(folder):
            # Merged-/usr systems: /bin -> usr/bin; recreate the link, bind nothing more.
            view.append(("symlink", os.readlink(folder), folder))
        elif os.path.isdir(folder):
            view.append(("ro-bind", folder, folder))
    size = str(tmpfs_bytes(limits))
    view += [("proc", "/proc"), ("dev", "/dev"), ("tmpfs", "/dev/shm", size)]
    view += [("tmpfs", "/tmp", size), ("dir", "/etc")]
    view += [("file", str(etc_dir / name), f"/etc/{name}") for name in ("passwd", "group", "hosts")]
    view += [("ro-bind-try", path, path) for path in _HOST_ETC]
    if workspace is not None:
        view.append(("bind", str(workspace), SANDBOX_WORKSPACE))
        view += [
            ("ro-bind", str(workspace / name), f"{SANDBOX_WORKSPACE}/{name}") for name in read_only
        ]
    view += [("file", str(host), inside) for host, inside in files]
    return view


def _bwrap_args(
    bwrap: str, view: list[ViewOperation], *, seccomp_fd: int, file_fds: list[int]
) -> list[str]:
    args = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        # No bwrap process inside: the stage is pid 1 and seals itself as the reaper (see
        # ``_stage_program``), where bwrap's own would be open to the script (same uid, dumpable)
        # and show bwrap's whole command line, host paths included, in /proc/1/cmdline.
        "--as-pid-1",
        "--hostname",
        "sandbox",
        "--seccomp",
        str(seccomp_fd),
    ]
    for kind, *fields in view:
        if kind == "tmpfs":
            args += ["--size", fields[1], "--tmpfs", fields[0]]
        elif kind == "file":
            fd = os.open(fields[0], os.O_RDONLY | os.O_CLOEXEC)
            file_fds.append(fd)
            # 0644 by the launcher's umask; the root is remounted read-only after.
            args += ["--file", str(fd), fields[1]]
        else:
            args += [f"--{kind}", *fields]
    return args


@dataclass(frozen=True)
class ContainedLaunch:
    """How to start a command in a sandbox (see `contained_argv`).

    Attributes:
        argv: What the launcher execs.
        spec: What the launcher's spec must add (the ``namespaces`` mode's view and filter).
        fds: Descriptors the child must inherit (bubblewrap reads each copied file from
            one); the caller closes them (`close`) once the child started.
    """

    argv: list[str]
    spec: dict[str, object]
    fds: tuple[int, ...] = ()

    def close(self) -> None:
        """Close `fds` (this process's copies)."""
        for fd in self.fds:
            os.close(fd)


def contained_argv(
    plan: IsolationPlan,
    view: list[ViewOperation],
    *,
    command: list[str],
    seccomp_fd: int,
    chdir: str = SANDBOX_WORKSPACE,
) -> ContainedLaunch:
    """How to run `command` in a sandbox with `view`.

    Args:
        plan: A contained plan.
        view: From `sandbox_view`.
        command: The command as the sandbox sees it (it runs as the sandbox's pid 1).
        seccomp_fd: An open descriptor of ``plan.seccomp``, passed to the child.
        chdir: The working directory inside.

    Raises:
        OSError: A file the view copies in cannot be opened (nothing is left open).
    """
    if plan.isolation == "bubblewrap":
        assert plan.bwrap is not None
        fds: list[int] = []
        try:
            args = _bwrap_args(plan.bwrap, view, seccomp_fd=seccomp_fd, file_fds=fds)
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        args += ["--chdir", chdir, "--remount-ro", "/", "--", *command]
        return ContainedLaunch(args, {}, tuple(fds))
    assert plan.isolation == "namespaces"
    assert plan.root is not None
    spec = {
        "namespaces": {"root": str(plan.root), "hostname": "sandbox", "operations": view},
        "seccomp_fd": seccomp_fd,
    }
    return ContainedLaunch(command, spec)


_settled: dict[tuple[str, str], IsolationPlan] = {}
"""Decisions this process probed for the executors it forks, by (choice, bwrap path); see
`settle_isolation`."""


def probe_isolation(settings: ExecutorSettings) -> IsolationPlan:
    """The mode executors with `settings` would run scripts in, probed once the way a pool
    does before its first executor (and ``skillweave doctor`` does to say it): in a scratch
    folder of the system's temp folder (a private ``TMPDIR`` would be out of a sandbox uid's
    reach), as root under a sandbox uid held only meanwhile. The plan's files are gone after.

    Raises:
        IsolationUnavailableError: as :func:`plan_isolation`.
    """
    system_temp = next((d for d in ("/tmp", "/var/tmp", "/usr/tmp") if os.access(d, os.W_OK)), None)
    user = SandboxUser.acquire(settings)
    folder = Path(tempfile.mkdtemp(prefix="skillweave-probe-", dir=system_temp))
    try:
        os.chmod(folder, 0o711)  # the sandbox uid reaches its root through it
        etc_dir = write_etc(folder / "etc", user)
        return plan_isolation(settings, user=user, etc_dir=etc_dir, folder=folder)
    finally:
        remove_tree(folder)
        if user is not None:
            user.release()


def settle_isolation(settings: ExecutorSettings, plan: IsolationPlan) -> None:
    """Let executors forked from this process from now on plan `plan`'s mode for the same
    settings without probing it again.

    The executor zygote probes once, at its start; each executor it forks then starts its warm
    stage, which runs the very chain the probe runs (launcher, sandbox user, bubblewrap or the
    namespaces launcher, the seccomp filter), so a mode that stopped working still stops the
    executor with a clear error. The decision itself never changes in a forked executor: no
    downgrade (``auto`` settled on bubblewrap stays bubblewrap).
    """
    _settled[settings.isolation, settings.bwrap_path] = plan


def plan_isolation(
    settings: ExecutorSettings, *, user: SandboxUser | None, etc_dir: Path, folder: Path
) -> IsolationPlan:
    """Decide the isolation at startup, probing that the mode really runs a sandbox here
    (unless the process this executor was forked from settled it: `settle_isolation`).

    Args:
        folder: The executor's own folder (the filter and the namespaces root go there).

    Raises:
        IsolationUnavailableError: The configured mode cannot be set up here (the message says
            what to install or set).
    """
    choice = settings.isolation
    if choice == "none":
        logger.warning(NONE_WARNING)
        return IsolationPlan("none")
    seccomp = folder / "seccomp.bpf"
    write_filter(seccomp)
    settled = _settled.get((choice, settings.bwrap_path))
    if settled is not None:
        return _settled_plan(settled, seccomp=seccomp, folder=folder)
    problems: list[str] = []
    if choice in ("auto", "bubblewrap"):
        found = shutil.which(settings.bwrap_path)
        bwrap = os.path.realpath(found) if found else None
        plan = IsolationPlan("bubblewrap", bwrap=bwrap, seccomp=seccomp)
        problem = (
            _probe(plan, user=user, etc_dir=etc_dir)
            if bwrap
            else f"{settings.bwrap_path!r} not found"
        )
        if problem is None:
            logger.info("sandbox isolation: bubblewrap (%s) with the seccomp filter", bwrap)
            return plan
        if choice == "bubblewrap":
            raise IsolationUnavailableError(
                f"EXECUTOR__ISOLATION=bubblewrap but bubblewrap cannot run a sandbox here"
                f" ({problem}): install bubblewrap, or set EXECUTOR__ISOLATION=namespaces"
                " (SANDBOX__ISOLATION on the manager)"
            )
        problems.append(f"bubblewrap: {problem}")
    root = folder / "root"
    root.mkdir(mode=0o755)
    plan = IsolationPlan("namespaces", seccomp=seccomp, root=root)
    problem = _probe(plan, user=user, etc_dir=etc_dir)
    if problem is None:
        why = f" ({problems[0]})" if problems else ""
        logger.info("sandbox isolation: namespaces with the seccomp filter%s", why)
        return plan
    problems.append(f"namespaces: {problem}")
    raise IsolationUnavailableError(
        f"EXECUTOR__ISOLATION={choice} but no sandbox can be set up here"
        f" ({'; '.join(problems)}): {_HOW_TO_CONTAIN}"
    )


def _settled_plan(settled: IsolationPlan, *, seccomp: Path, folder: Path) -> IsolationPlan:
    if settled.isolation == "namespaces":
        root = folder / "root"
        root.mkdir(mode=0o755)
        return IsolationPlan("namespaces", seccomp=seccomp, root=root)
    return IsolationPlan(settled.isolation, bwrap=settled.bwrap, seccomp=seccomp)


def _probe(plan: IsolationPlan, *, user: SandboxUser | None, etc_dir: Path) -> str | None:
    """Run ``true`` in a sandbox as the sandbox user; None when it works, else why not."""
    true = shutil.which("true", path=SANDBOX_PATH)
    if true is None:
        return "no 'true' command on the sandbox PATH"
    assert plan.seccomp is not None
    limits = ExecutionLimits()
    seccomp_fd = os.open(plan.seccomp, os.O_RDONLY | os.O_CLOEXEC)
    launch: ContainedLaunch | None = None
    try:
        view = sandbox_view(etc_dir=etc_dir, limits=limits)
        launch = contained_argv(plan, view, command=[true], seccomp_fd=seccomp_fd, chdir="/")
        spec = {
            "mode": "exec",
            "rlimits": rlimits_for(
                limits, isolation=plan.isolation, dedicated_user=user is not None
            ),
            "uid": user.uid if user else None,
            "gid": user.gid if user else None,
            **launch.spec,
        }
        done = subprocess.run(
            [*launcher_argv(json.dumps(spec)), *launch.argv],
            env={"PATH": SANDBOX_PATH},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_SECONDS,
            check=False,
            cwd="/",
            start_new_session=True,
            pass_fds=(seccomp_fd, *launch.fds),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"probe failed: {exc}"
    finally:
        os.close(seccomp_fd)
        if launch is not None:
            launch.close()
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"exit {done.returncode}: {message[-1] if message else 'no message'}"
    return None
