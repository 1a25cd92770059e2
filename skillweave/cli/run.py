"""``skillweave run`` and ``skillweave demo``: one agent job from the command line.

:func:`open_services` is the one composition of a job's side effects: the model provider, the
settings' artifact store, an MCP manager (the configured one, or one started in this process
with a local warm pool, via :func:`~skillweave.cli.sandbox.manager_for`) and
``AgentServices``. The direct engine runs on it (:func:`run_job`), and so do the activities of
a Temporal worker (``skillweave worker`` and the embedded stack, :mod:`skillweave.cli.stack`).
:func:`run_temporal_job` runs a job on a Temporal server instead (the ``--file`` inputs are
uploaded to the store the worker shares). Both go through :func:`follow_job`: events go to a
callback as the job makes them, and everything opened is closed at the end, also when the job
fails or the command is interrupted (a direct job is cancelled first; a Temporal job is
durable and keeps running). A Temporal job is followed through
:meth:`~skillweave.engines.temporal.TemporalEngine.follow`, so a follower outlives the job's
workers: while none answers it shows a "waiting for a worker" note and goes on; it gives up
only after ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` (the CLI then exits with
:data:`EXIT_NO_WORKER`, distinct from a job that failed).

The rest is what the command shows: :class:`EventView` (one line per event, a spinner on a
terminal), :func:`print_result` (answer, usage, status, output artifacts) and
:func:`copy_outputs` (``--out DIR``). Every text of a job (model text, tool names and
arguments, skill names, script and error messages, artifact keys made of script file names)
is shown through :func:`~skillweave.terminal.terminal_safe`, in a ``rich.text.Text``. The CLI
module (``skillweave.cli``) parses the options and turns errors into exit codes; it imports
this module only when a job runs, since the manager pulls in the web stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.style import StyleType
from rich.text import Text

from skillweave.agent.events import AgentEvent
from skillweave.agent.spec import AgentSpec, parse_agent_spec
from skillweave.cli.sandbox import manager_for
from skillweave.config import ExecutionEngine, ModelSettings, Settings, WorkflowSettings
from skillweave.engines import AgentServices, DirectEngine, Engine, JobRequest, JobResult
from skillweave.errors import AgentSpecError, ConfigError
from skillweave.llm import ModelProvider, open_provider, parse_model_option
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillRegistry
from skillweave.storage import LocalArtifactStore, keys, open_store
from skillweave.storage.base import ArtifactRef, ArtifactStore
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    # temporalio is imported only when a job runs on Temporal (it takes a quarter second).
    from skillweave.engines.temporal import FollowNote, TemporalEngine

__all__ = [
    "EXIT_NO_WORKER",
    "REAL_MODEL_HINT",
    "EventView",
    "JobRun",
    "LocalServices",
    "check_files",
    "check_job_inputs",
    "choose_engine",
    "choose_model",
    "copy_outputs",
    "follow_job",
    "interrupt_cancels",
    "load_agent",
    "new_job_id",
    "open_services",
    "print_result",
    "run_job",
    "run_temporal_job",
    "scripted_note",
    "store_of",
]

POOL_TARGET: Final = 2
"""Warm sandboxes of an in-process manager: a skill's ``--help-json`` run and its first script
run come back to back, so a second ready sandbox saves a cold start."""

VERSION_CHARS: Final = 12
_NAMES_SHOWN: Final = 20
EXIT_NO_WORKER: Final = 75
"""Exit code of a follower that gave up waiting for a worker: the job may still be running
(sysexits' EX_TEMPFAIL, "try again later"; 1 means the job failed)."""
REAL_MODEL_HINT: Final = (
    "set MODEL__PROVIDER/MODEL__NAME/MODEL__API_KEY or --model openai:gpt-4o-mini to use one"
)


# --- choices made before anything starts ---------------------------------------------------


def choose_engine(option: ExecutionEngine | None, settings: WorkflowSettings) -> ExecutionEngine:
    """The engine to run the job on: ``--engine``, else ``WORKFLOW__EXECUTION_ENGINE``."""
    return option if option is not None else settings.execution_engine


def load_agent(path: Path | None, registry: SkillRegistry) -> AgentSpec:
    """The agent spec in `path` (the default agent when None), checked against `registry`.

    Raises:
        AgentSpecError: the file cannot be read, is not a valid spec, or names a skill the
            library does not have (the message names the file).
    """
    if path is None:
        return AgentSpec()
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentSpecError(source, "no such agent spec file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentSpecError(source, f"cannot read it: {exc}") from None
    spec = parse_agent_spec(text, source=source)
    unknown = [name for name in spec.skills or () if name not in registry]
    if unknown:
        names = [skill.name for skill in registry]
        known = ", ".join(names[:_NAMES_SHOWN]) or "none"
        if len(names) > _NAMES_SHOWN:
            known += f" and {len(names) - _NAMES_SHOWN} more"
        raise AgentSpecError(source, f"skills: unknown skill {unknown[0]!r} (known: {known})")
    return spec


def choose_model(
    settings: ModelSettings,
    *,
    option: str | None,
    spec: AgentSpec,
    spec_path: Path | None = None,
) -> ModelSettings:
    """The model settings of the job: ``--model``, else the agent spec's ``model``, else
    ``MODEL__*``. A scripted model named by the spec with a relative path is found next to
    the spec file.

    Raises:
        ConfigError: ``--model`` is not ``PROVIDER:NAME``.
        AgentSpecError: the spec's ``model`` is not.
    """
    if option is not None:
        provider, name = parse_model_option(option)
    elif spec.model is not None:
        source = str(spec_path) if spec_path is not None else "agent spec"
        try:
            provider, name = parse_model_option(spec.model)
        except ConfigError:
            raise AgentSpecError(
                source,
                f"model {spec.model!r}: expected PROVIDER:NAME with provider openai, "
                "anthropic or scripted",
            ) from None
        if provider == "scripted" and spec_path is not None and not Path(name).is_absolute():
            name = str(spec_path.parent / name)
    else:
        return settings
    update: dict[str, object] = {"provider": provider, "name": name}
    if provider != settings.provider:
        # MODEL__BASE_URL belongs to the configured provider's API; the key is kept, since
        # `MODEL__API_KEY=… skillweave run --model openai:…` is how a key is usually given.
        update["base_url"] = None
    return settings.model_copy(update=update)


def scripted_note(model: ModelSettings) -> str | None:
    """The warning that a scripted model is no model, or None for a real one."""
    if model.provider != "scripted":
        return None
    return f"model: scripted (replaying {model.name}) — not a real model; {REAL_MODEL_HINT}"


def new_job_id() -> str:
    """``job-YYYYmmdd-HHMMSS-<6 hex>``: sortable by start time, unique enough for one store."""
    return f"job-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def check_files(files: Sequence[Path]) -> None:
    """The attached files exist and have different names.

    Raises:
        ConfigError: a file is missing, or two files share a name.
    """
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise ConfigError(f"--file: no such file: {', '.join(missing)}")
    seen: dict[str, Path] = {}
    for path in files:
        if path.name in seen:
            raise ConfigError(
                f"--file: {seen[path.name]} and {path} would both be inputs/{path.name}; "
                "rename one (the job sees attached files by name)"
            )
        seen[path.name] = path


def check_job_inputs(model: ModelSettings, files: Sequence[Path]) -> None:
    """What can be checked before a job starts: the attached files, and a scripted model's
    script.

    Raises:
        ConfigError: a file is missing, two files share a name, or the scripted model's
            script is not a file.
    """
    check_files(files)
    if model.provider == "scripted" and not Path(model.name).is_file():
        raise ConfigError(
            f"no model to run the job: the model is scripted (MODEL__PROVIDER) and its script "
            f"{model.name!r} is not a file; {REAL_MODEL_HINT}, or --model scripted:FILE.yaml "
            "to replay a script"
        )


# --- the job --------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRun:
    """A finished job: how it ended, the model it used, the files its outputs were copied
    to, the folder of a local store (None for S3), and its Temporal UI page (None for the
    direct engine)."""

    result: JobResult
    model: str
    copied: tuple[Path, ...] = ()
    store_root: Path | None = None
    ui_url: str | None = None


@contextlib.contextmanager
def interrupt_cancels(task: asyncio.Task[object] | None, *, stop: bool = False) -> Iterator[None]:
    """Ctrl-C cancels `task`, also while an in-process manager runs; with `stop`, SIGTERM
    does too (a service stopped by its supervisor shuts down in order).

    uvicorn (under the in-process manager) takes SIGINT for itself and would stop the manager
    under the running job; this handler comes later, so Ctrl-C cancels the job instead and the
    manager is stopped in order, after it.
    """
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM) if stop else (signal.SIGINT,)
    installed: list[signal.Signals] = []
    try:
        if task is None:
            raise NotImplementedError
        for number in signals:
            loop.add_signal_handler(number, task.cancel)
            installed.append(number)
    except (NotImplementedError, RuntimeError, ValueError):  # no signals here (thread, OS)
        pass
    try:
        yield
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


@dataclass(frozen=True)
class LocalServices:
    """What :func:`open_services` composed: the services, and the manager they talk to."""

    services: AgentServices
    manager_url: str


@contextlib.asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    registry: SkillRegistry,
    model: ModelSettings,
    pool_target: int = POOL_TARGET,
) -> AsyncIterator[LocalServices]:
    """The side effects of agent jobs, composed once for every engine: the model provider,
    the settings' artifact store, a manager (``SANDBOX__MANAGER_URL``, or one started here
    with a local warm pool of `pool_target`) and its client. The direct engine runs on them,
    and so does a Temporal worker's activities. Everything is closed when the context ends,
    the manager before the store.

    Raises:
        ConfigError: the model cannot be opened, or a manager URL comes without its token.
    """
    async with contextlib.AsyncExitStack() as stack:
        provider: ModelProvider = open_provider(model)
        stack.push_async_callback(provider.aclose)
        store = open_store(settings.storage)
        if (close_store := getattr(store, "aclose", None)) is not None:
            stack.push_async_callback(close_store)
        url, token = await stack.enter_async_context(manager_for(settings, pool_target=pool_target))
        sandbox = await stack.enter_async_context(SandboxClient(url, token=token))
        services = AgentServices(
            settings=settings,
            registry=registry,
            store=store,
            provider=provider,
            model=provider.name.partition(":")[2] or provider.name,
            sandbox=sandbox,
        )
        yield LocalServices(services=services, manager_url=url)


