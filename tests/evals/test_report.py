"""A batch's report from its grades: the numbers, checked against values computed here by hand
(the Welch interval from first principles, with the t quantile found by integrating the t
density), and hostile or partial grades."""

from __future__ import annotations

import math

import pytest

from skillweave.evals._welch import t_quantile, welch_interval
from skillweave.evals.report import PROMPT_CHARS, build_report
from skillweave.evals.results import EvalReport, JobGrade
from tests.evals.reports import OTHER, batch, grade, triggers


def report(batch_, grades: list[JobGrade], **given: object) -> EvalReport:
    options: dict[str, object] = {
        "status": "completed",
        "finished_at": "2026-12-07T04:10:00Z",
        "wall_seconds": 12.5,
        "triggers": None,
    }
    options.update(given)
    return build_report(batch_, grades, **options)  # type: ignore[arg-type]


def _t_density(t: float, df: float) -> float:
    front = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    return front * (1 + t * t / df) ** (-(df + 1) / 2)


def _t_by_integration(df: float, level: float = 0.95) -> float:
    """The two-sided quantile by Simpson's rule over the density, and bisection."""

    def mass(upper: float, steps: int = 4000) -> float:
        h = upper / steps
        total = _t_density(0, df) + _t_density(upper, df)
        total += sum((4 if i % 2 else 2) * _t_density(i * h, df) for i in range(1, steps))
        return total * h / 3

    low, high = 0.0, 50.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if mass(middle) < level / 2 else (low, middle)
    return (low + high) / 2


@pytest.mark.parametrize(
    ("df", "table"),
    [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042), (1e9, 1.960)],
)
def test_the_t_quantile_is_the_tables(df: float, table: float) -> None:
    assert t_quantile(df) == pytest.approx(table, abs=5e-4)


@pytest.mark.parametrize("df", [1.0, 2.5, 5.88, 17.3])
def test_the_t_quantile_at_a_real_df_is_the_integrated_densitys(df: float) -> None:
    assert t_quantile(df) == pytest.approx(_t_by_integration(df), abs=1e-4)


def test_the_t_quantile_refuses_what_has_none() -> None:
    with pytest.raises(ValueError, match="df"):
        t_quantile(0)
    with pytest.raises(ValueError, match="level"):
        t_quantile(3, level=1.0)


def _by_hand() -> EvalReport:
    # Two evals, two repeats. Skill job rates 1, 1/2, 1, 1; baseline 0, 1/2, 1/2, 0.
    grades = [
        grade("1", "skill", 1, passed=2, tokens=100, grader_tokens=10, seconds=2.0, cost=0.5),
        grade("1", "skill", 2, passed=1, failed=1, tokens=200, seconds=4.0, cost=0.25),
        grade("2", "skill", 1, passed=2, tokens=300, seconds=6.0),
        grade("2", "skill", 2, passed=2, tokens=400, seconds=8.0),
        grade("1", "baseline", 1, passed=0, failed=2, tokens=50, seconds=1.0),
        grade("1", "baseline", 2, passed=1, failed=1, tokens=50, seconds=1.0),
        grade("2", "baseline", 1, passed=1, failed=1, tokens=50, seconds=1.0),
        grade("2", "baseline", 2, passed=0, failed=2, tokens=50, seconds=3.0),
    ]
    return report(batch(repeat=2), grades)


def test_each_variant_is_the_mean_and_sample_spread_of_its_jobs() -> None:
    built = _by_hand()
    skill, baseline = built.variant("skill"), built.variant("baseline")
    assert skill is not None
    assert baseline is not None
    assert (skill.jobs, skill.pass_rate) == (4, pytest.approx(0.875))
    # deviations 1/8, -3/8, 1/8, 1/8: squares 3/16 over n-1 = 3 -> variance 1/16
    assert skill.stddev == pytest.approx(0.25)
    assert baseline.pass_rate == pytest.approx(0.25)
    assert baseline.stddev == pytest.approx(math.sqrt(0.25 / 3))
    assert skill.tokens == 100 + 10 + 200 + 300 + 400  # agent and grader
    assert skill.wall_seconds == pytest.approx(5.0)
    assert skill.cost == pytest.approx(0.75)  # the priced jobs' sum
    assert baseline.cost is None  # no job of it has a price
    assert built.tokens == 1010 + 200
    assert built.cost == pytest.approx(0.75)
    assert built.pass_rate == pytest.approx(0.875)
    assert built.planned == 8


