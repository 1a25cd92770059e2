"""``skillweave doctor``: is this process's configuration one that jobs can run on? And
``skillweave temporal setup``: register what a Temporal namespace needs.

Each check prints one line, ``ok``, ``warn`` or ``fail``, with what to do; the command exits 1
when any fails. The checks, each against what the settings name:

- **temporal** (when ``WORKFLOW__EXECUTION_ENGINE=temporal``): reachable, the namespace exists,
  skillweave's search attributes are registered with their types;
- **store**: an object written, read back and removed;
- **manager** (when ``SANDBOX__MANAGER_URL`` is set): reachable, and takes the configured token;
- **model**: the default profile's provider has what it needs (credentials, an endpoint that
  answers a listing of its models: no tokens spent);
- **isolation** (when the manager is started in-process): the mode it would run scripts in.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import typer
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, out
from skillweave.cli.errors import EXIT_PROBLEM, errors
from skillweave.config import Settings, get_settings
from skillweave.terminal import terminal_safe

__all__ = ["Check", "doctor", "run_checks", "temporal_app"]

Status = Literal["ok", "warn", "fail"]
_TIMEOUT = 5.0

temporal_app = typer.Typer(help="The Temporal namespace skillweave's jobs run in.")


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's answer."""

    name: str
    status: Status
    detail: str


async def _temporal(settings: Settings) -> Check:
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
        return Check("temporal", "fail", why)
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
            f"{str(exc).splitlines()[0]}; create it or set WORKFLOW__NAMESPACE",
        )
    if problems:
        return Check(
            "temporal",
            "fail",
            f"{'; '.join(problems)}: run `skillweave temporal setup` (jobs started now "
            "would never run)",
        )
    return Check("temporal", "ok", f"{workflow.temporal_address}, namespace {workflow.namespace}")


async def _store(settings: Settings) -> Check:
    from skillweave.cli.compose import open_store
    from skillweave.storage.identity import store_identity

    key = f"doctor/probe-{secrets.token_hex(8)}"
    where = f"the {settings.storage.backend} store"
    try:
        async with open_store(settings) as store:
            data = secrets.token_bytes(32)
            ref = await store.put_bytes(key, data)
            if await store.get_bytes(ref) != data:
                return Check("store", "fail", f"{where} gave back other bytes than written")
            await store.delete(key)
            identity = await store_identity(store)
    except Exception as exc:
        line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Check("store", "fail", f"{where}: {line}; check the STORAGE__ settings")
    return Check(
        "store",
        "ok",
        f"{where}, id {identity}, is readable and writable (every process of a deployment "
        "must show this id)",
    )


async def _manager(settings: Settings) -> Check:
    import httpx

    url = settings.sandbox.manager_url
    if not url:
        return Check("manager", "ok", "started in-process (SANDBOX__MANAGER_URL unset)")
    token = settings.sandbox.manager_token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else {}
    try:
        async with httpx.AsyncClient(base_url=url, timeout=_TIMEOUT) as client:
            answer = await client.get("/sandbox/pool", headers=headers)
    except httpx.HTTPError as exc:
        return Check(
            "manager",
            "fail",
            f"cannot reach {url} ({type(exc).__name__}): start it, or fix SANDBOX__MANAGER_URL",
        )
    if answer.status_code == 401:
        return Check(
            "manager",
            "fail",
            f"{url} refuses the token: SANDBOX__MANAGER_TOKEN must be the manager's",
        )
    if answer.is_error:
        return Check("manager", "fail", f"{url} answered {answer.status_code}")
    return Check("manager", "ok", f"{url} takes the token")


