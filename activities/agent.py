"""`AgentActivities`: the agent workflow's side effects, as Temporal activities.

One activity per :class:`~skillweave.agent.effects.SideEffect` in
:data:`~skillweave.agent.effects.EFFECTS`, registered under its name (which the workflow
schedules by) and generated here, none written by hand: it takes the effect's input model,
calls the ``AgentServices`` method named as the effect (the worker's own for ``run_limits``)
and returns its result model; the worker registers :meth:`AgentActivities.definitions`. A
missing implementation fails when the activities are built, in one line. What this layer adds
is only what Temporal needs:

- **the worker's limits**: ``run_limits``, a local activity each run calls once at its start,
  answers the :class:`~skillweave.agent.effect_models.ActivityTimeouts` this worker's settings
  give (``WORKFLOW__*_TIMEOUT_SECONDS``, ``WORKFLOW__ACTIVITY_MAX_ATTEMPTS``): the worker owns
  the limits its runs' activities run under, not the client that started them;
- **heartbeats** from the long calls (``heartbeat`` in their descriptors: a model call, a skill
  activation that may run ``--help-json`` in a sandbox, a script run…), so a dead worker is
  noticed by the heartbeat timeout rather than the start-to-close one, and a cancellation is
  delivered (Temporal delivers it in a heartbeat's response);
- **the run's fields** (run id, skill, script, execution id) bound for each activity's log
  lines and span;
- **a check of the idempotency key** of a script run (:func:`checked_execution_key`, the one
  per-effect check, in :data:`_CHECKS`): the loop made it (``skillweave.agent.idempotency``) and
  it is used as it came, so both engines ask the manager under the same key; it must be this
  workflow's key for this run;
- **retryability**: the one rule of ``skillweave.engines.retries``, carried to Temporal by
  :mod:`activities.failures`;
- **retries told**: an attempt that fails and will be tried again puts its
  :class:`~skillweave.engines.retries.RetryNotice` in its heartbeat details (the line, then its
  fields), which the server keeps with the pending activity: the UI shows them there, and the
  engine's followers read them (``TemporalEngine.follow``), since the workflow never sees a
  retry the server schedules.

Cancelling a script run at the manager when the activity is cancelled is the services' run
(``AgentServices.run_skill_script``), the same on both engines.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final

from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.exceptions import TemporalError

from activities.failures import raises_application_errors
from activities.heartbeats import heartbeating
from skillweave.agent import (
    EFFECTS,
    RUN_SKILL_SCRIPT,
    ActivityTimeouts,
    LimitsInput,
    RunScriptInput,
    SideEffect,
    check_implemented,
    execution_key,
    run_id_of,
)
from skillweave.engines import AgentServices, Backoff, activity_timeouts, retry_notice
from skillweave.errors import AgentError
from skillweave.telemetry import bound

__all__ = ["AgentActivities", "checked_execution_key"]

_log = logging.getLogger(__name__)


def checked_execution_key(request: RunScriptInput, info: activity.Info) -> str:
    """The idempotency key a script run goes to the manager under: the request's, when it is
    the one :func:`~skillweave.agent.idempotency.execution_key` gives this workflow's run.

    Raises:
        AgentError: the activity was not scheduled by a workflow, or its request carries
            another run's or another run's key (it would reach somebody else's result).
    """
    if info.workflow_id is None:
        raise AgentError("run_skill_script must be scheduled by a workflow")
    run_id = run_id_of(info.workflow_id)
    key = execution_key(run_id, request.seq)
    if request.execution_id == key:
        return key
    raise AgentError(
        f"run_skill_script was asked to run under {request.execution_id!r}, "
        f"not this run's key {key!r}"
    )


_Activity = Callable[[Any], Coroutine[Any, Any, Any]]
"""An activity's body: a coroutine function of its one request."""

_CHECKS: Final[dict[str, Callable[[Any], object]]] = {
    RUN_SKILL_SCRIPT.name: lambda request: checked_execution_key(request, activity.info()),
}
"""What an activity checks of its request before it calls the implementation, by name."""


def _with_run_fields(fn: _Activity) -> _Activity:
    """Bind the request's run id (and skill, script, execution id when it has them) for the
    activity's log lines and its span (the SDK's tracing interceptor opened it)."""

    @functools.wraps(fn)
    async def wrapper(request: Any) -> Any:
        with bound(
            run_id=getattr(request, "run_id", None),
            skill=getattr(request, "skill", None),
            script=getattr(request, "script", None),
            execution_id=getattr(request, "execution_id", None),
        ):
            return await fn(request)

    return wrapper


def _backoff(policy: RetryPolicy | None) -> Backoff:
    """The back-off the server follows for this activity: its retry policy's numbers."""
    if policy is None:
        return Backoff()
    maximum = policy.maximum_interval or policy.initial_interval * 100  # the server's default
    return Backoff(
        initial=policy.initial_interval.total_seconds(),
        coefficient=policy.backoff_coefficient,
        maximum=maximum.total_seconds(),
        attempts=policy.maximum_attempts or 2**31 - 1,  # 0: no limit
    )


def _tells_retries(
    fn: _Activity, *, effect: SideEffect[Any, Any], services: AgentServices
) -> _Activity:
    """When the attempt fails and the rule tries it again, heartbeat its
    :class:`~skillweave.engines.retries.RetryNotice` (see the module docstring) before the
    failure leaves: the SDK sends the last details with the failure. Local activities have no
    heartbeat, and temporalio's own errors are the server's to retry. `services` say what the
    call is (``AgentServices.call_name``)."""

    @functools.wraps(fn)
    async def wrapper(request: Any) -> Any:
        try:
            return await fn(request)
        except TemporalError:
            raise
        except Exception as exc:
            info = activity.info()
            if not info.is_local:
                try:
                    notice = retry_notice(
                        exc,
                        call=services.call_name(effect, request),
                        attempt=info.attempt,
                        backoff=_backoff(info.retry_policy),
                    )
                    if notice is not None:
                        activity.heartbeat(notice.line(), notice.model_dump(mode="json"))
                except Exception:  # telling is best effort: the failure itself must leave
                    _log.warning(
                        "could not tell the retry of %s", info.activity_type, exc_info=True
                    )
            raise

    return wrapper


class AgentActivities:
    """The activities of the agent workflow, over one worker's services.

    Args:
        services: the side effects (model, skill library, store, sandbox manager): each
            activity calls its method named as the activity.
        heartbeat_seconds: how often long activities heartbeat; well under the workflow's
            heartbeat timeout (``ActivityTimeouts.heartbeat_seconds``).
        limits: what ``run_limits`` answers: the limits this worker's runs run under;
            by default those of its settings (``services.settings.workflow``).
        model_calls_read: what ``run_limits`` answers besides: that this worker's model calls
            do the resource reads a run defers to them (False: answer as an earlier release
            did, so its runs read with local activities; what benchmarks compare).
        effects: the side effects to run: every one (:data:`~skillweave.agent.effects.EFFECTS`)
            unless told.

    Raises:
        ConfigError: `services` (or this worker) implement no method for a side effect.
    """

    def __init__(
        self,
        services: AgentServices,
        *,
        heartbeat_seconds: float = 5.0,
        limits: ActivityTimeouts | None = None,
        model_calls_read: bool = True,
        effects: Sequence[SideEffect[Any, Any]] = EFFECTS,
    ) -> None:
        self._services = services
        self._heartbeat_seconds = heartbeat_seconds
        self.limits = (limits or activity_timeouts(services.settings.workflow)).model_copy(
            update={"model_calls_read": model_calls_read}
        )
        self._definitions = {effect.name: self._activity(effect) for effect in effects}

    def definitions(self) -> list[Callable[..., Any]]:
        """The activities, one per side effect, for ``Worker(activities=...)``."""
        return list(self._definitions.values())

    def definition(self, effect: SideEffect[Any, Any]) -> Callable[..., Any]:
        """The activity of `effect` (tests run it in an ``ActivityEnvironment``)."""
        return self._definitions[effect.name]

    async def run_limits(self, request: LimitsInput) -> ActivityTimeouts:
        """The limits the run's activities run under: this worker's (asked once per run)."""
        return self.limits

    def _activity(self, effect: SideEffect[Any, Any]) -> Callable[..., Any]:
        """The activity of `effect`: its implementation's method named as it, checked first
        (:data:`_CHECKS`), heartbeating if the effect is long, under its name."""
        owner: object = self if effect.implemented_by == "worker" else self._services
        check_implemented(owner, [effect], by=type(owner).__name__)
        check = _CHECKS.get(effect.name)
        every = self._heartbeat_seconds if effect.heartbeat else None

        async def run(request: Any) -> Any:
            if check is not None:
                check(request)
            # Looked up per call, so the one a test puts on the services is the one called.
            method = getattr(owner, effect.name)
            if every is None:
                return await method(request)
            async with heartbeating(every):
                return await method(request)

        run.__name__ = run.__qualname__ = effect.name
        run.__doc__ = f"The side effect {effect.name} (skillweave.agent.effects)."
        # The SDK decodes the request and encodes the result by these types.
        run.__annotations__ = {"request": effect.input, "return": effect.output}
        body = _tells_retries(_with_run_fields(run), effect=effect, services=self._services)
        return activity.defn(name=effect.name)(raises_application_errors(body))
