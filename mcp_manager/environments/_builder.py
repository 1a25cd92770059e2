"""Skills' declared dependencies, installed once: :class:`EnvironmentBuilder`, for the manager.

A skill version that declares Python or Node dependencies (a ``DependencySpec``; what its
scripts import and the operator's base environment join it) gets an *environment*: the
packages installed by pip (``--target``) and npm (``node_modules``), packed into one tar.gz and
stored under ``keys.environment_key(skill, version, runtime, platform)``, where the manager
passes the spec's digest as `version` (so versions of a skill with the same dependencies
share one), `runtime` names the executor image's interpreters (``cp311-node20``) and `platform` its
platform (``linux-x86_64``). The archive holds ``python/``, ``node/node_modules/`` (with
npm's ``package.json`` and lock) and ``skillweave-environment.json`` (spec digest, runtime,
platform, time of the build): regular files and folders only (what the executor unpacks),
at most ``max_bytes`` of them. The key holds the digest of what is installed, so a stored
environment never goes stale: it is built once and read ever after. Packages that were inferred
(``DependencySpec.inferred``) are installed after the declared ones, on a best-effort basis:
all at once, else one by one, each that fails skipped and said so in the log and the
manifest's ``skipped``; a declared package that fails fails the build.

**Once.** Concurrent requests for one key in this process share one build (a task that no
caller's cancellation stops). Across managers sharing a store, the builder first wins a claim
(``put_if_absent`` of ``.claim``) and renews it while it builds, with the same ``claims``
machinery as script executions; the others poll until the environment or a failure record
appears. A claim not renewed for a lease (its manager stopped) is superseded by the next
attempt (``.claim.2``…), claimed atomically again; once the build is over, the claims are
withdrawn. A failed build writes ``.failed``; the requests
that waited on it raise its error, and a later request builds again (the index may have been
down). The log of the last build is kept under the log key, whether it succeeded or not.

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

pip and npm do the resolving and installing; this module writes by hand only what neither does:
the sandbox, the once-only claim, reading their logs for the culprit package, and the archive.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import logging
import os
import re
import shlex
import shutil
import signal
import stat
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Final, Literal
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from mcp_manager.claims import Claims
from skillweave.config import EnvironmentSettings
from skillweave.errors import (
    ArtifactIntegrityError,
    ArtifactNotFoundError,
    DependencyError,
    EnvironmentBuildError,
    EnvironmentUnavailableError,
    StorageError,
)
from skillweave.skills.dependencies import DependencySpec
from skillweave.skills.files import remove_tree
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore

__all__ = ["ENVIRONMENT_MANIFEST", "Environment", "EnvironmentBuilder"]

logger = logging.getLogger("skillweave.manager")

ENVIRONMENT_MANIFEST: Final = "skillweave-environment.json"
"""The archive member that says what the environment is (spec digest, runtime, platform)."""

_SANDBOX_BUILD: Final = "/build"
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
_PROBE_TIMEOUT_SECONDS: Final = 30.0
_MAX_LOG_BYTES: Final = 4 * 1024 * 1024  # kept of a build log: the head and the tail
_LOG_HEAD_BYTES: Final = 256 * 1024
_MAX_DETAIL_CHARS: Final = 400
_MAX_REQUIREMENT_CHARS: Final = 1000
_MAX_NPM_NAME_CHARS: Final = 214  # npm's own limit
_JSON: Final = "application/json"

_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
# What a requirements file reads as other than a requirement: an option on the line (-r,
# --index-url, -e…), a comment, a line continuation, an environment variable.
_REQUIREMENTS_SYNTAX: Final = re.compile(r"(?:^|\s)[-#]|\\|\$\{")
# validate-npm-package-name (as discovery reads it) and a plain range: no protocol (file:,
# link:, git+…), path or URL can be written with these characters.
_NPM_NAME: Final = re.compile(r"(?:@[a-z0-9~-][a-z0-9._~-]*/)?[A-Za-z0-9~-][A-Za-z0-9._~-]*")
_NPM_RANGE: Final = re.compile(r"[0-9A-Za-z.^~<>=|*+\- ]{1,256}")
_SAFE_COMPONENT: Final = re.compile(r"[^A-Za-z0-9._-]")
_PACKAGE_NAME: Final = re.compile(r"@?[A-Za-z0-9][A-Za-z0-9._~-]*(?:/[A-Za-z0-9._~-]+)?")
_EXCEPTION_LINE: Final = re.compile(
    r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.+)$", re.MULTILINE
)
# What a build backend said, indented inside pip's report of the subprocess.
_BACKEND_ERROR: Final = re.compile(r"^\s+error: (?!subprocess-exited-with-error).+$", re.MULTILINE)
_PIP_CULPRITS: Final = (
    re.compile(r"No matching distribution found for (\S+)"),
    re.compile(r"Could not find a version that satisfies the requirement (\S+)"),
    re.compile(r"Encountered error while generating package metadata\.\s*\n\s*╰─> (\S+)"),
    re.compile(r"Failed to build installable wheels[^\n]*?(?:\(|\n\s*╰─>\s*)(\S+?)\)?\s*$", re.M),
    re.compile(r"Failed building wheel for (\S+)"),
    re.compile(r"Could not build wheels for (\S+?),"),
    re.compile(r"Cannot install (\S+?)(?:,| and | because)"),
)
_NPM_CULPRITS: Final = (
    re.compile(r"No matching version found for (\S+?)\.?\s*$", re.MULTILINE),
    re.compile(r"404\s+'(\S+?)' is not in (?:this|the npm) registry"),
    re.compile(r"The requested resource '(\S+?)' could not be found"),
    re.compile(r"E404\b.*?GET \S*/(\S+?)\s", re.DOTALL),
)

_Tool = Literal["pip", "npm"]
_BRIEF: Final[dict[str, tuple[str, ...]]] = {
    "pip": ("--retries", "0", "--timeout", "10"),
    "npm": ("--fetch-retries", "0", "--fetch-timeout", "10000"),
}
"""How inferred packages are asked for: no retries, a short timeout."""


@dataclass(frozen=True, slots=True)
class Environment:
    """A skill version's stored environment.

    Attributes:
        key: the store key of the packed environment (``environments/…/{platform}.tar.gz``).
        ref: its ref (size and sha256 of the tar.gz).
        built: True when this call built it; False when it was in the store already or
            another request (in this process or another manager) built it.
    """

    key: str
    ref: ArtifactRef
    built: bool


@dataclass(frozen=True, slots=True)
class _Keys:
    environment: str
    log: str
    failure: str
    skill: str
    version: str
    runtime: str
    platform: str

    def claim(self, attempt: int) -> str:
        return keys.environment_claim_key(
            self.skill, self.version, self.runtime, self.platform, attempt
        )


@dataclass(frozen=True, slots=True)
class _Interpreter:
    """What the probe learnt of the executor's Python."""

    tag: str  # cp311
    version: str  # 3.11.7
    platform: str  # linux-x86_64
    prefixes: tuple[str, ...]  # bound read-only into the build sandbox