async def _model(settings: Settings) -> Check:
    import httpx

    model = settings.model
    if model.provider == "scripted":
        return Check(
            "model",
            "warn",
            f"the scripted model ({model.name}) answers from a script: set MODEL__PROVIDER, "
            "MODEL__NAME and MODEL__API_KEY for a real one",
        )
    if model.api_key is None:
        return Check(
            "model",
            "fail",
            f"MODEL__PROVIDER={model.provider} needs MODEL__API_KEY (and MODEL__NAME)",
        )
    default = (
        "https://api.openai.com/v1"
        if model.provider == "openai"
        else "https://api.anthropic.com/v1"
    )
    base = (model.base_url or default).rstrip("/")
    key = model.api_key.get_secret_value()
    headers = (
        {"Authorization": f"Bearer {key}"}
        if model.provider == "openai"
        else {"x-api-key": key, "anthropic-version": "2023-06-01"}
    )
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
            answer = await client.get(f"{base}/models", headers=headers)
    except httpx.HTTPError as exc:
        return Check("model", "fail", f"cannot reach {base} ({type(exc).__name__})")
    if answer.status_code in (401, 403):
        return Check("model", "fail", f"{base} refuses MODEL__API_KEY ({answer.status_code})")
    if answer.is_error:
        return Check("model", "warn", f"{base}/models answered {answer.status_code}")
    return Check("model", "ok", f"{model.provider}:{model.name} at {base}")


def _probe_isolation(choice: str) -> str:
    """The mode an executor started here with `choice` would run scripts in (it probes a
    sandbox, as an executor does at start)."""
    import tempfile
    from pathlib import Path

    from sandbox_executor.isolation import plan_isolation, write_etc
    from sandbox_executor.settings import ExecutorSettings

    with tempfile.TemporaryDirectory(prefix="skillweave-doctor-") as temp:
        folder = Path(temp)
        executor = ExecutorSettings(isolation=choice)  # type: ignore[arg-type]
        etc = write_etc(folder / "etc", None)
        return plan_isolation(executor, user=None, etc_dir=etc, folder=folder).isolation


async def _isolation(settings: Settings) -> Check:
    if settings.sandbox.manager_url:
        return Check("isolation", "ok", "decided by the manager at SANDBOX__MANAGER_URL")
    from sandbox_executor.errors import IsolationUnavailableError
    from skillweave.sandbox.models import describe_isolation

    try:
        mode = await asyncio.to_thread(_probe_isolation, settings.sandbox.isolation)
    except IsolationUnavailableError as exc:
        return Check("isolation", "fail", str(exc))
    status: Status = "warn" if mode == "none" else "ok"
    return Check("isolation", status, describe_isolation(mode))


CHECKS: tuple[Callable[[Settings], Awaitable[Check]], ...] = (
    _temporal,
    _store,
    _manager,
    _model,
    _isolation,
)


async def run_checks(settings: Settings) -> list[Check]:
    """Every check, in order, against `settings`."""
    return [await check(settings) for check in CHECKS]


def doctor(as_json: JsonOption = False) -> None:
    """Check that jobs can run with this configuration: Temporal, the store, the manager,
    the model and script isolation, one line each with what to do."""
    settings = get_settings()
    with errors():
        checks = asyncio.run(run_checks(settings))
    if as_json:
        dump([{"check": c.name, "status": c.status, "detail": c.detail} for c in checks])
    else:
        styles = {"ok": "green", "warn": "yellow", "fail": "bold red"}
        for check in checks:
            line = Text(f"{check.status:<5}", style=styles[check.status])
            line.append(terminal_safe(f"{check.name}: {check.detail}"))
            out.print(line, soft_wrap=True)
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(EXIT_PROBLEM)


@temporal_app.command("setup")
def setup() -> None:
    """Register skillweave's search attributes in the configured namespace (idempotent)."""
    from skillweave.engines.temporal import connect
    from skillweave.engines.temporal_setup import register_search_attributes

    workflow = get_settings().workflow

    async def register() -> list[str]:
        client = await connect(workflow)
        return await register_search_attributes(client, workflow.namespace)

    with errors():
        added = asyncio.run(register())
    if added:
        out.print(
            Text(terminal_safe(f"registered in {workflow.namespace}: {', '.join(added)}")),
            soft_wrap=True,
        )
    else:
        out.print(
            Text(terminal_safe(f"{workflow.namespace}: every search attribute is registered")),
            soft_wrap=True,
        )
