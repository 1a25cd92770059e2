"""What the model sent back, read: whether a reply is an answer, and how a turn is described.

A reply with no text and no tool call, or one cut off at the output limit (``stop_reason``
``max_tokens``), is not an answer: :func:`no_answer` gives the note that asks the model again and
the reason the run fails with after :data:`REPLY_RETRIES` such replies in a row.
:func:`reply_detail` is the ``model_called`` event's detail. Used by the agent loop
(``skillweave.agent.loop``). Pure.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from skillweave.agent.effect_models import ModelTurn
from skillweave.terminal import counted

__all__ = ["REPLY_RETRIES", "NoAnswer", "no_answer", "reply_detail"]

REPLY_RETRIES: Final = 2
"""How many replies in a row that are no answer (empty, or cut off at the output limit) the
model is asked again after; the next one ends the run ``failed``."""

_EMPTY_NOTE: Final = (
    "Your last reply was empty: no text and no tool call. Go on with the task: call one of "
    "the tools, or give your answer as text."
)


class NoAnswer(NamedTuple):
    """A reply that is no answer: the note asking again, and the reason a run fails with."""

    note: str
    reason: str


def no_answer(turn: ModelTurn, limit: int) -> NoAnswer | None:
    """What makes the reply `turn` (with no tool call) no answer under the output `limit`, or
    None when it is an answer."""
    if turn.stop_reason == "max_tokens":
        return NoAnswer(
            note=(
                f"Your last reply was cut off at the output limit ({limit} tokens), so it is "
                "not taken as your answer. Give your answer again, shorter, or go on with a "
                "tool call."
            ),
            reason=(
                f"truncated: the model's reply was cut off at the output limit ({limit} tokens)"
            ),
        )
    if not turn.message.text.strip():
        return NoAnswer(
            note=_EMPTY_NOTE,
            reason="empty reply: the model answered with no text and no tool call",
        )
    return None


def reply_detail(turn: ModelTurn) -> str:
    """What a model call brought back, for its ``model_called`` event."""
    message = turn.message
    cut = " (cut off at the output limit)" if turn.stop_reason == "max_tokens" else ""
    if message.tool_calls:
        return counted(len(message.tool_calls), "tool call") + cut
    if turn.stop_reason == "max_tokens":
        return "an answer cut off at the output limit"
    return "answer" if message.text.strip() else "an empty reply"
