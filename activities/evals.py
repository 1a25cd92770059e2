"""`EvalActivities`: an eval batch's side effects, as Temporal activities.

One activity per :class:`~skillweave.evals.effects.BatchEffect` in
:data:`~skillweave.evals.effects.BATCH_EFFECTS`, registered under its name (which
``workflows.evals`` schedules by) and generated here from the descriptor, none written by hand:
it takes the effect's input model, calls the ``EvalServices`` method named as the effect
(``skillweave.evals.services``) and returns its result model. The worker registers
:meth:`EvalActivities.definitions` beside the agent's activities, on the same task queue
(``workflows.worker``). A missing method fails when the activities are built, in one line
(the check the direct runner makes).

What this layer adds is what Temporal needs, as the agent's activities do (``activities.agent``),
with the same pieces:

- **heartbeats** from the long ones (``heartbeat`` in their descriptors: grading calls a model),
  :func:`activities.heartbeats.heartbeating`;
- **the job's fields** (its run id, the skill) bound for the activity's log lines and span;
- **retryability**: every error leaves through
  :func:`activities.failures.raises_application_errors`, the one place errors become
  ``ApplicationError`` (by ``skillweave.engines.retries``' rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from activities.failures import raises_application_errors
from activities.heartbeats import heartbeating
from skillweave.evals import BATCH_EFFECTS, BatchEffect, check_batch_services
from skillweave.telemetry import bound

__all__ = ["EvalActivities"]


class EvalActivities:
    """The activities of the eval batch workflow, over one worker's eval services.

    Args:
        services: an ``EvalServices`` (or anything with its methods): each activity calls its
            method named as the activity.
        heartbeat_seconds: how often long activities heartbeat; well under the heartbeat
            timeout the workflow gives them (the worker's ``ActivityTimeouts``).

    Raises:
        ConfigError: `services` implement no method for a batch effect
            (``skillweave.evals.runner.check_batch_services``, the direct runner's check too).
    """

    def __init__(self, services: object, *, heartbeat_seconds: float = 5.0) -> None:
        check_batch_services(services)
        self._services = services
        self._heartbeat_seconds = heartbeat_seconds
        self._definitions = {effect.name: self._activity(effect) for effect in BATCH_EFFECTS}

    def definitions(self) -> list[Callable[..., Any]]:
        """The activities, one per side effect, for ``Worker(activities=...)``."""
        return list(self._definitions.values())

    def definition(self, effect: BatchEffect[Any, Any]) -> Callable[..., Any]:
        """The activity of `effect` (tests run it in an ``ActivityEnvironment``)."""
        return self._definitions[effect.name]

    def _activity(self, effect: BatchEffect[Any, Any]) -> Callable[..., Any]:
        every = self._heartbeat_seconds if effect.heartbeat else None

        async def run(request: Any) -> Any:
            # Looked up per call, so the one a test puts on the services is the one called.
            method = getattr(self._services, effect.name)
            with bound(run_id=_run_id(request), skill=getattr(request, "skill", None)):
                if every is None:
                    return await method(request)
                async with heartbeating(every):
                    return await method(request)

        run.__name__ = run.__qualname__ = effect.name
        run.__doc__ = f"The eval batch side effect {effect.name} (skillweave.evals.effects)."
        # The SDK decodes the request and encodes the result by these types.
        run.__annotations__ = {"request": effect.input, "return": effect.output}
        return activity.defn(name=effect.name)(raises_application_errors(run))


def _run_id(request: Any) -> str | None:
    """The run a request is about: a job's inputs name it, a grade's result carries it."""
    run_id = getattr(request, "run_id", None)
    if run_id is None:
        result = getattr(request, "result", None)
        run_id = getattr(result, "run_id", None)
    return run_id
