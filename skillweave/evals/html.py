"""A report as one self-contained HTML page: :func:`report_html`, stored beside the report as
``report.html``, written by ``skillweave skills eval --html`` and served by the API.

The page, top to bottom: a header (the skill, its version, the models, when the batch finished,
its status), the headline (the sentence of :func:`skillweave.evals._figures.headline`, then
cards: each variant's pass rate, the difference with its confidence interval, tokens, wall time,
cost), the chart (:mod:`skillweave.evals._chart`) with its legend, the table of evals, the
trigger evals, and every job with its verdicts in a ``<details>`` (open when the job failed
something): the expectation, PASS or FAIL, by a check or the grader, and the evidence.

Self-contained and inert: the CSS and the SVG are inline, there is no script, and nothing
points outside the page (no URL, font, image or link of any kind); a Content-Security-Policy
meta tag forbids everything but inline styles, so a page opened from a disk or an artifact
store cannot fetch a thing even if a text slipped through. Every text that came from a skill,
a model or a run (ids, prompts, verdicts, evidence, answers, reasons, model names) goes through
:func:`_text`: control and format characters shown as escapes
(:func:`skillweave.terminal.terminal_safe`, which also defeats bidi overrides), cut to a
length, then ``html.escape(quote=True)``. The design: a system font stack, generous spacing,
Okabe-Ito colours (PASS and FAIL also say so in words), a dark scheme when the reader's system
asks for one, and a print style. Pure.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Final

from skillweave.evals import _chart as chart
from skillweave.evals import _figures as figures
from skillweave.evals.results import EvalReport, EvalRow, JobGrade, TriggerSummary, Verdict
from skillweave.terminal import counted, terminal_safe

__all__ = ["CONTENT_SECURITY_POLICY", "MAX_JOBS_CHARS", "report_html"]

CONTENT_SECURITY_POLICY: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""What the page may load: inline styles and nothing else (the API sends it as a header too)."""
_NAME_CHARS: Final = 64
_PROMPT_CHARS: Final = 200
_TEXT_CHARS: Final = 2_000
_EVIDENCE_CHARS: Final = 1_000
_ANSWER_CHARS: Final = 4_000
MAX_JOBS_CHARS: Final = 24_000_000
"""The jobs' verdicts take at most this many characters of the page (a batch's store caps a
file at 64 MiB); the jobs past it are counted, their verdicts left to ``report.json``."""

