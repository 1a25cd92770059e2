"""The run order: what the stage of a warm sandbox is told to run, checked and built.

`check_request` refuses a bad request before any file is touched; `build_order` picks the
interpreter by extension and says what the stage must do (`RunOrder`, whose wire form the
stage program reads: see ``_stage_program``). Arguments travel as a list, never through a
shell. Called by the executor (``executor``, ``attempts``) for each request; ``stage`` starts
the stage with the same fixed environment (`base_env`) on the same interpreter
(`stage_python`).

The environment is scrubbed: a fixed base (``PATH``, ``HOME``, ``PWD``, ``LANG``, ``TMPDIR``,
``PYTHONPATH`` and ``NODE_PATH`` at the skill root, then its prepared environment when it has
one (``deps/python``, ``deps/node/node_modules``), ``PYTHONDONTWRITEBYTECODE``,
``PYTHONUNBUFFERED``) plus the request's ``env``. Request names must match
``[A-Z_][A-Z0-9_]*`` and may not override the base nor set what changes how the interpreters
and the loader start (``LD_*``, ``PYTHON*``, ``NODE_*``, ``BASH_*``, ``ENV``, ``SHELL``...). The
script is untrusted anyway, so this is not a security boundary; it keeps the contract that
the executor alone decides how a script starts, and a typo cannot silently break it.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from sandbox_executor.errors import ExecutorError, RequestRejectedError
from sandbox_executor.isolation import SANDBOX_PATH, SANDBOX_WORKSPACE, IsolationPlan
from sandbox_executor.limits import rlimits_for
from sandbox_executor.sandbox_user import SandboxUser
from sandbox_executor.workspace import Workspace
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox import (
    EGRESS_SOCKET,
    STAGE_EGRESS_VARIABLE,
    ExecutorRequest,
    check_run,
    proxy_environment,
)

__all__ = [
    "INTERPRETERS",
    "NODE_PROXY",
    "NODE_PROXY_PATH",
    "RunOrder",
    "base_env",
    "build_order",
    "check_request",
    "stage_python",
]

INTERPRETERS: Final = {
    ".py": "python3",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".sh": "bash",
}
_PREFERRED: Final = {"python3": "/usr/bin/python3"}
NODE_PROXY: Final = Path(__file__).with_name("node_proxy.js")
"""Node's fetch through the egress proxy, for Node versions that ignore the proxy variables."""
NODE_PROXY_PATH: Final = "/run/skillweave/node-proxy.js"
"""Where `NODE_PROXY` is copied into a contained sandbox (bubblewrap or namespaces)."""


def check_request(request: ExecutorRequest) -> tuple[str, ...]:
    """Refuse what no package can make runnable; return the script's path parts (the rules
    of ``skillweave.sandbox.validation``, which the manager applies before it claims a run).

    Raises:
        RequestRejectedError: Bad script path, environment or arguments.
    """
    try:
        return check_run(script=request.script, args=request.args, env=request.env)
    except ExecutionRejectedError as exc:
        raise RequestRejectedError(exc.reason) from None


