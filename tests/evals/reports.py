"""Batches, grades and reports for the report's tests (aggregation, Markdown, HTML)."""

from __future__ import annotations

from collections.abc import Iterable

from skillweave.evals.batch import EvalBatch, EvalJob, Variant
from skillweave.evals.report import build_report
from skillweave.evals.results import (
    EvalReport,
    JobGrade,
    TriggerCaseResult,
    TriggerSummary,
    Verdict,
)
from skillweave.evals.suite import EvalCase
from skillweave.llm.messages import Usage

VERSION = "0123456789abcdef" * 4
OTHER = "fedcba9876543210" * 4
HOSTILE = '<script>alert("x")</script> </svg> \'" | `code` [l](http://evil.example) &amp; \x1b[2J'
"""Every way a text could break out: script, the chart's SVG, quotes, a table pipe, a code
span, a link, an entity and a terminal escape."""


def batch(
    evals: Iterable[str] = ("1", "2"),
    *,
    baseline: bool = True,
    against: str | None = None,
    repeat: int = 1,
    prompt: str = "Convert {id} km to miles",
) -> EvalBatch:
    return EvalBatch(
        batch_id="eval-20261207-040000-abc123",
        skill="unit-converter",
        version=VERSION,
        against=against,
        baseline=baseline,
        repeat=repeat,
        model="scripted:examples/evals/unit-converter.yaml",
        grader="scripted:examples/evals/unit-converter-grader.yaml",
        cases=tuple(
            EvalCase(id=eval_id, prompt=prompt.format(id=eval_id), expectations=("x",))
            for eval_id in evals
        ),
        created_at="2026-12-07T04:00:00Z",
    )


def grade(
    eval_id: str,
    variant: Variant,
    repeat: int = 1,
    *,
    passed: int = 1,
    failed: int = 0,
    tokens: int = 100,
    grader_tokens: int = 0,
    seconds: float = 1.0,
    cost: float | None = None,
    status: str = "completed",
    text: str = "The answer gives 3.11 miles",
    evidence: str = "3.11 miles",
) -> JobGrade:
    verdicts = tuple(
        Verdict(text=text, passed=True, evidence=evidence, by="grader") for _ in range(passed)
    ) + tuple(
        Verdict(text=text, passed=False, evidence=evidence, by="check") for _ in range(failed)
    )
    return JobGrade(
        job=EvalJob(eval_id=eval_id, variant=variant, repeat=repeat),
        run_id=f"eval-20261207-040000-abc123-e{eval_id}-{variant}-r{repeat}",
        status=status,
        verdicts=verdicts,
        usage=Usage(input_tokens=tokens),
        grader_usage=Usage(output_tokens=grader_tokens),
        wall_seconds=seconds,
        cost=cost,
    )


def triggers(*, text: str = "convert miles") -> TriggerSummary:
    return TriggerSummary(
        strategy="bm25",
        top_k=5,
        positives=3,
        negatives=4,
        recall=2 / 3,
        false_trigger_rate=1 / 4,
        first_recall=1 / 3,
        first_false_trigger_rate=0.0,
        cases=(
            TriggerCaseResult(query=f"{text} 1", should_trigger=True, triggered=True, rank=1),
            TriggerCaseResult(query=f"{text} 2", should_trigger=True, triggered=True, rank=2),
            TriggerCaseResult(query=f"missed {text}", should_trigger=True, triggered=False),
            TriggerCaseResult(query=f"wrong {text}", should_trigger=False, triggered=True, rank=3),
            TriggerCaseResult(query="weather", should_trigger=False, triggered=False),
            TriggerCaseResult(query="poem", should_trigger=False, triggered=False),
            TriggerCaseResult(query="stocks", should_trigger=False, triggered=False),
        ),
    )


_EXPECTATIONS = {
    "1": (
        ("check", "answer contains 3.11", "answer: 5 km is about 3.11 miles"),
        ("check", "scripts/convert.py was run", "ran: unit-converter/scripts/convert.py (exit 0)"),
        ("grader", "The answer gives 3.11 miles", "5 km is about 3.11 miles"),
        ("grader", "The answer names the factor used", "factor 0.621371"),
    ),
    "2": (
        ("check", "answer contains 22.2", "answer: 72 °F is 22.2 °C"),
        ("grader", "The answer gives 22.2 °C", "72 °F is 22.2 °C"),
        ("grader", "The working subtracts 32 then multiplies by 5/9", "(72 − 32) × 5/9 = 22.2"),
        ("grader", "The answer rounds to one decimal", "22.2 °C"),
    ),
    "3": (
        ("check", "outputs/report.md exists", "outputs: report.md, lengths-ft.csv"),
        ("check", "outputs/report.md contains 16.40", "report.md line 4: | 5 m | 16.40 ft |"),
        ("check", "outputs/lengths-ft.csv matches its schema", "3 rows, columns: metres, feet"),
        ("grader", "The report has one row per input length", "| 1 m | 3.28 ft |"),
    ),
    "4": (
        ("check", "answer contains 88.18", "answer: 2.5 kg is 88.18 oz"),
        ("grader", "The answer gives 88.18 ounces", "2.5 kg is 88.18 oz"),
        ("grader", "The answer says which ounce (avoirdupois)", "avoirdupois ounces"),
        ("grader", "The answer does not round to a whole number", "88.18 oz"),
    ),
}
_ANSWERS = {
    "1": "5 km is about 3.11 miles (factor 0.621371 miles per km).",
    "2": "72 °F is 22.2 °C: (72 − 32) × 5/9 = 22.2.",
    "3": "I wrote report.md with each length in feet.",
    "4": "2.5 kg is 88.18 oz (avoirdupois ounces).",
}