_STYLE: Final = """
:root{--fg:#1d2330;--muted:#5b6475;--line:#e3e6ec;--bg:#fff;--panel:#f6f7f9;
--skill:#0072B2;--baseline:#E69F00;--against:#009E73;--pass:#0072B2;--fail:#D55E00;
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--fg:#e7e9ee;--muted:#9aa3b5;--line:#2c3240;
--bg:#12151c;--panel:#1a1e27;--pass:#56B4E9;--fail:#E69F00}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,
"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
main{max-width:1120px;margin:0 auto;padding:40px 32px 64px}
header{border-bottom:1px solid var(--line);padding-bottom:20px;margin-bottom:28px}
.eyebrow{margin:0;color:var(--muted);font-size:13px;letter-spacing:.06em;text-transform:uppercase}
h1{margin:4px 0 12px;font-size:30px;line-height:1.2;overflow-wrap:anywhere}
h2{font-size:19px;margin:40px 0 12px}
h3{font-size:15px;margin:24px 0 8px;overflow-wrap:anywhere}
.facts{display:flex;flex-wrap:wrap;gap:6px 24px;margin:0;color:var(--muted);font-size:13px}
.facts div{display:flex;gap:6px;min-width:0}.facts dt{font-weight:600}
.facts dd{margin:0;color:var(--fg);overflow-wrap:anywhere}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}
.status{display:inline-block;padding:1px 10px;border-radius:999px;font-size:12px;
font-weight:600;border:1px solid currentColor}
.status.completed{color:var(--pass)}.status.cancelled,.status.partial{color:var(--fail)}
.sentence{font-size:18px;margin:0 0 18px}
.notice{border-left:4px solid var(--fail);background:var(--panel);padding:10px 14px;margin:0 0 18px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--panel);border-radius:10px;padding:14px 16px;border-top:4px solid var(--line)}
.card.skill{border-top-color:var(--skill)}.card.baseline{border-top-color:var(--baseline)}
.card.against{border-top-color:var(--against)}
.card .label{display:block;color:var(--muted);font-size:12px;text-transform:uppercase;
letter-spacing:.05em}
.card .big{display:block;font-size:28px;font-weight:700;line-height:1.3;
font-variant-numeric:tabular-nums}
.card .sub{display:block;color:var(--muted);font-size:13px}
figure{margin:0;background:var(--panel);border-radius:10px;padding:16px 16px 8px}
.scroll{overflow-x:auto}
.legend{display:flex;flex-wrap:wrap;gap:4px 20px;margin:0 0 8px;padding:0;list-style:none;
font-size:13px}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;
vertical-align:-1px}
.chart{display:block;max-width:none;font-size:12px}
.chart .grid{stroke:var(--line);stroke-width:1}.chart .baseline-axis{stroke:var(--muted)}
.chart text{fill:var(--muted)}.chart .value{fill:var(--fg);font-weight:600;font-size:11px}
.chart .eval{fill:var(--fg)}.chart .whisker{stroke:var(--fg);stroke-width:1.5;fill:none}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.prompt{max-width:380px;overflow-wrap:anywhere}
.pass{color:var(--pass);font-weight:700}.fail{color:var(--fail);font-weight:700}
details{border:1px solid var(--line);border-radius:8px;margin:8px 0;background:var(--bg)}
summary{cursor:pointer;padding:10px 14px;display:flex;flex-wrap:wrap;gap:4px 16px;
align-items:baseline;list-style:none}
summary::-webkit-details-marker{display:none}
summary::before{content:"\\25B8";color:var(--muted);display:inline-block;width:10px;
transition:transform .15s}
details[open]>summary::before{transform:rotate(90deg)}
summary .what{font-weight:600}summary .meta{color:var(--muted);font-size:13px}
details[open] summary{border-bottom:1px solid var(--line)}
.job{padding:8px 14px 14px}
.evidence{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;color:var(--muted)}
.answer-label{margin:14px 0 0;color:var(--muted);font-size:12px;text-transform:uppercase;
letter-spacing:.04em}
.answer{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--panel);border-radius:6px;
padding:10px 12px;margin:8px 0}
td.verdict{white-space:nowrap}
footer{margin-top:48px;color:var(--muted);font-size:12px}
@media print{body{font-size:11pt}main{max-width:none;padding:0}
.card,figure{break-inside:avoid}details{break-inside:avoid;border-color:#999}
.scroll{overflow:visible}h2{break-after:avoid}}
"""


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _text(value: str | None, limit: int = _TEXT_CHARS) -> str:
    """`value` safe anywhere in the page, in an element or an attribute (see the module
    docstring); the one way a hostile text enters it."""
    return html.escape(_cut(terminal_safe(value or ""), limit), quote=True)


def _fact(label: str, value: str) -> str:
    return f"<div><dt>{label}</dt><dd>{value}</dd></div>"


