"""``--gate`` of ``skills update`` and ``skills rollback``: the new version becomes current only
when its evals, run against the current version, do not lose pass rate
(:mod:`skillweave.evals.gate` decides and records it).

The batch runs on the engine :mod:`skillweave.cli.compose` opens (``WORKFLOW__EXECUTION_ENGINE``,
as ``skillweave run`` and ``skills eval`` do), by ``eval_run.run_eval_batch``, its progress on
stderr; the engine is opened only when a batch must run (nothing to compare with, or no evals,
needs none). A refusal is one line (both pass rates, the report's place) and exit 1: the
version stays stored, not current.

Where each command gates: an update between the version's admission (its scan and signature
recorded) and the ``update`` record and the store's switch (:class:`GatedAdmissions`; the
package is put where a pinned run reads it first, with its scan and signature beside it); a
rollback between today's judgement of the version and the ``rollback`` record
(``evals.gate.gated_rollback``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.text import Text

from skillweave.cli.console import err
from skillweave.cli.exits import EXIT_USAGE, fail
from skillweave.config import Settings
from skillweave.evals import batch as batches
from skillweave.evals import gate as gates
from skillweave.skills import Admissions, SkillRegistry
from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import AuditLog
from skillweave.terminal import terminal_safe

if TYPE_CHECKING:
    from skillweave.cli.compose import OpenedEngine
    from skillweave.engines import Engine
    from skillweave.evals import EvalBatch, EvalReport

__all__ = [
    "EvalGate",
    "GateAllowMissingOption",
    "GateGraderOption",
    "GateModelOption",
    "GateOption",
    "GateRepeatOption",
    "GateToleranceOption",
    "GatedAdmissions",
    "gate_options",
    "update_admissions",
]

_ZIP: Final = "application/zip"

GateOption = Annotated[
    bool,
    typer.Option(
        "--gate",
        help="Make the new version current only if its evals, run against the current "
        "version, do not lose pass rate (refused: exit 1, the version stays stored).",
    ),
]
GateModelOption = Annotated[
    str | None,
    typer.Option("--model", help="With --gate: the agent's model (a profile or PROVIDER:NAME)."),
]
GateGraderOption = Annotated[
    str | None,
    typer.Option("--grader", help="With --gate: the grader's model (default: the model)."),
]
GateRepeatOption = Annotated[
    int,
    typer.Option(
        "--repeat",
        min=1,
        max=batches.MAX_REPEAT,
        help="With --gate: runs of each eval per version.",
    ),
]
GateToleranceOption = Annotated[
    float,
    typer.Option(
        "--gate-tolerance",
        min=0.0,
        max=1.0,
        help="With --gate: how much lower (0.0-1.0) the new pass rate may be.",
    ),
]
GateAllowMissingOption = Annotated[
    bool,
    typer.Option(
        "--gate-allow-missing",
        help="With --gate: let a version with no evals through (refused by default).",
    ),
]


def gate_options(
    *,
    gate: bool,
    model: str | None,
    grader: str | None,
    repeat: int,
    tolerance: float,
    allow_missing: bool,
) -> gates.GateOptions | None:
    """The gate the options ask for (None: no ``--gate``).

    Raises:
        typer.Exit: a gate option without ``--gate`` (bad usage, one line).
    """
    if not gate:
        if model or grader or repeat != 1 or tolerance or allow_missing:
            raise fail(
                "--model, --grader, --repeat, --gate-tolerance and --gate-allow-missing go"
                " with --gate",
                code=EXIT_USAGE,
            )
        return None
    return gates.GateOptions(
        model=model,
        grader=grader,
        repeat=repeat,
        tolerance=tolerance,
        allow_missing=allow_missing,
    )


class EvalGate:
    """The gate of one command, over `store` and the library `registry`: :meth:`check` gates
    one version; the engine its batches run on is opened on first need and closed with it."""

    def __init__(
        self,
        settings: Settings,
        options: gates.GateOptions,
        *,
        registry: SkillRegistry,
        store: ArtifactStore,
        audit: AuditLog,
    ) -> None:
        self._settings = settings
        self._options = options
        self._registry = registry
        self._store = store
        self._audit = audit
        self._stack = contextlib.AsyncExitStack()
        self._opened: OpenedEngine[Engine] | None = None

    async def __aenter__(self) -> EvalGate:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    async def check(self, name: str, version: str, current: str | None) -> gates.GateVerdict:
        """Gate making `version` of `name` current in place of `current`; the verdict's line
        on stderr when it passes.

        Raises:
            EvalGateError: refused (recorded).
        """
        verdict = await gates.gate_version(
            registry=self._registry,
            store=self._store,
            skill=name,
            version=version,
            current=current,
            options=self._options,
            run=self._run,
            audit=self._audit,
        )
        err.print(Text(terminal_safe(f"gate: {verdict.reason}"), style="dim"), soft_wrap=True)
        return verdict

    async def _run(self, batch: EvalBatch) -> EvalReport:
        from skillweave.cli.eval_run import run_eval_batch

        return await run_eval_batch(await self._engine(), batch, progress=True)

    async def _engine(self) -> OpenedEngine[Engine]:
        if self._opened is None:
            from skillweave.agent import AgentSpec
            from skillweave.cli.agent_run import choose_model
            from skillweave.cli.compose import open_engine

            model = choose_model(self._settings.model, option=self._options.model, spec=AgentSpec())
            opened = await self._stack.enter_async_context(
                open_engine(self._settings, registry=self._registry, model=model)
            )
            self._opened = opened
        return self._opened


@dataclass
class GatedAdmissions(Admissions):
    """An update's admissions, each admitted version then gated (before the ``update`` record
    and the store's switch): its package put where a pinned run reads it, its scan and
    signature beside it, then :meth:`EvalGate.check` against the skill's current version.
    A version that is current already is not gated (nothing changes)."""

    gate: EvalGate | None = None
    current: Callable[[str], Awaitable[str | None]] | None = None

    async def check(self, name: str, version: str, package: bytes) -> bool:
        held = await super().check(name, version, package)
        if self.gate is None or self.current is None:
            return held
        current = await self.current(name)
        if current == version:
            return held  # the same version again: nothing becomes current
        if current is not None:  # where a pinned run reads it, judged as it will be stored
            await self.store.put_if_absent(
                keys.skill_package_key(name, version), package, content_type=_ZIP
            )
            await self.keep(name)
        await self.gate.check(name, version, current)
        return held


@contextlib.asynccontextmanager
async def update_admissions(
    settings: Settings,
    options: gates.GateOptions,
    *,
    registry: SkillRegistry,
    store: ArtifactStore,
    audit: AuditLog,
    reviewer: Any,
) -> AsyncIterator[Admissions]:
    """The admissions of a gated update (:class:`GatedAdmissions`), its gate open while they
    are used."""
    from skillweave.skills.stored import StoredSkills

    stored = StoredSkills(store)

    async def current(name: str) -> str | None:
        record = await stored.get(name)
        return record.latest if record is not None else None

    async with EvalGate(settings, options, registry=registry, store=store, audit=audit) as gate:
        yield GatedAdmissions(
            settings.skills, store, audit=audit, reviewer=reviewer, gate=gate, current=current
        )
