"""`ScriptRuns`: the ``run_skill_script`` side effect (``AgentServices`` hands it here).

A script of an active skill runs in a sandbox (:class:`~skillweave.engines._script_executor.
ScriptExecutor`) and its result is stored as the tool's message in the transcript; the loop
gets its size, status and summary. A request the manager refuses for a reason the model can
fix is a tool result; every other failure is raised, counted as an infrastructure error.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from skillweave.agent import RunScriptInput, ScriptOutcome
from skillweave.engines._script_executor import ScriptExecutor
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.engines.worker_metrics import WorkerMetrics
from skillweave.errors import ExecutionRejectedError
from skillweave.sandbox import ExecuteRequest, ExecutionStatus, render_result, run_json_args

__all__ = ["ScriptRuns"]

_INLINE_OUTPUT_CHARS: Final = 8_000


class ScriptRuns:
    """``run_skill_script`` through `executor`, its result in `transcript`, counted in
    `metrics`."""

    def __init__(
        self,
        executor: ScriptExecutor,
        *,
        transcript: TranscriptRecorder,
        metrics: WorkerMetrics,
    ) -> None:
        self._executor = executor
        self._transcript = transcript
        self._metrics = metrics

    async def run(self, request: RunScriptInput) -> ScriptOutcome:
        """Run a script of an active skill in a sandbox; store the result as a tool message.
        Cancelling the call cancels the run at the manager too."""
        args = list(request.args)
        if request.run_json is not None:
            args = run_json_args(
                request.run_json.tool,
                request.run_json.arguments,
                shared_script=request.run_json.shared_script,
            )
        try:
            result = await self._executor.execute(
                ExecuteRequest(
                    execution_id=request.execution_id,
                    run_id=request.run_id,
                    skill=request.skill,
                    version=request.version,
                    script=request.script,
                    args=args,
                    inputs=list(request.inputs),
                )
            )
        except asyncio.CancelledError:
            await self._executor.cancel(request.execution_id)
            raise
        except ExecutionRejectedError as exc:
            # Only what the model can fix is a rejection (``skillweave.sandbox.client``): a
            # refused token or store is raised, waited for and retried, never told the model.
            self._metrics.script_runs.labels(outcome="error").inc()
            text = f"The script was not run: {exc}"
            summary = clip(text)
            # Refused before any sandbox was claimed: no script run, nothing off the run's budget.
            return await self._answer(request, text, summary, status="error", ran=False)
        except Exception:
            self._metrics.script_runs.labels(outcome="infrastructure_error").inc()
            raise
        self._metrics.script_runs.labels(outcome=result.status).inc()
        text = render_result(result, inline_chars=_INLINE_OUTPUT_CHARS)
        outputs = tuple(output.ref for output in result.outputs)
        listed = ", ".join(ref.key for ref in outputs) or "none"
        summary = clip(
            f"[{request.tool_name} {request.skill} {request.script}: {result.status} "
            f"(exit {result.exit_code}) in {result.duration_ms} ms; outputs: {listed}; "
            f"the full result is elided to save context]"
        )
        return await self._answer(
            request,
            text,
            summary,
            status=result.status,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            outputs=outputs,
        )

    async def _answer(
        self,
        request: RunScriptInput,
        text: str,
        summary: str,
        *,
        status: ExecutionStatus,
        **ran: Any,
    ) -> ScriptOutcome:
        """Store `text` as the call's tool result (an error unless `status` is
        ``succeeded``) and say so; `ran` holds the outcome's other fields."""
        error = status != "succeeded"
        chars = await self._transcript.tool_result(
            request, tool=request.tool_name, text=text, error=error, summary=summary
        )
        return ScriptOutcome(
            seq=request.seq, chars=chars, is_error=error, summary=summary, status=status, **ran
        )
