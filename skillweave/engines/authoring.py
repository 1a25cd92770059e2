"""The side effects of skills an agent writes: ``create_skill`` and ``publish_skill``
(``skillweave.agent.authoring`` offers the tools; :class:`~skillweave.engines.AgentServices`
hands these calls here, and gives it the collaborators it shares: the library's views, the
script executor, the transcript recorder and the audit log).

``create_skill``: the skill is made and checked (``skills.drafts``: strictly, as an upload),
its name must be free in the library, it is scanned (``skills.scan``, and reviewed by a model
when ``skills.scan.review_model`` names one: ``skills.review``; a finding whose severity the
policy blocks refuses it), its package is stored where the manager runs packages from, and
each example the model gave runs in a sandbox and must succeed (and print what it expects).
Then it is kept as the run's draft (``keys.draft_key``: its scan and runs) and the run may
activate it; nothing else sees it. Every step is idempotent, so a retried call (a worker died
half-way) keeps one draft: the package is content-addressed, the examples' executions are keyed
on the call (the manager answers a repeated key with the stored result), the record is written
once.

``publish_skill`` (after a person approved, with the scan in front of them): the draft's
package is stored as an uploaded skill and the worker's library serves it at once, so later
runs find it (:class:`~skillweave.engines._publisher.SkillPublisher`, which
:class:`SkillAuthoring` holds).

Nothing is kept unrecorded: the draft's ``scan`` record is written before its package is
stored, and a publication's ``scan``, ``signature``, ``approval`` and ``upload`` records before
it is (``skills.admission``). A record that cannot be written raises
:class:`~skillweave.errors.AuditLogError`, a failing store the engines retry; it is never a tool
result.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Final

from skillweave.agent import (
    CreateSkillInput,
    CreateSkillOutcome,
    PublishSkillInput,
    PublishSkillOutcome,
    SkillExample,
)
from skillweave.agent.disclosure import ACTIVATE_SKILL, CREATE_SKILL, PUBLISH_SKILL
from skillweave.config import SkillsSettings
from skillweave.engines._publisher import SkillPublisher
from skillweave.engines._script_executor import ScriptExecutor
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.errors import (
    ExecutionRejectedError,
    SkillFormatError,
)
from skillweave.sandbox import ExecuteRequest, ExecutionResult
from skillweave.skills import (
    Draft,
    build_draft,
    evidence,
    finding_line,
    name_key,
    review_line,
    worst_first,
)
from skillweave.skills.review import SkillReviewer, review_report
from skillweave.skills.scan import ScanReport, scan_files
from skillweave.storage import ArtifactStore, keys
from skillweave.storage.audit import AuditLog

__all__ = ["SkillAuthoring"]

_SHOWN_FINDINGS: Final = 8
_OUTPUT_SHOWN: Final = 600


class SkillAuthoring:
    """``create_skill`` and ``publish_skill`` for the runs of one worker.

    Args:
        views: the library, whose names a draft may not take and whose directory skills an
            upload may not replace.
        executor: runs the examples.
        transcript: where each call's result is stored.
        audit: where scans and publications are recorded.
        store: where packages, drafts and uploaded skills are kept.
        settings: the scan and signature policies.
        published: called after a publication, to serve the new skill at once (the worker's
            uploaded-skills refresh); None: it is served at the next refresh.
        reviewer: the model review of drafts and publications (``skills.scan.review_model``,
            :func:`~skillweave.engines.skill_review.skill_reviewer`); None: none.

    Attributes:
        evals: a kept draft's evals in a line (name, version → the line, "" when it has
            none), which its publication's approval shows; set by the composition
            (``skillweave.evals.summary.draft_line``: that layer is above this one); None:
            not shown.
    """

    def __init__(
        self,
        views: SkillViews,
        *,
        executor: ScriptExecutor,
        transcript: TranscriptRecorder,
        audit: AuditLog,
        store: ArtifactStore,
        settings: SkillsSettings,
        published: Callable[[], Awaitable[None]] | None = None,
        reviewer: SkillReviewer | None = None,
    ) -> None:
        self._views = views
        self._executor = executor
        self._transcript = transcript
        self._audit = audit
        self._store = store
        self._settings = settings
        self._reviewer = reviewer
        self.evals: Callable[[str, str], Awaitable[str]] | None = None
        self._publisher = SkillPublisher(
            views,
            transcript=transcript,
            audit=audit,
            store=store,
            settings=settings,
            published=published,
            reviewer=reviewer,
        )

    # --- create_skill ------------------------------------------------------------------------

    async def create(self, request: CreateSkillInput) -> CreateSkillOutcome:
        """Make, check, scan, store and test the skill; keep it as the run's draft."""
        try:
            draft = await asyncio.to_thread(
                build_draft,
                request.name,
                request.description,
                request.instructions,
                [(f.path, f.content) for f in request.files],
            )
        except SkillFormatError as exc:
            return await self._refused(request, f"The skill was not kept: {exc}")
        taken = self._taken(request)
        if taken is not None:
            return await self._refused(request, taken)
        report = await asyncio.to_thread(scan_files, dict(draft.files), version=draft.version)
        timeout = self._settings.scan.review_timeout_seconds
        report = await review_report(self._reviewer, draft.files, report, timeout=timeout)
        decision = report.decision(self._settings.scan)
        # The verdict is what is recorded, so it follows the scan, and comes before anything
        # of the draft is kept: a record that cannot be written raises AuditLogError (the
        # engines retry it; never a tool result), and nothing is stored.
        await self._audit.record(
            "scan",
            skill=draft.name,
            version=draft.version,
            run=request.run_id,
            decision=decision,
            draft=True,
            findings={severity: n for severity, n in report.counts.items() if n},
        )
        if decision == "block":
            return await self._refused(
                request,
                "The skill was not kept: its scan found what the policy blocks.\n"
                + _findings(report),
                report=report,
            )
        await self._store.put_if_absent(
            keys.skill_package_key(draft.name, draft.version),
            draft.package,
            content_type="application/zip",
        )
        results = await self._examples(request, draft)
        failed = [line for ok, line in results if not ok]
        lines = [line for _, line in results]
        if failed:
            return await self._refused(
                request,
                "The skill was not kept: "
                f"{len(failed)} of {len(results)} examples failed.\n" + "\n".join(lines),
                report=report,
                runs=len(results),
            )
        await self._keep(request, draft, report, lines)
        evals = await self.evals(draft.name, draft.version) if self.evals is not None else ""
        text = "\n".join(
            [
                f"Kept your skill {draft.name!r} as a draft of this run "
                f"(version {draft.version[:12]}).",
                f"Scan: {report.summary()}",
                *([_findings(report)] if report.findings else []),
                *(["Examples:", *lines] if lines else ["No examples were given to test it."]),
                f"Use it now: {ACTIVATE_SKILL} with name {draft.name!r}. Other runs see it "
                f"once {PUBLISH_SKILL} is approved.",
            ]
        )
        summary = clip(
            f"[{CREATE_SKILL} {draft.name}: kept version {draft.version[:12]}; "
            f"scan: {report.summary()}; {len(results)} examples passed]"
        )
        chars = await self._transcript.tool_result(
            request, tool=CREATE_SKILL, text=text, error=False, summary=summary
        )
        return CreateSkillOutcome(
            seq=request.seq,
            chars=chars,
            summary=summary,
            name=draft.name,
            version=draft.version,
            report=clip(report.summary(), 1_000),
            runs=len(results),
            evals=clip(evals, 500),
        )

    def _taken(self, request: CreateSkillInput) -> str | None:
        """Why the name is not the run's to take: a skill of the library has it."""
        key = name_key(request.name)
        for skill in self._views.registry:
            if key in {name_key(skill.name), name_key(skill.short_name or skill.name)}:
                return (
                    f"The skill was not kept: a skill named {skill.name!r} exists already; "
                    "activate it, or write yours under another name."
                )
        return None

    async def _examples(self, request: CreateSkillInput, draft: Draft) -> list[tuple[bool, str]]:
        """Each example run in a sandbox: whether it passed, and a line (or a few) saying so."""
        results = []
        for number, example in enumerate(request.examples, start=1):
            label = f"{number}. {example.script} {' '.join(example.args)}".rstrip()
            if example.script not in draft.files:
                results.append((False, f"{label}: no such file in the skill"))
                continue
            try:
                result = await self._executor.execute(
                    ExecuteRequest(
                        execution_id=f"{request.execution_id}/example-{number}",
                        run_id=request.run_id,
                        skill=draft.name,
                        version=draft.version,
                        script=example.script,
                        args=list(example.args),
                    )
                )
            except ExecutionRejectedError as exc:
                results.append((False, f"{label}: not run: {exc}"))
                continue
            results.append(_judged(label, example, result))
        return results

    async def _keep(
        self, request: CreateSkillInput, draft: Draft, report: ScanReport, lines: list[str]
    ) -> None:
        record = {
            "name": draft.name,
            "version": draft.version,
            "run_id": request.run_id,
            "seq": request.seq,
            "replaces": request.replaces,
            "scan": report.model_dump(mode="json"),
            "examples": lines,
        }
        key = keys.draft_key(request.run_id, draft.name, draft.version)
        data = json.dumps(record, sort_keys=True).encode()
        await self._store.put_if_absent(key, data, content_type="application/json")

    async def _refused(
        self,
        request: CreateSkillInput,
        text: str,
        *,
        report: ScanReport | None = None,
        runs: int = 0,
    ) -> CreateSkillOutcome:
        summary = clip(f"[{CREATE_SKILL} {request.name}: not kept] {text}")
        chars = await self._transcript.tool_result(
            request,
            tool=CREATE_SKILL,
            text=text + "\nFix it and call create_skill again.",
            error=True,
            summary=summary,
        )
        return CreateSkillOutcome(
            seq=request.seq,
            chars=chars,
            is_error=True,
            summary=summary,
            name=request.name,
            report=clip(report.summary(), 1_000) if report is not None else "",
            runs=runs,
        )

    # --- publish_skill -----------------------------------------------------------------------

    @property
    def published(self) -> Callable[[], Awaitable[None]] | None:
        """Called after a publication, to serve the new skill at once (None: at the next
        refresh): :attr:`SkillPublisher.published`."""
        return self._publisher.published

    @published.setter
    def published(self, published: Callable[[], Awaitable[None]] | None) -> None:
        self._publisher.published = published

    async def publish(self, request: PublishSkillInput) -> PublishSkillOutcome:
        """Store the approved draft as an uploaded skill and serve it
        (:meth:`SkillPublisher.publish`)."""
        return await self._publisher.publish(request)


