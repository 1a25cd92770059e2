"""`Acquisitions`: the ``find_skills`` and ``request_skill`` calls of an agent that asks for
registry skills.

:meth:`Acquisitions.find` has the runtime search the registries and remembers what it found
(``request_skill``'s enum). :meth:`Acquisitions.request` refuses what the run may not ask for
(a skill not found, one installed already, one past ``max_installs``), has the runtime check
the request before anyone is asked (``prepare_skill_request``: the entry, its version, scan and
signature; a refusal there is the tool result), asks a person (``skillweave.agent.approvals``,
with the origin, version, scan and signature in front of them) and has the runtime install
exactly the version they approved (``install_skill``). The run then pins that version
(``AgentState.acquired``) and may activate it. Called by the tool dispatch
(``skillweave.agent.dispatch``) when the run may acquire. Pure: every side effect is one
runtime call.
"""

from __future__ import annotations

from skillweave.agent.acquisition import (
    FOUND_MAX,
    already_acquired,
    not_approved,
    not_found,
    too_many_installs,
)
from skillweave.agent.approvals import Approvals
from skillweave.agent.effect_models import (
    ApprovalRequest,
    FindSkillsInput,
    InstallSkillInput,
    SkillRequestInput,
)
from skillweave.agent.effects import FIND_SKILLS, INSTALL_SKILL, PREPARE_SKILL_REQUEST, Runtime
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, string_argument
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import AgentState, FoundSkill
from skillweave.llm.messages import ToolCall

__all__ = ["Acquisitions"]


class Acquisitions:
    """The registry skills one run finds and asks for.

    Args:
        runtime: where every side effect goes.
        spec: the agent (its ``acquisition`` and ``approvals`` options).
        journal: the run's transcript and events.
        approvals: who asks the person.
        top_k: how many hits a search returns (the catalog's).
    """

    def __init__(
        self,
        runtime: Runtime,
        spec: AgentSpec,
        journal: Journal,
        approvals: Approvals,
        *,
        top_k: int,
    ) -> None:
        self._runtime = runtime
        self._spec = spec
        self._journal = journal
        self._approvals = approvals
        self._top_k = top_k

    async def find(self, state: AgentState, call: ToolCall) -> None:
        """Answer a ``find_skills`` call (raises :class:`Refusal` for what it refuses)."""
        query = string_argument(call, "query")
        outcome = await self._runtime.call(
            FIND_SKILLS,
            FindSkillsInput(
                run_id=state.run_id,
                seq=state.next_seq,
                tool_call_id=call.id,
                query=query[:1_000],
                top_k=self._top_k,
                registries=self._spec.acquisition.registries,
            ),
        )
        self._journal.append_outcome(state, outcome, kind="tool")
        for hit in outcome.found:
            state.found.pop(hit.name, None)  # found again: the newest
            state.found[hit.name] = FoundSkill(registry=hit.registry, version=hit.version)
        while len(state.found) > FOUND_MAX:
            state.found.pop(next(iter(state.found)))
        names = ", ".join(hit.name for hit in outcome.found) or "nothing"
        self._journal.emit(state, "registry_searched", tool=call.name, detail=f"{query!r}: {names}")

    async def request(self, state: AgentState, call: ToolCall) -> None:
        """Answer a ``request_skill`` call (raises :class:`Refusal` for what it refuses)."""
        name = string_argument(call, "name")
        if name in state.acquired:
            raise Refusal(already_acquired(name))
        hit = state.found.get(name)
        if hit is None:
            raise Refusal(not_found(name, state.found))
        limit = self._spec.acquisition.max_installs
        if len(state.acquired) >= limit:
            raise Refusal(too_many_installs(limit))
        registry = call.arguments.get("registry")
        checked = await self._runtime.call(
            PREPARE_SKILL_REQUEST,
            SkillRequestInput(
                run_id=state.run_id,
                seq=state.next_seq,
                tool_call_id=call.id,
                name=name,
                registry=registry if isinstance(registry, str) and registry else hit.registry,
                registries=self._spec.acquisition.registries,
            ),
        )
        if not checked.ready or checked.origin is None:
            self._journal.append_outcome(state, checked, kind="tool")
            self._journal.emit(
                state,
                "skill_requested",
                skill=name,
                version=checked.version or None,
                tool=call.name,
                status="refused",
                detail=checked.summary,
            )
            return
        self._journal.emit(
            state,
            "skill_requested",
            skill=name,
            version=checked.version,
            tool=call.name,
            status="checked",
            detail=f"from {checked.origin.describe()}; scan: {checked.scan}",
        )
        request = ApprovalRequest(
            seq=state.next_seq,
            skill=name,
            script="",
            action="install",
            version=checked.version,
            report=checked.scan,
            origin=checked.origin,
            decision=checked.decision,
            signature=checked.signature,
            timeout_seconds=self._spec.approvals.timeout_seconds,
        )
        decision = await self._approvals.ask(state, request, request.describe())
        if not decision.approved:
            raise Refusal(not_approved(name, decision.note))
        outcome = await self._runtime.call(
            INSTALL_SKILL,
            InstallSkillInput(
                run_id=state.run_id,
                seq=state.next_seq,
                tool_call_id=call.id,
                name=name,
                version=checked.version,
                origin=checked.origin,
                approved_by=decision.by,
            ),
        )
        self._journal.append_outcome(state, outcome, kind="tool")
        if outcome.installed:
            state.acquired[name] = outcome.version
            if name not in state.roots:
                state.roots = (*state.roots, name)
        self._journal.emit(
            state,
            "skill_installed",
            skill=name,
            version=outcome.version or checked.version,
            tool=call.name,
            status="installed" if outcome.installed else "refused",
            detail=outcome.summary,
        )
