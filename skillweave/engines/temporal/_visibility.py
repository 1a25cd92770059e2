"""Temporal visibility: what the server tells of runs without asking a worker: which runs it
holds, filtered by the search attributes the workflow keeps up to date (agent, phase, active
skills), one run's row, and what a run was started with (its history's first event).

:class:`RunRow` is one run as visibility lists (or the server describes) it; :func:`runs_query`
builds the visibility query of :meth:`Visibility.list_runs`, also used by the CLI
(``skillweave runs list``, the in-flight check before a deploy); :class:`Visibility` is
``TemporalEngine``'s collaborator behind ``list_runs``, ``describe`` and ``request``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final, get_args

from pydantic import BaseModel, ConfigDict
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError

from skillweave.engines.base import RunRequest
from skillweave.engines.contract import (
    SA_ACTIVE_SKILLS,
    SA_AGENT,
    SA_PHASE,
    SA_TOKENS,
    SA_TURNS,
    WORKFLOW_NAME,
    AgentWorkflowInput,
    Phase,
    run_id_of,
)
from skillweave.engines.temporal._errors import first_line
from skillweave.engines.temporal._handles import RunHandles
from skillweave.errors import AgentError, ConfigError

__all__ = ["PHASES", "RunRow", "Visibility", "runs_query"]

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


class RunRow(BaseModel):
    """One run as visibility lists it: no query to a worker needed."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    workflow_id: str
    execution_run_id: str
    status: str
    agent: str | None = None
    phase: str | None = None
    turns: int | None = None
    tokens: int | None = None
    active_skills: tuple[str, ...] = ()
    start_time: datetime
    close_time: datetime | None = None

    @classmethod
    def of(cls, execution: WorkflowExecution) -> RunRow:
        """The row of a listed (or described) workflow execution."""
        attrs = execution.typed_search_attributes
        status = execution.status
        return cls(
            run_id=run_id_of(execution.id),
            workflow_id=execution.id,
            execution_run_id=execution.run_id,
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


class Visibility:
    """What the server tells of an engine's runs without a worker.

    Args:
        client: the engine's client.
        handles: the runs' workflows (and the server's refusals as errors).
    """

    def __init__(self, client: Client, handles: RunHandles) -> None:
        self.client = client
        self._handles = handles

    async def list_runs(
        self,
        *,
        agent: str | None = None,
        phase: str | None = None,
        skill: str | None = None,
        limit: int = 50,
    ) -> list[RunRow]:
        """Runs on the server, newest first, filtered by agent, phase and an active skill.

        Raises:
            ConfigError: a filter is not a name or not a phase.
        """
        query = runs_query(agent=agent, phase=phase, skill=skill)
        try:
            return [
                RunRow.of(execution)
                async for execution in self.client.list_workflows(query, limit=limit)
            ]
        except RPCError as exc:
            raise AgentError(f"listing runs failed: {first_line(exc)}") from None

    async def describe(self, run_id: str) -> RunRow:
        """The run's row from the server (no worker needed).

        Raises:
            AgentError: there is no such run.
        """
        with self._handles.errors(run_id):
            return RunRow.of(await self._handles.of(run_id).describe())

    async def request(self, run_id: str) -> RunRequest:
        """What the run was started with (task, agent, inputs), from its workflow's first
        history event: no worker needed, for a run started by any client.

        Raises:
            AgentError: there is no such run.
        """
        with self._handles.errors(run_id):
            async for event in self._handles.of(run_id).fetch_history_events(page_size=1):
                payloads = event.workflow_execution_started_event_attributes.input.payloads
                [start] = await self.client.data_converter.decode(payloads, [AgentWorkflowInput])
                return start.request
        raise AgentError(f"no run {run_id!r} on this Temporal namespace")


def runs_query(
    *, agent: str | None = None, phase: str | None = None, skill: str | None = None
) -> str:
    """The visibility query of :meth:`TemporalEngine.list_runs`: agent workflows (the latest
    execution of each run, not the executions it continued from), filtered by agent, phase and
    a skill that is active.

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
