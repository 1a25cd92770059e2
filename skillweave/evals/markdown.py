"""A report as Markdown: :func:`report_markdown`, what ``skillweave skills eval`` prints and
what is stored beside the report as ``report.md``.

In order: a heading naming the skill, a line with the version, the models, the status and the
batch's size, time, tokens and cost; the headline in bold (``with the skill 83% (±12), without
the skill 40% (±20): +43 points, 95% CI +20..+66``); a table of the evals (each variant's pass
rate over its repeats, tokens, time, cost); the trigger evals when they were run; and every
failed expectation, failed run and grader error, with its evidence, at most
:data:`MAX_FAILURES` of them (the HTML report has every verdict).

Every text that came from a skill, a model or a run (a prompt, a verdict, its evidence, a
reason, an id, even the skill's name: the report is read back from a store) is hostile. Each
goes through :func:`_text`, the one way in: the terminal's rule
(:func:`skillweave.terminal.terminal_safe`: control characters shown as escapes), one line
(:func:`skillweave.agent.rendering.one_line`, cut to a length), then Markdown's syntax escaped
(:func:`skillweave.agent.rendering.markdown_text`: table pipes, backticks, HTML, links,
entities), so that a rendered report shows what was written and nothing else. Pure.
"""

from __future__ import annotations

from typing import Final

from skillweave.agent import rendering
from skillweave.evals import _figures as figures
from skillweave.evals.results import EvalReport, JobGrade, TriggerSummary
from skillweave.terminal import counted, terminal_safe

__all__ = ["MAX_FAILURES", "report_markdown"]

MAX_FAILURES: Final = 100
"""Failed expectations listed; the rest are counted."""
_NAME_CHARS: Final = 64
_EVIDENCE_CHARS: Final = 240


def _text(value: str | None, limit: int = rendering.TEXT_CHARS) -> str:
    """`value` safe in a Markdown line or table cell (see the module docstring)."""
    return rendering.markdown_text(rendering.one_line(terminal_safe(value or ""), limit))


def _heading(report: EvalReport) -> list[str]:
    model = _text(report.model, _NAME_CHARS) if report.model else "the default model"
    grader = _text(report.grader, _NAME_CHARS) if report.grader else "the agent's model"
    graded = len(report.jobs)
    planned = report.planned if report.planned is not None else graded
    facts = [
        f"version {figures.short_version(report.version)}",
        f"model {model}",
        f"grader {grader}",
        f"**{report.status}**",
        f"finished {_text(figures.moment(report.finished_at), 40)}",
    ]
    sizes = [
        f"{graded} of {planned} jobs graded in {figures.duration(report.wall_seconds)}",
        counted(report.repeat, "repeat"),
        f"{figures.tokens(report.tokens)} tokens",
        f"cost {figures.cost(report.cost)}",
        f"batch {_text(report.batch_id, _NAME_CHARS)}",
    ]
    lines = [f"# Evals of {_text(report.skill, _NAME_CHARS)}", "", " · ".join(facts)]
    lines += ["", " · ".join(sizes), "", f"**{figures.headline(report)}**"]
    if report.status != "completed":
        lines += [
            "",
            f"> The batch is {report.status}: {graded} of {planned} jobs were graded, "
            "and these numbers are theirs.",
        ]
    return lines


def _per_variant(variants: list[str], shown: dict[str, str]) -> str:
    return " / ".join(shown.get(variant, "–") for variant in variants) if shown else "–"


def _table(report: EvalReport) -> list[str]:
    variants = [summary.variant for summary in report.variants] or ["skill"]
    names = [figures.variant_name(variant, report) for variant in variants]
    header = ["eval", "prompt", *names, "tokens", "time", "cost"]
    lines = ["## Evals", ""]
    if len(variants) > 1:
        lines += [f"Tokens, time and cost per job, {' / '.join(names)}.", ""]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in report.rows:
        rates = [
            f"{figures.percent(row.pass_rates[v])} ({row.runs.get(v, 0)})"
            if v in row.pass_rates
            else "–"
            for v in variants
        ]
        tokens = {v: figures.tokens(count) for v, count in row.tokens.items()}
        seconds = {v: figures.duration(value) for v, value in row.wall_seconds.items()}
        cost = {v: figures.cost(value) for v, value in row.cost.items()}
        cells = [
            _text(row.eval_id, _NAME_CHARS),
            _text(row.prompt, 80),
            *rates,
            _per_variant(variants, tokens),
            _per_variant(variants, seconds),
            _per_variant(variants, cost) if cost else "n/a",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _rate(rate: float | None, total: int, what: str) -> str:
    if rate is None or not total:
        return f"{what} n/a (none given)"
    return f"{what} {round(rate * total)} of {total} ({figures.percent(rate)})"


def _first_line(triggers: TriggerSummary) -> str:
    if triggers.first_counts() is None:
        return ""
    return (
        f" Ranked first: {_rate(triggers.first_recall, triggers.positives, 'recall')}, "
        f"{_rate(triggers.first_false_trigger_rate, triggers.negatives, 'false triggers')}."
    )


def _triggers(triggers: TriggerSummary) -> list[str]:
    lines = [
        "## Triggers",
        "",
        f"{_text(triggers.strategy, _NAME_CHARS)}, top {triggers.top_k}: "
        f"{_rate(triggers.recall, triggers.positives, 'recall')}, "
        f"{_rate(triggers.false_trigger_rate, triggers.negatives, 'false triggers')}."
        + _first_line(triggers),
    ]
    wrong = [case for case in triggers.cases if case.triggered != case.should_trigger]
    if wrong:
        lines.append("")
    for case in wrong[:MAX_FAILURES]:
        if case.should_trigger:
            lines.append(f"- missed (should trigger): {_text(case.query, 120)}")
        else:
            rank = f", rank {case.rank}" if case.rank is not None else ""
            lines.append(f"- false trigger{rank}: {_text(case.query, 120)}")
    if len(wrong) > MAX_FAILURES:
        lines.append(f"- … and {len(wrong) - MAX_FAILURES} more")
    return lines


def _job_name(grade: JobGrade, report: EvalReport) -> str:
    variant = figures.variant_name(grade.job.variant, report)
    return f"eval {_text(grade.job.eval_id, _NAME_CHARS)}, {variant}, repeat {grade.job.repeat}"


def _failures(report: EvalReport) -> list[str]:
    found: list[str] = []
    for grade in report.jobs:
        where = _job_name(grade, report)
        if grade.status != "completed":
            reason = f": {_text(grade.reason)}" if grade.reason else ""
            found.append(f"- {where}: the run ended {_text(grade.status, 20)}{reason}")
        if grade.grade_error:
            found.append(f"- {where}: the grader judged nothing: {_text(grade.grade_error)}")
        for verdict in grade.verdicts:
            if not verdict.passed:
                evidence = _text(verdict.evidence, _EVIDENCE_CHARS) or "none"
                found.append(
                    f"- {where}: {_text(verdict.text)} (by the {verdict.by}; evidence: {evidence})"
                )
    if not found:
        return []
    lines = ["## Failed expectations", "", *found[:MAX_FAILURES]]
    if len(found) > MAX_FAILURES:
        lines.append(f"- … and {len(found) - MAX_FAILURES} more (the HTML report has them all)")
    return lines


def report_markdown(report: EvalReport) -> str:
    """`report` as Markdown (the module docstring says what it holds)."""
    sections = [_heading(report), _table(report)]
    if report.triggers is not None:
        sections.append(_triggers(report.triggers))
    sections.append(_failures(report))
    return "\n\n".join("\n".join(section) for section in sections if section) + "\n"
