"""The names a run's side effects are known by: the same on both engines, on every retry and
across continue-as-new.

A script run is the side effect that must happen at most once, so its idempotency key has one
owner, :func:`execution_key`, and both engines use the value the loop puts in
``RunScriptInput.execution_id`` unchanged. The key is built from the run id and the
transcript position (``seq``) the script run's result is stored at; positions never repeat
within a run, not even across continue-as-new, and a retry asks again for the same position.
Its shape, ``skillweave-run-{run}/script-{seq}``, is the Temporal workflow id and the script
run's activity id joined, which is what the Temporal activities derived by themselves before
this module existed: a script run first tried by an older worker is asked for under the same
key after an upgrade.

Pure: the agent loop and the workflow sandbox import it.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "RUN_KEY_PREFIX",
    "execution_key",
    "run_id_of",
    "run_key",
    "script_call_id",
]

RUN_KEY_PREFIX: Final = "skillweave-run-"
"""Prefix of a run's key (its Temporal workflow id)."""


def run_key(run_id: str) -> str:
    """The key of a run: one per run, found again from its id (the Temporal workflow id)."""
    return f"{RUN_KEY_PREFIX}{run_id}"


def run_id_of(key: str) -> str:
    """The run id in a key made by :func:`run_key` (else the key itself)."""
    return key.removeprefix(RUN_KEY_PREFIX)


def script_call_id(seq: int) -> str:
    """The id of the call that runs the script stored at `seq` (the Temporal activity id)."""
    return f"script-{seq}"


def execution_key(run_id: str, seq: int) -> str:
    """The idempotency key of the script run whose result is stored at `seq` in run `run_id`."""
    return f"{run_key(run_id)}/{script_call_id(seq)}"
