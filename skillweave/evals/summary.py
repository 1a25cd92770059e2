"""The eval summary a person reads before a skill version is let in: :func:`eval_summary`.

What a version's evals say, without running anything: how many evals it has (and their checks
and expectations), whether the catalog picks it for their prompts and not for its
``evals/triggers.json`` negatives (:func:`skillweave.evals.triggers.suite_trigger_summary`, no
model call), and the latest stored report of a batch that evaluated THIS version
(:func:`skillweave.evals.store.list_reports`). :meth:`EvalSummary.line` puts it in one line
every channel shows the same way::

    evals: 3 (9 checks and expectations); last run 2026-12-07: 100% with the skill, 33% without;
    triggers: recall 3/3, false 0/4

Callers: the approval of an agent-written draft's publication (``publish_skill``: the worker's
``SkillAuthoring`` asks for the line when it keeps a draft, the composition wires it:
:func:`draft_line`), the held install's approval (``skills approve``, ``POST
/v1/skills/{name}/approve``) and the listing of a held version (``skills versions``).

Every version is read where it lives (``evals.sources.read_suite``): the library's copy while
the library has that version, else its package in the store (``keys.skill_package_key``: a
stored version, an install waiting at its gate, a run's draft), which the trigger evals rank in
the library's place (unpacked once, ``sandbox.pinned.skill_at``, as a pinned run's is). The
files are a package's, which anyone may have written: broken eval files are a summary whose
line says so, never an error, and every text taken from them is clipped to one printable
line.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from skillweave.config import SkillsSettings
from skillweave.errors import (
    PackageError,
    ResourceError,
    ResourceNotFoundError,
    SkillweaveError,
)
from skillweave.evals.results import EvalReport, TriggerSummary
from skillweave.evals.sources import read_skill_file, read_suite
from skillweave.evals.store import list_reports
from skillweave.evals.suite import EVALS_FILE, EvalSuite, EvalSuiteError, TriggerCase
from skillweave.evals.triggers import suite_trigger_summary
from skillweave.sandbox import skill_at
from skillweave.skills import Skill, SkillRegistry, SkillVersionError
from skillweave.storage import ArtifactStore
from skillweave.terminal import counted

__all__ = [
    "EvalSummary",
    "LastRun",
    "draft_line",
    "eval_summary",
    "version_suite",
    "version_triggers",
]

_log = logging.getLogger("skillweave.evals")

MAX_LINE_CHARS: Final = 500
"""How long a summary line may be where it is carried (an approval request's field)."""
MAX_PROBLEM_CHARS: Final = 160
"""How much of what is wrong with a suite a summary line keeps."""
_UNPRINTABLE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e]+")


