"""The checks behind ``skillweave doctor`` and the start of every long-running command.

Each check answers one question about this process's configuration with one line, ``ok``,
``warn`` or ``fail``, and what to do:

- **temporal** (when ``WORKFLOW__EXECUTION_ENGINE=temporal``): reachable, the namespace exists,
  skillweave's search attributes are registered with their types;
- **store**: an object written, read back and removed; the store's id;
- **manager** (when ``SANDBOX__MANAGER_URL`` is set): reachable, and takes the configured token;
- **agree**: what must be the same across processes is: the manager's store is this one, and
  its script limit (``SANDBOX__TIMEOUT_SECONDS``, decided by the manager alone) fits in a script
  step (``WORKFLOW__SCRIPT_TIMEOUT_SECONDS``, this process's);
- **model**: every model profile has what it needs (credentials, an endpoint that answers a
  listing of its models: no tokens spent);
- **isolation** (where scripts run: a manager, or a process that starts one in-process): the
  mode scripts would run in, probed as an executor would.

A failure that may pass by itself (a service not reachable *yet*) is ``transient``: ``doctor``
shows it as a failure, while a long-running command starting up says it and goes on (services
start in any order); any other failure stops the command before it serves (:func:`preflight`).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rich.console import Console
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.errors import fail
from skillweave.config import ModelProfile, Settings
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    import typer

__all__ = ["Check", "Role", "preflight", "print_checks", "run_checks"]

Status = Literal["ok", "warn", "fail"]
Role = Literal["doctor", "worker", "dev", "api", "manager", "mcp", "run"]
_TIMEOUT = 5.0
_STYLES = {"ok": "green", "warn": "yellow", "fail": "bold red"}


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the answer. `transient`: a failure that may pass by itself (something not
    reachable yet), which does not stop a service from starting."""

    name: str
    status: Status
    detail: str
    transient: bool = False


@dataclass(slots=True)
class _Probe:
    """What the checks share while they run: the settings, the role asking, what was found."""

    settings: Settings
    role: Role
    store_id: str | None = None
    manager: dict[str, object] | None = field(default=None)


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


async def _temporal(probe: _Probe) -> Check:
    settings = probe.settings
    if settings.workflow.execution_engine != "temporal":
        return Check("temporal", "ok", "not used (WORKFLOW__EXECUTION_ENGINE=direct)")
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest

    from skillweave.engines.temporal import connect
    from skillweave.engines.temporal_setup import search_attribute_problems
    from skillweave.errors import ConfigError

    workflow = settings.workflow
    try:
        client = await asyncio.wait_for(connect(workflow), _TIMEOUT)
    except (ConfigError, TimeoutError) as exc:
        why = str(exc) or f"no answer in {_TIMEOUT:g} s"
        return Check("temporal", "fail", why, transient=True)
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=workflow.namespace)
        )
        problems = await search_attribute_problems(client, workflow.namespace)
    except Exception as exc:  # RPCError: the namespace is missing, or not ours to read
        return Check(
            "temporal",
            "fail",
            f"namespace {workflow.namespace!r} at {workflow.temporal_address}: "
            f"{_first_line(exc)}; create it or set WORKFLOW__NAMESPACE",
        )
    if problems:
        return Check(
            "temporal",
            "fail",
            f"{'; '.join(problems)}: run `skillweave temporal setup` (jobs started now "
            "would never run)",
        )
    return Check("temporal", "ok", f"{workflow.temporal_address}, namespace {workflow.namespace}")


async def _store(probe: _Probe) -> Check:
    from skillweave.cli.compose import open_store
    from skillweave.storage.identity import store_identity

    settings = probe.settings
    key = f"doctor/probe-{secrets.token_hex(8)}"
    where = f"the {settings.storage.backend} store"
    try:
        async with open_store(settings) as store:
            data = secrets.token_bytes(32)
            ref = await store.put_bytes(key, data)
            if await store.get_bytes(ref) != data:
                return Check("store", "fail", f"{where} gave back other bytes than written")
            await store.delete(key)
            probe.store_id = await store_identity(store)
    except Exception as exc:
        return Check(
            "store",
            "fail",
            f"{where}: {_first_line(exc)}; check the STORAGE__ settings",
            transient=True,
        )
    return Check(
        "store",
        "ok",
        f"{where}, id {probe.store_id}, is readable and writable (every process of a "
        "deployment must show this id)",
    )


async def _read_store_id(probe: _Probe) -> None:
    """The store's id without the write probe (a check that only compares it)."""
    from skillweave.cli.compose import open_store
    from skillweave.storage.identity import store_identity

    try:
        async with open_store(probe.settings) as store:
            probe.store_id = await store_identity(store)
    except Exception:  # not compared then: the store's own failure shows where it is used
        probe.store_id = None