def test_the_difference_is_welchs_interval_over_the_job_pass_rates() -> None:
    (found,) = _by_hand().differences
    skill, baseline = [1, 0.5, 1, 1], [0, 0.5, 0.5, 0]
    var_s = sum((x - 0.875) ** 2 for x in skill) / 3
    var_b = sum((x - 0.25) ** 2 for x in baseline) / 3
    se2 = var_s / 4 + var_b / 4
    df = se2**2 / ((var_s / 4) ** 2 / 3 + (var_b / 4) ** 2 / 3)
    half = _t_by_integration(df) * math.sqrt(se2)
    assert found.versus == "baseline"
    assert found.delta == pytest.approx(0.625)
    assert 0.625 + half > 1  # past the largest possible difference: clipped
    assert (found.low, found.high) == (pytest.approx(0.625 - half, abs=1e-4), 1.0)
    assert found.level == 0.95


def test_each_eval_row_holds_its_variants_means_over_repeats() -> None:
    first, second = _by_hand().rows
    assert first.eval_id == "1"
    assert first.prompt == "Convert 1 km to miles"
    assert first.pass_rates == {"skill": pytest.approx(0.75), "baseline": pytest.approx(0.25)}
    assert first.runs == {"skill": 2, "baseline": 2}
    assert first.tokens == {"skill": round((110 + 200) / 2), "baseline": 50}
    assert first.wall_seconds == {"skill": 3.0, "baseline": 1.0}
    assert first.cost == {"skill": pytest.approx(0.375)}
    assert second.cost == {}
    assert second.pass_rates == {"skill": 1.0, "baseline": pytest.approx(0.25)}


def test_jobs_are_listed_by_eval_then_variant_then_repeat() -> None:
    built = _by_hand()
    assert [g.job.key for g in built.jobs] == [
        "e1-skill-r1",
        "e1-skill-r2",
        "e1-baseline-r1",
        "e1-baseline-r2",
        "e2-skill-r1",
        "e2-skill-r2",
        "e2-baseline-r1",
        "e2-baseline-r2",
    ]


def test_a_grade_for_a_job_the_batch_does_not_plan_is_ignored_and_the_first_of_two_wins() -> None:
    grades = [
        grade("1", "skill", passed=1),
        grade("1", "skill", passed=0, failed=1),  # a second grade for the same job
        grade("9", "skill", passed=0, failed=5),  # no eval 9
        grade("1", "skill", 2, passed=0, failed=5),  # no repeat 2
        grade("1", "against", passed=0, failed=5),  # no against variant
        grade("2", "skill", passed=1),
    ]
    built = report(batch(baseline=False), grades)
    assert [g.job.key for g in built.jobs] == ["e1-skill-r1", "e2-skill-r1"]
    assert built.pass_rate == 1.0


def test_a_batch_without_a_baseline_has_one_variant_and_no_difference() -> None:
    built = report(batch(baseline=False), [grade("1", "skill"), grade("2", "skill", failed=1)])
    assert [v.variant for v in built.variants] == ["skill"]
    assert built.differences == ()
    assert built.pass_rate == pytest.approx(0.75)


def test_with_too_few_jobs_on_a_side_the_interval_is_every_possible_difference() -> None:
    built = report(batch(("1",)), [grade("1", "skill"), grade("1", "baseline", passed=0, failed=1)])
    (found,) = built.differences
    assert (found.delta, found.low, found.high) == (1.0, -1.0, 1.0)


