"""What ends a tool call or a run early: a refusal the model reads, or a budget used up.

:class:`Refusal` is a tool call the loop answers with a message instead of running it;
:class:`BudgetExhausted` ends the run ``budget_exhausted`` with its reason. The checks here
(:func:`check_turns`, :func:`check_tokens`, :func:`count_run`, :func:`check_runs`) raise it with
the reason's text; :func:`string_argument` reads a required string argument or refuses the call.
Raised by the agent loop's collaborators (``skillweave.agent.dispatch``, ``approvals``,
``drafts``) and caught by the loop (``skillweave.agent.loop``). Pure.
"""

from __future__ import annotations

from skillweave.agent import disclosure
from skillweave.agent.state import AgentState
from skillweave.llm.messages import ToolCall
from skillweave.terminal import counted

__all__ = [
    "BudgetExhausted",
    "Refusal",
    "because",
    "check_runs",
    "check_tokens",
    "check_turns",
    "count_run",
    "string_argument",
]


def because(note: str) -> str:
    """The end of a sentence that says why a person refused something: ``": their note."``
    (their own closing mark kept), or ``"."`` when they gave none."""
    note = note.strip()
    if not note:
        return "."
    return f": {note}" + ("" if note[-1] in ".!?" else ".")


class Refusal(Exception):
    """A tool call the loop answers with a message instead of running it."""


class BudgetExhausted(Exception):
    """A budget of the run is used up; the message is the run's reason."""


def check_turns(state: AgentState) -> None:
    """Raise :class:`BudgetExhausted` when the run made all the model calls it may."""
    limit = state.budgets.max_turns
    if state.turn >= limit:
        raise BudgetExhausted(f"max_turns reached ({counted(limit, 'model call')})")


def check_tokens(state: AgentState) -> None:
    """Raise :class:`BudgetExhausted` when the run used all the tokens it may."""
    limit = state.budgets.max_tokens
    if state.usage.total_tokens >= limit:
        raise BudgetExhausted(f"max_tokens reached ({state.usage.total_tokens} of {limit})")


def check_runs(state: AgentState, more: int) -> None:
    """Raise :class:`BudgetExhausted` when `more` script runs would pass the run's limit."""
    limit = state.budgets.max_script_runs
    if state.script_runs + more > limit:
        raise BudgetExhausted(f"max_script_runs reached ({counted(limit, 'script run')})")


def count_run(state: AgentState) -> None:
    """Count one script run, or raise :class:`BudgetExhausted` when none is left."""
    check_runs(state, 1)
    state.script_runs += 1


def string_argument(call: ToolCall, name: str) -> str:
    """The string argument `name` of `call`, stripped; a :class:`Refusal` when missing or empty."""
    value = call.arguments.get(name)
    if not isinstance(value, str) or not value.strip():
        raise Refusal(disclosure.needs_string(call.name, name))
    return value.strip()