async def _manager(probe: _Probe) -> Check:
    import httpx

    sandbox = probe.settings.sandbox
    url = sandbox.manager_url
    if not url:
        return Check("manager", "ok", "started in-process (SANDBOX__MANAGER_URL unset)")
    token = sandbox.manager_token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else {}
    try:
        async with httpx.AsyncClient(base_url=url, timeout=_TIMEOUT) as client:
            answer = await client.get("/sandbox/pool", headers=headers)
            health = await client.get("/healthz")
    except httpx.HTTPError as exc:
        return Check(
            "manager",
            "fail",
            f"cannot reach {url} ({type(exc).__name__}): start it, or fix SANDBOX__MANAGER_URL",
            transient=True,
        )
    if answer.status_code == 401:
        return Check(
            "manager",
            "fail",
            f"{url} refuses the token: SANDBOX__MANAGER_TOKEN must be the manager's",
        )
    if answer.is_error:
        return Check("manager", "fail", f"{url} answered {answer.status_code}", transient=True)
    try:
        found = health.json()
        probe.manager = found if isinstance(found, dict) else None
    except ValueError:
        probe.manager = None
    name = probe.manager.get("manager_id") if probe.manager else None
    return Check("manager", "ok", f"{url}{f' ({name})' if name else ''} takes the token")


async def _agree(probe: _Probe) -> Check:
    settings = probe.settings
    problems = []
    remote = settings.sandbox.manager_url
    if remote and probe.store_id is None and _store not in _BY_ROLE[probe.role]:
        await _read_store_id(probe)
    if remote and probe.manager is None:
        return Check("agree", "warn", f"not compared: the manager at {remote} did not answer")
    if remote and probe.manager is not None:
        theirs = probe.manager.get("store_id")
        if probe.store_id is not None and theirs != probe.store_id:
            problems.append(
                f"the manager works on the store {theirs}, this process on {probe.store_id}: "
                "give both the same STORAGE__ settings"
            )
        limit = probe.manager.get("script_timeout_seconds")
        where = f"the manager's SANDBOX__TIMEOUT_SECONDS ({limit} s)"
    else:
        limit = settings.sandbox.timeout_seconds
        where = f"SANDBOX__TIMEOUT_SECONDS ({limit:g} s)"
    step = settings.workflow.script_timeout_seconds
    uses_steps = settings.workflow.execution_engine == "temporal" and probe.role != "manager"
    if uses_steps and isinstance(limit, int | float) and limit >= step:
        problems.append(
            f"{where} is not under WORKFLOW__SCRIPT_TIMEOUT_SECONDS ({step:g} s): a long "
            "script would be cut off and run again; raise the second or lower the first"
        )
    if problems:
        return Check("agree", "fail", "; ".join(problems))
    if not remote:
        return Check("agree", "ok", f"scripts run in-process, limit {limit:g} s")
    return Check("agree", "ok", f"the manager's store and script limit ({limit} s) fit")


async def _model_profile(
    label: str, setting: str, profile: ModelProfile
) -> tuple[Status, str, bool]:
    """One profile: (status, detail, transient)."""
    from pathlib import Path

    import httpx

    from skillweave.errors import ConfigError
    from skillweave.llm import DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL
    from skillweave.llm.factory import check_profile

    if profile.provider == "scripted":
        if Path(profile.name).is_file():
            return "ok", f"{label}: replays the script {profile.name}", False
        return (
            "warn",
            f"{label}: the scripted model ({profile.name}) answers from a script: set "
            f"{setting}PROVIDER, {setting}NAME and {setting}API_KEY for a real one",
            False,
        )
    try:
        check_profile(profile, what=label, setting=setting)
    except ConfigError as exc:
        return "fail", str(exc), False
    openai = profile.provider == "openai"
    base = profile.base_url or (DEFAULT_OPENAI_BASE_URL if openai else DEFAULT_ANTHROPIC_BASE_URL)
    base = base.rstrip("/")
    key = profile.api_key.get_secret_value() if profile.api_key is not None else ""
    headers = (
        ({"Authorization": f"Bearer {key}"} if key else {})
        if openai
        else {"x-api-key": key, "anthropic-version": "2023-06-01"}
    )
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            answer = await client.get(f"{base}/models", headers=headers)
    except httpx.HTTPError as exc:
        return "fail", f"{label}: cannot reach {base} ({type(exc).__name__})", True
    if answer.status_code in (401, 403):
        return "fail", f"{label}: {base} refuses {setting}API_KEY ({answer.status_code})", False
    if answer.is_error:
        return "warn", f"{label}: {base}/models answered {answer.status_code}", False
    return "ok", f"{label} at {base} answers", False


