"""A skill's evals as its author wrote them: ``evals/evals.json`` and ``evals/triggers.json``.

``evals/evals.json`` is skill-creator's format, read unchanged::

    {"skill_name": "unit-converter",
     "evals": [{"id": 1,
                "prompt": "Convert 5 km to miles",
                "expected_output": "about 3.11 miles",
                "files": ["evals/files/lengths.csv"],
                "expectations": ["The answer gives 3.11 miles"]}]}

and a superset of it: an eval may also list ``checks``, verified without a model (they are
graded first, :mod:`skillweave.evals.checks`)::

    "checks": [{"type": "file_exists", "path": "report.md"},
               {"type": "file_contains", "path": "report.md", "text": "3.11"},
               {"type": "file_matches_schema", "path": "stats.json", "schema": {...}},
               {"type": "answer_contains", "text": "3.11"},
               {"type": "script_ran", "script": "scripts/convert.py"},
               {"type": "script_not_run", "script": "scripts/convert.py"}]

A check's ``path`` names a file the run wrote under ``outputs/`` (``report.md`` or
``outputs/report.md``, the same file). ``evals/triggers.json`` is skill-creator's trigger-eval
list: ``[{"query": "...", "should_trigger": false}, ...]`` (``prompt`` is read as ``query``).

Both files come from a skill package, which anyone may have written: they are read strictly
(unknown keys in our superset are refused, skill-creator's own optional keys are kept), capped
(:data:`MAX_EVALS`, :data:`MAX_EXPECTATIONS`, …) and every error is a :class:`EvalSuiteError`
naming the file and the field. Pure: the callers read the bytes.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillweave.errors import SkillweaveError

__all__ = [
    "EVALS_FILE",
    "MAX_EVALS",
    "MAX_EVAL_FILES",
    "MAX_EXPECTATIONS",
    "MAX_SUITE_BYTES",
    "MAX_TRIGGERS",
    "TRIGGERS_FILE",
    "AnswerContains",
    "EvalCase",
    "EvalCheck",
    "EvalSuite",
    "EvalSuiteError",
    "FileContains",
    "FileExists",
    "FileMatchesSchema",
    "ScriptNotRun",
    "ScriptRan",
    "TriggerCase",
    "output_name",
    "parse_suite",
    "parse_triggers",
]

EVALS_FILE: Final = "evals/evals.json"
TRIGGERS_FILE: Final = "evals/triggers.json"
MAX_SUITE_BYTES: Final = 1_000_000
MAX_EVALS: Final = 500
MAX_EXPECTATIONS: Final = 50
MAX_CHECKS: Final = 50
MAX_EVAL_FILES: Final = 20
MAX_TRIGGERS: Final = 1_000
MAX_PROMPT_CHARS: Final = 32_000
"""As long as a user message may be (``engines.contract.MAX_MESSAGE_CHARS``)."""
MAX_TEXT_CHARS: Final = 2_000
"""An expectation, a check's text, an expected output's description."""

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_PATH_PART = re.compile(r"^[A-Za-z0-9._-]+$")


class EvalSuiteError(SkillweaveError):
    """A skill's ``evals/evals.json`` or ``evals/triggers.json`` cannot be used as it is.

    Attributes:
        source: the file (``unit-converter/evals/evals.json``).
        problem: what is wrong, naming the field.
    """

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem


def _relative(path: str, *, what: str) -> str:
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or any(part in ("", ".", "..") or not _PATH_PART.fullmatch(part) for part in parts)
    ):
        raise ValueError(f"{what} {path!r}: a relative path of letters, digits, '.', '_', '-'")
    return path


def output_name(path: str) -> str:
    """A check's path as the name of a file under ``outputs/`` (``outputs/`` dropped)."""
    return path.removeprefix("outputs/")