def _header(report: EvalReport) -> str:
    model = _text(report.model, _NAME_CHARS) if report.model else "the default model"
    grader = _text(report.grader, _NAME_CHARS) if report.grader else "the agent's model"
    facts = [
        _fact("version", f'<span class="mono">{figures.short_version(report.version)}</span>'),
        _fact("model", f'<span class="mono">{model}</span>'),
        _fact("grader", f'<span class="mono">{grader}</span>'),
        _fact("finished", _text(figures.moment(report.finished_at), 40)),
        _fact("batch", f'<span class="mono">{_text(report.batch_id, _NAME_CHARS)}</span>'),
        _fact("status", f'<span class="status {report.status}">{report.status}</span>'),
    ]
    if report.against is not None:
        facts.insert(1, _fact("against", figures.short_version(report.against)))
    return (
        '<header><p class="eyebrow">skillweave · skill evals</p>'
        f"<h1>{_text(report.skill, _NAME_CHARS)}</h1>"
        f'<dl class="facts">{"".join(facts)}</dl></header>'
    )


def _card(kind: str, label: str, big: str, sub: str = "") -> str:
    return (
        f'<div class="card {kind}"><span class="label">{label}</span>'
        f'<span class="big">{big}</span><span class="sub">{sub}</span></div>'
    )


def _headline(report: EvalReport) -> str:
    graded = len(report.jobs)
    planned = report.planned if report.planned is not None else graded
    cards = []
    for summary in report.variants:
        spread = figures.spread(summary)
        jobs = counted(summary.jobs, "job")
        cards.append(
            _card(
                summary.variant,
                html.escape(figures.variant_name(summary.variant, report)),
                figures.percent(summary.pass_rate),
                f"{spread} · {jobs}" if spread else jobs,
            )
        )
    for found in report.differences:
        versus = html.escape(figures.variant_name(found.versus, report))
        cards.append(
            _card(
                "difference",
                f"difference vs {versus}",
                figures.points(found.delta).replace(" points", " pts"),
                html.escape(figures.interval(found)),
            )
        )
    cards += [
        _card("", "tokens", figures.tokens(report.tokens), "agent and grader"),
        _card("", "wall time", figures.duration(report.wall_seconds), counted(graded, "job")),
        _card("", "cost", figures.cost(report.cost), "agent model" if report.cost else "no prices"),
    ]
    notice = ""
    if report.status != "completed":
        notice = (
            f'<p class="notice">The batch is <strong>{report.status}</strong>: {graded} of '
            f"{planned} jobs were graded, and these numbers are theirs.</p>"
        )
    return (
        f'<section class="headline"><p class="sentence">'
        f"{html.escape(figures.headline(report))}</p>{notice}"
        f'<div class="cards">{"".join(cards)}</div></section>'
    )


def _figure(report: EvalReport) -> str:
    variants = [summary.variant for summary in report.variants] or ["skill"]
    legend = "".join(
        f'<li><span class="swatch" style="background:{chart.COLOURS[variant]}"></span>'
        f"{html.escape(figures.variant_name(variant, report))}</li>"
        for variant in variants
    )
    spread = (
        " Whiskers span the lowest to the highest repeat where they differ."
        if report.repeat > 1
        else ""
    )
    return (
        "<section><h2>Pass rate per eval</h2><figure>"
        f'<ul class="legend">{legend}</ul><div class="scroll">'
        f"{chart.pass_rate_chart(report, escape=_text)}</div>"
        f'<figcaption class="meta">Mean pass rate over {report.repeat} '
        f"{'repeat' if report.repeat == 1 else 'repeats'} of each eval.{spread}"
        "</figcaption></figure></section>"
    )


def _cells(row: EvalRow, variants: list[str]) -> Iterable[str]:
    for variant in variants:
        if variant in row.pass_rates:
            runs = row.runs.get(variant, 0)
            yield (
                f'<td class="num">{figures.percent(row.pass_rates[variant])} '
                f'<span class="meta">({runs})</span></td>'
            )
        else:
            yield '<td class="num">–</td>'


def _per_variant(values: dict[str, str], variants: list[str]) -> str:
    return " / ".join(values.get(variant, "–") for variant in variants) if values else "–"