async def _model(probe: _Probe) -> Check:
    model = probe.settings.model
    profiles: list[tuple[str, str, ModelProfile]] = [
        (f"model '{model.provider}:{model.name}'", "MODEL__", model)
    ]
    profiles += [
        (f"model profile {name!r}", f"MODEL__PROFILES__{name.upper()}__", profile)
        for name, profile in sorted(model.profiles.items())
    ]
    answers = [await _model_profile(*each) for each in profiles]
    worst: Status = "ok"
    for status, _, _ in answers:
        if status == "fail" or (status == "warn" and worst == "ok"):
            worst = status
    shown = [detail for status, detail, _ in answers if status == worst]
    transient = all(transient for status, _, transient in answers if status == "fail")
    return Check("model", worst, "; ".join(shown), transient=worst == "fail" and transient)


def _probe_isolation(choice: str) -> str:
    """The mode an executor started here with `choice` would run scripts in, probed as its
    pool would (:func:`sandbox_executor.isolation.probe_isolation`)."""
    from sandbox_executor.isolation import probe_isolation
    from sandbox_executor.settings import ExecutorSettings

    return probe_isolation(ExecutorSettings(isolation=choice)).isolation  # type: ignore[arg-type]


async def _isolation(probe: _Probe) -> Check:
    from skillweave.sandbox.models import describe_isolation, isolation_of_health

    settings = probe.settings
    if settings.sandbox.manager_url and probe.role != "manager":
        told = isolation_of_health(probe.manager)
        if told is None:
            return Check("isolation", "ok", "decided by the manager at SANDBOX__MANAGER_URL")
        mode, setting = told
        status: Status = "warn" if mode == "none" else "ok"
        where = " (the manager at SANDBOX__MANAGER_URL)"
        return Check("isolation", status, describe_isolation(mode, setting=setting) + where)
    from sandbox_executor.errors import IsolationUnavailableError

    setting = settings.sandbox.isolation
    try:
        mode = await asyncio.to_thread(_probe_isolation, setting)
    except IsolationUnavailableError as exc:
        return Check("isolation", "fail", str(exc))
    status = "warn" if mode == "none" else "ok"
    return Check("isolation", status, describe_isolation(mode, setting=setting))


_CheckFn = Callable[[_Probe], Awaitable[Check]]
_ALL: tuple[_CheckFn, ...] = (_temporal, _store, _manager, _agree, _model, _isolation)
_BY_ROLE: dict[Role, tuple[_CheckFn, ...]] = {
    "doctor": _ALL,
    "worker": _ALL,
    # The embedded stack starts its own Temporal (attributes registered) and manager.
    "dev": (_store, _model, _isolation),
    "api": (_temporal, _store, _manager, _agree),
    "manager": (_store, _isolation),
    "mcp": (_store, _manager, _agree, _isolation),
    # A job about to start on this process's own engine (direct), with a remote manager.
    "run": (_manager, _agree),
}


async def run_checks(settings: Settings, role: Role = "doctor") -> list[Check]:
    """The checks `role` needs, in order, against `settings`."""
    if role == "worker":  # a worker is Temporal's, whatever WORKFLOW__EXECUTION_ENGINE says
        workflow = settings.workflow.model_copy(update={"execution_engine": "temporal"})
        settings = settings.model_copy(update={"workflow": workflow})
    probe = _Probe(settings, role)
    checks = _BY_ROLE[role]
    if role == "api" and settings.workflow.execution_engine == "direct":
        checks = (*checks, _model, _isolation)  # its jobs run in the API's process
    elif role == "api" and not settings.sandbox.manager_url:
        checks = (_temporal, _store)  # its jobs run on the workers, with their managers
    return [await check(probe) for check in checks]


def print_checks(checks: list[Check], *, to: Console = err, starting: bool = False) -> None:
    """One line each (on stderr unless `to` says); when `starting`, a transient failure shows
    as a warning: the command goes on."""
    for check in checks:
        status = "warn" if starting and check.status == "fail" and check.transient else check.status
        line = Text(f"{status:<5}", style=_STYLES[status])
        line.append(terminal_safe(f"{check.name}: {check.detail}"))
        to.print(line, soft_wrap=True)


def preflight(settings: Settings, role: Role, *, show_ok: bool = True) -> None:
    """The start-up checks of a long-running command (or of a job about to start): each said
    on stderr (`show_ok` False: only what is not ok); a failure that will not pass by itself
    stops it here.

    Raises:
        typer.Exit: one line naming the first such failure, and what to do.
    """
    checks = asyncio.run(run_checks(settings, role))
    print_checks([c for c in checks if show_ok or c.status != "ok"], starting=True)
    red = [c for c in checks if c.status == "fail" and not c.transient]
    if red:
        first = red[0]
        raise _refused(role, first)


def _refused(role: Role, check: Check) -> typer.Exit:
    what = "the job was not started" if role == "run" else f"{role} not started"
    return fail(f"{what}: {check.name}: {check.detail}", hint="`skillweave doctor` checks all.")