def _judged(label: str, example: SkillExample, result: ExecutionResult) -> tuple[bool, str]:
    out = result.stdout.strip()
    shown = out[:_OUTPUT_SHOWN] + ("…" if len(out) > _OUTPUT_SHOWN else "")
    if result.status != "succeeded":
        err = result.stderr.strip()[-_OUTPUT_SHOWN:]
        return False, f"{label}: {result.status} (exit {result.exit_code})\n{err or shown}"
    if example.expect and example.expect not in result.stdout:
        return False, f"{label}: its output does not contain {example.expect!r}:\n{shown}"
    return True, f"{label}: passed" + (f"\n{shown}" if shown else "")


def _findings(report: ScanReport) -> str:
    """The findings as the other doors show them (``skills.scan_decision``): worst first, each
    with its evidence line, the model review's marked, then the review's cost."""
    findings = worst_first(report.findings)
    lines: list[str] = []
    for f in findings[:_SHOWN_FINDINGS]:
        lines.append(f"- {finding_line(f)}")
        if shown := evidence(f):
            lines.append(f"  evidence: {shown}")
    more = len(findings) - _SHOWN_FINDINGS
    if more > 0:
        lines.append(f"- … and {more} more")
    if report.review is not None:
        lines.append(f"- {review_line(report.review)}")
    return "\n".join(lines)
