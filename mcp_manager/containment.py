"""How this manager's scripts are contained: :class:`Containment`, the setting and the mode in
force.

``SANDBOX__ISOLATION`` may be ``auto``, which only an executor resolves
(``sandbox_executor.isolation.plan_isolation``: bubblewrap when it runs a sandbox there, else
the namespaces fallback). The manager learns the outcome from its sandboxes: the local pool's
zygote says it when it is ready (the app waits for it at start-up), every sandbox in its
``/healthz`` (:class:`~mcp_manager.pool.WarmPool` passes it on) and every result
(:class:`~mcp_manager.executions.ExecutionService`); a setting that names a mode is in force at
once, since a sandbox in any other is refused. :func:`skillweave.sandbox.models.isolation_in_force`
is the one rule. The app reports the mode in force in its log, ``GET /healthz`` (``isolation``,
``isolation_setting``, ``isolation_note``) and ``skillweave_sandbox_isolation{mode,setting}``.
"""

from __future__ import annotations

import logging

from mcp_manager.metrics import ManagerMetrics
from skillweave.config import IsolationChoice
from skillweave.sandbox import Isolation, describe_isolation, isolation_in_force

__all__ = ["Containment"]

logger = logging.getLogger("skillweave.manager")


class Containment:
    """The isolation setting and, once known, the mode in force.

    Args:
        setting: ``SANDBOX__ISOLATION``.
        metrics: where ``skillweave_sandbox_isolation`` is set.
    """

    def __init__(self, setting: IsolationChoice, metrics: ManagerMetrics) -> None:
        self.setting: IsolationChoice = setting
        self.mode: Isolation | None = None
        self._metrics = metrics
        self.observe(None)  # a setting that names a mode is in force from the start

    def observe(self, reported: str | None) -> None:
        """Take what a sandbox reported (its zygote's ready line, its ``/healthz``, a result);
        the first mode in force (or a change of it) is logged and set in the metric."""
        mode = isolation_in_force(self.setting, reported)
        if mode is None or mode == self.mode:
            return
        if self.mode is not None:
            self._metrics.isolation.remove(self.mode, self.setting)
        self.mode = mode
        self._metrics.isolation.labels(mode=mode, setting=self.setting).set(1)
        if mode in ("none", "rlimits"):
            logger.warning("%s", self.note)
        else:
            logger.info("sandbox isolation: %s", self.note)

    @property
    def note(self) -> str:
        """The one line that says it (:func:`~skillweave.sandbox.models.describe_isolation`)."""
        return describe_isolation(self.mode, setting=self.setting)

    def health(self) -> dict[str, object]:
        """What ``/healthz`` says of it: ``isolation`` is the mode in force (null until the
        first sandbox of an ``auto`` setting said), ``isolation_setting`` the setting."""
        return {
            "isolation": self.mode,
            "isolation_setting": self.setting,
            "isolation_note": self.note,
        }
