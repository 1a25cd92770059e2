"""`ScriptRuns`: a script run the model asked for, from its checks to its result.

A ``run_skill_script`` call or a call of an executable skill's own tool names its input
artifacts (ones the run knows), passes what active skills' ``allowed-tools`` permit
(``skillweave.agent.disclosure``), is approved by a person when the agent requires it and no
active skill pre-approves it (``skillweave.agent.approvals``), counts against the run's script
runs, and runs through the runtime; its output artifacts become the run's. Called by the tool
dispatch (``skillweave.agent.dispatch``). Pure: every side effect is one runtime call.
"""

from __future__ import annotations

from skillweave.agent import disclosure
from skillweave.agent.approvals import Approvals
from skillweave.agent.disclosure import ARGS_NOT_STRINGS, INPUT_ARTIFACTS, names_preview
from skillweave.agent.effect_models import RunScriptInput, ToolInvocation
from skillweave.agent.effects import RUN_SKILL_SCRIPT, Runtime
from skillweave.agent.idempotency import execution_key
from skillweave.agent.journal import Journal
from skillweave.agent.refusals import Refusal, count_run, string_argument
from skillweave.agent.spec import AgentSpec
from skillweave.agent.state import ActiveSkill, AgentState, SkillTool
from skillweave.llm.messages import ToolCall
from skillweave.storage.base import ArtifactRef

__all__ = ["ScriptRuns"]


class ScriptRuns:
    """Runs one run's scripts against `runtime`, under the agent's approval settings."""

    def __init__(
        self, runtime: Runtime, spec: AgentSpec, journal: Journal, approvals: Approvals
    ) -> None:
        self._runtime = runtime
        self._spec = spec
        self._journal = journal
        self._approvals = approvals

    def _artifacts(self, state: AgentState, keys: object, argument: str) -> tuple[ArtifactRef, ...]:
        if keys is None:
            return ()
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise Refusal(disclosure.artifact_list_needed(argument))
        refs = []
        for key in keys:
            ref = state.artifacts.get(key.strip())
            if ref is None:
                raise Refusal(
                    f"Unknown artifact {key!r}. Artifacts of this run: "
                    f"{names_preview(list(state.artifacts))}."
                )
            refs.append(ref)
        return tuple(refs)

    async def run_script(self, state: AgentState, call: ToolCall, skill: ActiveSkill) -> None:
        """Answer a ``run_skill_script`` call of the active `skill`."""
        script = string_argument(call, "script")
        args = call.arguments.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            raise Refusal(ARGS_NOT_STRINGS)
        inputs = self._artifacts(state, call.arguments.get("inputs"), "inputs")
        await self._execute(
            state,
            call,
            skill=skill,
            script=script,
            args=tuple(str(a) for a in args),
            inputs=inputs,
            run_json=None,
        )

    async def run_tool(
        self, state: AgentState, call: ToolCall, skill: ActiveSkill, tool: SkillTool
    ) -> None:
        """Answer a call of `tool`, which the active `skill` registered."""
        arguments = dict(call.arguments)
        inputs = self._artifacts(state, arguments.pop(INPUT_ARTIFACTS, None), INPUT_ARTIFACTS)
        await self._execute(
            state,
            call,
            skill=skill,
            script=tool.script,
            args=(),
            inputs=inputs,
            run_json=ToolInvocation(
                tool=tool.tool, arguments=arguments, shared_script=tool.shared_script
            ),
            tool=tool,
        )

    async def _execute(
        self,
        state: AgentState,
        call: ToolCall,
        *,
        skill: ActiveSkill,
        script: str,
        args: tuple[str, ...],
        inputs: tuple[ArtifactRef, ...],
        run_json: ToolInvocation | None,
        tool: SkillTool | None = None,
    ) -> None:
        if not disclosure.permits(state.active, skill=skill.name, script=script, tool=tool):
            what = call.name if tool is not None else f"Running {skill.name}/{script}"
            raise Refusal(disclosure.not_permitted(state.active, what))
        if self._spec.approvals.required(skill.name) and not disclosure.pre_approved(
            state.active, skill=skill.name, script=script, tool=tool
        ):
            await self._approvals.approve_run(state, skill=skill.name, script=script, args=args)
        count_run(state)
        seq = state.next_seq
        outcome = await self._runtime.call(
            RUN_SKILL_SCRIPT,
            RunScriptInput(
                run_id=state.run_id,
                execution_id=execution_key(state.run_id, seq),
                skill=skill.name,
                version=skill.version,
                script=script,
                args=args,
                inputs=inputs,
                seq=seq,
                tool_call_id=call.id,
                tool_name=call.name,
                run_json=run_json,
            ),
        )
        if not outcome.ran:
            state.script_runs -= 1  # refused before any sandbox was claimed: not a run
        self._journal.append_outcome(state, outcome, kind="script")
        for ref in outcome.outputs:
            state.artifacts[ref.key] = ref
            state.outputs.append(ref)
        self._journal.emit(
            state,
            "script_ran",
            skill=skill.name,
            tool=call.name,
            detail=script,
            status=outcome.status,
            duration_ms=outcome.duration_ms,
            artifacts=outcome.outputs,
        )