class _Failed(Exception):
    """A build that failed for a reason worth telling (becomes EnvironmentBuildError)."""

    def __init__(self, reason: str, package: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.package = package


class EnvironmentBuilder:
    """Finds or builds the environment of a skill version (see the module docstring).

    Args:
        settings: ``sandbox.environments``: the index, extra options, limits, the switch.
        store: where environments, their logs and the build claims live.
        runtime: the executor image's runtime in keys; default ``cp{major}{minor}`` of
            `python`, plus ``-node{major}`` when node is found.
        platform: the executor's platform in keys; default `python`'s
            ``sysconfig.get_platform()`` (``linux-x86_64``).
        python: the executor's interpreter; pip runs as ``python -m pip``, so wheels fit it.
        node: the executor's node; default ``node`` on ``PATH``. npm is taken from its
            folder, else from ``PATH``.
        bwrap: the bubblewrap binary of the build sandbox.
        work_dir: where build folders are made (default: the system temp folder).
        claim_lease: how long a build claim lives unrenewed (the builder renews it four
            times as often); a lapsed claim's build is taken over by the next request.
    """

    def __init__(
        self,
        settings: EnvironmentSettings,
        store: ArtifactStore,
        *,
        runtime: str | None = None,
        platform: str | None = None,
        python: str = sys.executable,
        node: str | None = None,
        bwrap: str = "bwrap",
        work_dir: Path | None = None,
        claim_lease: float = 20.0,
    ) -> None:
        self._settings = settings
        self._store = store
        self._runtime = runtime
        self._platform = platform
        self._python = python
        self._node = node if node is not None else shutil.which("node")
        self._bwrap = bwrap
        self._work_dir = work_dir
        self._claims = Claims(store, lease=claim_lease, holder="builder")
        self._inflight: dict[str, asyncio.Task[Environment]] = {}
        self._interpreter: _Interpreter | None = None
        self._node_major: int | None = None
        self._sandbox_checked = False
        self.builds = 0
        """How many builds this builder ran (succeeded or failed)."""

    @property
    def settings(self) -> EnvironmentSettings:
        """The ``sandbox.environments`` settings this builder follows."""
        return self._settings

    async def aclose(self) -> None:
        """Stop the builds in flight (their sandboxes are killed, their claims withdrawn)."""
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def ensure(self, skill: str, version: str, spec: DependencySpec) -> Environment | None:
        """The stored environment of `skill` under `version` (the manager passes the digest of
        what `spec` installs, so one key is one content), built first when it is missing.

        Concurrent calls for one key in this process share one build; across managers a
        claim in the store makes the others wait for it.

        Returns:
            None when `spec` declares nothing, else the environment.

        Raises:
            DependencyError: the spec has more than ``max_dependencies`` entries, an entry
                that is not a plain requirement, or a ``requires_python`` the interpreter
                does not meet (checked before anything else happens).
            EnvironmentUnavailableError: it is not built and ``builds`` is off.
            EnvironmentBuildError: the build failed (the message names the package when
                pip or npm said which; the log is under ``log_key``), or cannot run here.
        """
        if spec.empty:
            return None
        _check_spec(skill, spec, self._settings.max_dependencies)
        if spec.requires_python:
            _check_python(skill, spec.requires_python, await self._probe_python(skill))
        names = await self._keys(skill, version)
        found = await self._store.stat(names.environment)
        if found is not None:
            return Environment(names.environment, found, built=False)
        if not self._settings.builds:
            raise EnvironmentUnavailableError(
                f"the environment of {skill!r} (dependencies {version[:12]}, {names.runtime}, "
                f"{names.platform}) is not built, and builds are off "
                "(sandbox.environments.builds); build it where builds are allowed"
            )
        task = self._inflight.get(names.environment)
        first = task is None
        if task is None:
            task = asyncio.create_task(self._obtain(names, spec))
            self._inflight[names.environment] = task
            task.add_done_callback(self._forget(names.environment))
        environment = await asyncio.shield(task)
        if environment.built and not first:
            return Environment(environment.key, environment.ref, built=False)
        return environment

    def _forget(self, key: str) -> Callable[[asyncio.Task[Environment]], None]:
        def done(task: asyncio.Task[Environment]) -> None:
            if self._inflight.get(key) is task:
                del self._inflight[key]
            if not task.cancelled():
                task.exception()  # retrieved: every waiter re-raises it itself

        return done

    # --- identity: the key's runtime and platform -------------------------------------------

    async def _keys(self, skill: str, version: str) -> _Keys:
        runtime = self._runtime
        platform = self._platform
        if runtime is None or platform is None:
            interpreter = await self._probe_python(skill)
            if platform is None:
                platform = interpreter.platform
            if runtime is None:
                runtime = interpreter.tag
                major = await self._probe_node(skill)
                if major is not None:
                    runtime += f"-node{major}"
        return _Keys(
            environment=keys.environment_key(skill, version, runtime, platform),
            log=keys.environment_log_key(skill, version, runtime, platform),
            failure=keys.environment_failure_key(skill, version, runtime, platform),
            skill=skill,
            version=version,
            runtime=runtime,
            platform=platform,
        )

    async def _probe_python(self, skill: str) -> _Interpreter:
        if self._interpreter is not None:
            return self._interpreter
        code = (
            "import json, sys, sysconfig; print(json.dumps({"
            "'name': sys.implementation.name, 'version': list(sys.version_info[:3]), "
            "'platform': sysconfig.get_platform(), 'prefixes': sorted({sys.prefix, "
            "sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})}))"
        )
        try:
            out = await _output([self._python, "-I", "-c", code])
            found = json.loads(out)
        except (OSError, ValueError, RuntimeError) as exc:
            raise EnvironmentBuildError(
                skill, f"the interpreter {self._python!r} cannot be asked what it is: {exc}"
            ) from None
        short = {"cpython": "cp", "pypy": "pp"}.get(found["name"], found["name"][:2])
        self._interpreter = _Interpreter(
            tag=f"{short}{found['version'][0]}{found['version'][1]}",
            version=".".join(str(part) for part in found["version"]),
            platform=_SAFE_COMPONENT.sub("_", found["platform"]),
            prefixes=tuple(os.path.realpath(p) for p in found["prefixes"]),
        )
        return self._interpreter

    async def _probe_node(self, skill: str) -> int | None:
        if self._node is None:
            return None
        if self._node_major is None:
            try:
                out = await _output([self._node, "--version"])
                self._node_major = int(out.strip().lstrip("v").split(".")[0])
            except (OSError, ValueError, RuntimeError) as exc:
                raise EnvironmentBuildError(
                    skill, f"node {self._node!r} cannot say its version: {exc}"
                ) from None
        return self._node_major

    async def _check_sandbox(self, skill: str) -> None:
        """Refuse to build when bubblewrap cannot run a sandbox here (once it could, it can)."""
        if self._sandbox_checked:
            return
        found = shutil.which(self._bwrap)
        if found is None:
            problem = f"{self._bwrap!r} is not installed"
        else:
            problem = None
            argv = [*_sandbox_args(found, binds=()), "--remount-ro", "/", "--", "true"]
            try:
                await _output(argv, env={"PATH": _SANDBOX_PATH})
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
        self._sandbox_checked = True

    # --- once: the claim across managers ----------------------------------------------------

    async def _obtain(self, names: _Keys, spec: DependencySpec) -> Environment:
        """Build under a claim, or wait for whoever holds it (see the module docstring)."""
        await self._check_sandbox(names.skill)
        # A failure recorded before this request started is history: this request builds
        # again. One that appears while it waits is the build it waited for.
        past_failure = await self._read_json(names.failure)
        past_build = past_failure.get("build") if past_failure else None
        ready = await self._finished(names, past_build)
        if ready is not None:
            return ready

        async def held(_: float) -> None:  # another manager builds it: look again soon
            await asyncio.sleep(min(1.0, self._claims.lease / 4))

        def interrupted() -> Exception:
            return EnvironmentBuildError(
                names.skill,
                f"its build was interrupted {self._claims.max_attempts} times (managers "
                f"stopped while building); remove {names.claim(1)}* to try again",
                log_key=names.log,
            )

        claim = await self._claims.acquire(
            names.claim,
            settled=lambda: self._finished(names, past_build),
            wait=held,
            exhausted=interrupted,
            what=f"environment {names.environment}",
        )
        if isinstance(claim, Environment):
            return claim
        try:
            # The build may have finished between the last look and the claim.
            ready = await self._finished(names, past_build)
            if ready is not None:
                return ready
            async with self._claims.renewing(claim):
                return await self._build_claimed(names, spec)
        finally:
            await self._claims.release(claim)

    async def _finished(self, names: _Keys, past_build: object) -> Environment | None:
        """The environment when it is stored; raises a failure newer than this request."""
        found = await self._store.stat(names.environment)
        if found is not None:
            return Environment(names.environment, found, built=False)
        failure = await self._read_json(names.failure)
        if failure is not None and failure.get("build") != past_build:
            package = failure.get("package")
            raise EnvironmentBuildError(
                names.skill,
                str(failure.get("reason", "the build failed")),
                package=package if isinstance(package, str) else None,
                log_key=names.log,
            )
        return None

    async def _read_json(self, key: str) -> dict[str, object] | None:
        ref = await self._store.stat(key)
        if ref is None:
            return None
        with contextlib.suppress(ArtifactNotFoundError, ArtifactIntegrityError, ValueError):
            record = json.loads(await self._store.get_bytes(ref))
            if isinstance(record, dict):
                return record
        return None

    # --- the build --------------------------------------------------------------------------

    async def _build_claimed(self, names: _Keys, spec: DependencySpec) -> Environment:
        self.builds += 1
        started = time.perf_counter()
        base = self._work_dir or Path(tempfile.gettempdir())
        await asyncio.to_thread(base.mkdir, parents=True, exist_ok=True)
        folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="skillweave-env-", dir=base))
        log_path = folder / "build.log"
        try:
            try:
                with log_path.open("ab") as log:
                    archive = await self._build_in(folder, log, names, spec)
            except _Failed as failure:
                await self._keep_log(log_path, names.log)
                record = {
                    "build": uuid.uuid4().hex,
                    "reason": failure.reason,
                    "package": failure.package,
                    "log_key": names.log,
                    "at": time.time(),
                }
                await self._store.put_bytes(
                    names.failure, json.dumps(record).encode(), content_type=_JSON
                )
                logger.warning("environment %s: build failed: %s", names.environment, failure)
                raise EnvironmentBuildError(
                    names.skill, failure.reason, package=failure.package, log_key=names.log
                ) from None
            await self._keep_log(log_path, names.log)
            # A builder whose claim lapsed (paused, not stopped) may have stored it meanwhile:
            # keep its bytes, which readers may already hold the ref of.
            ref = await self._store.stat(names.environment) or await self._store.put_file(
                names.environment, str(archive), content_type="application/gzip"
            )
            await self._store.delete(names.failure)
        finally:
            await asyncio.to_thread(remove_tree, folder)
        logger.info(
            "environment %s built in %.1f s (%d bytes packed)",
            names.environment,
            time.perf_counter() - started,
            ref.size,
        )
        return Environment(names.environment, ref, built=True)

    async def _build_in(
        self, folder: Path, log: IO[bytes], names: _Keys, spec: DependencySpec
    ) -> Path:
        """Install `spec` into ``folder/build`` in the sandbox, check it and pack it."""
        build = folder / "build"
        for part in ("home", "tmp"):
            (build / part).mkdir(parents=True)
        deadline = asyncio.get_running_loop().time() + self._settings.build_timeout_seconds
        binds: list[str] = []
        python = [p for p in spec.python if not spec.is_inferred(p)]
        node_packages = {name: r for name, r in spec.node if name not in spec.inferred}
        inferred_python = [p for p in spec.python if spec.is_inferred(p)]
        inferred_node = [name for name, _ in spec.node if name in spec.inferred]
        skipped: list[str] = []
        if spec.python:
            interpreter = await self._probe_python(names.skill)
            binds += interpreter.prefixes
        if spec.node and self._node is None:
            if node_packages:
                raise _Failed("it declares Node dependencies and node is not installed here")
            log.write(b"# node is not installed here: inferred Node packages skipped\n")
            skipped += inferred_node
            inferred_node = []
        if node_packages or inferred_node:
            binds.append(_install_prefix(self._node or ""))
        if spec.inferred:
            log.write(
                f"# inferred from the scripts' imports, installed if the index has them: "
                f"{', '.join(spec.inferred)}\n".encode()
            )
        if spec.python:
            binds += self._local_sources()
        run = functools.partial(self._run, build=build, log=log, deadline=deadline, binds=binds)
        if python:
            (build / "requirements.txt").write_text("\n".join(python) + "\n", "utf-8")
            await run("pip", self._pip_argv("-r", f"{_SANDBOX_BUILD}/requirements.txt"))
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
        manifest = {
            "format": 1,
            "skill": names.skill,
            "version": names.version,
            "runtime": names.runtime,
            "platform": names.platform,
            "spec_digest": spec.digest(),
            "python": list(spec.python),
            "node": dict(spec.node),
            "inferred": list(spec.inferred),
            "skipped": skipped,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        archive = folder / "environment.tar.gz"
        await asyncio.to_thread(_pack, build, archive, manifest, self._settings.max_bytes)
        return archive

    async def _best_effort(
        self,
        run: Callable[..., Awaitable[None]],
        tool: _Tool,
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
        except _Failed as failure:
            if len(packages) == 1:
                log.write(f"# skipped inferred {packages[0]!r}: {failure.reason}\n".encode())
                return list(packages)
        skipped = []
        for package in packages:
            try:
                await run(tool, argv(*brief, package))
            except _Failed as failure:
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
            self._python,
            "-m",
            "pip",
            "install",
            "--target",
            f"{_SANDBOX_BUILD}/python",
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
        assert self._node is not None
        beside = Path(self._node).parent / "npm"
        npm = str(beside) if beside.exists() else shutil.which("npm") or "npm"
        argv = [
            npm,
            "install",
            "--prefix",
            f"{_SANDBOX_BUILD}/node",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--no-bin-links",  # .bin/ symlinks: an environment holds files and folders only
        ]
        if self._settings.npm_registry:
            argv += ["--registry", self._settings.npm_registry]
        return [*argv, *self._settings.npm_args, *packages]

    async def _run(
        self,
        tool: _Tool,
        command: list[str],
        *,
        build: Path,
        log: IO[bytes],
        deadline: float,
        binds: Sequence[str],
    ) -> None:
        """Run `command` in the build sandbox, its output appended to `log`.

        Raises:
            _Failed: it exited non-zero (with the culprit when the output names one), ran
                past the deadline, or wrote more than twice ``max_bytes``.
        """
        loop = asyncio.get_running_loop()
        path = _SANDBOX_PATH
        node_bin = str(Path(self._node).parent) if self._node else None
        if node_bin is not None and node_bin not in path.split(":"):
            path = f"{node_bin}:{path}"  # npm's `#!/usr/bin/env node` must find it
        env = {
            "PATH": path,
            "HOME": f"{_SANDBOX_BUILD}/home",
            "LANG": "C.UTF-8",
            # No host config files: every option comes from the settings.
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_ROOT_USER_ACTION": "ignore",
            "npm_config_globalconfig": os.devnull,  # the user's is ~/.npmrc, in the fresh HOME
            "npm_config_cache": f"{_SANDBOX_BUILD}/home/.npm",
            "npm_config_update_notifier": "false",
        }
        argv = [*_sandbox_args(self._bwrap, binds=binds, build=build), "--", *command]
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
                    raise _Failed(
                        f"{tool} did not finish within {self._settings.build_timeout_seconds:g} s"
                        " (sandbox.environments.build_timeout_seconds); it was stopped"
                    )
                try:
                    code = await asyncio.wait_for(
                        process.wait(), timeout=min(remaining, _WATCH_SECONDS)
                    )
                    break
                except TimeoutError:
                    used = await asyncio.to_thread(_tree_bytes, build)
                    if used > limit:
                        raise _Failed(
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
                handle.seek(max(start, end - _MAX_LOG_BYTES))
                output = handle.read(end - handle.tell()).decode("utf-8", "replace")
            package, detail = _diagnose(tool, output)
            if package is not None:
                raise _Failed(f"{tool} could not install {package!r}: {detail}", package)
            raise _Failed(f"{tool} exited with status {code}: {detail}")

    async def _keep_log(self, path: Path, key: str) -> None:
        try:
            data = await asyncio.to_thread(_read_log, path)
            await self._store.put_bytes(key, data, content_type="text/plain; charset=utf-8")
        except (OSError, StorageError) as exc:  # the build's outcome matters more than its log
            logger.warning("build log %s not kept: %s", key, exc)


# --- helpers --------------------------------------------------------------------------------


def _check_spec(skill: str, spec: DependencySpec, limit: int) -> None:
    """The builder's own check of the spec. Discovery checks it too, but the builder must
    not trust it: the spec becomes a requirements file and a package.json, where an option, a
    comment or a path would be obeyed."""
    count = len(spec.python) + len(spec.node)
    if count > limit:
        raise DependencyError(
            f"skill {skill!r} declares {count} dependencies, more than the {limit} allowed "
            "(sandbox.environments.max_dependencies)"
        )
    for text in spec.python:
        problem = _python_problem(text)
        if problem is not None:
            raise DependencyError(f"skill {skill!r}: Python dependency {text!r} {problem}")
    for name, version_range in spec.node:
        if (
            not isinstance(name, str)
            or len(name) > _MAX_NPM_NAME_CHARS
            or not _NPM_NAME.fullmatch(name)
        ):
            raise DependencyError(f"skill {skill!r}: {name!r} is not an npm package name")
        if not isinstance(version_range, str) or not _NPM_RANGE.fullmatch(version_range):
            raise DependencyError(
                f"skill {skill!r}: Node dependency {name!r}: {version_range!r} is not a "
                "registry version range (no protocols, paths or URLs)"
            )


def _python_problem(text: object) -> str | None:
    if (
        not isinstance(text, str)
        or len(text) > _MAX_REQUIREMENT_CHARS
        or _CONTROL.search(text)
        or _REQUIREMENTS_SYNTAX.search(text)
    ):
        return "is not a plain requirement (options, comments and escapes are refused)"
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return "is not a PEP 508 requirement"
    if requirement.url:
        return "is a direct reference (a URL); dependencies come from the index"
    return None


def _check_python(skill: str, requires_python: str, interpreter: _Interpreter) -> None:
    try:
        fits = SpecifierSet(requires_python).contains(interpreter.version, prereleases=True)
    except InvalidSpecifier:
        raise DependencyError(
            f"skill {skill!r}: requires-python {requires_python!r} is not a version specifier"
        ) from None
    if not fits:
        raise DependencyError(
            f"skill {skill!r} requires Python {requires_python}; the executor's is "
            f"{interpreter.version}"
        )


def _sandbox_args(bwrap: str, *, binds: Sequence[str], build: Path | None = None) -> list[str]:
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
    args += ["--bind", str(build), _SANDBOX_BUILD, "--bind", str(build / "tmp"), "/tmp"]
    for path in sorted(set(binds)):
        if not any(path == d or path.startswith(d + "/") for d in _SYSTEM_DIRS):
            args += ["--ro-bind", path, path]
    return [*args, "--chdir", _SANDBOX_BUILD, "--remount-ro", "/"]


def _install_prefix(program: str) -> str:
    """The installation a binary belongs to (``/opt/node`` for ``/opt/node/bin/node``)."""
    return str(Path(os.path.realpath(program)).parent.parent)


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


def _diagnose(tool: _Tool, output: str) -> tuple[str | None, str]:
    """The package pip or npm blamed (None when it named none) and the line that says why.

    The line, best first: the last exception of build code (``OSError: [Errno 30]
    Read-only file system: …``), an ``error:`` a build backend printed, the first of the
    tool's own error lines, the last line.
    """
    patterns = _PIP_CULPRITS if tool == "pip" else _NPM_CULPRITS
    package = None
    for pattern in patterns:
        match = pattern.search(output)
        if match is not None:
            found = _PACKAGE_NAME.match(unquote(match.group(1)).strip("'\"`"))
            if found is not None:
                package = found.group(0)
                break
    candidates = [m.group(0).strip() for m in _EXCEPTION_LINE.finditer(output)][-1:]
    if tool == "pip":
        candidates += [m.group(0).strip() for m in _BACKEND_ERROR.finditer(output)][-1:]
        candidates += [line for line in output.splitlines() if line.startswith("ERROR:")][:1]
    else:
        said = (
            line.removeprefix("npm error").removeprefix("npm ERR!").strip()
            for line in output.splitlines()
            if line.startswith(("npm error", "npm ERR!"))
        )
        boring = ("code ", "A complete log", "Log files")
        candidates += [
            line for line in said if line.strip("0123456789 ") and not line.startswith(boring)
        ][:1]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    candidates += [line for line in lines if not line.startswith(("hint:", "note:"))][-1:]
    return package, (candidates or ["no output"])[0][:_MAX_DETAIL_CHARS]


async def _output(argv: list[str], *, env: dict[str, str] | None = None) -> str:
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


MAX_BUILD_DEPTH: Final = 128
"""Folder levels below ``python/`` or ``node/`` a build may leave (nested ``node_modules``
stay far below it); a deeper tree fails the build."""


def _walk_build(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every entry under `root` (not `root` itself, never following a symlink): per folder,
    its subfolders then its other entries, each in name order, before what lies below
    them (the order ``os.walk`` gave). Iterative, since a build's scripts may have left a
    tree of any depth (``os.walk`` recurses).

    Raises:
        _Failed: a tree deeper than :data:`MAX_BUILD_DEPTH`, or an entry the system refuses
            to read (a path too long).
    """
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        folders: list[tuple[Path, os.stat_result]] = []
        others: list[tuple[Path, os.stat_result]] = []
        try:
            with os.scandir(folder) as found:
                names = sorted(entry.name for entry in found)
            for name in names:
                path = folder / name
                with contextlib.suppress(FileNotFoundError):
                    info = path.lstat()
                    (folders if stat.S_ISDIR(info.st_mode) else others).append((path, info))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise _Failed(
                f"the build made an entry under {root.name}/ that cannot be read ({exc.strerror});"
                " an environment holds packages, not such trees"
            ) from None
        if folders and depth + 1 > MAX_BUILD_DEPTH:
            raise _Failed(
                f"the build made a tree deeper than {MAX_BUILD_DEPTH} levels under {root.name}/;"
                " an environment holds packages, not such trees"
            )
        yield from folders
        yield from others
        pending.extend((path, depth + 1) for path, _ in reversed(folders))


def _tree_bytes(root: Path) -> int:
    """Bytes of the regular files under `root` (not following symlinks).

    Raises:
        _Failed: a tree too deep to measure (:func:`_walk_build`): the build stops there.
    """
    return sum(info.st_size for _, info in _walk_build(root) if stat.S_ISREG(info.st_mode))


def _pack(build: Path, archive: Path, manifest: dict[str, object], max_bytes: int) -> None:
    """Check what the build left and pack ``python/`` and ``node/`` with the manifest.

    An environment holds regular files and folders only (the executor unpacks nothing else):
    a symlink, device, fifo or socket fails the build rather than being dropped silently, and
    hard links are stored as separate files.

    Raises:
        _Failed: an entry that is not a file or folder, or more than `max_bytes` of files.
    """
    entries: list[tuple[Path, str, os.stat_result]] = []
    total = 0
    for top in ("python", "node"):
        root = build / top
        if not root.is_dir():
            continue
        for path, info in _walk_build(root):
            relative = path.relative_to(build).as_posix()
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
            elif stat.S_ISLNK(info.st_mode):
                raise _Failed(
                    f"the build left a symlink, {relative} -> {os.readlink(path)}; "
                    "environments hold files and folders only"
                )
            elif not stat.S_ISDIR(info.st_mode):
                raise _Failed(f"the build left {relative}, which is not a file or a folder")
            entries.append((path, relative, info))
    if total > max_bytes:
        raise _Failed(
            f"the environment is {total} bytes unpacked, more than max_bytes "
            f"(sandbox.environments.max_bytes = {max_bytes})"
        )
    manifest = {**manifest, "bytes": total, "entries": len(entries)}
    data = json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"
    mtime = int(time.time())

    def member(name: str, mode: int, kind: bytes, size: int = 0) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.mode = mode & 0o755  # no setuid, setgid, sticky, group- or world-writable bits
        info.size = size
        info.mtime = mtime
        return info

    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.addfile(
            member(ENVIRONMENT_MANIFEST, 0o644, tarfile.REGTYPE, len(data)), io.BytesIO(data)
        )
        for path, relative, info in entries:
            if stat.S_ISDIR(info.st_mode):
                tar.addfile(member(relative, info.st_mode | 0o700, tarfile.DIRTYPE))
                continue
            with path.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                tar.addfile(member(relative, info.st_mode | 0o600, tarfile.REGTYPE, size), handle)


def _read_log(path: Path) -> bytes:
    """The log, or its head and tail when it is over the cap (pip and npm end with the error)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return b""
    with path.open("rb") as handle:
        if size <= _MAX_LOG_BYTES:
            return handle.read()
        head = handle.read(_LOG_HEAD_BYTES)
        tail_bytes = _MAX_LOG_BYTES - _LOG_HEAD_BYTES
        handle.seek(size - tail_bytes)
        tail = handle.read()
    skipped = size - _LOG_HEAD_BYTES - tail_bytes
    return head + f"\n[... {skipped} bytes of the log left out ...]\n".encode() + tail
