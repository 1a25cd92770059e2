"""`SearchAttributes`: what ``AgentWorkflow`` writes to a run's search attributes, and when.

The attributes are ``SkillweaveAgent``, ``SkillweavePhase``, ``SkillweaveActiveSkills``,
``SkillweaveTurns`` and ``SkillweaveTokens`` (keys in :mod:`skillweave.engines.contract`). Each
upsert is an event in the run's history (and a write to the server's visibility store), so one is
written only when the phase, the active skills or the agent changes (so ``SkillweavePhase`` is
current: ops filter on ``running_script`` and ``awaiting_approval``), with the turns and tokens
riding along, and otherwise every tenth turn (:data:`COUNTS_EVERY_TURNS`). The phases of the
local reads (:data:`INSTANT_PHASES`) and the values a run started with are never written.
Workflow code: ``AgentWorkflow`` holds one per run.
"""

from __future__ import annotations

from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from skillweave.agent.state import AgentState
    from skillweave.engines.contract import (
        SA_ACTIVE_SKILLS,
        SA_AGENT,
        SA_PHASE,
        SA_TOKENS,
        SA_TURNS,
        Phase,
    )

__all__ = ["COUNTS_EVERY_TURNS", "INSTANT_PHASES", "SearchAttributes"]

COUNTS_EVERY_TURNS: Final = 10
"""A turn that changes only the counts (turns, tokens) writes them once this many turns have
passed since they were last written."""

INSTANT_PHASES: Final = frozenset({"starting", "reading", "searching"})
"""Phases of the local activities: over within the workflow task that began them, so nobody
could see them in visibility; they are not written there (the details and the ``status`` query
still show them)."""

_KEYS: Final = {
    "agent": SA_AGENT,
    "phase": SA_PHASE,
    "turns": SA_TURNS,
    "tokens": SA_TOKENS,
    "skills": SA_ACTIVE_SKILLS,
}


class SearchAttributes:
    """The search attributes of one workflow execution of a run.

    Args:
        agent: the agent's name, written with the first upsert if the run did not start
            with it (a run's first run); None: a continued run, which inherited it.
    """

    def __init__(self, *, agent: str | None) -> None:
        self._written: dict[str, Any] | None = None  # read at the first upsert
        self._agent = {"agent": agent} if agent is not None else {}

    def show(self, phase: Phase, state: AgentState) -> None:
        """Write the run's phase, active skills and counts, if an upsert is due."""
        if phase in INSTANT_PHASES:
            return
        values = {
            **self._agent,
            "phase": phase,
            "turns": state.turn,
            "tokens": state.usage.total_tokens,
            "skills": sorted(state.active),
        }
        if self._written is None:
            self._written = self._started_with()
        if self._due(self._written, values):
            self._upsert(self._written, values)

    @staticmethod
    def _started_with() -> dict[str, Any]:
        """The search attributes this run started with (the client sets the agent and
        "starting"; a run after continue-as-new inherits the last values): not written again."""
        attributes = workflow.info().typed_search_attributes
        found: dict[str, Any] = {
            name: attributes.get(key)
            for name, key in _KEYS.items()
            if name != "skills" and attributes.get(key) is not None
        }
        skills = attributes.get(SA_ACTIVE_SKILLS)
        if skills is not None:
            found["skills"] = sorted(skills)
        return found

    @staticmethod
    def _due(written: dict[str, Any], values: dict[str, Any]) -> bool:
        """Whether an upsert is due: anything but the counts changed (the phase, the active
        skills, the agent's name), or the counts are `COUNTS_EVERY_TURNS` turns old."""
        if any(written.get(name) != values[name] for name in values.keys() - {"turns", "tokens"}):
            return True
        return bool(values["turns"] >= written.get("turns", 0) + COUNTS_EVERY_TURNS)

    @staticmethod
    def _upsert(written: dict[str, Any], values: dict[str, Any]) -> None:
        changed = {name: value for name, value in values.items() if written.get(name) != value}
        if changed:
            workflow.upsert_search_attributes(
                [_KEYS[k].value_set(v) for k, v in changed.items()]  # type: ignore[attr-defined]
            )
            written.update(changed)