def _one_line(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """`text` as one printable line of at most `limit` characters (it may be a package's)."""
    flat = _UNPRINTABLE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


class LastRun(BaseModel):
    """The latest stored report of a batch that evaluated the version."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    finished_at: str = Field(description="ISO 8601, UTC.")
    status: str
    pass_rate: float | None = Field(default=None, description="With the skill.")
    baseline_pass_rate: float | None = Field(default=None, description="Without the skill.")
    against: str | None = Field(default=None, description="The other version it was run against.")
    against_pass_rate: float | None = None

    @classmethod
    def of(cls, report: EvalReport) -> LastRun:
        """The headline of `report`."""
        baseline = report.variant("baseline")
        against = report.variant("against")
        return cls(
            batch_id=report.batch_id,
            finished_at=report.finished_at,
            status=report.status,
            pass_rate=report.pass_rate,
            baseline_pass_rate=baseline.pass_rate if baseline is not None else None,
            against=report.against,
            against_pass_rate=against.pass_rate if against is not None else None,
        )

    def text(self) -> str:
        """``last run 2026-12-07: 100% with the skill, 33% without``."""
        parts = [f"{_percent(self.pass_rate)} with the skill"]
        if self.baseline_pass_rate is not None:
            parts.append(f"{_percent(self.baseline_pass_rate)} without")
        if self.against is not None and self.against_pass_rate is not None:
            parts.append(f"{_percent(self.against_pass_rate)} with {self.against[:12]}")
        status = "" if self.status == "completed" else f" ({self.status})"
        return f"last run {self.finished_at[:10]}{status}: {', '.join(parts)}"


class EvalSummary(BaseModel):
    """What a version's evals say, without running them (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    skill: str
    version: str
    evals: int = Field(default=0, ge=0)
    checks: int = Field(default=0, ge=0)
    expectations: int = Field(default=0, ge=0)
    problem: str | None = Field(
        default=None, description="Why evals/evals.json cannot be used (then evals is 0)."
    )
    triggers: TriggerSummary | None = None
    triggers_problem: str | None = Field(
        default=None, description="Why the trigger evals were not measured."
    )
    last_run: LastRun | None = None

    @property
    def trigger_counts(self) -> tuple[int, int, int, int] | None:
        """Positives picked, positives, negatives picked, negatives (None: not measured)."""
        if self.triggers is None:
            return None
        cases = self.triggers.cases
        hits = sum(case.triggered for case in cases if case.should_trigger)
        false = sum(case.triggered for case in cases if not case.should_trigger)
        return hits, self.triggers.positives, false, self.triggers.negatives

    def line(self) -> str:
        """The summary in one short line (see the module docstring)."""
        if self.problem is not None:
            return f"evals: broken ({self.problem}): fix them (docs/EVALS.md)"
        graded = self.checks + self.expectations
        verdicts = counted(graded, "check or expectation", "checks and expectations")
        head = f"evals: {self.evals} ({verdicts})"
        if self.last_run is not None:
            head += f"; {self.last_run.text()}"
        else:
            # A held version or a draft is not in the library until approved: its evals can
            # run once it is (they run its scripts, which the approval is about).
            head += f", never run (skillweave skills eval {self.skill}, once approved)"
        counts = self.trigger_counts
        if counts is not None:
            hits, positives, false, negatives = counts
            head += f"; triggers: recall {hits}/{positives}"
            if negatives:
                head += f", false {false}/{negatives}"
        elif self.triggers_problem is not None:
            head += f"; triggers: not measured ({self.triggers_problem})"
        return head


async def eval_summary(
    registry: SkillRegistry,
    store: ArtifactStore,
    skill: str,
    version: str,
    *,
    settings: SkillsSettings,
) -> EvalSummary | None:
    """The eval summary of `skill` at `version`: the library's copy, a stored version or a
    run's draft (see the module docstring).

    Args:
        registry: the library its trigger evals are measured in (the version takes the place
            of the library's copy of the skill, if any).
        store: where its package and the eval reports are.
        skill: the skill's name.
        version: the version (full).
        settings: ``skills`` (selection, pinned folders).

    Returns:
        None when the version has no ``evals/evals.json`` (or no package of it can be found).

    Raises:
        ArtifactStoreError: the store cannot be read (infrastructure: the caller's to retry).
    """
    try:
        found = await version_suite(registry, store, skill, version)
    except EvalSuiteError as exc:
        return EvalSummary(skill=skill, version=version, problem=_one_line(str(exc)))
    if found is None:
        return None
    suite, negatives = found
    triggers, problem = await version_triggers(
        registry, store, skill, version, suite=suite, negatives=negatives, settings=settings
    )
    return EvalSummary(
        skill=skill,
        version=version,
        evals=len(suite.evals),
        checks=sum(len(case.checks) for case in suite.evals),
        expectations=sum(len(case.expectations) for case in suite.evals),
        triggers=triggers,
        triggers_problem=problem,
        last_run=await _last_run(store, skill, version),
    )


async def version_suite(
    registry: SkillRegistry, store: ArtifactStore, skill: str, version: str
) -> tuple[EvalSuite, tuple[TriggerCase, ...]] | None:
    """The evals of `skill` at `version` (``evals.sources.read_suite``: the library's copy, else
    its package in the store), or None: it has no ``evals/evals.json``, or no such version.

    Raises:
        EvalSuiteError: its eval files cannot be used (the file and the problem named), a path
            in them leads outside the skill included.
    """
    try:
        return await read_suite(registry, store, skill, version)
    except SkillVersionError:
        return None
    except EvalSuiteError:
        if await _missing(registry, store, skill, version):
            return None
        raise
    except (ResourceError, PackageError) as exc:
        raise EvalSuiteError(f"{skill}/{EVALS_FILE}", str(exc)) from None


async def _missing(registry: SkillRegistry, store: ArtifactStore, skill: str, version: str) -> bool:
    """Whether the version has no ``evals/evals.json`` at all (what ``read_suite`` refuses
    alike with a broken one)."""
    try:
        await read_skill_file(registry, store, skill, version, EVALS_FILE, max_bytes=1)
    except ResourceNotFoundError:
        return True
    except SkillweaveError:
        return False
    return False


def draft_line(
    registry: Callable[[], SkillRegistry], store: ArtifactStore, *, settings: SkillsSettings
) -> Callable[[str, str], Awaitable[str]]:
    """The line of a draft an agent wrote (name, version → the line, "" when it has no
    evals), for ``SkillAuthoring.evals``: the library it is measured in is `registry`'s at
    the time of the call. A summary that cannot be made is logged and left out: it informs
    the approval, which still shows the scan."""

    async def line(name: str, version: str) -> str:
        try:
            summary = await eval_summary(registry(), store, name, version, settings=settings)
        except Exception:
            _log.warning("the eval summary of the draft %s failed", name, exc_info=True)
            return ""
        return _one_line(summary.line(), MAX_LINE_CHARS) if summary is not None else ""

    return line


async def version_triggers(
    registry: SkillRegistry,
    store: ArtifactStore,
    skill: str,
    version: str,
    *,
    suite: EvalSuite,
    negatives: tuple[TriggerCase, ...],
    settings: SkillsSettings,
) -> tuple[TriggerSummary | None, str | None]:
    """The trigger evals of the version, ranked in the place of the library's copy (a version
    the library does not have is unpacked once, as a pinned run's is), or why they cannot be
    told. An approval's summary and ``skills eval NAME@VERSION --triggers-only`` call it."""
    candidate: Skill | None = None
    try:
        if skill not in registry or registry.get(skill).version != version:
            candidate = await skill_at(
                store, registry, skill, version, pinned_dir=settings.pinned_dir
            )
        summary = await asyncio.to_thread(
            suite_trigger_summary,
            registry,
            skill,
            suite,
            negatives,
            settings=settings,
            candidate=candidate,
        )
    except (SkillweaveError, ValueError) as exc:
        return None, _one_line(str(exc))
    return summary, None


async def _last_run(store: ArtifactStore, skill: str, version: str) -> LastRun | None:
    for report in await list_reports(store, skill):
        if report.version == version:
            return LastRun.of(report)
    return None