class _Check(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _PathCheck(_Check):
    path: str = Field(description="A file the run wrote under outputs/.")

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        return _relative(path, what="path")


class FileExists(_PathCheck):
    """The run wrote this file under ``outputs/``."""

    type: Literal["file_exists"] = "file_exists"


class FileContains(_PathCheck):
    """The file the run wrote holds this text."""

    type: Literal["file_contains"] = "file_contains"
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class FileMatchesSchema(_PathCheck):
    """The file the run wrote is JSON valid under this JSON Schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type: Literal["file_matches_schema"] = "file_matches_schema"
    schema_: dict[str, Any] = Field(alias="schema")


class AnswerContains(_Check):
    """The run's final answer holds this text."""

    type: Literal["answer_contains"] = "answer_contains"
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class _ScriptCheck(_Check):
    script: str = Field(description="A script path inside its skill, scripts/x.py.")
    skill: str | None = Field(default=None, description="None: any skill's script of that path.")

    @field_validator("script")
    @classmethod
    def _script(cls, script: str) -> str:
        return _relative(script, what="script")


class ScriptRan(_ScriptCheck):
    """The run ran this script (at least once, to completion or not)."""

    type: Literal["script_ran"] = "script_ran"


class ScriptNotRun(_ScriptCheck):
    """The run never ran this script."""

    type: Literal["script_not_run"] = "script_not_run"


EvalCheck = Annotated[
    FileExists | FileContains | FileMatchesSchema | AnswerContains | ScriptRan | ScriptNotRun,
    Field(discriminator="type"),
]


class EvalCase(BaseModel):
    """One eval: a task for the agent, its input files and what a good result holds."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = Field(description="Unique in the suite; skill-creator writes integers.")
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    expected_output: str = Field(default="", max_length=MAX_TEXT_CHARS)
    files: tuple[str, ...] = Field(default=(), max_length=MAX_EVAL_FILES)
    expectations: tuple[Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)], ...] = (
        Field(default=(), max_length=MAX_EXPECTATIONS)
    )
    checks: tuple[EvalCheck, ...] = Field(default=(), max_length=MAX_CHECKS)

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: object) -> str:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError("an integer or a short name")
        text = str(value)
        if not _ID.fullmatch(text):
            raise ValueError(f"{text!r}: letters, digits, '_' and '-', at most 64")
        return text

    @field_validator("files")
    @classmethod
    def _files(cls, files: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_relative(path, what="file") for path in files)

    @property
    def graded(self) -> int:
        """How many verdicts a job of this eval gets: its checks and its expectations."""
        return len(self.checks) + len(self.expectations)


class EvalSuite(BaseModel):
    """A skill's evals (``evals/evals.json``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    skill_name: str | None = None
    evals: tuple[EvalCase, ...] = Field(min_length=1, max_length=MAX_EVALS)


class TriggerCase(BaseModel):
    """A request, and whether the skill is meant for it (``evals/triggers.json``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    query: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    should_trigger: bool


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    return f"{where}: {first['msg']}"


def _json(text: str | bytes, source: str) -> Any:
    if len(text) > MAX_SUITE_BYTES:
        raise EvalSuiteError(source, f"larger than {MAX_SUITE_BYTES} bytes")
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as error:
        raise EvalSuiteError(source, f"not JSON ({error})") from None


def parse_suite(text: str | bytes, *, source: str, skill: str | None = None) -> EvalSuite:
    """The evals in `text` (``evals/evals.json``), checked.

    Raises:
        EvalSuiteError: not JSON, a field of the wrong shape, two evals with one id, or a
            ``skill_name`` that is not `skill` (when given).
    """
    data = _json(text, source)
    if not isinstance(data, dict):
        raise EvalSuiteError(source, 'an object: {"skill_name": ..., "evals": [...]}')
    try:
        suite = EvalSuite.model_validate(data)
    except ValidationError as error:
        raise EvalSuiteError(source, _first_problem(error)) from None
    seen: set[str] = set()
    for case in suite.evals:
        if case.id in seen:
            raise EvalSuiteError(source, f"evals: the id {case.id!r} is used twice")
        seen.add(case.id)
        if not case.graded:
            raise EvalSuiteError(source, f"eval {case.id}: no expectations and no checks")
    if skill is not None and suite.skill_name not in (None, skill):
        raise EvalSuiteError(
            source, f"skill_name {suite.skill_name!r} is not the skill's name {skill!r}"
        )
    return suite


def parse_triggers(text: str | bytes, *, source: str) -> tuple[TriggerCase, ...]:
    """The trigger cases in `text` (``evals/triggers.json``): a list, or ``{"evals": [...]}``;
    each item's ``query`` (or ``prompt``) and ``should_trigger``.

    Raises:
        EvalSuiteError: not JSON, the wrong shape, or more than :data:`MAX_TRIGGERS` cases.
    """
    data = _json(text, source)
    if isinstance(data, dict) and isinstance(data.get("evals"), list):
        data = data["evals"]
    if not isinstance(data, list):
        raise EvalSuiteError(source, 'a list: [{"query": ..., "should_trigger": false}, ...]')
    if len(data) > MAX_TRIGGERS:
        raise EvalSuiteError(source, f"more than {MAX_TRIGGERS} cases")
    cases = []
    for index, given in enumerate(data):
        item = given
        if isinstance(given, dict) and "query" not in given and "prompt" in given:
            item = {**given, "query": given["prompt"]}
        try:
            cases.append(TriggerCase.model_validate(item))
        except ValidationError as error:
            raise EvalSuiteError(source, f"[{index}].{_first_problem(error)}") from None
    return tuple(cases)
