"""The build sandbox: :class:`BuildSandbox`, where pip and npm run for the installers.

**The build sandbox** is the one place allowed to reach the package index, and install code
(``setup.py``, build backends) runs there: bubblewrap with every namespace unshared but the
network, nested user namespaces disabled, a new session, ``--die-with-parent``. It sees the
system folders (``/usr``, ``/bin``, ``/lib``…), a few ``/etc`` files that name resolution and
TLS need, the interpreter's prefixes and node's, and the local folders of ``find_links`` and
``file:`` index URLs, all read-only; the build folder at ``/build`` is the only writable place
(its ``tmp/`` is the sandbox's private ``/tmp``, its ``home/`` the fresh ``HOME``). Not the
manager's home, its configuration, the store, ``/proc`` of other processes or the host's
``/tmp``. The environment is clean: ``PATH``, ``HOME``, ``LANG`` and the ``PIP_`` and
``npm_config_`` variables set here (which also turn off the host's pip and npm config files,
so no credential of the manager reaches the index unasked). npm runs with
``--ignore-scripts``: install scripts are code from the index. A build is stopped (its whole
process group killed) after ``build_timeout_seconds``, or as soon as it writes more than twice
``max_bytes``. There is no unsandboxed fallback: when bubblewrap cannot run here, nothing is
built.

The installers (``_installers``) run each command through :meth:`BuildSandbox.run`; the builder
(``_builder``) calls :meth:`BuildSandbox.check` before a build claims anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Final

from mcp_manager.environments._build_log import MAX_LOG_BYTES, Tool, diagnose
from mcp_manager.environments._failure import BuildFailed
from mcp_manager.environments._packing import tree_bytes
from mcp_manager.environments._toolchain import Toolchain, run_probe
from skillweave.config import EnvironmentSettings
from skillweave.errors import EnvironmentBuildError

__all__ = ["SANDBOX_BUILD", "BuildSandbox", "sandbox_args"]

SANDBOX_BUILD: Final = "/build"
"""Where the build folder is inside the sandbox (the one writable place)."""
_SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
_SYSTEM_DIRS: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# What name resolution, TLS and the dynamic loader read; nothing with secrets.
_HOST_ETC: Final = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/etc/localtime",
)
_WATCH_SECONDS: Final = 1.0  # how often a running build's disk use is measured


class BuildSandbox:
    """Runs install commands in bubblewrap (see the module docstring).

    Args:
        settings: ``sandbox.environments``: the build's time and size limits.
        toolchain: the executor's interpreters (node's folder goes on ``PATH``).
        bwrap: the bubblewrap binary.
    """

    def __init__(self, settings: EnvironmentSettings, toolchain: Toolchain, bwrap: str) -> None:
        self._settings = settings
        self._toolchain = toolchain
        self._bwrap = bwrap
        self._checked = False

    async def check(self, skill: str) -> None:
        """Refuse to build when bubblewrap cannot run a sandbox here (once it could, it can)."""
        if self._checked:
            return
        found = shutil.which(self._bwrap)
        if found is None:
            problem = f"{self._bwrap!r} is not installed"
        else:
            problem = None
            argv = [*sandbox_args(found, binds=()), "--remount-ro", "/", "--", "true"]
            try:
                await run_probe(argv, env={"PATH": _SANDBOX_PATH})
            except (OSError, RuntimeError) as exc:
                problem = str(exc)
        if problem is not None:
            raise EnvironmentBuildError(
                skill,
                f"the build sandbox (bubblewrap) cannot run here: {problem}; builds never "
                "run unsandboxed (install bubblewrap and allow user namespaces, or prebuild "
                "environments elsewhere and set sandbox.environments.builds=false)",
            )
        self._bwrap = found
        self._checked = True

    async def run(
        self,
        tool: Tool,
        command: list[str],
        *,
        build: Path,
        log: IO[bytes],
        deadline: float,
        binds: Sequence[str],
    ) -> None:
        """Run `command` in the build sandbox, its output appended to `log`.

        Raises:
            BuildFailed: it exited non-zero (with the culprit when the output names one), ran
                past the deadline, or wrote more than twice ``max_bytes``.
        """
        loop = asyncio.get_running_loop()
        path = _SANDBOX_PATH
        node = self._toolchain.node
        node_bin = str(Path(node).parent) if node else None
        if node_bin is not None and node_bin not in path.split(":"):
            path = f"{node_bin}:{path}"  # npm's `#!/usr/bin/env node` must find it
        env = {
            "PATH": path,
            "HOME": f"{SANDBOX_BUILD}/home",
            "LANG": "C.UTF-8",
            # No host config files: every option comes from the settings.
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_ROOT_USER_ACTION": "ignore",
            "npm_config_globalconfig": os.devnull,  # the user's is ~/.npmrc, in the fresh HOME
            "npm_config_cache": f"{SANDBOX_BUILD}/home/.npm",
            "npm_config_update_notifier": "false",
        }
        argv = [*sandbox_args(self._bwrap, binds=binds, build=build), "--", *command]
        log.write(f"$ {shlex.join(command)}\n".encode())
        log.flush()
        start = log.tell()
        limit = 2 * self._settings.max_bytes
        code = -1
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            cwd=str(build.parent),
            start_new_session=True,
        )
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise BuildFailed(
                        f"{tool} did not finish within {self._settings.build_timeout_seconds:g} s"
                        " (sandbox.environments.build_timeout_seconds); it was stopped"
                    )
                try:
                    code = await asyncio.wait_for(
                        process.wait(), timeout=min(remaining, _WATCH_SECONDS)
                    )
                    break
                except TimeoutError:
                    used = await asyncio.to_thread(tree_bytes, build)
                    if used > limit:
                        raise BuildFailed(
                            f"{tool} wrote more than {limit} bytes, twice max_bytes "
                            f"(sandbox.environments.max_bytes = {self._settings.max_bytes}); "
                            "it was stopped"
                        ) from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
        end = log.seek(0, os.SEEK_END)
        log.write(f"[exit code {code}]\n".encode())
        log.flush()
        if code != 0:
            with open(log.name, "rb") as handle:
                handle.seek(max(start, end - MAX_LOG_BYTES))
                output = handle.read(end - handle.tell()).decode("utf-8", "replace")
            package, detail = diagnose(tool, output)
            if package is not None:
                raise BuildFailed(f"{tool} could not install {package!r}: {detail}", package)
            raise BuildFailed(f"{tool} exited with status {code}: {detail}")


def sandbox_args(bwrap: str, *, binds: Sequence[str], build: Path | None = None) -> list[str]:
    """bwrap's options for the build sandbox (the command follows ``--``)."""
    args = [
        bwrap,
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "build",
    ]
    for folder in _SYSTEM_DIRS:
        if os.path.islink(folder):
            # Merged-/usr systems: /bin -> usr/bin; recreate the link, bind nothing more.
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    args += ["--proc", "/proc", "--dev", "/dev", "--dir", "/etc"]
    for path in _HOST_ETC:
        args += ["--ro-bind-try", path, path]
    if build is None:
        return args
    # The writable places first: the read-only binds below may land inside /tmp.
    args += ["--bind", str(build), SANDBOX_BUILD, "--bind", str(build / "tmp"), "/tmp"]
    for path in sorted(set(binds)):
        if not any(path == d or path.startswith(d + "/") for d in _SYSTEM_DIRS):
            args += ["--ro-bind", path, path]
    return [*args, "--chdir", SANDBOX_BUILD, "--remount-ro", "/"]
