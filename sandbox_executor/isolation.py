"""The sandbox boundary: bubblewrap when it works here, else rlimits only (and loudly so).

Under bubblewrap a script sees a private root: the system folders needed to run python3, node
and bash (``/usr``, ``/bin``, ``/lib``, ``/lib64`` and the like, read-only), a fresh ``/proc``
of its own pid namespace, a minimal ``/dev``, tmpfs ``/tmp`` and ``/dev/shm`` capped in size, a
generated ``/etc`` (passwd, group, hosts, plus the host's loader cache, timezone and
alternatives links) and the workspace at ``/workspace`` (``skill/`` and ``inputs/`` read-only,
the rest writable). Nothing else of the host exists there: not ``/root``, ``/home``, ``/work``,
the host's ``/tmp`` nor ``/etc/shadow``. Every namespace is unshared (no network: only a
loopback of its own), nested user namespaces are disabled, the root is remounted read-only,
the script runs in a new session, and it dies with bwrap, which dies with the executor.

bwrap itself runs as the sandbox user (see ``identity``), so it works unprivileged through a
user namespace; the startup probe checks that this works on this host. The environment reaches
the script through bwrap's own environment, never ``--setenv``: arguments are visible to every
user in ``ps``, secrets must not be.

Without bubblewrap the script runs with the resource limits, as the sandbox user when the
executor is root, in a new session: that contains runaway scripts, it does not contain
malicious ones. The executor logs a warning at startup and reports ``isolation: rlimits``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sandbox_executor.errors import IsolationUnavailableError
from sandbox_executor.identity import SandboxUser, launcher_argv
from sandbox_executor.limits import rlimits_for, tmpfs_bytes
from sandbox_executor.settings import ExecutorSettings
from skillweave.sandbox.models import ExecutionLimits, Isolation

__all__ = [
    "SANDBOX_PATH",
    "SANDBOX_WORKSPACE",
    "IsolationPlan",
    "bwrap_argv",
    "plan_isolation",
    "write_etc",
]

logger = logging.getLogger(__name__)

SANDBOX_WORKSPACE: Final = "/workspace"
SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
_SYSTEM_DIRS: Final = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32")
_HOST_ETC: Final = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
_PROBE_TIMEOUT_SECONDS: Final = 15.0
_RLIMITS_WARNING: Final = (
    "SANDBOX ISOLATION IS RLIMITS ONLY: scripts run with resource limits%s but see the host's"
    " file system and network. This is NOT a security boundary; run only trusted skills, or"
    " install bubblewrap (and allow unprivileged user namespaces)."
)


@dataclass(frozen=True)
class IsolationPlan:
    """What the executor decided at startup: the isolation and, for bubblewrap, the binary."""

    isolation: Isolation
    bwrap: str | None


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


def _system_args() -> list[str]:
    args: list[str] = []
    for folder in _SYSTEM_DIRS:
        if os.path.islink(folder):
            # Merged-/usr systems: /bin -> usr/bin; recreate the link, bind nothing more.
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    return args


def _common_args(*, bwrap: str, etc_dir: Path, limits: ExecutionLimits) -> list[str]:
    size = str(tmpfs_bytes(limits))
    args = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        *_system_args(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        "--dir",
        "/etc",
    ]
    for name in ("passwd", "group", "hosts"):
        args += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
    for path in _HOST_ETC:
        args += ["--ro-bind-try", path, path]
    return args


def bwrap_argv(
    *,
    bwrap: str,
    etc_dir: Path,
    workspace: Path,
    read_only: list[str],
    limits: ExecutionLimits,
    command: list[str],
    files: Sequence[tuple[Path, str]] = (),
) -> list[str]:
    """The bwrap command running `command` with `workspace` at ``/workspace``.

    Args:
        bwrap: Path of the bubblewrap binary.
        etc_dir: Folder from `write_etc`.
        workspace: Host folder bound read-write at ``/workspace`` (the script's cwd and HOME).
        read_only: Names of subfolders of `workspace` bound read-only over themselves.
        limits: Sizes the tmpfs mounts.
        command: The command as the sandbox sees it (paths under ``/workspace``).
        files: Host files bound read-only at the given sandbox paths (the stage program).
    """
    args = _common_args(bwrap=bwrap, etc_dir=etc_dir, limits=limits)
    args += ["--bind", str(workspace), SANDBOX_WORKSPACE]
    for name in read_only:
        args += ["--ro-bind", str(workspace / name), f"{SANDBOX_WORKSPACE}/{name}"]
    for host, inside in files:
        args += ["--ro-bind", str(host), inside]
    args += ["--chdir", SANDBOX_WORKSPACE, "--remount-ro", "/", "--", *command]
    return args


def plan_isolation(
    settings: ExecutorSettings, *, user: SandboxUser | None, etc_dir: Path
) -> IsolationPlan:
    """Decide the isolation at startup, probing that bubblewrap really runs a sandbox here.

    Raises:
        IsolationUnavailableError: ``bubblewrap`` was required and the probe failed.
    """
    if settings.isolation == "rlimits":
        _warn_rlimits(user, reason="EXECUTOR__ISOLATION=rlimits")
        return IsolationPlan("rlimits", None)
    found = shutil.which(settings.bwrap_path)
    bwrap = os.path.realpath(found) if found else None
    if bwrap is None:
        problem: str | None = f"{settings.bwrap_path!r} not found"
    else:
        problem = _probe(bwrap, user=user, etc_dir=etc_dir)
    if problem is None:
        logger.info("sandbox isolation: bubblewrap (%s)", bwrap)
        return IsolationPlan("bubblewrap", bwrap)
    if settings.isolation == "bubblewrap":
        raise IsolationUnavailableError(
            f"EXECUTOR__ISOLATION=bubblewrap but bubblewrap cannot run a sandbox here: {problem}"
        )
    _warn_rlimits(user, reason=f"bubblewrap unavailable: {problem}")
    return IsolationPlan("rlimits", None)


def _warn_rlimits(user: SandboxUser | None, *, reason: str) -> None:
    who = f" as uid {user.uid}" if user else " as the executor's own user"
    logger.warning(_RLIMITS_WARNING + " (%s)", who, reason)


def _probe(bwrap: str, *, user: SandboxUser | None, etc_dir: Path) -> str | None:
    """Run ``true`` in a sandbox as the sandbox user; None when it works, else why not."""
    true = shutil.which("true", path=SANDBOX_PATH)
    if true is None:
        return "no 'true' command on the sandbox PATH"
    limits = ExecutionLimits()
    argv = [
        *_common_args(bwrap=bwrap, etc_dir=etc_dir, limits=limits),
        "--remount-ro",
        "/",
        "--",
        true,
    ]
    spec = {
        "mode": "exec",
        "rlimits": rlimits_for(limits, isolation="bubblewrap", dedicated_user=user is not None),
        "uid": user.uid if user else None,
        "gid": user.gid if user else None,
    }
    try:
        done = subprocess.run(
            [*launcher_argv(json.dumps(spec)), *argv],
            env={"PATH": SANDBOX_PATH},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_SECONDS,
            check=False,
            cwd="/",
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"probe failed: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"exit {done.returncode}: {message[-1] if message else 'no message'}"
    return None
