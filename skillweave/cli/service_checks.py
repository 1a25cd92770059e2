"""The checks of what a process works with, behind ``skillweave doctor`` and the start of every
long-running command (:mod:`skillweave.cli.checks` decides which each role runs, runs them and
prints them; what they share is :mod:`skillweave.cli.probe`).

Each answers one question about this process's configuration with one :class:`Check`:

- **temporal** (when ``WORKFLOW__EXECUTION_ENGINE=temporal``, the default): reachable (else
  both remedies: start a server, or the direct engine), the namespace exists, skillweave's
  search attributes are registered with their types;
- **store**: an object written, read back and removed; the store's id;
- **workers** (temporal): the workers of the task queue and their stores, read from its roll
  call (``skillweave.engines.temporal.Roll``): a run started here would wait for ever when
  only workers of other stores poll; a worker is told when workers of other stores share its
  queue;
- **manager** (when ``SANDBOX__MANAGER_URL`` is set): reachable, and takes the configured token;
- **agree**: what must be the same across processes is: the manager's store is this one, and
  its script limit (``SANDBOX__TIMEOUT_SECONDS``, decided by the manager alone) fits in a script
  step (``WORKFLOW__SCRIPT_TIMEOUT_SECONDS``, a worker's: a run runs under its worker's limits,
  ``skillweave.engines.contract``). A client of the Temporal engine (``run``, the API) compares
  no limit, and is told when it sets one of the workers' (:func:`client_limits_check`): they
  have no effect there. The direct engine is its own worker;
- **isolation** (where scripts run: a manager, or a process that starts one in-process): the
  mode scripts would run in, probed as an executor would.

A failure that may pass by itself (a service not reachable *yet*) is ``transient``. The store
is asked once per run of the checks (:attr:`~skillweave.cli.probe.Probe.store_asked`): the
checks that only compare its id read it when no earlier check did.
"""

from __future__ import annotations

import asyncio
import secrets

from skillweave.cli.probe import TIMEOUT, Check, Probe, Role, Status, first_line
from skillweave.cli.startup import temporal_address_problem
from skillweave.config import Settings, worker_limits_set
from skillweave.errors import BucketNotFoundError, ConfigError
from skillweave.storage import describe_store, not_up_yet
from skillweave.terminal import counted

__all__ = [
    "agree_check",
    "client_limits_check",
    "isolation_check",
    "manager_check",
    "store_check",
    "temporal_check",
    "workers_check",
]

_DIRECT = "WORKFLOW__EXECUTION_ENGINE=direct"


async def temporal_check(probe: Probe) -> Check:
    settings = probe.settings
    if settings.workflow.execution_engine != "temporal":
        return Check("temporal", "ok", "not used (WORKFLOW__EXECUTION_ENGINE=direct)")
    from skillweave.engines.temporal import (
        TemporalUnreachableError,
        connect,
        search_attribute_problems,
    )

    workflow = settings.workflow
    if (problem := temporal_address_problem(workflow.temporal_address)) is not None:
        return Check("temporal", "fail", problem)
    try:
        client = await asyncio.wait_for(connect(workflow), TIMEOUT)
    except TemporalUnreachableError as exc:
        # A worker is Temporal's whatever the engine; the others could do without it. A
        # service starting waits for it (skillweave.cli.startup).
        why = str(exc) if probe.role == "worker" else exc.or_direct(_DIRECT)
        return Check("temporal", "fail", why, transient=True)
    except TimeoutError:
        return Check("temporal", "fail", f"no answer in {TIMEOUT:g} s", transient=True)
    except ConfigError as exc:  # not HOST:PORT, or no such namespace: will not pass by itself
        return Check("temporal", "fail", str(exc))
    try:
        problems = await search_attribute_problems(client, workflow.namespace)
    except Exception as exc:  # RPCError: the namespace is not ours to read
        return Check(
            "temporal",
            "fail",
            f"namespace {workflow.namespace!r} at {workflow.temporal_address}: "
            f"{first_line(exc)}; check its permissions or set WORKFLOW__NAMESPACE",
        )
    if problems:
        return Check(
            "temporal",
            "fail",
            f"{'; '.join(problems)}: run `skillweave temporal setup` (runs started now "
            "would never run)",
        )
    return Check("temporal", "ok", f"{workflow.temporal_address}, namespace {workflow.namespace}")


