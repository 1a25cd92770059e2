"""The model review of a skill (``skills.scan.review_model``, off by default): the fixed rubric,
the bounded bundle of files sent, the answer's schema and how it is read, and how the model's
findings join the scanner's. Pure: no model is called here (``skillweave.llm`` is a sibling
layer); :mod:`skillweave.engines.skill_review` asks the model and the doors (admissions,
agent drafts) apply :func:`review_report`.

- :mod:`~skillweave.skills.review.rubric`: attack classes, severities, the system prompt;
- :mod:`~skillweave.skills.review.bundle`: the files as one bounded, wrapped user message;
- :mod:`~skillweave.skills.review.answer`: :class:`ReviewAnswer`, the tool schema, reading;
- :mod:`~skillweave.skills.review.findings`: evidence checked, findings joined;
- :mod:`~skillweave.skills.review.reviewer`: :class:`SkillReviewer` and the fail-safe rule.
"""

from skillweave.skills.review.answer import (
    MAX_REVIEW_FINDINGS,
    REVIEW_TOOL,
    REVIEW_TOOL_DESCRIPTION,
    REVIEW_TOOL_SCHEMA,
    ReviewAnswer,
    ReviewedFinding,
    read_answer,
)
from skillweave.skills.review.bundle import ReviewBundle, bundle_files
from skillweave.skills.review.findings import judged, model_findings, reviewed
from skillweave.skills.review.reviewer import (
    NOT_REVIEWED,
    SkillReviewer,
    not_reviewed,
    one_line,
    review_report,
)
from skillweave.skills.review.rubric import (
    ATTACK_CLASSES,
    SEVERITY_MEANINGS,
    SYSTEM_PROMPT,
    AttackClass,
    review_rule,
)

__all__ = [
    "ATTACK_CLASSES",
    "MAX_REVIEW_FINDINGS",
    "NOT_REVIEWED",
    "REVIEW_TOOL",
    "REVIEW_TOOL_DESCRIPTION",
    "REVIEW_TOOL_SCHEMA",
    "SEVERITY_MEANINGS",
    "SYSTEM_PROMPT",
    "AttackClass",
    "ReviewAnswer",
    "ReviewBundle",
    "ReviewedFinding",
    "SkillReviewer",
    "bundle_files",
    "judged",
    "model_findings",
    "not_reviewed",
    "one_line",
    "read_answer",
    "review_report",
    "review_rule",
    "reviewed",
]
