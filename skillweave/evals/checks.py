"""The deterministic checks of an eval (``checks`` in ``evals/evals.json``), judged without a
model: :func:`check_verdict`.

Each check becomes a :class:`~skillweave.evals.results.Verdict` (``by="check"``) whose text is
the check as a sentence (``outputs/report.md exists``) and whose evidence says what it saw
(``outputs: stats.json, report.md``). ``EvalServices.grade_eval_job`` judges every check of a
job first, then hands the expectations to the grader.

Text is compared exactly (case and spacing count). A JSON Schema comes from the skill's
author: it is checked itself before it judges anything (an invalid schema is a failed verdict
saying so, never a crash), and its ``$ref`` resolve only inside the schema: nothing is ever
fetched (an empty ``referencing`` registry, no retrieval).
"""

from __future__ import annotations

import json
from typing import Any, Final, assert_never

import jsonschema
from referencing import Registry
from referencing.exceptions import Unresolvable

from skillweave.evals.evidence import MAX_OUTPUT_BYTES, JobEvidence, OutputFile
from skillweave.evals.results import Verdict
from skillweave.evals.suite import (
    AnswerContains,
    EvalCheck,
    FileContains,
    FileExists,
    FileMatchesSchema,
    ScriptNotRun,
    ScriptRan,
    output_name,
)

__all__ = ["check_sentence", "check_verdict"]

_CONTEXT_CHARS: Final = 60
"""Characters shown each side of a match."""
_SHOWN_CHARS: Final = 300
"""The longest piece of a run's text an evidence line quotes."""
_LISTED: Final = 20
"""Names an evidence line lists (output files, scripts)."""
_NO_RETRIEVAL: Final = Registry()
"""A registry that holds nothing and retrieves nothing: a remote ``$ref`` is unresolvable."""


def check_sentence(check: EvalCheck) -> str:
    """`check` as a sentence: ``outputs/report.md contains "3.11"``."""
    match check:
        case FileExists():
            return f"outputs/{output_name(check.path)} exists"
        case FileContains():
            return f"outputs/{output_name(check.path)} contains {_quoted(check.text)}"
        case FileMatchesSchema():
            return f"outputs/{output_name(check.path)} is JSON that matches the eval's schema"
        case AnswerContains():
            return f"the answer contains {_quoted(check.text)}"
        case ScriptRan():
            return f"{_script(check)} was run"
        case ScriptNotRun():
            return f"{_script(check)} was not run"
        case _:
            assert_never(check)


def check_verdict(check: EvalCheck, evidence: JobEvidence) -> Verdict:
    """`check` judged on `evidence` (see the module docstring)."""
    passed, seen = _judge(check, evidence)
    return Verdict(text=check_sentence(check), passed=passed, evidence=seen, by="check")


def _judge(check: EvalCheck, evidence: JobEvidence) -> tuple[bool, str]:
    match check:
        case FileExists():
            found = evidence.output(check.path)
            if found is None:
                return False, _no_file(check.path, evidence)
            return True, f"outputs/{found.name} ({found.size:,} bytes)"
        case FileContains():
            found = evidence.output(check.path)
            if found is None:
                return False, _no_file(check.path, evidence)
            if found.text is None:
                return False, f"outputs/{found.name} is a binary file ({found.size:,} bytes)"
            return _contains(f"outputs/{found.name}", found.text, check.text, found.complete)
        case FileMatchesSchema():
            found = evidence.output(check.path)
            if found is None:
                return False, _no_file(check.path, evidence)
            return _matches(found, check.schema_)
        case AnswerContains():
            if not evidence.answer:
                return False, f"the run gave no answer (it ended {evidence.status})"
            return _contains("the answer", evidence.answer, check.text, True)
        case ScriptRan():
            runs = [run for run in evidence.scripts if _same_script(check, run.skill, run.script)]
            return bool(runs), _scripts(evidence)
        case ScriptNotRun():
            runs = [run for run in evidence.scripts if _same_script(check, run.skill, run.script)]
            return not runs, _scripts(evidence)
        case _:
            assert_never(check)


def _same_script(check: ScriptRan | ScriptNotRun, skill: str, script: str) -> bool:
    return script == check.script and check.skill in (None, skill)


def _script(check: ScriptRan | ScriptNotRun) -> str:
    return check.script if check.skill is None else f"{check.skill}'s {check.script}"


def _quoted(text: str) -> str:
    return json.dumps(_clip(text), ensure_ascii=False)


def _clip(text: str, limit: int = _SHOWN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _listed(names: list[str]) -> str:
    shown = ", ".join(_clip(name, 80) for name in names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _no_file(path: str, evidence: JobEvidence) -> str:
    names = list(evidence.output_names)
    return f"no outputs/{output_name(path)}; " + (
        f"outputs: {_listed(names)}" if names else "the run wrote no output files"
    )


def _scripts(evidence: JobEvidence) -> str:
    lines = [run.line() for run in evidence.scripts]
    return f"scripts run: {_listed(lines)}" if lines else "the run ran no script"


def _contains(where: str, text: str, wanted: str, complete: bool) -> tuple[bool, str]:
    at = text.find(wanted)
    if at < 0:
        read = "" if complete else f" (only its first {MAX_OUTPUT_BYTES:,} bytes were read)"
        return False, f"{where} does not hold it{read}: {_quoted(text[:_SHOWN_CHARS])}"
    start, end = max(0, at - _CONTEXT_CHARS), at + len(wanted) + _CONTEXT_CHARS
    before = "…" if start else ""
    after = "…" if end < len(text) else ""
    return True, f"{where} holds it: {before}{_clip(text[start:end])}{after}"


def _matches(found: OutputFile, schema: dict[str, Any]) -> tuple[bool, str]:
    where = f"outputs/{found.name}"
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return False, f"the check's schema is not a valid JSON Schema: {_clip(exc.message)}"
    if found.text is None:
        return False, f"{where} is a binary file ({found.size:,} bytes), not JSON"
    if not found.complete:
        return False, f"{where} is larger than {MAX_OUTPUT_BYTES:,} bytes: not read whole"
    try:
        data = json.loads(found.text)
    except (ValueError, RecursionError) as exc:
        return False, f"{where} is not JSON: {_clip(str(exc))}"
    validator = cls(schema, registry=_NO_RETRIEVAL)
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    except (Unresolvable, jsonschema.exceptions.UnknownType, RecursionError) as exc:
        return False, f"the check's schema cannot be applied: {_clip(str(exc))}"
    if error is None:
        return True, f"{where} is valid JSON under the schema"
    place = "/".join(str(part) for part in error.absolute_path)
    return False, f"{where}{' at ' + place if place else ''}: {_clip(error.message)}"