def base_env(workspace: Workspace, plan: IsolationPlan) -> dict[str, str]:
    """The fixed base of every script's environment (the request's ``env`` joins it)."""
    isolated = plan.contained
    root = SANDBOX_WORKSPACE if isolated else str(workspace.root)
    python_path = [f"{root}/skill"]
    node_path = [f"{root}/skill"]
    # The skill's prepared environment, when the request brought one (see fill_workspace).
    if (workspace.deps / "python").is_dir():
        python_path.append(f"{root}/deps/python")
    if (workspace.deps / "node" / "node_modules").is_dir():
        node_path.append(f"{root}/deps/node/node_modules")
    return {
        "PATH": SANDBOX_PATH,
        "HOME": root,
        "PWD": root,
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp" if isolated else str(workspace.tmp),
        "PYTHONPATH": ":".join(python_path),
        "NODE_PATH": ":".join(node_path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


@dataclass(frozen=True)
class RunOrder:
    """What the stage of a warm sandbox is told to run (see ``_stage_program``).

    `kind` is ``python`` when the stage's own, already started interpreter runs the script,
    ``exec`` when the stage execs `argv` (node, bash, an executable file).
    """

    kind: Literal["python", "exec"]
    argv: list[str]
    env: dict[str, str]
    rlimits: dict[str, int]
    cwd: str

    def encode(self) -> bytes:
        """The wire form the stage reads (see ``_stage_program``): NUL-separated fields.

        Raises:
            RequestRejectedError: A value cannot be a command-line or environment string.
        """
        fields = [self.kind, self.cwd, str(len(self.rlimits))]
        for name, value in self.rlimits.items():
            fields += [name, str(value)]
        fields += [str(len(self.argv)), *self.argv, str(len(self.env))]
        for name, value in self.env.items():
            fields += [name, value]
        try:
            return b"\0".join(os.fsencode(field) for field in fields)
        except UnicodeEncodeError as exc:
            raise RequestRejectedError(
                "args or env hold a character that cannot be passed to a program"
            ) from exc


def _script_file(workspace: Workspace, parts: tuple[str, ...], script: str) -> os.stat_result:
    """Stat the script inside the skill, refusing a symlink anywhere on the way."""
    path = workspace.skill
    info: os.stat_result | None = None
    for part in parts:
        path = path / part
        try:
            info = path.lstat()
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise RequestRejectedError(f"script {script!r} is not in the skill package") from exc
        if stat.S_ISLNK(info.st_mode):
            raise RequestRejectedError(f"script {script!r}: a symlink would escape the package")
    assert info is not None
    if not stat.S_ISREG(info.st_mode):
        raise RequestRejectedError(f"script {script!r} is not a file of the skill package")
    return info


def _interpreter(name: str) -> str:
    preferred = _PREFERRED.get(name)
    if preferred and os.access(preferred, os.X_OK):
        return preferred
    found = shutil.which(name, path=SANDBOX_PATH)
    if found is None:
        raise RequestRejectedError(f"no {name} interpreter on this executor ({SANDBOX_PATH})")
    return found


def stage_python() -> str:
    """The interpreter a warm sandbox's stage runs on (and Python scripts run in).

    Raises:
        ExecutorError: There is no python3 on the sandbox's PATH.
    """
    try:
        return _interpreter("python3")
    except RequestRejectedError as exc:
        raise ExecutorError(exc.detail) from None


def _runs_on_stage_python(path: Path) -> bool:
    """An executable whose ``#!`` line names the stage's python3 with no options."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        first = os.read(fd, 256).split(b"\n", 1)[0]
    finally:
        os.close(fd)
    words = first.removeprefix(b"#!").split() if first.startswith(b"#!") else []
    if words[:1] == [b"/usr/bin/env"]:
        words = words[1:]
        if words != [b"python3"]:
            return False
        found = shutil.which("python3", path=SANDBOX_PATH)
        return found is not None and os.path.realpath(found) == os.path.realpath(stage_python())
    return len(words) == 1 and os.path.realpath(words[0]) == os.path.realpath(stage_python())


def build_order(
    request: ExecutorRequest,
    *,
    script_parts: tuple[str, ...],
    workspace: Workspace,
    plan: IsolationPlan,
    user: SandboxUser | None,
    proxy_port: int | None = None,
) -> RunOrder:
    """The order that runs the request's script in its filled `workspace`.

    A ``.py`` file (or an executable whose ``#!`` line is the stage's python3) runs in the
    stage's interpreter; ``.js``/``.mjs``/``.cjs`` with node, ``.sh`` with bash; any other
    executable file runs directly. A run with egress finds the proxy variables: a contained
    sandbox's stage starts the forwarder to the executor's bridge; without one, `proxy_port`
    is where the executor's bridge listens on loopback (no port: no network is offered).

    Raises:
        RequestRejectedError: The script is missing, escapes the package, or has a type with
            no interpreter and no executable bit.
    """
    info = _script_file(workspace, script_parts, request.script)
    suffix = os.path.splitext(script_parts[-1])[1].lower()
    isolated = plan.contained
    root = Path(SANDBOX_WORKSPACE) if isolated else workspace.root
    script_path = str(root.joinpath("skill", *script_parts))
    kind: Literal["python", "exec"] = "exec"
    if suffix == ".py":
        kind, argv = "python", [script_path]
    elif suffix in INTERPRETERS:
        argv = [_interpreter(INTERPRETERS[suffix]), script_path]
    elif info.st_mode & 0o111:
        argv = [script_path]
        if _runs_on_stage_python(workspace.skill.joinpath(*script_parts)):
            kind = "python"
    else:
        known = ", ".join(INTERPRETERS)
        raise RequestRejectedError(
            f"script {request.script!r}: unsupported type {suffix or '(no extension)'!r};"
            f" use {known}, or mark the file executable"
        )
    egress: dict[str, str] = {}
    if request.egress is not None and isolated:
        # The stage starts the forwarder to this socket; the script sees the proxy variables.
        socket = f"{SANDBOX_WORKSPACE}/{EGRESS_SOCKET}"
        egress = {**proxy_environment(), STAGE_EGRESS_VARIABLE: socket}
        # Node's fetch before Node 22.21/24 ignores the proxy variables: a preload fixes it.
        egress["NODE_OPTIONS"] = f"--require {NODE_PROXY_PATH}"
    elif request.egress is not None and proxy_port is not None:
        # No sandbox of our own (a pod's executor): the executor serves the proxy itself.
        egress = {**proxy_environment(proxy_port), "NODE_OPTIONS": f'--require "{NODE_PROXY}"'}
    order = RunOrder(
        kind=kind,
        argv=[*argv, *request.args],
        env={**base_env(workspace, plan), **request.env, **egress},
        rlimits=rlimits_for(
            request.limits, isolation=plan.isolation, dedicated_user=user is not None
        ),
        cwd=str(root),
    )
    order.encode()  # refuses what cannot travel, before anything runs
    return order
