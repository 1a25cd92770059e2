"""The per-skill secrets of runs, and masking them out of everything kept or answered.

:class:`RunSecrets` is built by ``ExecutionService`` from ``SANDBOX__SKILL_SECRETS``. The
run's preparation (``_preparation``) asks it for a script's environment, the egress grants
(``_grants``) for the secrets a network destination is given, admission (``_admission``)
whether a skill has any; the runner (``_runner``) and the stored results (``_results``) mask
every result through it, and the executor client masks full stdout/stderr logs with its
:attr:`~RunSecrets.masker`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Final

from skillweave.errors import ConfigError, ExecutionRejectedError
from skillweave.sandbox import (
    EXECUTION_ID_VARIABLE,
    ExecuteRequest,
    ExecutionResult,
    check_bound_names,
    check_env,
    configured_for,
    mask_result,
    output_masker,
)

__all__ = ["RunSecrets", "secrets_by_name"]

logger = logging.getLogger("skillweave.manager")

_MASK_INLINE_CHARS: Final = 64 * 1024
"""A result's inline stdout and stderr up to this many characters are masked on the event loop."""


def secrets_by_name(
    skill_secrets: Mapping[str, Mapping[str, str]],
) -> dict[str, Mapping[str, str]]:
    """The per-skill secrets by the skill's canonical name (``sandbox.bindings``).

    Raises:
        ConfigError: a configured skill name is not canonical (one line, with its canonical
            form), or its secrets are not a valid environment.
    """
    check_bound_names("SANDBOX__SKILL_SECRETS", skill_secrets)
    for name, values in skill_secrets.items():
        try:
            check_env(values)  # what every run of the skill will pass to the executor
        except ExecutionRejectedError as exc:
            raise ConfigError(f"SANDBOX__SKILL_SECRETS of {name!r}: {exc.reason}") from None
    return dict(skill_secrets)


class RunSecrets:
    """Which secrets a skill's runs get, and the masker of every configured one.

    Args:
        skill_secrets: per-skill environment secrets (plain values; never logged, and
            masked in every run's output; values too short to mask are warned about here).

    Raises:
        ConfigError: a configured skill name is not canonical, or its secrets are not a
            valid environment.
    """

    def __init__(self, skill_secrets: Mapping[str, Mapping[str, str]] | None) -> None:
        secrets = {k: dict(v) for k, v in (skill_secrets or {}).items()}
        self.masker = output_masker(secrets, warn=logger)  # warns of unmaskable ones
        self._by_name = secrets_by_name(secrets)

    def of_skill(self, skill: str) -> Mapping[str, str] | None:
        """The secrets configured for exactly `skill`'s canonical name; None: none are."""
        return configured_for(self._by_name, skill)

    def env_of(self, request: ExecuteRequest, *, owned: bool) -> dict[str, str]:
        """The script's environment from the request: its ``env``, its skill's secrets when
        the run is `owned` (admission's ``unbound``: exactly its canonical name's), and
        ``SKILLWEAVE_EXECUTION_ID``: the same on every attempt of the run, an idempotency key
        for what the script does outside its sandbox (a run may start again after its manager
        died; its result is kept once)."""
        return {
            **request.env,
            **((self.of_skill(request.skill) or {}) if owned else {}),
            EXECUTION_ID_VARIABLE: request.execution_id,
        }

    def mask(self, result: ExecutionResult) -> ExecutionResult:
        """`result` with every configured secret masked."""
        return mask_result(result, self.masker)

    async def masked(self, result: ExecutionResult) -> ExecutionResult:
        """`result` masked: on the event loop when its inline output is small (a thread hop
        costs more than masking a little), else in a thread, so as not to hold the loop up."""
        if len(result.stdout) + len(result.stderr) <= _MASK_INLINE_CHARS:
            return mask_result(result, self.masker)
        return await asyncio.to_thread(mask_result, result, self.masker)