async def store_check(probe: Probe) -> Check:
    from skillweave.cli.compose import open_store
    from skillweave.storage import store_identity

    settings = probe.settings
    probe.store_asked = True
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
            created = getattr(store, "created", None)  # an S3 store that made its bucket now
    except BucketNotFoundError as exc:  # never passes by itself; the line says what to do
        return Check("store", "fail", str(exc), transient=False)
    except Exception as exc:
        if (why := not_up_yet(exc)) is not None:  # one short line, not the client's whole chain
            return Check(
                "store",
                "fail",
                f"{describe_store(settings.storage)} is not up ({why}): start it, or check the "
                "STORAGE__ settings",
                transient=True,
            )
        return Check("store", "fail", f"{where}: {first_line(exc)}; check the STORAGE__ settings")
    if created:  # said here: the CLI keeps library log lines quiet
        return Check("store", "warn", f"{created} (every process of a deployment must show it)")
    return Check(
        "store",
        "ok",
        f"{where}, id {probe.store_id}, is readable and writable (every process of a "
        "deployment must show this id)",
    )


async def _read_store_id(probe: Probe) -> None:
    """The store's id without the write probe (a check that only compares it), unless the
    store was asked already (by :func:`store_check`, or by an earlier check)."""
    from skillweave.cli.compose import open_store
    from skillweave.storage import store_identity

    if probe.store_asked:
        return
    probe.store_asked = True
    try:
        async with open_store(probe.settings) as store:
            probe.store_id = await store_identity(store)
    except Exception:  # not compared then: the store's own failure shows where it is used
        probe.store_id = None


async def manager_check(probe: Probe) -> Check:
    import httpx

    sandbox = probe.settings.sandbox
    url = sandbox.manager_url
    if not url:
        return Check("manager", "ok", "started in-process (SANDBOX__MANAGER_URL unset)")
    token = sandbox.manager_token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else {}
    try:
        async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT) as client:
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
        probe.manager_refused = True  # agree_check says so, rather than asking again
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


async def agree_check(probe: Probe) -> Check:
    settings = probe.settings
    problems = []
    remote = settings.sandbox.manager_url
    if remote and probe.store_id is None:
        await _read_store_id(probe)
    if remote and probe.manager is None:
        why = "refused this process's token" if probe.manager_refused else "did not answer"
        return Check("agree", "warn", f"not compared: the manager at {remote} {why}")
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
    # The manager and the MCP front door run scripts themselves, never in a Temporal step; a
    # client of the Temporal engine starts steps that run under its workers' limits.
    starts_only = _starts_only(settings, probe.role)
    uses_steps = (
        settings.workflow.execution_engine == "temporal"
        and probe.role not in ("manager", "mcp")
        and not starts_only
    )
    if uses_steps and isinstance(limit, int | float) and limit >= step:
        problems.append(
            f"{where} is not under WORKFLOW__SCRIPT_TIMEOUT_SECONDS ({step:g} s), the script "
            "step of a worker with these settings (runs run under their worker's limits): a "
            "long script would be cut off and run again; raise the second or lower the first"
        )
    if problems:
        return Check("agree", "fail", "; ".join(problems))
    if starts_only:
        if (told := client_limits_check(settings)) is not None:
            return told
        if not remote:
            return Check("agree", "ok", "scripts run on the workers, under their limits")
        return Check("agree", "ok", "the manager's store fits (script limits are the workers')")
    if not remote:
        return Check("agree", "ok", f"scripts run in-process, limit {limit:g} s")
    return Check("agree", "ok", f"the manager's store and script limit ({limit} s) fit")


