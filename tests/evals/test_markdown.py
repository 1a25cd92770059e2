"""A report as Markdown: what it says, and that a hostile text in any field stays text when the
Markdown is rendered (by markdown-it, the parser rich renders the terminal's Markdown with)."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from skillweave.evals.markdown import MAX_FAILURES, report_markdown
from skillweave.evals.report import build_report
from tests.evals.reports import HOSTILE, batch, grade, hostile, realistic, triggers


def rendered(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


def test_the_heading_names_the_skill_version_models_and_status() -> None:
    text = report_markdown(realistic())
    assert text.startswith("# Evals of unit-converter\n")
    assert "version 0123456789ab · model scripted:examples/evals/unit-converter.yaml" in text
    assert "grader scripted:examples/evals/unit-converter-grader.yaml · **completed**" in text
    assert "24 of 24 jobs graded in 1m 37s · 3 repeats · " in text
    assert "cost $0.0756" in text


def test_the_headline_gives_both_rates_the_difference_and_its_interval() -> None:
    built = realistic()
    skill, baseline = built.variant("skill"), built.variant("baseline")
    assert skill is not None
    assert baseline is not None
    (found,) = built.differences
    expected = (
        f"**with the skill {round(skill.pass_rate * 100)}% (±{round(skill.stddev * 100)}), "
        f"without the skill {round(baseline.pass_rate * 100)}% "
        f"(±{round(baseline.stddev * 100)}): +{round(found.delta * 100)} points, 95% CI "
        f"+{round(found.low * 100)}..+{round(found.high * 100)}**"
    )
    assert expected in report_markdown(built).splitlines()


def test_the_table_has_a_row_per_eval_with_each_variants_rate_and_costs() -> None:
    text = report_markdown(realistic())
    assert "| eval | prompt | with the skill | without the skill | tokens | time | cost |" in text
    row = next(line for line in text.splitlines() if line.startswith("| 3 |"))
    assert "| 92% (3) | 8% (3) |" in row
    assert "$0.0042 / $0.0021" in row
    html = rendered(text)
    assert html.count("<tr>") == 1 + 4


def test_the_trigger_section_counts_and_lists_what_went_wrong() -> None:
    text = report_markdown(realistic())
    assert "bm25, top 5: recall 2 of 3 (67%), false triggers 1 of 4 (25%)." in text
    assert "- missed (should trigger): missed convert miles" in text
    assert "- false trigger, rank 3: wrong convert miles" in text
    assert "weather" not in text  # right, so not listed


def test_failed_expectations_are_listed_with_their_evidence() -> None:
    built = build_report(
        batch(("1",), baseline=False),
        [grade("1", "skill", failed=1, text="Gives 3.11 miles", evidence="it said 3 miles")],
        status="completed",
        finished_at="2026-12-07T04:10:00Z",
        wall_seconds=3,
        triggers=None,
    )
    text = report_markdown(built)
    assert (
        "- eval 1, with the skill, repeat 1: Gives 3.11 miles (by the check; "
        "evidence: it said 3 miles)" in text
    )
    assert "## Triggers" not in text


def test_a_failed_run_and_a_grader_error_are_failures_too() -> None:
    failed = grade("1", "skill", passed=0, status="failed").model_copy(
        update={"reason": "budget exhausted", "grade_error": "the grader's reply is not JSON"}
    )
    built = build_report(
        batch(("1",), baseline=False),
        [failed],
        status="completed",
        finished_at="x",
        wall_seconds=1,
        triggers=None,
    )
    text = report_markdown(built)
    assert "repeat 1: the run ended failed: budget exhausted" in text
    assert "repeat 1: the grader judged nothing: the grader's reply is not JSON" in text


def test_failures_past_the_cap_are_counted() -> None:
    grades = [grade("1", "skill", r, passed=0, failed=10) for r in range(1, 16)]
    built = build_report(
        batch(("1",), baseline=False, repeat=15),
        grades,
        status="completed",
        finished_at="x",
        wall_seconds=1,
        triggers=None,
    )
    lines = report_markdown(built).splitlines()
    failures = [line for line in lines if line.startswith("- eval 1")]
    assert len(failures) == MAX_FAILURES
    assert "- … and 50 more (the HTML report has them all)" in lines


def test_a_cancelled_batch_says_so_and_what_was_graded() -> None:
    built = build_report(
        batch(),
        [grade("1", "skill")],
        status="cancelled",
        finished_at="x",
        wall_seconds=1,
        triggers=None,
    )
    text = report_markdown(built)
    notice = "> The batch is cancelled: 1 of 4 jobs were graded, and these numbers are theirs."
    assert notice in text
    assert "**with the skill 100%**" in text
    assert "| 2 | Convert 2 km to miles | – |" in text


def test_a_batch_with_no_grade_says_none_was() -> None:
    built = build_report(
        batch(), [], status="cancelled", finished_at="x", wall_seconds=0, triggers=triggers()
    )
    text = report_markdown(built)
    assert "**no job was graded**" in text
    assert "## Failed expectations" not in text


def test_without_a_baseline_the_table_has_one_rate_column() -> None:
    built = build_report(
        batch(baseline=False),
        [grade("1", "skill"), grade("2", "skill")],
        status="completed",
        finished_at="x",
        wall_seconds=1,
        triggers=None,
    )
    text = report_markdown(built)
    assert "| eval | prompt | with the skill | tokens | time | cost |" in text
    assert "**with the skill 100% (±0)**" in text


def test_hostile_text_in_every_field_stays_text_when_rendered() -> None:
    text = report_markdown(hostile())
    assert "\x1b" not in text
    html = rendered(text)
    assert "<script" not in html
    assert "</svg" not in html
    assert "<a " not in html
    assert "<code>" not in html
    assert "&amp;amp;" in html
    assert html.count("&lt;script&gt;") > 10
    # each row of the table keeps its seven cells: no pipe of a text split one
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<td>") == 7
    # no text broke its line: the report has as many lines as one of plain words
    assert len(text.splitlines()) == len(report_markdown(hostile("plain")).splitlines())


def test_a_newline_in_a_text_cannot_start_a_markdown_block() -> None:
    text = report_markdown(hostile("fine\n# heading\n| a | b |\n- item\n```"))
    assert "\n# heading" not in text
    assert "\n- item" not in text
    assert "```" not in text
    assert HOSTILE not in text


@pytest.mark.parametrize(
    ("finished", "shown"),
    [
        ("2026-12-07T04:02:05.972387+00:00", "finished 2026-12-07 04:02 UTC"),
        ("2026-12-07T06:02:05+02:00", "finished 2026-12-07 04:02 UTC"),
        ("yesterday", "finished yesterday"),
    ],
)
def test_when_the_batch_finished_is_shown_in_minutes_utc(finished: str, shown: str) -> None:
    built = build_report(
        batch(), [], status="completed", finished_at=finished, wall_seconds=0, triggers=None
    )
    assert shown in report_markdown(built)


def test_the_first_pick_is_told_beside_the_top_k() -> None:
    written = report_markdown(realistic())

    assert "Ranked first: recall 1 of 3 (33%), false triggers 0 of 4 (0%)." in written
