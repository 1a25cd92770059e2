"""Masking a run's output: configured skill secrets, hidden in every byte of a script's stdout
and stderr that skillweave stores or shows.

The rule itself (which forms of a value, the shortest value masked, chunked streams) is
:class:`~skillweave.telemetry.masker.SecretMasker`'s, the one log lines use too. This module
says where it applies to a run:

- The MCP manager's execution service (``mcp_manager.executions``) masks every result it
  makes (inline stdout and stderr, also a partial secret where the cap cut them, and the
  ``error`` text) before the result is stored or answered, and every full stdout/stderr log
  (stored as an artifact when over the inline cap, up to the executor's capture cap) after its
  transfer from the sandbox was verified and before it is stored: the artifact's size and
  sha256 describe the masked bytes. Results read back from the store are masked again.
- The MCP front door (``mcp_manager.mcp_server``) masks the results it renders and the log
  artifacts it hands out, so results and logs stored before masking existed (or by a manager
  configured with fewer secrets) do not leave in clear either.
- Everything downstream only ever sees masked results: the transcript, events, the API, the
  CLI, traces and metrics (which carry no output text at all).

One masker holds the secrets of every skill, not only those of the skill that ran: the
running script receives only its own skill's values, but no configured value appears in any
run's output, whatever way it got there.

Not masked, by decision:

- **Files under outputs/.** They are the script's deliberate products (reports, archives,
  images) and the inputs of later scripts: rewriting bytes inside them would corrupt binary
  formats, and a script that means to pass its secret on can encode it past any masking. A
  skill must not write its secret to an output file; its author owns that choice.
- **Values shorter than** :data:`~skillweave.telemetry.masker.MIN_SECRET_CHARS`: the
  manager warns at start-up, naming the skill and the variable (never the value).
- **Other transformations** (split, compressed, encrypted, encoded twice): see the masker,
  which lists the forms it does mask (raw, reversed, upper- and lower-cased, JSON, URL, hex,
  base32, base64).

Masking is a safety net, not a boundary: it catches the secret a script prints by accident. A
script that means to leak its own secret can always encode it past any list of forms; what
bounds that is which skill receives which secret, and where its network may go.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from skillweave.sandbox.models import ExecutionResult
from skillweave.telemetry import MIN_SECRET_CHARS, SecretMasker

__all__ = ["is_run_log", "mask_result", "output_masker", "unmasked_secrets"]

_LOG_NAMES = frozenset({"stdout.txt", "stderr.txt"})


def unmasked_secrets(skill_secrets: Mapping[str, Mapping[str, str]]) -> list[tuple[str, str]]:
    """The (skill, variable) of each configured value too short to be masked, sorted."""
    return sorted(
        (skill, name)
        for skill, values in skill_secrets.items()
        for name, value in values.items()
        if len(value) < MIN_SECRET_CHARS
    )


def output_masker(
    skill_secrets: Mapping[str, Mapping[str, str]], *, warn: logging.Logger | None = None
) -> SecretMasker:
    """The masker of every run's output: all the skills' secret values.

    Args:
        skill_secrets: skill name -> variable -> value.
        warn: where to warn about each value too short to be masked (skill and variable
            named, never the value); None: say nothing (another part of the process does).
    """
    if warn is not None:
        for skill, name in unmasked_secrets(skill_secrets):
            warn.warning(
                "skill %s: secret %s is shorter than %d characters and is NOT masked in its "
                "runs' output or in logs; use a longer value",
                skill,
                name,
                MIN_SECRET_CHARS,
            )
    return SecretMasker(value for values in skill_secrets.values() for value in values.values())


def mask_result(result: ExecutionResult, masker: SecretMasker) -> ExecutionResult:
    """`result` with its stdout, stderr and error text masked; a stream cut at the inline cap
    also loses a partial secret at its end."""
    if not masker:
        return result
    return result.model_copy(
        update={
            "stdout": masker.mask_text(result.stdout, cut=result.stdout_truncated),
            "stderr": masker.mask_text(result.stderr, cut=result.stderr_truncated),
            "error": None if result.error is None else masker.mask_text(result.error),
        }
    )


def is_run_log(key: str) -> bool:
    """Whether `key` is a run's stored full stdout or stderr
    (``runs/{run_id}/executions/{digest}/{stdout|stderr}.txt``), not an output file."""
    parts = key.split("/")
    return (
        len(parts) == 5
        and parts[0] == "runs"
        and parts[2] == "executions"
        and parts[4] in _LOG_NAMES
    )
