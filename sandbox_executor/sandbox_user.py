"""The unprivileged user a sandbox runs as, one per executor on a host.

A root executor never runs a script as root: RLIMIT_NPROC does not bind root, and root could
signal or read anything the sandbox view lets it reach. Each executor takes a uid of its own
from a range (``EXECUTOR__UID_RANGE_START`` / ``_SIZE``, default 60000–60999) and holds it with
an ``flock`` on ``<lock dir>/<uid>.lock`` for its whole life, so concurrent sandboxes never
share a process count, files or signals, and "kill every process of this uid" after a run is
exact. The lock goes with the process, so a crashed executor frees its uid; the next holder
first kills whatever that uid left running. The lock file says whether that is needed: its
holder writes ``held`` when it takes the uid and ``clean`` only once a sweep found nothing of
the uid alive, just before it lets go; any other content (a holder that crashed, a new file)
makes the next holder sweep first.

An executor that is not root (a Kubernetes pod with ``runAsNonRoot``) cannot switch users:
scripts run as the executor's own uid and the pod is the boundary between sandboxes.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from sandbox_executor.errors import ExecutorError
from sandbox_executor.settings import ExecutorSettings

__all__ = ["LAUNCHER", "SandboxUser", "launcher_argv", "setpriv"]

logger = logging.getLogger(__name__)

LAUNCHER: Final = Path(__file__).with_name("_launcher.py")
_RUN_LOCK_DIR: Final = Path("/run/skillweave-executor")
_KILL_TIMEOUT_SECONDS: Final = 10.0
_SETPRIV_PLACES: Final = ("/usr/bin/setpriv", "/bin/setpriv")
_HELD: Final = b"held\n"
_CLEAN: Final = b"clean\n"


def launcher_argv(spec: str) -> list[str]:
    """The command that starts `_launcher.py` with its JSON `spec` (isolated, no site)."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), spec]


@functools.cache
def setpriv() -> str | None:
    """util-linux's ``setpriv``, where a root executor can trust it (a regular file in a system
    folder, owned by root, writable by root alone), or None: the stage then drops to the
    sandbox user with ``Popen``'s own options instead (``sandbox_executor.stage``)."""
    for place in _SETPRIV_PLACES:
        try:
            info = os.stat(place)
        except OSError:
            continue
        if (
            stat.S_ISREG(info.st_mode)
            and info.st_uid == 0
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            and info.st_mode & stat.S_IXUSR
        ):
            return place
    return None


@dataclass
class SandboxUser:
    """The uid/gid scripts run as; `dedicated` when no other sandbox or user shares it."""

    uid: int
    gid: int
    dedicated: bool
    _lock_fd: int | None = field(default=None, repr=False)
    _left_clean: bool = field(default=False, repr=False)
    sweep_failed: bool = field(default=False, repr=False)
    """The last `kill_all` could not show that nothing of the user is alive."""

    @classmethod
    def acquire(cls, settings: ExecutorSettings) -> SandboxUser | None:
        """Take the sandbox user for this executor; None when not running as root.

        Raises:
            ExecutorError: Every uid of the range is held by another executor, or the lock
                folder is unsafe.
        """
        if os.geteuid() != 0:
            return None
        if settings.sandbox_uid is not None:
            gid = settings.sandbox_gid or settings.sandbox_uid
            user = cls(settings.sandbox_uid, gid, dedicated=True)
        else:
            user = cls._allocate(settings)
        # A previous holder that crashed may have left processes behind.
        if not user._left_clean:
            user.kill_all()
        return user

    @classmethod
    def _allocate(cls, settings: ExecutorSettings) -> SandboxUser:
        lock_dir = _lock_dir(settings)
        size = settings.uid_range_size
        # Lowest free uid first: a small set of uids goes round, each left clean by its last
        # holder, so taking one rarely needs a sweep.
        for uid in range(settings.uid_range_start, settings.uid_range_start + size):
            fd = os.open(
                lock_dir / f"{uid}.lock",
                os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            gid = settings.sandbox_gid or uid
            left_clean = os.pread(fd, len(_CLEAN) + 1, 0) == _CLEAN
            os.ftruncate(fd, 0)
            os.pwrite(fd, _HELD, 0)
            return cls(uid, gid, dedicated=True, _lock_fd=fd, _left_clean=left_clean)
        raise ExecutorError(
            f"all {size} sandbox uids from {settings.uid_range_start} are held by other"
            " executors; raise EXECUTOR__UID_RANGE_SIZE"
        )

    def kill_all(self) -> bool:
        """SIGKILL every process of this user, even those that left the process group.

        Returns:
            Whether the sweep saw nothing of the user left alive (False: logged).
        """
        if not self.dedicated:
            return False
        self.sweep_failed = not self._sweep()
        return not self.sweep_failed

    def _sweep(self) -> bool:
        spec = f'{{"mode": "kill", "uid": {self.uid}, "gid": {self.gid}}}'
        try:
            done = subprocess.run(
                launcher_argv(spec),
                check=False,
                timeout=_KILL_TIMEOUT_SECONDS,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except subprocess.TimeoutExpired:
            logger.error("could not kill the processes of sandbox uid %d in time", self.uid)
            return False
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            logger.error(
                "could not kill the processes of sandbox uid %d: %s",
                self.uid,
                message[-1] if message else f"exit {done.returncode}",
            )
            return False
        return True

    def release(self, *, clean: bool = False) -> None:
        """Give the uid back to the range (closing the lock); idempotent.

        Args:
            clean: A `kill_all` just found nothing of the user alive and nothing of it has
                started since: the next holder need not sweep.
        """
        if self._lock_fd is not None:
            if clean:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._lock_fd, 0)
                    os.pwrite(self._lock_fd, _CLEAN, 0)
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None


def _lock_dir(settings: ExecutorSettings) -> Path:
    if settings.uid_lock_dir is not None:
        folder = settings.uid_lock_dir
    elif _RUN_LOCK_DIR.parent.is_dir() and os.access(_RUN_LOCK_DIR.parent, os.W_OK):
        folder = _RUN_LOCK_DIR
    else:
        folder = Path(tempfile.gettempdir()) / "skillweave-executor-uids"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700, parents=True)
    info = folder.lstat()
    # Anyone able to plant files here could hold every uid or point a lock at another file.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise ExecutorError(
            f"{folder}: the uid lock folder must be a real folder owned by uid {os.geteuid()}"
            " and writable by no one else"
        )
    return folder
