"""One agent run from the command line: what it is given, and how it goes on an opened engine.

Before anything starts, the command reads and checks the run's inputs here: the agent spec
(:func:`load_agent`), the model (:func:`choose_model`, :func:`check_model`), the attached
files (:func:`check_files`) and its id (:func:`~skillweave.engines.run_id.new_run_id`).
:func:`run_agent` then runs it on an engine opened by :mod:`skillweave.cli.compose`,
whichever it is: the files are uploaded to the engine's store as the run's inputs, its events
go to callbacks as the run makes them (with a follower's notes between them), and its outputs
are copied out at the end (:func:`copy_outputs`). The command's live view and result are
:mod:`skillweave.cli.view`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from skillweave.agent import AgentEvent, AgentSpec, parse_agent_spec
from skillweave.cli.artifacts import output_names
from skillweave.cli.signals import interrupt_cancels
from skillweave.config import ModelSettings
from skillweave.engines import RunRequest, RunResult
from skillweave.errors import AgentSpecError, ConfigError
from skillweave.llm import resolve_model
from skillweave.skills import SkillRegistry, SkillVersionError, parse_pin
from skillweave.storage import ArtifactRef, ArtifactStore, LocalArtifactStore, keys

if TYPE_CHECKING:
    from skillweave.cli.compose import OpenedEngine
    from skillweave.engines import Engine
    from skillweave.engines.temporal import FollowNote

__all__ = [
    "REAL_MODEL_HINT",
    "FinishedRun",
    "check_files",
    "check_model",
    "choose_model",
    "copy_outputs",
    "load_agent",
    "run_agent",
    "scripted_note",
]

_NAMES_SHOWN: Final = 20
REAL_MODEL_HINT: Final = (
    "set MODEL__PROVIDER/MODEL__NAME/MODEL__API_KEY or --model openai:gpt-4o-mini to use one"
)


# --- choices made before anything starts ---------------------------------------------------


def read_agent_spec(path: Path) -> AgentSpec:
    """The agent spec (YAML) in `path`, for a run here and for the API alike.

    Raises:
        AgentSpecError: the file cannot be read or is not a valid spec (the message names it).
    """
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentSpecError(source, "no such agent spec file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentSpecError(source, f"cannot read it: {exc}") from None
    return parse_agent_spec(text, source=source)


def load_agent(path: Path | None, registry: SkillRegistry) -> AgentSpec:
    """The agent spec in `path` (the default agent when None), checked against `registry`.

    Raises:
        AgentSpecError: the file cannot be read, is not a valid spec, or names a skill the
            library does not have (the message names the file).
    """
    if path is None:
        return AgentSpec()
    source = str(path)
    spec = read_agent_spec(path)
    try:  # a pinned skill (name@VERSION) is checked by name; its version where it starts
        named = [parse_pin(entry).name for entry in spec.skills or ()]
    except SkillVersionError as exc:
        raise AgentSpecError(source, f"skills: {exc}") from None
    unknown = [name for name in named if not registry.resolve(name)]
    if unknown:
        if namesakes := registry.namesakes(unknown[0]):
            shown = ", ".join(namesakes)
            raise AgentSpecError(
                source, f"skills: {unknown[0]!r} is in several namespaces; name one of {shown}"
            )
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
    """The model settings of the run: those of ``--model``, else of the agent spec's ``model``
    (a profile or ``provider:name``), else ``MODEL__*``, as the default model of the returned
    settings (the profiles kept). A scripted model named by the spec with a relative path is
    found next to the spec file (`run_model` names it so). See
    :func:`skillweave.llm.factory.resolve_model` for what a ``provider:name`` takes from the
    default's settings: never a base URL or a key configured for another provider.

    Raises:
        ConfigError: ``--model`` does not resolve.
        AgentSpecError: the spec's ``model`` does not.
    """
    named = run_model(option=option, spec=spec, spec_path=spec_path)
    if named is None:
        return settings
    try:
        # The user's own --model or spec file, on the user's own machine: any script file.
        profile = resolve_model(settings, named, any_script=True)
    except ConfigError as exc:
        if option is not None:
            raise
        source = str(spec_path) if spec_path is not None else "agent spec"
        raise AgentSpecError(source, str(exc)) from None
    return settings.model_copy(update=profile.model_dump())


def run_model(*, option: str | None, spec: AgentSpec, spec_path: Path | None = None) -> str | None:
    """What the run's model is named, as it travels with the run: ``--model``, else the spec's
    ``model`` with a relative script path made absolute (next to the spec file), else None."""
    if option is not None:
        return option
    if spec.model is None:
        return None
    provider, colon, name = spec.model.partition(":")
    if colon and provider.strip().lower() == "scripted" and spec_path is not None:
        path = Path(name.strip())
        if not path.is_absolute():
            return f"scripted:{spec_path.parent / path}"
    return spec.model


def scripted_note(model: ModelSettings) -> str | None:
    """The warning that a scripted model is no model, or None for a real one."""
    if model.provider != "scripted":
        return None
    return f"model: scripted (replaying {model.name}) — not a real model; {REAL_MODEL_HINT}"


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
                "rename one (the run sees attached files by name)"
            )
        seen[path.name] = path


def check_model(model: ModelSettings) -> None:
    """A model this process executes runs with can run: a scripted model's script is a file.

    Raises:
        ConfigError: the scripted model's script is not a file.
    """
    if model.provider == "scripted" and not Path(model.name).is_file():
        raise ConfigError(
            f"no model to run the run: the model is scripted (MODEL__PROVIDER) and its script "
            f"{model.name!r} is not a file; {REAL_MODEL_HINT}, or --model scripted:FILE.yaml "
            "to replay a script"
        )


# --- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class FinishedRun:
    """A finished run: how it ended, the model it used, the files its outputs were copied
    to, the folder of a local store (None for S3), and its Temporal UI page (None for the
    direct engine)."""

    result: RunResult
    model: str
    copied: tuple[Path, ...] = ()
    store_root: Path | None = None
    ui_url: str | None = None


async def run_agent(
    opened: OpenedEngine[Engine],
    *,
    run_id: str,
    task: str,
    agent: AgentSpec,
    files: Sequence[Path] = (),
    out_dir: Path | None = None,
    on_event: Callable[[AgentEvent], None] | None = None,
    on_note: Callable[[FollowNote], None] | None = None,
    on_start: Callable[[str], None] | None = None,
) -> FinishedRun:
    """Run one agent run on `opened` and return how it ended.

    Ctrl-C cancels the command's task (also while an in-process manager runs). When it is
    interrupted, or when a callback fails, a run that runs in this process is cancelled
    before what it runs on closes; a run on workers elsewhere is durable and keeps running.

    Args:
        opened: the engine, its store and how to follow its runs.
        run_id: the run's id (see :func:`~skillweave.engines.run_id.new_run_id`).
        task: what the user asks.
        agent: the agent spec.
        files: files attached to the task, uploaded as ``runs/{run_id}/inputs/{name}``.
        out_dir: copy the output artifacts into this folder.
        on_event: called with each event as the run makes it.
        on_note: called with what the follower notes between events (waiting for a worker,
            a worker answering again).
        on_start: called with the run's id once it has started.

    Raises:
        ConfigError: a missing or duplicate file, or no worker polls the task queue of an
            engine whose runs run on workers elsewhere (the run would wait for one).
        NoWorkerError: no worker answered for ``WORKFLOW__FOLLOW_WORKER_WAIT_SECONDS`` while
            the run was followed; it may still be running.
        asyncio.CancelledError: interrupted (Ctrl-C).
    """
    check_files(files)
    engine, store = opened.engine, opened.store
    with interrupt_cancels(asyncio.current_task()):
        if opened.workers is not None and await opened.workers() == 0:
            workflow = opened.settings.workflow
            # A Temporal engine's queue is the configured one routed to its store.
            queue = getattr(engine, "task_queue", workflow.task_queue)
            raise ConfigError(
                f"no worker polls task queue {queue!r} on "
                f"{workflow.temporal_address} (namespace {workflow.namespace!r}): start one "
                "with `skillweave worker`, or the whole stack with `skillweave dev`"
            )
        inputs = [await _upload(store, run_id, path) for path in files]
        request = RunRequest(run_id=run_id, task=task, agent=agent, inputs=tuple(inputs))
        run_id = await engine.start(request)
        if on_start is not None:
            on_start(run_id)
        try:
            async for item in opened.follow(run_id):
                if isinstance(item, AgentEvent):
                    if on_event is not None:
                        on_event(item)
                elif on_note is not None:
                    on_note(item)
            result = await engine.result(run_id)
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                # Interrupted while waiting for the result, which the engine does not re-raise.
                raise asyncio.CancelledError
        except BaseException:
            # Stop the run before what it runs on (manager, store, worker) closes under it.
            if not opened.runs_elsewhere:
                await engine.cancel(run_id)
            raise
    copied = await copy_outputs(store, result.outputs, out_dir) if out_dir else []
    return FinishedRun(
        result=result,
        model=opened.model,
        copied=tuple(copied),
        store_root=store.root if isinstance(store, LocalArtifactStore) else None,
        ui_url=opened.ui_link(run_id),
    )


async def _upload(store: ArtifactStore, run_id: str, path: Path) -> ArtifactRef:
    return await store.put_file(keys.run_input_key(run_id, path.name), str(path))


async def copy_outputs(
    store: ArtifactStore, outputs: Sequence[ArtifactRef], dest: Path
) -> list[Path]:
    """Copy `outputs` into `dest` under the names ``artifacts.output_names`` gives them (a
    name met again gets a counter prefix, ``2-stats.json``). Returns the files written."""
    dest.mkdir(parents=True, exist_ok=True)
    by_key = {ref.key: ref for ref in outputs}
    written: list[Path] = []
    for key, name in output_names([ref.key for ref in outputs]):
        target = dest / name
        await store.get_file(by_key[key], str(target))
        written.append(target)
    return written
