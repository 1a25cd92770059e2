"""The current details a run shows in the Temporal UI (``workflow.set_current_details``).

Markdown, rewritten by ``AgentWorkflow`` on every change: the phase, turn, tokens and script
runs, the active skills, the last step (in the words every other view uses), what waits for
approval, the outputs and why the run ended.
"""

from __future__ import annotations

from typing import Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from skillweave.agent.effect_models import ApprovalRequest
    from skillweave.agent.rendering import markdown_text
    from skillweave.agent.state import AgentState
    from skillweave.engines.contract import Phase
    from skillweave.terminal import counted

__all__ = ["current_details"]

_VERSION_CHARS: Final = 12


def current_details(
    state: AgentState,
    *,
    phase: Phase,
    run: int,
    last_step: str,
    awaiting: ApprovalRequest | None,
    last_error: str | None,
) -> str:
    """The details of a run in `state` and `phase`, in its `run`-th workflow run."""
    lines = [
        f"**{phase}** · turn {state.turn} of {state.budgets.max_turns} · "
        f"{counted(state.usage.total_tokens, 'token')} · "
        f"{counted(state.script_runs, 'script run')}" + (f" · run {run}" if run > 1 else ""),
    ]
    if state.active:
        skills = ", ".join(
            f"`{name}` @ {skill.version[:_VERSION_CHARS]}" for name, skill in state.active.items()
        )
        lines.append(f"**Active skills:** {skills}")
    if last_step:
        lines.append(f"**Last step:** {last_step}")
    if awaiting is not None:
        # Escaped: what is asked carries run text (a script's arguments, a registry's source).
        lines.append(f"**Waiting for approval:** {markdown_text(awaiting.describe())}")
    if state.outputs:
        lines.append(f"**Outputs:** {counted(len(state.outputs), 'artifact')}")
    if last_error or (state.finished and state.reason):
        # Escaped: an error or a reason may carry a model server's or a script's words.
        lines.append(f"**Reason:** {markdown_text(last_error or state.reason or '')}")
    return "\n\n".join(lines)
