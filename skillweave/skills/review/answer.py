"""The model review's answer: its schema (:class:`ReviewAnswer`, and :data:`REVIEW_TOOL_SCHEMA`
as the tool the model is asked to call) and how an answer is read (:func:`read_answer`).

The answer is untrusted like the skill it judges (the skill may have steered it), so it is
read strictly: one call of ``report_findings`` with a JSON object, or a text that is exactly
one JSON object (a code fence around it tolerated); every field checked by pydantic, no
extra field; an answer that contradicts itself (a "clean" verdict with findings, findings
under a "findings" verdict missing, one line given two severities for one class) is refused
whole. :func:`read_answer` never raises: it returns the answer or one line saying why it is
unusable, and the caller (:mod:`skillweave.engines.skill_review`) then keeps the scanner's
findings alone.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.config import Severity
from skillweave.skills.review.rubric import ATTACK_CLASSES, AttackClass

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_REVIEW_FINDINGS",
    "REVIEW_TOOL",
    "REVIEW_TOOL_DESCRIPTION",
    "REVIEW_TOOL_SCHEMA",
    "ReviewAnswer",
    "ReviewedFinding",
    "read_answer",
]

REVIEW_TOOL: Final = "report_findings"
"""The tool the review asks the model to call with its answer."""
REVIEW_TOOL_DESCRIPTION: Final = (
    "Report the findings of the security review of the skill (an empty list and verdict "
    '"clean" when there are none). Call it exactly once.'
)
MAX_REVIEW_FINDINGS: Final = 50
"""The most findings an answer may hold; more is outside the schema."""
MAX_ANSWER_CHARS: Final = 200_000
"""The longest answer text read; a longer one is refused unread."""
_PROBLEM_CHARS: Final = 160
_FENCE: Final = re.compile(r"^```[a-zA-Z]*\n(?P<body>.*)\n```$", re.DOTALL)

Verdict = Literal["clean", "findings"]


class ReviewedFinding(BaseModel):
    """One finding as the model gives it (field ``class`` on the wire)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    attack_class: AttackClass = Field(alias="class")
    severity: Severity
    path: str = Field(min_length=1, max_length=1_000)
    line: int = Field(ge=1, le=10_000_000)
    evidence: str = Field(min_length=1, max_length=1_000)
    message: str = Field(min_length=1, max_length=500)


class ReviewAnswer(BaseModel):
    """The model's whole answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Verdict
    findings: tuple[ReviewedFinding, ...] = Field(max_length=MAX_REVIEW_FINDINGS)


REVIEW_TOOL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(get_args(Verdict))},
        "findings": {
            "type": "array",
            "maxItems": MAX_REVIEW_FINDINGS,
            "items": {
                "type": "object",
                "properties": {
                    "class": {"type": "string", "enum": list(ATTACK_CLASSES)},
                    "severity": {"type": "string", "enum": list(get_args(Severity))},
                    "path": {"type": "string", "description": "the file, as its <file> line"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based"},
                    "evidence": {
                        "type": "string",
                        "description": "an exact quote of that line, at most 300 characters",
                    },
                    "message": {"type": "string", "description": "one line: what and why"},
                },
                "required": ["class", "severity", "path", "line", "evidence", "message"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["verdict", "findings"],
    "additionalProperties": False,
}
"""The JSON Schema of :class:`ReviewAnswer`, as the tool's parameters."""


def read_answer(
    tool_calls: list[tuple[str, dict[str, Any] | str]], text: str
) -> ReviewAnswer | str:
    """The answer in a model's reply: its ``(name, arguments)`` tool calls (arguments the
    provider could not read as a JSON object given as their text), else its text.

    Returns:
        The answer, or one line saying why there is none that can be used ("answered outside
        the schema: ...", "contradicts itself: ...").
    """
    if tool_calls:
        if len(tool_calls) != 1 or tool_calls[0][0] != REVIEW_TOOL:
            names = ", ".join(sorted({name[:40] for name, _ in tool_calls}))
            return f"answered outside the schema: called {len(tool_calls)} tool(s) ({names})"
        arguments = tool_calls[0][1]
        data: Any = _json(arguments) if isinstance(arguments, str) else arguments
    else:
        data = _json(text)
    if isinstance(data, str):
        return data
    try:
        answer = ReviewAnswer.model_validate(data)
    except ValidationError as exc:
        return f"answered outside the schema: {_first_error(exc)}"
    problem = _contradiction(answer)
    return answer if problem is None else f"contradicts itself: {problem}"


def _json(text: str) -> Any:
    """The JSON object `text` is, or why it is not (a str)."""
    if len(text) > MAX_ANSWER_CHARS:
        return f"answered outside the schema: an answer of {len(text):,} characters"
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    if not body:
        return "answered outside the schema: an empty answer"
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return f"answered outside the schema: not JSON: {_shown(body)}"
    if not isinstance(data, dict):
        return f"answered outside the schema: JSON {type(data).__name__}, not an object"
    return data


def _contradiction(answer: ReviewAnswer) -> str | None:
    if answer.verdict == "clean" and answer.findings:
        return f'verdict "clean" with {len(answer.findings)} finding(s)'
    if answer.verdict == "findings" and not answer.findings:
        return 'verdict "findings" with no finding'
    seen: dict[tuple[str, int, str], str] = {}
    for finding in answer.findings:
        key = (finding.path, finding.line, finding.attack_class)
        earlier = seen.setdefault(key, finding.severity)
        if earlier != finding.severity:
            where = f"{_flat(finding.path)}:{finding.line}"
            return f"{where} is both {earlier} and {finding.severity} ({finding.attack_class})"
    return None


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    more = exc.error_count() - 1
    tail = f" (and {more} more)" if more else ""
    return f"{where}: {_shown(first['msg'])}{tail}"


def _flat(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PROBLEM_CHARS else flat[:_PROBLEM_CHARS] + "…"


def _shown(text: str) -> str:
    return repr(_flat(text))