def _starts_only(settings: Settings, role: Role) -> bool:
    """Whether `role` only starts runs that workers run (a client of the Temporal engine)."""
    return role in ("run", "api") and settings.workflow.execution_engine == "temporal"


def client_limits_check(settings: Settings) -> Check | None:
    """For a client of the Temporal engine (``run``, the API) that sets the workers' limits
    (``WORKFLOW__*_TIMEOUT_SECONDS``, ``WORKFLOW__ACTIVITY_MAX_ATTEMPTS``): the ``agree``
    warning that they have no effect there (a run runs under its worker's); else None."""
    names = worker_limits_set(settings.workflow)
    if not names:
        return None
    has, it = ("has", "it") if len(names) == 1 else ("have", "them")
    return Check(
        "agree",
        "warn",
        f"{', '.join(names)} {has} no effect here: a run runs under the limits of the worker "
        f"that runs it (the workers' settings); set {it} on the workers, not on a client",
    )


def _probe_isolation(choice: str) -> str:
    """The mode an executor started here with `choice` would run scripts in, probed as its
    pool would (:func:`sandbox_executor.isolation.probe_isolation`)."""
    from sandbox_executor.isolation import probe_isolation
    from sandbox_executor.settings import ExecutorSettings

    return probe_isolation(ExecutorSettings(isolation=choice)).isolation  # type: ignore[arg-type]


async def isolation_check(probe: Probe) -> Check:
    from skillweave.sandbox import describe_isolation, isolation_of_health

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


async def workers_check(probe: Probe) -> Check:
    from temporalio.service import RPCError

    from skillweave.engines.temporal import TemporalUnreachableError, connect, read_roll

    workflow = probe.settings.workflow
    if workflow.execution_engine != "temporal":
        return Check("workers", "ok", "not used (WORKFLOW__EXECUTION_ENGINE=direct)")
    if probe.store_id is None:
        await _read_store_id(probe)
    if probe.store_id is None:
        return Check("workers", "warn", "not read: this process's store id cannot be read")
    try:
        client = await asyncio.wait_for(connect(workflow), TIMEOUT)
        roll = await asyncio.wait_for(
            read_roll(client, workflow.task_queue, probe.store_id), TIMEOUT
        )
    except TemporalUnreachableError:
        return Check("workers", "warn", "not read: Temporal is not reachable", transient=True)
    except (ConfigError, RPCError, TimeoutError) as exc:
        return Check("workers", "warn", f"not read: {first_line(exc)}", transient=True)
    store, queue, others = probe.store_id, workflow.task_queue, roll.other_stores()
    theirs = ", ".join(others)
    if probe.role == "worker":  # it does not poll yet: the others are all there is
        if others:
            return Check(
                "workers",
                "warn",
                f"workers of store {theirs} poll task queue {queue!r} too; this worker works "
                f"on {store}: runs started against {theirs} never run here, nor {store}'s there",
            )
        return Check("workers", "ok", f"no worker of another store polls task queue {queue!r}")
    if roll.stranded():  # workers may yet start on this store: said, not stopped at
        return Check(
            "workers",
            "fail",
            f"{roll.refusal()} (runs started here would wait for ever)",
            transient=True,
        )
    serving = len(roll.serving)
    if not serving:
        return Check(
            "workers",
            "warn",
            f"no worker polls task queue {roll.routed!r} yet: runs started now wait for one "
            "(`skillweave worker` with this process's STORAGE__ settings starts one)",
            transient=True,
        )
    polls = "polls" if serving == 1 else "poll"
    line = f"{counted(serving, 'worker')} on store {store} {polls} task queue {roll.routed!r}"
    if others:
        return Check(
            "workers",
            "warn",
            f"{line}; workers of store {theirs} poll {queue!r} too: runs started against "
            "one store never run on the other's workers (give every process one STORAGE__)",
        )
    return Check("workers", "ok", line)
