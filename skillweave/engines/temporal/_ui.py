"""What the Temporal UI shows of a run: its page (:func:`ui_link`), and the one-line summary and
fixed details a workflow is started with (:func:`summary_of`, :func:`details_of`).

The engine gives the summary and details at start; the CLI prints the link.
"""

from __future__ import annotations

from typing import Final

from skillweave.engines.base import RunRequest
from skillweave.engines.contract import workflow_id
from skillweave.terminal import counted

__all__ = ["SUMMARY_MAX_CHARS", "details_of", "summary_of", "ui_link"]

SUMMARY_MAX_CHARS: Final = 200


def ui_link(base: str, namespace: str, run_id: str) -> str:
    """The Temporal UI page of a run's workflow."""
    return f"{base.rstrip('/')}/namespaces/{namespace}/workflows/{workflow_id(run_id)}"


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