def test_with_no_spread_at_all_the_interval_is_the_difference_itself() -> None:
    grades = [grade(e, "skill") for e in "12"] + [
        grade(e, "baseline", passed=1, failed=1) for e in "12"
    ]
    (found,) = report(batch(), grades).differences
    assert (found.delta, found.low, found.high) == (0.5, 0.5, 0.5)


def test_the_interval_is_clipped_to_the_possible_differences() -> None:
    # skill 1 and 0, baseline 0 and 0: delta 1/2, se 1/2, df 1 -> 1/2 ± 6.35, far past ±1
    grades = [
        grade("1", "skill"),
        grade("2", "skill", passed=0, failed=1),
        grade("1", "baseline", passed=0, failed=1),
        grade("2", "baseline", passed=0, failed=1),
    ]
    (found,) = report(batch(), grades).differences
    unclipped = welch_interval([1, 0], [0, 0])
    assert unclipped is not None
    assert unclipped.low < -1
    assert unclipped.high > 1
    assert (found.delta, found.low, found.high) == (0.5, -1.0, 1.0)


def test_against_another_version_is_compared_too() -> None:
    chosen = batch(("1", "2"), against=OTHER)
    grades = [grade(e, v) for e in "12" for v in ("skill", "baseline", "against")]
    built = report(chosen, grades)
    assert [d.versus for d in built.differences] == ["baseline", "against"]
    assert [v.variant for v in built.variants] == ["skill", "baseline", "against"]
    assert built.against == OTHER


def test_a_batch_cancelled_before_any_grade_reports_every_eval_and_no_rate() -> None:
    built = report(batch(), [], status="cancelled", triggers=triggers())
    assert built.status == "cancelled"
    assert built.variants == ()
    assert built.differences == ()
    assert built.jobs == ()
    assert [row.eval_id for row in built.rows] == ["1", "2"]
    assert built.rows[0].pass_rates == {}
    assert built.pass_rate is None
    assert (built.tokens, built.cost) == (0, None)
    assert built.triggers == triggers()


def test_a_partial_batch_reports_what_was_graded() -> None:
    built = report(batch(), [grade("1", "skill")], status="partial")
    assert [v.variant for v in built.variants] == ["skill"]  # no baseline job was graded
    assert built.differences == ()
    assert built.rows[1].pass_rates == {}
    assert (len(built.jobs), built.planned) == (1, 4)


def test_a_long_prompt_is_shortened_to_one_line_in_its_row() -> None:
    built = report(batch(("1",), prompt="line one\nline two " + "x" * 500), [])
    assert "\n" not in built.rows[0].prompt
    assert len(built.rows[0].prompt) == PROMPT_CHARS
    assert built.rows[0].prompt.startswith("line one line two")


def test_the_report_survives_its_json() -> None:
    built = _by_hand()
    assert EvalReport.model_validate_json(built.model_dump_json()) == built


def test_an_interval_within_the_possible_differences_is_welchs_unchanged() -> None:
    # skill 1, 1/2, 1, 1; baseline 1/2, 1/2, 1, 1/2: delta 1/4
    passes = {("1", 1): 2, ("1", 2): 1, ("2", 1): 2, ("2", 2): 2}
    base = {("1", 1): 1, ("1", 2): 1, ("2", 1): 2, ("2", 2): 1}
    grades = [grade(e, "skill", r, passed=p, failed=2 - p) for (e, r), p in passes.items()]
    grades += [grade(e, "baseline", r, passed=p, failed=2 - p) for (e, r), p in base.items()]
    (found,) = report(batch(repeat=2), grades).differences
    variance = 0.0625 / 4 + 0.0625 / 4  # both sides: squares 3/16 over 3
    df = variance**2 / (2 * (0.0625 / 4) ** 2 / 3)
    half = _t_by_integration(df) * math.sqrt(variance)
    assert found.delta == pytest.approx(0.25)
    assert (found.low, found.high) == (
        pytest.approx(0.25 - half, abs=1e-4),
        pytest.approx(0.25 + half, abs=1e-4),
    )
    assert -1 < found.low < 0 < found.high < 1
