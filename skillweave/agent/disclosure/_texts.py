"""The refusals and notes the disclosure rules answer with, in the words the model reads.

Names previewed (:func:`names_preview`), an activation repeated or not allowed, a skill not
active, a tool not offered, a string or artifact-list argument missing, a package refused. Used
by the activation rules (``_activation``) and, through the package front, by the agent loop and
the MCP front door.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from skillweave.agent.disclosure._names import ACTIVATE_SKILL

_PREVIEW_NAMES: Final = 12


def names_preview(names: Sequence[str]) -> str:
    """Up to a dozen names, comma-separated, then how many more; ``(none)`` when empty."""
    shown = ", ".join(names[:_PREVIEW_NAMES])
    more = len(names) - _PREVIEW_NAMES
    return shown + (f" and {more} more" if more > 0 else "") if names else "(none)"


def already_active(name: str) -> str:
    """The note a repeated activation gets."""
    return f"Skill {name!r} is already active; its instructions are above."


def cannot_activate(name: str, attachable: Sequence[str]) -> str:
    """The refusal of an activation `name` is not allowed now (unknown, or a closed tree)."""
    return (
        f"Skill {name!r} cannot be activated now. Skills that can: {names_preview(attachable)}."
        " A sub-skill becomes available once its parent skill is active."
    )


def not_active(name: str, attachable: Sequence[str]) -> str:
    """The refusal of a resource read or a script run for a skill that is not active."""
    hint = (
        f"activate it first with {ACTIVATE_SKILL}(name={name!r})"
        if name in attachable
        else f"skills that can be activated now: {names_preview(attachable)}"
    )
    return f"Skill {name!r} is not active; {hint}."


def unknown_tool(name: str, offered: Sequence[str]) -> str:
    """The answer to a call of a tool that is not offered."""
    return f"There is no tool named {name!r}. Tools available now: {names_preview(offered)}."


def needs_string(tool: str, argument: str) -> str:
    """The refusal of a call whose string `argument` is missing or empty."""
    return f"{tool} needs {argument!r}, a non-empty string."


def artifact_list_needed(argument: str) -> str:
    """The refusal of a call whose artifact-list `argument` is not a list of strings."""
    return f"{argument!r} must be a list of artifact keys (strings)."


def package_refused(reason: object) -> str:
    """The activation note of a skill whose package the store refused: its instructions still
    help, its scripts cannot run (the manager runs packages)."""
    return f"this skill's scripts cannot run: its package is refused ({reason})"
