"""The executor's interpreters as a build sees them: :class:`Toolchain`.

What the executor image runs skills with (its Python, and node with npm beside it), asked
once and remembered: the interpreter's tag, version, platform and prefixes, node's major
version. They name an environment in keys (its *runtime*, ``cp311-node20``, and *platform*,
``linux-x86_64``), say which folders the build sandbox binds read-only, and which pip and npm
the installers run. :func:`run_probe` runs the short, trusted, unsandboxed commands that ask
(the build sandbox, ``_sandbox``, uses it too, to see whether bubblewrap runs here). The
builder (``_builder``) owns one toolchain and hands it to the sandbox and the installers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillweave.errors import EnvironmentBuildError

__all__ = ["Interpreter", "Toolchain", "run_probe"]

_PROBE_TIMEOUT_SECONDS: Final = 30.0
_SAFE_COMPONENT: Final = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True, slots=True)
class Interpreter:
    """What the probe learnt of the executor's Python."""

    tag: str  # cp311
    version: str  # 3.11.7
    platform: str  # linux-x86_64
    prefixes: tuple[str, ...]  # bound read-only into the build sandbox


class Toolchain:
    """The executor's Python and node, probed once.

    Args:
        python: the executor's interpreter; pip runs as ``python -m pip``, so wheels fit it.
        node: the executor's node; None: ``node`` on ``PATH``, or no node at all.
        runtime: the runtime in keys; default ``cp{major}{minor}`` of `python`, plus
            ``-node{major}`` when node is found.
        platform: the platform in keys; default `python`'s ``sysconfig.get_platform()``.
    """

    def __init__(
        self,
        *,
        python: str,
        node: str | None,
        runtime: str | None = None,
        platform: str | None = None,
    ) -> None:
        self.python = python
        """The interpreter pip runs with."""
        self.node = node if node is not None else shutil.which("node")
        """The node npm runs with; None when there is none."""
        self._runtime = runtime
        self._platform = platform
        self._interpreter: Interpreter | None = None
        self._node_major: int | None = None

    async def names(self, skill: str) -> tuple[str, str]:
        """The runtime and platform that name `skill`'s environments in keys.

        Raises:
            EnvironmentBuildError: the interpreter or node cannot be asked what it is.
        """
        runtime = self._runtime
        platform = self._platform
        if runtime is None or platform is None:
            interpreter = await self.interpreter(skill)
            if platform is None:
                platform = interpreter.platform
            if runtime is None:
                runtime = interpreter.tag
                major = await self._probe_node(skill)
                if major is not None:
                    runtime += f"-node{major}"
        return runtime, platform

    async def interpreter(self, skill: str) -> Interpreter:
        """What the executor's Python is (asked once; `skill` names the build in an error).

        Raises:
            EnvironmentBuildError: it cannot be asked.
        """
        if self._interpreter is not None:
            return self._interpreter
        code = (
            "import json, sys, sysconfig; print(json.dumps({"
            "'name': sys.implementation.name, 'version': list(sys.version_info[:3]), "
            "'platform': sysconfig.get_platform(), 'prefixes': sorted({sys.prefix, "
            "sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})}))"
        )
        try:
            out = await run_probe([self.python, "-I", "-c", code])
            found = json.loads(out)
        except (OSError, ValueError, RuntimeError) as exc:
            raise EnvironmentBuildError(
                skill, f"the interpreter {self.python!r} cannot be asked what it is: {exc}"
            ) from None
        short = {"cpython": "cp", "pypy": "pp"}.get(found["name"], found["name"][:2])
        self._interpreter = Interpreter(
            tag=f"{short}{found['version'][0]}{found['version'][1]}",
            version=".".join(str(part) for part in found["version"]),
            platform=_SAFE_COMPONENT.sub("_", found["platform"]),
            prefixes=tuple(os.path.realpath(p) for p in found["prefixes"]),
        )
        return self._interpreter

    async def _probe_node(self, skill: str) -> int | None:
        if self.node is None:
            return None
        if self._node_major is None:
            try:
                out = await run_probe([self.node, "--version"])
                self._node_major = int(out.strip().lstrip("v").split(".")[0])
            except (OSError, ValueError, RuntimeError) as exc:
                raise EnvironmentBuildError(
                    skill, f"node {self.node!r} cannot say its version: {exc}"
                ) from None
        return self._node_major

    def node_prefix(self) -> str:
        """The installation node belongs to (``/opt/node`` for ``/opt/node/bin/node``)."""
        return str(Path(os.path.realpath(self.node or "")).parent.parent)

    def npm(self) -> str:
        """npm: the one beside node, else the one on ``PATH``."""
        assert self.node is not None
        beside = Path(self.node).parent / "npm"
        return str(beside) if beside.exists() else shutil.which("npm") or "npm"


async def run_probe(argv: list[str], *, env: dict[str, str] | None = None) -> str:
    """Run a short probe outside any sandbox (only trusted binaries: bwrap, the
    interpreter, node) and return its stdout; RuntimeError when it fails."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), _PROBE_TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise RuntimeError(f"{argv[0]} did not answer in {_PROBE_TIMEOUT_SECONDS:g} s") from None
    if process.returncode != 0:
        message = err.decode("utf-8", "replace").strip().splitlines()
        last = message[-1] if message else "no message"
        raise RuntimeError(f"{Path(argv[0]).name} exited with {process.returncode}: {last}")
    return out.decode("utf-8", "replace")
