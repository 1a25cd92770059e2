"""pip and npm installing a dependency spec in the build sandbox: :class:`Installers`.

Declared packages first (pip from a requirements file, ``--target python/``; npm from a
``package.json`` under ``node/``), then the inferred ones on a best-effort basis: all at once,
else one by one, each that fails skipped and said so in the log. Every option comes from the
settings (index, find-links, registry, extra arguments); the commands run in the build sandbox
(``_sandbox``), which this module only feeds. The builder (``_builder``) calls
:meth:`Installers.install` once per build.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Final
from urllib.parse import unquote, urlsplit

from mcp_manager.environments._build_log import Tool
from mcp_manager.environments._failure import BuildFailed
from mcp_manager.environments._sandbox import SANDBOX_BUILD, BuildSandbox
from mcp_manager.environments._toolchain import Toolchain
from skillweave.config import EnvironmentSettings
from skillweave.skills.dependencies import DependencySpec

__all__ = ["Installers"]

_BRIEF: Final[dict[Tool, tuple[str, ...]]] = {
    "pip": ("--retries", "0", "--timeout", "10"),
    "npm": ("--fetch-retries", "0", "--fetch-timeout", "10000"),
}
"""How inferred packages are asked for: no retries, a short timeout."""


class Installers:
    """Runs pip and npm in the build sandbox (see the module docstring).

    Args:
        settings: ``sandbox.environments``: the index, registry and extra options.
        toolchain: the executor's Python (pip runs as ``python -m pip``) and node (npm).
        sandbox: where the commands run.
    """

    def __init__(
        self, settings: EnvironmentSettings, toolchain: Toolchain, sandbox: BuildSandbox
    ) -> None:
        self._settings = settings
        self._toolchain = toolchain
        self._sandbox = sandbox

    async def install(
        self, build: Path, log: IO[bytes], *, skill: str, spec: DependencySpec, deadline: float
    ) -> list[str]:
        """Install `spec` into `build` (``python/`` and ``node/``), declared packages first,
        inferred ones after on a best-effort basis; each command's output goes to `log`.

        Returns:
            The inferred packages that were skipped.

        Raises:
            BuildFailed: a declared package could not be installed, or the build ran past
                `deadline` or over its size.
        """
        binds: list[str] = []
        python = [p for p in spec.python if not spec.is_inferred(p)]
        node_packages = {name: r for name, r in spec.node if name not in spec.inferred}
        inferred_python = [p for p in spec.python if spec.is_inferred(p)]
        inferred_node = [name for name, _ in spec.node if name in spec.inferred]
        skipped: list[str] = []
        if spec.python:
            interpreter = await self._toolchain.interpreter(skill)
            binds += interpreter.prefixes
        if spec.node and self._toolchain.node is None:
            if node_packages:
                raise BuildFailed("it declares Node dependencies and node is not installed here")
            log.write(b"# node is not installed here: inferred Node packages skipped\n")
            skipped += inferred_node
            inferred_node = []
        if node_packages or inferred_node:
            binds.append(self._toolchain.node_prefix())
        if spec.inferred:
            log.write(
                f"# inferred from the scripts' imports, installed if the index has them: "
                f"{', '.join(spec.inferred)}\n".encode()
            )
        if spec.python:
            binds += self._local_sources()
        run = functools.partial(
            self._sandbox.run, build=build, log=log, deadline=deadline, binds=binds
        )
        if python:
            (build / "requirements.txt").write_text("\n".join(python) + "\n", "utf-8")
            await run("pip", self._pip_argv("-r", f"{SANDBOX_BUILD}/requirements.txt"))
        if inferred_python:
            skipped += await self._best_effort(run, "pip", inferred_python, self._pip_argv, log)
        if node_packages or inferred_node:
            node = build / "node"
            node.mkdir()
            manifest = {
                "name": "skillweave-environment",
                "version": "0.0.0",
                "private": True,
                "dependencies": node_packages,
            }
            (node / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
            if node_packages:
                await run("npm", self._npm_argv())
            if inferred_node:
                skipped += await self._best_effort(run, "npm", inferred_node, self._npm_argv, log)
        return skipped

    async def _best_effort(
        self,
        run: Callable[..., Awaitable[None]],
        tool: Tool,
        packages: list[str],
        argv: Callable[..., list[str]],
        log: IO[bytes],
    ) -> list[str]:
        """Install inferred `packages` with `tool`: all at once, else one by one; a package
        that cannot be installed is skipped (a script that needs it fails as it would have
        without inference). Returns the skipped ones. An unreachable index is asked once,
        briefly: a guess must not hold a first run for pip's or npm's full retries."""
        brief = _BRIEF[tool]
        try:
            await run(tool, argv(*brief, *packages))
            return []
        except BuildFailed as failure:
            if len(packages) == 1:
                log.write(f"# skipped inferred {packages[0]!r}: {failure.reason}\n".encode())
                return list(packages)
        skipped = []
        for package in packages:
            try:
                await run(tool, argv(*brief, package))
            except BuildFailed as failure:
                log.write(f"# skipped inferred {package!r}: {failure.reason}\n".encode())
                skipped.append(package)
        return skipped

    def _local_sources(self) -> list[str]:
        """Host folders pip reads packages from (find_links, ``file:`` indexes): bound
        read-only at their own paths, so the same arguments work inside."""
        settings = self._settings
        found: list[str] = []
        for source in [*settings.find_links, settings.index_url, *settings.extra_index_urls]:
            path = _local_path(source)
            if path is not None and os.path.exists(path):
                found.append(path)
        return found

    def _pip_argv(self, *targets: str) -> list[str]:
        """pip installing `targets` (``-r FILE``, or requirements) with the settings' index."""
        settings = self._settings
        argv = [
            self._toolchain.python,
            "-m",
            "pip",
            "install",
            "--target",
            f"{SANDBOX_BUILD}/python",
            "--no-input",
            "--disable-pip-version-check",
            "--no-cache-dir",
        ]
        if settings.index_url:
            argv += ["--index-url", _pip_source(settings.index_url)]
        for url in settings.extra_index_urls:
            argv += ["--extra-index-url", _pip_source(url)]
        for link in settings.find_links:
            argv += ["--find-links", _pip_source(link)]
        if settings.no_index:
            argv.append("--no-index")
        return [*argv, *settings.pip_args, *targets]

    def _npm_argv(self, *packages: str) -> list[str]:
        """npm installing the package.json's dependencies, and `packages` (added to it)."""
        argv = [
            self._toolchain.npm(),
            "install",
            "--prefix",
            f"{SANDBOX_BUILD}/node",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--no-bin-links",  # .bin/ symlinks: an environment holds files and folders only
        ]
        if self._settings.npm_registry:
            argv += ["--registry", self._settings.npm_registry]
        return [*argv, *self._settings.npm_args, *packages]


def _local_path(source: str | None) -> str | None:
    if not source:
        return None
    parts = urlsplit(source)
    if parts.scheme == "file":
        return os.path.realpath(unquote(parts.path))
    return None if parts.scheme else os.path.realpath(source)


def _pip_source(source: str) -> str:
    """A relative local path means the manager's working folder, not the sandbox's."""
    return source if urlsplit(source).scheme else os.path.realpath(source)