def _table(report: EvalReport) -> str:
    variants = [summary.variant for summary in report.variants] or ["skill"]
    names = [html.escape(figures.variant_name(v, report)) for v in variants]  # type: ignore[arg-type]
    head = "".join(f'<th class="num">{name}</th>' for name in names)
    rows = []
    for row in report.rows:
        tokens = {v: figures.tokens(n) for v, n in row.tokens.items()}
        seconds = {v: figures.duration(s) for v, s in row.wall_seconds.items()}
        cost = {v: figures.cost(c) for v, c in row.cost.items()}
        rows.append(
            f'<tr><td class="mono">{_text(row.eval_id, _NAME_CHARS)}</td>'
            f'<td class="prompt">{_text(row.prompt, _PROMPT_CHARS)}</td>'
            f"{''.join(_cells(row, variants))}"
            f'<td class="num">{_per_variant(tokens, variants)}</td>'
            f'<td class="num">{_per_variant(seconds, variants)}</td>'
            f'<td class="num">{_per_variant(cost, variants) if cost else "n/a"}</td></tr>'
        )
    note = (
        f'<p class="meta">Tokens, time and cost are the mean per job, {" / ".join(names)}.</p>'
        if len(variants) > 1
        else '<p class="meta">Tokens, time and cost are the mean per job.</p>'
    )
    return (
        f'<section><h2>Evals</h2>{note}<div class="scroll"><table><thead><tr>'
        f'<th>eval</th><th>prompt</th>{head}<th class="num">tokens</th>'
        f'<th class="num">time</th><th class="num">cost</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _rate(rate: float | None, total: int) -> str:
    if rate is None or not total:
        return "n/a"
    return f'{figures.percent(rate)} <span class="meta">({round(rate * total)} of {total})</span>'


def _first(triggers: TriggerSummary) -> str:
    if triggers.first_counts() is None:
        return ""
    return (
        '<p class="meta">Ranked first: recall '
        f"{_rate(triggers.first_recall, triggers.positives)}, false triggers "
        f"{_rate(triggers.first_false_trigger_rate, triggers.negatives)}: the skill is the "
        "best match, whatever the size of the library.</p>"
    )


def _triggers(triggers: TriggerSummary) -> str:
    cards = _card(
        "skill", "recall", _rate(triggers.recall, triggers.positives), "should trigger, did"
    ) + _card(
        "baseline",
        "false triggers",
        _rate(triggers.false_trigger_rate, triggers.negatives),
        "should not trigger, did",
    )
    rows = "".join(
        f"<tr><td>{_text(case.query, _PROMPT_CHARS)}</td>"
        f"<td>{'should trigger' if case.should_trigger else 'should not'}</td>"
        f'<td class="{"pass" if case.triggered == case.should_trigger else "fail"}">'
        f"{'picked' if case.triggered else 'not picked'}"
        f"{'' if case.triggered == case.should_trigger else ' ✗'}</td>"
        f'<td class="num">{case.rank if case.rank is not None else "–"}</td></tr>'
        for case in sorted(triggers.cases, key=lambda c: c.triggered == c.should_trigger)
    )
    return (
        "<section><h2>Triggers</h2>"
        f'<p class="meta">Does the catalog pick the skill? Strategy '
        f"<code>{_text(triggers.strategy, _NAME_CHARS)}</code>, top {triggers.top_k}; "
        "the cases that went wrong first.</p>"
        f'<div class="cards">{cards}</div>{_first(triggers)}'
        '<div class="scroll"><table><thead><tr><th>request</th><th>meant</th><th>result</th>'
        f'<th class="num">rank</th></tr></thead><tbody>{rows}</tbody></table></div></section>'
    )


def _verdict(verdict: Verdict) -> str:
    result = (
        '<span class="pass">✓ PASS</span>' if verdict.passed else '<span class="fail">✗ FAIL</span>'
    )
    evidence = _text(verdict.evidence, _EVIDENCE_CHARS) or '<span class="meta">none</span>'
    return (
        f'<tr><td class="verdict">{result}</td><td>{_text(verdict.text)}</td>'
        f'<td class="meta">{verdict.by}</td><td><p class="evidence">{evidence}</p></td></tr>'
    )


def _job(grade: JobGrade, report: EvalReport) -> str:
    failed = grade.status != "completed" or grade.grade_error or grade.passed < len(grade.verdicts)
    verdicts = "".join(_verdict(verdict) for verdict in grade.verdicts)
    notes = []
    if grade.status != "completed":
        notes.append(
            f'<p class="fail">The run ended {_text(grade.status, 20)}'
            f"{': ' + _text(grade.reason) if grade.reason else ''}</p>"
        )
    if grade.grade_error:
        notes.append(f'<p class="fail">The grader judged nothing: {_text(grade.grade_error)}</p>')
    answer = (
        (
            '<p class="answer-label">answer</p>'
            f'<div class="answer">{_text(grade.answer, _ANSWER_CHARS)}</div>'
        )
        if grade.answer
        else ""
    )
    meta = (
        f"{figures.duration(grade.wall_seconds)} · "
        f"{figures.tokens(grade.usage.total_tokens + grade.grader_usage.total_tokens)} tokens · "
        f"{counted(grade.turns, 'turn')} · {_text(grade.status, 20)}"
    )
    table = (
        "<table><thead><tr><th>result</th><th>expectation</th><th>by</th><th>evidence</th>"
        f"</tr></thead><tbody>{verdicts}</tbody></table>"
        if verdicts
        else '<p class="meta">No verdicts.</p>'
    )
    return (
        f"<details{' open' if failed else ''}><summary>"
        f'<span class="what">{html.escape(figures.variant_name(grade.job.variant, report))}, '
        f"repeat {grade.job.repeat}</span>"
        f'<span class="{"fail" if failed else "pass"}">{grade.passed}/{len(grade.verdicts)} '
        f'passed</span><span class="meta">{meta}</span></summary><div class="job">'
        f"{''.join(notes)}{table}{answer}"
        f'<p class="meta">run <span class="mono">{_text(grade.run_id, 160)}</span></p>'
        "</div></details>"
    )


def _jobs(report: EvalReport) -> str:
    parts = ["<section><h2>Jobs</h2>"]
    if not report.jobs:
        parts.append('<p class="meta">No job was graded.</p>')
    used, left_out = 0, 0
    for row in report.rows:
        mine = [grade for grade in report.jobs if grade.job.eval_id == row.eval_id]
        shown = []
        for grade in mine:
            job = _job(grade, report) if used < MAX_JOBS_CHARS else ""
            used += len(job)
            if job and used <= MAX_JOBS_CHARS:
                shown.append(job)
            else:
                left_out += 1
        if shown:
            parts.append(
                f'<h3>eval <span class="mono">{_text(row.eval_id, _NAME_CHARS)}</span> · '
                f"{_text(row.prompt, _PROMPT_CHARS)}</h3>"
            )
            parts += shown
    if left_out:
        parts.append(
            f'<p class="notice">{counted(left_out, "more job")} left out of this page: '
            "their verdicts are in the report's JSON.</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def report_html(report: EvalReport) -> str:
    """`report` as one self-contained HTML page (the module docstring says what it holds)."""
    title = f"Evals of {_text(report.skill, _NAME_CHARS)}"
    if report.pass_rate is not None:
        title += f" · {figures.percent(report.pass_rate)} with the skill"
    body = [_header(report), _headline(report), _figure(report), _table(report)]
    if report.triggers is not None:
        body.append(_triggers(report.triggers))
    body.append(_jobs(report))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body><main>"
        f"{''.join(body)}"
        f'<footer>skillweave eval report · batch <span class="mono">'
        f"{_text(report.batch_id, _NAME_CHARS)}</span> · "
        f"created {_text(figures.moment(report.created_at), 40)}"
        "</footer></main></body></html>\n"
    )