def uploaded_skills_folder(settings: Settings, role: str) -> Path:
    """This process's folder for unpacked uploaded skills (``SKILLS__UPLOADED_DIR/ROLE-PID``),
    after removing the folders of processes that are gone (a killed worker leaves its own)."""
    root = settings.skills.uploaded_dir.expanduser()
    if root.is_dir():
        for folder in root.iterdir():
            pid = folder.name.removesuffix(".pinned").rpartition("-")[2]
            if folder.is_dir() and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)
    return root / f"{role}-{os.getpid()}"


def with_own_uploaded_folder(settings: Settings, role: str) -> Settings:
    """`settings` with this process's folder (:func:`uploaded_skills_folder`) for uploaded
    skills, and so ``ROLE-PID.pinned`` for the pinned versions it unpacks."""
    dest = uploaded_skills_folder(settings, role)
    skills = settings.skills.model_copy(update={"uploaded_dir": dest})
    return settings.model_copy(update={"skills": skills})


def remove_unpacked_skills(settings: Settings) -> None:
    """Remove what this process unpacked: its uploaded skills and pinned versions."""
    shutil.rmtree(settings.skills.uploaded_dir.expanduser(), ignore_errors=True)
    shutil.rmtree(settings.skills.pinned_dir, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.asynccontextmanager
async def store_of(settings: Settings) -> AsyncIterator[ArtifactStore]:
    """The settings' artifact store, closed when the context ends."""
    store = open_store(settings.storage)
    try:
        yield store
    finally:
        if (close_store := getattr(store, "aclose", None)) is not None:
            await close_store()


async def run_job(
    settings: Settings,
    *,
    task: str,
    registry: SkillRegistry,
    agent: AgentSpec,
    model: ModelSettings,
    files: Sequence[Path] = (),
    job_id: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    out_dir: Path | None = None,
    pool_target: int = POOL_TARGET,
) -> JobRun:
    """Run one agent job on the direct engine and return how it ended.

    Args:
        settings: storage, sandbox and skills sections (``settings.model`` is not read: the
            caller resolves `model`, see :func:`choose_model`).
        task: what the user asks.
        registry: the skill library the job uses.
        agent: the agent spec.
        model: the model settings (provider, name, key).
        files: files attached to the task, uploaded as ``runs/{job_id}/inputs/{name}``.
        job_id: the job's id; default :func:`new_job_id`.
        on_event: called with each event as the job makes it.
        out_dir: copy the output artifacts into this folder (see :func:`copy_outputs`).
        pool_target: warm sandboxes of an in-process manager.

    Raises:
        ConfigError: a missing or duplicate file, or a model that cannot be opened.
        asyncio.CancelledError: the job was cancelled (Ctrl-C); it was stopped first.
    """
    check_job_inputs(model, files)
    job_id = job_id or new_job_id()
    async with open_services(
        settings, registry=registry, model=model, pool_target=pool_target
    ) as local:
        services = local.services
        inputs = [await _upload(services.store, job_id, path) for path in files]
        engine = DirectEngine(
            services,
            catalog_mode=settings.skills.catalog_mode,
            catalog_top_k=settings.skills.catalog_top_k,
        )
        request = JobRequest(job_id=job_id, task=task, agent=agent, inputs=tuple(inputs))
        with interrupt_cancels(asyncio.current_task()):
            return await follow_job(
                engine,
                request,
                store=services.store,
                model=services.provider.name,
                on_event=on_event,
                out_dir=out_dir,
            )


async def run_temporal_job(
    settings: Settings,
    *,
    engine: TemporalEngine,
    store: ArtifactStore,
    task: str,
    agent: AgentSpec,
    files: Sequence[Path] = (),
    job_id: str | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    on_note: Callable[[FollowNote], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    out_dir: Path | None = None,
    model: str = "set by the worker",
    detach: bool = True,
    check_workers: bool = True,
) -> JobRun:
    """Run one agent job on Temporal and return how it ended.

    The job runs on whichever worker polls ``engine``'s task queue, with that worker's model;
    the attached files go to `store`, which must be the worker's store too.

    Args:
        settings: the workflow section (the UI link).
        engine: a connected Temporal engine.
        store: where the inputs go and the outputs are copied from.
        task: what the user asks.
        agent: the agent spec.
        files: files attached to the task, uploaded as ``runs/{job_id}/inputs/{name}``.
        job_id: the job's id; default :func:`new_job_id`.
        on_event: called with each event as the job makes it.
        on_note: called with what the follower notes between events (waiting for a worker,
            a worker answering again).
        on_start: called with the job's id once its workflow has started.
        out_dir: copy the output artifacts into this folder.
        model: what to call the model in the result.
        detach: when interrupted, leave the job running (it is durable) rather than cancel it.
        check_workers: refuse to start the job when no worker polls the task queue (a job
            would wait for one); off for a worker known to be starting in this process.

    Raises:
        ConfigError: a missing or duplicate file, or no worker polls the task queue.
        NoWorkerError: no worker answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` while
            the job was followed; it may still be running.
        asyncio.CancelledError: interrupted (Ctrl-C); the job keeps running when `detach`.
    """
    from skillweave.engines.temporal import ui_link

    check_files(files)
    job_id = job_id or new_job_id()
    if check_workers and await engine.workers() == 0:
        raise ConfigError(
            f"no worker polls task queue {engine.task_queue!r} on "
            f"{settings.workflow.temporal_address} (namespace {engine.namespace!r}): start one "
            "with `skillweave worker`, or the whole stack with `skillweave dev`"
        )
    inputs = [await _upload(store, job_id, path) for path in files]
    request = JobRequest(job_id=job_id, task=task, agent=agent, inputs=tuple(inputs))
    link = ui_link(settings.workflow.ui_url, engine.namespace, job_id)
    return await follow_job(
        engine,
        request,
        store=store,
        model=model,
        on_event=on_event,
        on_start=on_start,
        out_dir=out_dir,
        cancel_on_exit=not detach,
        ui_url=link,
        follow=engine.follow,
        on_note=on_note,
    )


async def follow_job(
    engine: Engine,
    request: JobRequest,
    *,
    store: ArtifactStore,
    model: str,
    on_event: Callable[[AgentEvent], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    out_dir: Path | None = None,
    cancel_on_exit: bool = True,
    ui_url: str | None = None,
    follow: Callable[[str], AsyncIterator[AgentEvent | FollowNote]] | None = None,
    on_note: Callable[[FollowNote], None] | None = None,
) -> JobRun:
    """Start `request` on `engine`, pass its events to `on_event`, and return how it ended
    (its outputs copied to `out_dir`). When interrupted, or when `on_event` fails, the job
    is cancelled first if `cancel_on_exit`. `follow` reads the job's events with notes
    between them (which go to `on_note`); default: the engine's ``events``."""
    job_id = await engine.start(request)
    if on_start is not None:
        on_start(job_id)
    try:
        items = follow(job_id) if follow is not None else engine.events(job_id)
        async for item in items:
            if isinstance(item, AgentEvent):
                if on_event is not None:
                    on_event(item)
            elif on_note is not None:
                on_note(item)
        result = await engine.result(job_id)
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            # Interrupted while waiting for the result, which the engine does not re-raise.
            raise asyncio.CancelledError
    except BaseException:
        # Stop the job before what it runs on (manager, store, worker) closes under it.
        if cancel_on_exit:
            await engine.cancel(job_id)
        raise
    copied = await copy_outputs(store, result.outputs, out_dir) if out_dir else []
    return JobRun(
        result=result,
        model=model,
        copied=tuple(copied),
        store_root=store.root if isinstance(store, LocalArtifactStore) else None,
        ui_url=ui_url,
    )


async def _upload(store: ArtifactStore, job_id: str, path: Path) -> ArtifactRef:
    return await store.put_file(keys.run_input_key(job_id, path.name), str(path))


async def copy_outputs(
    store: ArtifactStore, outputs: Sequence[ArtifactRef], dest: Path
) -> list[Path]:
    """Copy `outputs` into `dest` by file name; a name met again gets a counter prefix
    (``2-stats.json``). Returns the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    written: list[Path] = []
    for ref in outputs:
        name = ref.key.rsplit("/", 1)[-1]
        candidate, counter = name, 1
        while candidate in used:
            counter += 1
            candidate = f"{counter}-{name}"
        used.add(candidate)
        target = dest / candidate
        await store.get_file(ref, str(target))
        written.append(target)
    return written


# --- what the command shows -----------------------------------------------------------------


def _tokens(count: int) -> str:
    return f"{count:,}"


class EventView:
    """The live view of a job on `console`: one line per event, and on a terminal a spinner
    that says what the job is waiting for. Use as a context manager around the job."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None

    def __enter__(self) -> EventView:
        if self.console.is_terminal:
            self._status = self.console.status("starting the job…", spinner="dots")
            self._status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, event: AgentEvent) -> None:
        self.console.print(self.line(event), soft_wrap=True)
        if self._status is not None:
            self._status.update(self._waiting(event))

    def note(self, note: FollowNote) -> None:
        """A note of the follower between events: a line, and the spinner says so."""
        self.console.print(self.note_line(note), soft_wrap=True)
        if self._status is not None and note.kind == "waiting_for_worker":
            self._status.update(f"waiting for a worker ({note.waited_seconds:.0f} s)…")
        elif self._status is not None and note.kind == "worker_answered":
            self._status.update("a worker answered; following the job…")

    @staticmethod
    def note_line(note: FollowNote) -> Text:
        """A follower's note as one line: not an event of the job, so no turn."""
        text = Text()
        match note.kind:
            case "waiting_for_worker":
                text.append("waiting for a worker", style="bold yellow")
                text.append(
                    terminal_safe(
                        f" · none answered on task queue {note.task_queue!r} for "
                        f"{note.waited_seconds:.0f} s; the job goes on when one polls"
                    )
                )
            case "worker_answered":
                text.append("a worker answered", style="bold")
                text.append(f" · after {note.waited_seconds:.0f} s without one", style="dim")
            case "events_dropped":
                text.append(f"({note.dropped} earlier events are no longer kept)", style="dim")
        return text

    @staticmethod
    def _waiting(event: AgentEvent) -> str:
        if event.kind == "model_called":
            if event.detail == "answer":
                return "finishing…"
            return f"turn {event.turn}: running the tool calls…"
        if event.kind == "job_finished":
            return "closing…"
        return f"turn {event.turn + 1}: waiting for the model…"

    @staticmethod
    def line(event: AgentEvent) -> Text:
        """One event as one line: the turn, what happened, and its details."""
        label, style = _LABELS[event.kind]
        text = Text()
        text.append(f"turn {event.turn:>2}  ", style="dim")
        text.append(f"{label:<11}", style=style)
        text.append_text(_details(event))
        return text


_LABELS: Final[dict[str, tuple[str, str]]] = {
    "job_started": ("started", "bold"),
    "preloaded": ("preloaded", "bold cyan"),
    "model_called": ("model", "bold"),
    "skill_activated": ("activated", "bold cyan"),
    "resource_read": ("read", "bold"),
    "skills_searched": ("searched", "bold"),
    "script_ran": ("script", "bold"),
    "tool_refused": ("refused", "bold yellow"),
    "compacted": ("compacted", "bold"),
    "message_received": ("message", "bold"),
    "answered": ("answered", "bold green"),
    "approval_requested": ("approval?", "bold yellow"),
    "approval_decided": ("approval", "bold"),
    "job_finished": ("finished", "bold"),
}
_INDENT: Final = " " * 19


def _details(event: AgentEvent) -> Text:
    text = _SafeText()
    match event.kind:
        case "preloaded":
            text.append(event.skill or "", style="cyan")
        case "model_called":
            text.append(event.detail)
            if event.usage is not None:
                text.append(
                    f" · {_tokens(event.usage.input_tokens)} in / "
                    f"{_tokens(event.usage.output_tokens)} out tokens",
                    style="dim",
                )
        case "skill_activated":
            text.append(event.skill or "", style="cyan")
            if event.version:
                text.append(f" @ {event.version[:VERSION_CHARS]}", style="dim")
            if event.detail:
                text.append(f" · {event.detail}")
            if event.tools_registered:
                text.append(f" · tools: {', '.join(event.tools_registered)}")
        case "resource_read":
            text.append(f"{event.skill}/{event.detail}")
        case "skills_searched":
            text.append(repr(event.detail))
        case "script_ran":
            text.append(f"{event.skill} {event.detail}")
            if event.tool and event.tool != "run_skill_script":
                text.append(f" (as {event.tool})")
            ok = event.status == "succeeded"
            text.append(f" · {event.status}", style="green" if ok else "bold red")
            if event.duration_ms is not None:
                text.append(f" · {event.duration_ms} ms", style="dim")
            for ref in event.artifacts:
                text.append(f"\n{_INDENT}→ {ref.key} ({_tokens(ref.size)} bytes)")
        case "tool_refused":
            text.append(f"{event.tool}: {event.detail}", style="yellow")
        case "answered":
            first = event.detail.strip().splitlines()[0] if event.detail.strip() else ""
            text.append(first[:80] + ("…" if len(first) > 80 else ""), style="dim")
        case "job_finished":
            ok = event.status == "completed"
            text.append(event.status or "", style="bold green" if ok else "bold red")
            if event.detail:
                text.append(f" · {event.detail}")
        case _:
            text.append(event.detail)
    return text


class _SafeText(Text):
    """A ``Text`` whose every appended string is shown with its control characters escaped:
    an event's details are model and script text."""

    def append(self, text: str | Text, style: StyleType | None = None) -> _SafeText:
        if isinstance(text, str):
            text = terminal_safe(text)
        super().append(text, style)
        return self


def print_result(run: JobRun, *, out: Console) -> None:
    """The answer (in a panel), usage, status and reason, output artifacts, copied files;
    the model's and scripts' text with its control characters escaped."""
    result = run.result
    if result.answer:
        out.print(
            Panel(Text(terminal_safe(result.answer.strip())), title="answer", title_align="left")
        )
    usage = result.usage
    out.print(
        Text(
            terminal_safe(
                f"{result.turns} turns · {_tokens(usage.input_tokens)} tokens in / "
                f"{_tokens(usage.output_tokens)} out · {result.script_runs} script runs · "
                f"model {run.model}"
            )
        ),
        soft_wrap=True,
    )
    ok = result.status == "completed"
    status = Text()
    status.append(result.status, style="bold green" if ok else "bold red")
    if result.reason:
        status.append(terminal_safe(f": {result.reason}"), style="" if ok else "red")
    status.append(f" (job {terminal_safe(result.job_id)})", style="dim")
    out.print(status, soft_wrap=True)
    if result.outputs:
        out.print("output artifacts:")
        for ref in result.outputs:
            shown = f"  {ref.key} ({_tokens(ref.size)} bytes)"
            out.print(Text(terminal_safe(shown)), soft_wrap=True)
        if run.store_root is not None:
            shown = f"  in the store at {run.store_root}"
            out.print(Text(terminal_safe(shown), style="dim"), soft_wrap=True)
    for path in run.copied:
        out.print(Text(terminal_safe(f"copied → {path}")), soft_wrap=True)
    if run.ui_url is not None:
        out.print(Text(terminal_safe(f"Temporal UI: {run.ui_url}")), soft_wrap=True)
