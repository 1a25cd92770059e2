"""How a run's ``AgentWorkflow`` is started: its id, input, UI summary and details, and first
search attributes (:func:`run_start`), the one rule for both places that start one.

The Temporal engine's client starts a run as a workflow of its own
(``skillweave.engines.temporal._start``); an eval batch starts each of its jobs' runs as a
child workflow (``workflows.evals``). Both take a :class:`RunStart` from here, so a job's run
looks in the Temporal UI, in ``skillweave runs`` and in visibility queries exactly like any
other run.

Pure (pydantic models and ``temporalio.common`` keys only): the workflow sandbox passes it
through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from temporalio.common import SearchAttributePair, TypedSearchAttributes

from skillweave.config import CatalogMode
from skillweave.engines.base import RunRequest
from skillweave.engines.contract import SA_AGENT, SA_PHASE, AgentWorkflowInput, workflow_id
from skillweave.terminal import counted

__all__ = ["SUMMARY_MAX_CHARS", "RunStart", "details_of", "run_start", "summary_of"]

SUMMARY_MAX_CHARS: Final = 200


@dataclass(frozen=True)
class RunStart:
    """What a run's workflow is started with (see the module docstring).

    Attributes:
        workflow_id: the run's workflow id (``contract.workflow_id``).
        input: the workflow's input.
        summary: the one line the UI shows for it (:func:`summary_of`).
        details: the fixed details the UI shows (:func:`details_of`).
        search_attributes: its agent, and the phase ``starting``.
    """

    workflow_id: str
    input: AgentWorkflowInput
    summary: str
    details: str
    search_attributes: TypedSearchAttributes


def run_start(
    request: RunRequest,
    *,
    catalog_mode: CatalogMode | None = None,
    catalog_top_k: int | None = None,
) -> RunStart:
    """How the run `request` is started. `catalog_mode` and `catalog_top_k`: the settings'
    catalog, for a spec that sets none (None: the workflow input's defaults)."""
    catalog: dict[str, object] = {}
    if catalog_mode is not None:
        catalog["catalog_mode"] = catalog_mode
    if catalog_top_k is not None:
        catalog["catalog_top_k"] = catalog_top_k
    return RunStart(
        workflow_id=workflow_id(request.run_id),
        input=AgentWorkflowInput(request=request, **catalog),  # type: ignore[arg-type]
        summary=summary_of(request),
        details=details_of(request),
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(SA_AGENT, request.agent.name),
                SearchAttributePair(SA_PHASE, "starting"),
            ]
        ),
    )


def summary_of(request: RunRequest) -> str:
    """The one-line summary the UI shows for the run: ``agent: task``, at most 200 chars."""
    line = " ".join(f"{request.agent.name}: {request.task}".split())
    return line if len(line) <= SUMMARY_MAX_CHARS else line[: SUMMARY_MAX_CHARS - 1] + "…"


def details_of(request: RunRequest) -> str:
    """The fixed details the UI shows for the run (markdown): its id (the one every door
    knows it by), task, agent, model, skills, limits. (Each model call's event names the
    model that answered.)"""
    spec = request.agent
    skills = ", ".join(f"`{name}`" for name in spec.skills) if spec.skills else "all enabled"
    limits = spec.limits
    model = f"`{spec.model}`" if spec.model else "the worker's default (MODEL__*)"
    lines = [
        f"**Run:** `{request.run_id}` (`skillweave runs show {request.run_id}`)",
        f"**Task:** {request.task.strip()}",
        f"**Agent:** `{spec.name}`" + (f" — {spec.description}" if spec.description else ""),
        f"**Model:** {model}",
        f"**Skills allowed:** {skills}",
        f"**Limits:** {counted(limits.max_turns, 'turn')} · "
        f"{counted(limits.max_script_runs, 'script run')} · {counted(limits.max_tokens, 'token')}",
    ]
    if request.inputs:
        names = ", ".join(f"`{ref.key.rsplit('/', 1)[-1]}`" for ref in request.inputs)
        lines.append(f"**Inputs:** {names}")
    return "\n\n".join(lines)
