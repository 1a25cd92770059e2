"""Temporal visibility: which jobs the server holds, filtered by the search attributes the
workflow keeps up to date (agent, phase, active skills), without asking a worker.

:class:`JobRow` is one job as visibility lists (or the server describes) it; :func:`jobs_query`
builds the visibility query of ``TemporalEngine.list_jobs``, also used by the CLI
(``skillweave runs list``, the in-flight check before a deploy).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final, get_args

from pydantic import BaseModel, ConfigDict
from temporalio.client import WorkflowExecution, WorkflowExecutionStatus

from skillweave.engines.contract import (
    SA_ACTIVE_SKILLS,
    SA_AGENT,
    SA_PHASE,
    SA_TOKENS,
    SA_TURNS,
    WORKFLOW_NAME,
    Phase,
    job_id_of,
)
from skillweave.errors import ConfigError

__all__ = ["PHASES", "JobRow", "jobs_query"]

PHASES: Final[tuple[str, ...]] = get_args(Phase)

_FILTER_VALUE: Final = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")
_STATUS_NAMES: Final = {
    WorkflowExecutionStatus.RUNNING: "running",
    WorkflowExecutionStatus.COMPLETED: "completed",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
    WorkflowExecutionStatus.TERMINATED: "terminated",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued",
    WorkflowExecutionStatus.TIMED_OUT: "timed_out",
}


class JobRow(BaseModel):
    """One job as visibility lists it: no query to a worker needed."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    workflow_id: str
    run_id: str
    status: str
    agent: str | None = None
    phase: str | None = None
    turns: int | None = None
    tokens: int | None = None
    active_skills: tuple[str, ...] = ()
    start_time: datetime
    close_time: datetime | None = None

    @classmethod
    def of(cls, execution: WorkflowExecution) -> JobRow:
        """The row of a listed (or described) workflow execution."""
        attrs = execution.typed_search_attributes
        status = execution.status
        return cls(
            job_id=job_id_of(execution.id),
            workflow_id=execution.id,
            run_id=execution.run_id,
            status=_STATUS_NAMES.get(status, "unknown") if status is not None else "unknown",
            agent=attrs.get(SA_AGENT),
            phase=attrs.get(SA_PHASE),
            turns=attrs.get(SA_TURNS),
            tokens=attrs.get(SA_TOKENS),
            active_skills=tuple(attrs.get(SA_ACTIVE_SKILLS) or ()),
            start_time=execution.start_time,
            close_time=execution.close_time,
        )


def _literal(option: str, value: str) -> str:
    """`value` as a visibility-query string literal. Values are names (agents, skills,
    phases), so anything else is refused rather than escaped: the server's SQL-like parser
    treats quotes and backslashes differently from one visibility store to another."""
    if not _FILTER_VALUE.fullmatch(value):
        raise ConfigError(
            f"{option}: {value!r} is not a name (letters, digits, '.', '_', ':' and '-', "
            "at most 200)"
        )
    return f"'{value}'"


def jobs_query(
    *, agent: str | None = None, phase: str | None = None, skill: str | None = None
) -> str:
    """The visibility query of :meth:`TemporalEngine.list_jobs`: agent workflows (the latest
    run of each job, not the runs it continued from), filtered by agent, phase and a skill
    that is active.

    Raises:
        ConfigError: a filter value is not a name, or the phase is not one of :data:`PHASES`.
    """
    clauses = [
        f"WorkflowType = {_literal('workflow type', WORKFLOW_NAME)}",
        "ExecutionStatus != 'ContinuedAsNew'",
    ]
    if agent is not None:
        clauses.append(f"{SA_AGENT.name} = {_literal('--agent', agent)}")
    if phase is not None:
        if phase not in PHASES:
            raise ConfigError(f"--phase: {phase!r} is not a phase (one of {', '.join(PHASES)})")
        clauses.append(f"{SA_PHASE.name} = {_literal('--phase', phase)}")
    if skill is not None:
        # A keyword list matches when it holds the value.
        clauses.append(f"{SA_ACTIVE_SKILLS.name} = {_literal('--skill', skill)}")
    return " AND ".join(clauses)