def _realistic_grade(eval_id: str, variant: Variant, repeat: int, passed: int) -> JobGrade:
    verdicts = tuple(
        Verdict(
            text=text,
            passed=index < passed,
            evidence=quote
            if index < passed
            else f"not found: the answer does not show it ({repeat})",
            by=by,  # type: ignore[arg-type]
        )
        for index, (by, text, quote) in enumerate(_EXPECTATIONS[eval_id])
    )
    skill = variant == "skill"
    size = int(eval_id) * 113
    return grade(eval_id, variant, repeat).model_copy(
        update={
            "verdicts": verdicts,
            "answer": _ANSWERS[eval_id] if skill else "Roughly 3 miles, I think.",
            "usage": Usage(input_tokens=1500 + size + 97 * repeat, output_tokens=300 + 40 * repeat)
            if skill
            else Usage(input_tokens=700 + size // 2 + 31 * repeat, output_tokens=200 + 20 * repeat),
            "grader_usage": Usage(input_tokens=560, output_tokens=80),
            "wall_seconds": 3.1 + size / 90 + repeat / 3
            if skill
            else 2.1 + size / 300 + repeat / 5,
            "turns": 4 if skill else 1,
            "cost": 0.0042 if skill else 0.0021,
        }
    )


def realistic() -> EvalReport:
    """2 variants, 4 evals, 3 repeats, triggers, some failures: what the screenshot shows."""
    prompts = {
        "1": "Convert 5 km to miles",
        "2": "What is 72 °F in Celsius? Show your working.",
        "3": "Convert the lengths in lengths.csv to feet and write report.md",
        "4": "How many ounces are in 2.5 kg?",
    }
    chosen = batch(prompts, repeat=3).model_copy(
        update={
            "cases": tuple(
                EvalCase(id=key, prompt=value, expectations=("x",))
                for key, value in prompts.items()
            )
        }
    )
    outcomes = {  # (eval, variant) -> verdicts passed (of 4) in each repeat
        ("1", "skill"): (4, 4, 4),
        ("1", "baseline"): (3, 2, 3),
        ("2", "skill"): (4, 4, 3),
        ("2", "baseline"): (2, 2, 1),
        ("3", "skill"): (4, 3, 4),
        ("3", "baseline"): (0, 1, 0),
        ("4", "skill"): (3, 4, 4),
        ("4", "baseline"): (3, 3, 2),
    }
    grades = [
        _realistic_grade(eval_id, variant, repeat, passed)  # type: ignore[arg-type]
        for (eval_id, variant), counts in outcomes.items()
        for repeat, passed in enumerate(counts, start=1)
    ]
    return build_report(
        chosen,
        grades,
        status="completed",
        finished_at="2026-12-07T04:12:31Z",
        wall_seconds=97.4,
        triggers=triggers(),
    )


def hostile(text: str = HOSTILE) -> EvalReport:
    """A report read back from a store someone else wrote: `text` in every text field."""
    job = EvalJob(eval_id=text, variant="skill", repeat=1)
    base = EvalJob(eval_id=text, variant="baseline", repeat=1)
    verdict = Verdict(text=text, passed=False, evidence=text, by="grader")
    graded = JobGrade(
        job=job,
        run_id=text,
        status=text,
        reason=text,
        answer=text,
        verdicts=(verdict, verdict.model_copy(update={"passed": True})),
        grade_error=text,
    )
    return EvalReport.model_validate(
        {
            "batch_id": text,
            "skill": text,
            "version": text,
            "against": text,
            "model": text,
            "grader": text,
            "repeat": 2,
            "created_at": text,
            "finished_at": text,
            "status": "partial",
            "jobs": [graded, graded.model_copy(update={"job": base})],
            "variants": [
                {"variant": "skill", "jobs": 1, "pass_rate": 0.5},
                {"variant": "baseline", "jobs": 1, "pass_rate": 0.5},
            ],
            "rows": [
                {
                    "eval_id": text,
                    "prompt": text,
                    "pass_rates": {"skill": 0.5, "baseline": 0.5},
                    "runs": {"skill": 1, "baseline": 1},
                    "tokens": {"skill": 1},
                    "wall_seconds": {"skill": 1.0},
                }
            ],
            "differences": [{"versus": "baseline", "delta": 0, "low": -1, "high": 1}],
            "triggers": triggers(text=text).model_copy(update={"strategy": text}),
        }
    )
