"""What ``skillweave skills eval`` runs: an eval batch built from the command's options.

Before anything starts, the command reads and checks what the batch needs here: the version
evaluated (``NAME@VERSION``, a prefix of 8 hex digits or more; default the library's current
one) and the one it is compared with (``--against``), both resolved by the rule a run's pins
follow (:func:`~skillweave.cli.versions.resolve_spec_pins`); the skill's evals
(``evals.sources.read_suite``: none is bad input, naming the file to write); the agent each
job runs (``--agent``, its other skills' pins resolved too); and the models (``--model`` as a
run names it, ``--grader`` checked the same way). Its id is
:func:`~skillweave.evals.batch.new_batch_id`'s.

Called by :mod:`skillweave.cli.evals`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillweave.agent import AgentSpec
from skillweave.cli.agent_run import choose_model, load_agent, run_model
from skillweave.cli.versions import resolve_spec_pins
from skillweave.config import ModelSettings
from skillweave.errors import AgentSpecError, ConfigError, SkillNotFoundError
from skillweave.evals import EvalBatch, EvalSuite, EvalSuiteError, TriggerCase
from skillweave.llm import resolve_model
from skillweave.skills import SkillRegistry, SkillVersionError, parse_pin

if TYPE_CHECKING:
    from skillweave.storage import ArtifactStore

__all__ = [
    "BatchOptions",
    "EvalTarget",
    "PlannedBatch",
    "build_batch",
    "read_target",
    "resolve_version",
    "split_target",
]


@dataclass(frozen=True)
class EvalTarget:
    """The skill version a batch evaluates, and its evals as that version holds them."""

    skill: str
    version: str
    suite: EvalSuite
    triggers: tuple[TriggerCase, ...]


def split_target(target: str) -> tuple[str, str | None]:
    """``NAME[@VERSION]`` as the skill and the version prefix it names (None: the current).

    Raises:
        ConfigError: a version that is not 8 or more hex digits.
    """
    try:
        pin = parse_pin(target)
    except SkillVersionError as exc:
        raise ConfigError(f"{target}: {exc} (NAME or NAME@VERSION, 8+ hex digits)") from None
    return pin.name, pin.version


async def resolve_version(
    name: str, prefix: str | None, store: ArtifactStore, registry: SkillRegistry, *, source: str
) -> str:
    """The full version of skill `name` that `prefix` names (None: the library's current one):
    the library's when it begins so, else the one stored version it begins.

    Raises:
        ConfigError: no such skill, or the prefix names no version or several.
    """
    if name not in registry:
        raise ConfigError(
            f"{source}: no skill {name!r} in the library (`skillweave skills list` lists them)"
        )
    if prefix is None:
        return registry.get(name).version
    split_target(f"{name}@{prefix}")  # 8+ hex digits
    pinned = AgentSpec(skills=(f"{name}@{prefix}",))
    try:
        resolved = await resolve_spec_pins(pinned, store, registry, source=source)
    except AgentSpecError as exc:
        raise ConfigError(str(exc)) from None
    assert resolved.skills is not None
    return parse_pin(resolved.skills[0]).version or registry.get(name).version


async def read_target(target: str, store: ArtifactStore, registry: SkillRegistry) -> EvalTarget:
    """The skill version `target` (``NAME[@VERSION]``) names, and its evals.

    Raises:
        ConfigError: an unknown skill or version, or a version with no usable
            ``evals/evals.json`` (the line names the file and docs/EVALS.md).
    """
    from skillweave.evals import sources

    name, prefix = split_target(target)
    version = await resolve_version(name, prefix, store, registry, source=target)
    try:
        suite, triggers = await sources.read_suite(registry, store, name, version)
    except (EvalSuiteError, SkillNotFoundError, SkillVersionError) as exc:
        raise ConfigError(str(exc)) from None
    return EvalTarget(skill=name, version=version, suite=suite, triggers=triggers)


@dataclass(frozen=True)
class BatchOptions:
    """The command's options that shape a new batch."""

    baseline: bool = False
    against: str | None = None
    repeat: int = 1
    concurrency: int = 4
    model: str | None = None
    grader: str | None = None
    agent: Path | None = None


@dataclass(frozen=True)
class PlannedBatch:
    """A batch ready to run, and the model settings of a direct engine's runs."""

    batch: EvalBatch
    model: ModelSettings


async def build_batch(
    target: EvalTarget,
    options: BatchOptions,
    *,
    store: ArtifactStore,
    registry: SkillRegistry,
    settings: ModelSettings,
    store_id: str | None,
) -> PlannedBatch:
    """The batch of `target` the options ask for.

    Raises:
        ConfigError: an unknown ``--against`` version, model or grader, or a batch over the
            limits (too many jobs; the same version twice).
        AgentSpecError: ``--agent`` cannot be read or names a skill the library lacks.
    """
    spec = load_agent(options.agent, registry)
    chosen = choose_model(settings, option=options.model, spec=spec, spec_path=options.agent)
    if options.grader is not None:
        try:
            resolve_model(settings, options.grader, any_script=True)
        except ConfigError as exc:
            raise ConfigError(f"--grader: {exc}") from None
    spec = await resolve_spec_pins(spec, store, registry, source=str(options.agent))
    against = None
    if options.against is not None:
        source = f"--against {options.against}"
        _, prefix = split_target(f"{target.skill}@{options.against}")
        against = await resolve_version(target.skill, prefix, store, registry, source=source)
    fields = {
        "skill": target.skill,
        "version": target.version,
        "against": against,
        "baseline": options.baseline,
        "repeat": options.repeat,
        "concurrency": options.concurrency,
        "model": run_model(option=options.model, spec=spec, spec_path=options.agent),
        "grader": options.grader,
        "agent": spec,
        "cases": target.suite.evals,
        "store_id": store_id,
    }
    try:
        batch = EvalBatch.model_validate(fields)
    except ValueError as exc:  # pydantic's ValidationError: the first problem, one line
        raise ConfigError(f"the eval batch: {_first_line(exc)}") from None
    return PlannedBatch(batch=batch, model=chosen)


def _first_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(exc).splitlines()[0]
