"""The eval gate of an update or a rollback: a version becomes current only when its evals do
not lose pass rate against the current one (:func:`gate_version`).

Before the new version of a skill is made current (``skills update NAME --gate``, ``skills
rollback NAME [VERSION] --gate``, the API's rollback with ``"gate": true``), its evals run on
it ``--against`` the current version (one batch, both variants side by side, run by the
caller's runner: ``skillweave.cli.eval_run.run_eval_batch`` or an
:class:`~skillweave.evals.runner.EvalRunner`), and the gate refuses when the new version's pass
rate is lower than the current one's by more than the tolerance (default 0), or when the batch
did not complete. Fail closed: a version with no ``evals/evals.json`` (or a broken one) is
refused unless the caller allows a missing suite. Nothing to compare with (no current version,
or the same one) passes without a batch.

Every decision is in the audit log (``eval_gate``: from, to, decision, both pass rates, the
batch), recorded before the caller makes the version current, like the scan's: a record that
cannot be written refuses the change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillweave.agent import AgentSpec
from skillweave.config import SkillsSettings
from skillweave.errors import SkillweaveError
from skillweave.evals.batch import MAX_CONCURRENCY, MAX_REPEAT, EvalBatch
from skillweave.evals.results import EvalReport
from skillweave.evals.suite import EVALS_FILE, EvalSuiteError
from skillweave.evals.summary import version_suite
from skillweave.skills import SkillRegistry
from skillweave.skills.stored import Rollback, RollbackCheck, StoredSkills, check_version
from skillweave.storage import ArtifactStore, keys, store_identity
from skillweave.storage.audit import AuditLog

__all__ = ["EvalGateError", "GateOptions", "GateVerdict", "gate_version", "gated_rollback"]

DEFAULT_TOLERANCE: Final = 0.0

RunBatch = Callable[[EvalBatch], Awaitable[EvalReport]]
"""Runs a batch to its end and answers its stored report (the caller's engine)."""
Gate = Callable[[str, str, str | None], Awaitable["GateVerdict"]]
"""Gates making a version current (name, version, current version): :func:`gate_version`
bound to a caller's runner; raises :class:`EvalGateError` to refuse."""


@dataclass(frozen=True, slots=True)
class GateOptions:
    """How the gate's batch runs and what it lets through.

    Attributes:
        model: the agent's model (a profile or ``provider:name``; None: the default).
        grader: the grader's (None: the model).
        repeat: runs of each eval in each variant.
        concurrency: jobs at once.
        tolerance: how much lower (0.0-1.0) the new pass rate may be than the current one's.
        allow_missing: let a version with no evals through (the gate refuses it otherwise).
        agent: the agent each job runs (default: a plain one).
    """

    model: str | None = None
    grader: str | None = None
    repeat: int = 1
    concurrency: int = 4
    tolerance: float = DEFAULT_TOLERANCE
    allow_missing: bool = False
    agent: AgentSpec = field(default_factory=AgentSpec)

    def __post_init__(self) -> None:
        if not 0.0 <= self.tolerance <= 1.0:
            raise ValueError(f"the gate's tolerance {self.tolerance}: between 0.0 and 1.0")
        if not 1 <= self.repeat <= MAX_REPEAT:
            raise ValueError(f"the gate's repeat {self.repeat}: between 1 and {MAX_REPEAT}")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise ValueError(f"the gate's concurrency: between 1 and {MAX_CONCURRENCY}")


class GateVerdict(BaseModel):
    """What the gate decided, and on what."""

    model_config = ConfigDict(frozen=True)

    skill: str
    version: str = Field(description="The version to make current.")
    current: str | None = Field(description="The current version (None: there is none).")
    decision: Literal["passed", "refused"]
    reason: str = Field(description="The decision in one line, both pass rates in it.")
    pass_rate: float | None = None
    current_pass_rate: float | None = None
    tolerance: float = DEFAULT_TOLERANCE
    batch_id: str | None = None
    report: str | None = Field(default=None, description="The report's key in the store.")

    @property
    def passed(self) -> bool:
        return self.decision == "passed"


class EvalGateError(SkillweaveError):
    """The gate refused the version (its line says why; the version stays stored, not
    current).

    Attributes:
        verdict: the decision.
    """

    def __init__(self, verdict: GateVerdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict


async def gate_version(
    *,
    registry: SkillRegistry,
    store: ArtifactStore,
    skill: str,
    version: str,
    current: str | None,
    options: GateOptions,
    run: RunBatch,
    audit: AuditLog,
) -> GateVerdict:
    """Gate making `version` of `skill` current in place of `current` (see the module
    docstring); its package must be readable (the library's copy, or stored at
    ``keys.skill_package_key``).

    Returns:
        the verdict, when it passed (recorded).

    Raises:
        EvalGateError: the gate refused it (recorded).
        AuditLogError: the decision cannot be recorded: the caller changes nothing.
        SkillweaveError: the batch failed for good.
    """
    verdict = await _decide(
        registry=registry,
        store=store,
        skill=skill,
        version=version,
        current=current,
        options=options,
        run=run,
    )
    await audit.record(
        "eval_gate",
        skill=skill,
        version=version,
        **{"from": current, "to": version},
        decision=verdict.decision,
        pass_rate=verdict.pass_rate,
        current_pass_rate=verdict.current_pass_rate,
        tolerance=verdict.tolerance,
        batch=verdict.batch_id,
    )
    if not verdict.passed:
        raise EvalGateError(verdict)
    return verdict


async def _decide(
    *,
    registry: SkillRegistry,
    store: ArtifactStore,
    skill: str,
    version: str,
    current: str | None,
    options: GateOptions,
    run: RunBatch,
) -> GateVerdict:
    short = version[:12]

    def verdict(decision: Literal["passed", "refused"], reason: str, **more: object) -> GateVerdict:
        return GateVerdict(
            skill=skill,
            version=version,
            current=current,
            decision=decision,
            reason=reason,
            tolerance=options.tolerance,
            **more,  # type: ignore[arg-type]
        )

    if current is None or current == version:
        return verdict("passed", f"{skill} {short}: no other current version to compare with")
    try:
        found = await version_suite(registry, store, skill, version)
    except EvalSuiteError as exc:
        return verdict(
            "refused",
            f"{skill} {short} was not made current: its {EVALS_FILE} is broken ({exc.problem});"
            " fix it, or drop --gate",
        )
    if found is None:
        if options.allow_missing:
            return verdict("passed", f"{skill} {short} has no {EVALS_FILE}: let through")
        return verdict(
            "refused",
            f"{skill} {short} was not made current: it has no {EVALS_FILE}, so the gate cannot"
            " tell whether it loses pass rate (write evals: docs/EVALS.md, or pass"
            " --gate-allow-missing)",
        )
    batch = EvalBatch(
        skill=skill,
        version=version,
        against=current,
        repeat=options.repeat,
        concurrency=options.concurrency,
        model=options.model,
        grader=options.grader,
        agent=options.agent,
        cases=found[0].evals,
        store_id=await store_identity(store),
    )
    report = await run(batch)
    new = report.pass_rate
    against = report.variant("against")
    old = against.pass_rate if against is not None else None
    place = (
        f"{keys.eval_report_key(skill, batch.batch_id, 'md')}"
        f" (skillweave skills eval {skill} --show {batch.batch_id})"
    )
    rates = f"{_percent(new)} with {short} against {_percent(old)} with the current {current[:12]}"
    more = {
        "pass_rate": new,
        "current_pass_rate": old,
        "batch_id": batch.batch_id,
        "report": keys.eval_report_key(skill, batch.batch_id, "md"),
    }
    if report.status != "completed" or new is None or old is None:
        return verdict(
            "refused",
            f"{skill} {short} was not made current: its eval batch {batch.batch_id} ended"
            f" {report.status} ({rates}); report: {place}",
            **more,
        )
    if new < old - options.tolerance - 1e-9:
        return verdict(
            "refused",
            f"{skill} {short} was not made current: its evals pass {rates}"
            f" (tolerance {options.tolerance:.0%}); report: {place}",
            **more,
        )
    return verdict(
        "passed",
        f"{skill} {short}: its evals pass {rates} (tolerance {options.tolerance:.0%});"
        f" report: {place}",
        **more,
    )


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


async def gated_rollback(
    stored: StoredSkills,
    name: str,
    version: str | None,
    *,
    reserved: Mapping[str, str] | Collection[str],
    judged: RollbackCheck,
    gate: Gate,
    settings: SkillsSettings,
) -> Rollback:
    """``StoredSkills.rollback`` gated on the version's evals: the CLI's ``skills rollback
    --gate`` and the API's ``"gate": true``.

    The version asked is told apart as a plain rollback tells it (a first rollback that stops
    at its check, so the rules are the store's own), judged under today's policies (refused as
    a plain rollback would be, before any batch runs), gated against the current version with
    no lock held (a batch takes minutes), then rolled back to with `judged` (which records
    it), provided the current version is still the one it was compared with.

    Raises:
        EvalGateError: the gate refused it, or the current version changed meanwhile.
        what ``StoredSkills.rollback`` and `judged` raise.
    """
    try:
        return await stored.rollback(name, version, reserved=reserved, check=_asked)
    except _Asked as asked:
        current, target = asked.current, asked.version
        await check_version(stored.store, settings, name, target, package=asked.package)
    verdict = await gate(name, target, current)

    async def check(skill: str, now: str, chosen: str, package: bytes) -> bool:
        if now != current:
            reason = (
                f"{skill} {chosen[:12]} was not made current: the current version changed"
                f" from {current[:12]} to {now[:12]} while its evals ran; roll back again"
            )
            raise EvalGateError(
                verdict.model_copy(update={"decision": "refused", "reason": reason})
            )
        return await judged(skill, now, chosen, package)

    return await stored.rollback(name, target, reserved=reserved, check=check)


class _Asked(Exception):
    def __init__(self, current: str, version: str, package: bytes) -> None:
        super().__init__(version)
        self.current, self.version, self.package = current, version, package


async def _asked(name: str, current: str, version: str, package: bytes) -> bool:
    raise _Asked(current, version, package)
