"""A report as one self-contained HTML page: nothing outside it is referenced, every hostile
text is escaped, and it shows the headline, the chart, the table, the triggers and the jobs."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import pytest

from skillweave.evals.html import CONTENT_SECURITY_POLICY, report_html
from skillweave.evals.report import build_report
from skillweave.evals.results import EvalReport
from tests.evals.reports import HOSTILE, batch, grade, hostile, realistic

ALLOWED_TAGS = {
    *("html", "head", "meta", "title", "style", "body", "main", "header", "footer", "section"),
    *("p", "h1", "h2", "h3", "dl", "dt", "dd", "div", "span", "strong", "code", "ul", "li"),
    *("figure", "figcaption", "table", "thead", "tbody", "tr", "th", "td", "details", "summary"),
    *("svg", "g", "rect", "line", "path", "text"),
}


class Page(HTMLParser):
    """Every start tag with its attributes, and the text of each <style>."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self.texts: list[str] = []
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.texts).append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def with_class(self, tag: str, cls: str) -> list[dict[str, str | None]]:
        return [a for a in self.named(tag) if cls in (a.get("class") or "").split()]


def _outside(value: str) -> bool:
    return bool(re.search(r"(https?:|//|url\s*\(|@import)", value, re.IGNORECASE))


@pytest.mark.parametrize("build", [realistic, hostile])
def test_the_page_references_nothing_outside_it(build: Callable[[], EvalReport]) -> None:
    page = Page(report_html(build()))
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS  # no script, link, img, iframe, a
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name in ("src", "href", "xlink:href", "action", "srcset", "style", "xmlns"):
                assert not _outside(value or ""), (tag, name, value)
            assert not name.startswith("on"), (tag, name)
    assert all(not _outside(style) for style in page.styles)
    (policy,) = [a for a in page.named("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    assert policy["content"] == CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY


def test_hostile_text_in_every_field_appears_escaped_only() -> None:
    text = report_html(hostile())
    assert "<script" not in text
    assert text.count("</svg>") == 1  # the chart's own
    assert "\x1b" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &lt;/svg&gt; &#x27;&quot; |" in text
    page = Page(text)
    shown = "".join(page.texts)
    assert shown.count('<script>alert("x")</script>') >= 20  # as text, in every field
    assert "\\x1b[2J" in shown  # the terminal escape made visible


def test_a_bidi_override_is_shown_not_obeyed() -> None:
    text = report_html(hostile("evil\u202egnp.exe"))
    assert "\u202e" not in text
    assert "evil\\u202egnp.exe" in text


def test_the_header_and_headline_numbers() -> None:
    built = realistic()
    page = Page(report_html(built))
    shown = " ".join(page.texts)
    assert "unit-converter" in shown
    assert "0123456789ab" in shown
    assert "scripted:examples/evals/unit-converter.yaml" in shown
    assert "2026-12-07 04:12 UTC" in shown
    (status,) = page.with_class("span", "status")
    assert status["class"] == "status completed"
    big = [t for t in page.texts if re.fullmatch(r"[+\u2212]?[\d,.$]+(%| pts)?|\dm \d+s", t)]
    skill, baseline = built.variant("skill"), built.variant("baseline")
    assert skill is not None
    assert baseline is not None
    assert big[:3] == [
        f"{round(skill.pass_rate * 100)}%",
        f"{round(baseline.pass_rate * 100)}%",
        f"+{round(built.differences[0].delta * 100)} pts",
    ]
    assert "52,272" in big or f"{built.tokens:,}" in big
    assert "1m 37s" in big
    assert "$0.0756" in big
    assert "95% CI +29..+66" in shown


def test_the_chart_has_a_bar_per_eval_and_variant_whiskers_an_axis_and_a_legend() -> None:
    page = Page(report_html(realistic()))
    (svg,) = page.named("svg")
    assert svg["role"] == "img"
    assert len(page.named("rect")) == 4 * 2
    assert len(page.with_class("g", "skill")) == 4
    assert len(page.with_class("g", "baseline")) == 4
    # every eval has a spread over its 3 repeats but eval 1 with the skill (4, 4, 4)
    assert len(page.with_class("path", "whisker")) == 4 * 2 - 1
    shown = page.texts
    ticks = [t for t in shown if t in ("0%", "25%", "50%", "75%", "100%")]
    assert ticks[:5] == ["0%", "25%", "50%", "75%", "100%"]
    legend = [t.strip() for t in shown if t.strip() in ("with the skill", "without the skill")]
    assert legend[:2] == ["with the skill", "without the skill"]


def test_one_repeat_draws_no_whiskers() -> None:
    built = build_report(
        batch(),
        [grade("1", "skill"), grade("2", "skill"), grade("1", "baseline", failed=1)],
        status="partial",
        finished_at="x",
        wall_seconds=1,
        triggers=None,
    )
    page = Page(report_html(built))
    assert page.with_class("path", "whisker") == []
    assert len(page.named("rect")) == 3  # eval 2 has no baseline bar


def test_the_table_has_a_row_per_eval() -> None:
    text = report_html(realistic())
    table = text.split("<h2>Evals</h2>")[1].split("</table>")[0]
    page = Page(table)
    assert len(page.named("tr")) == 1 + 4
    cells = [t for t in page.texts if t.strip()]
    assert cells[cells.index("3") : cells.index("3") + 4] == [
        "3",
        "Convert the lengths in lengths.csv to feet and write report.md",
        "92% ",
        "(3)",
    ]


def test_jobs_that_failed_something_are_open_and_the_others_closed() -> None:
    page = Page(report_html(realistic()))
    details = page.named("details")
    assert len(details) == 24
    opened = [d for d in details if "open" in d]
    # of 24 jobs, the ones that passed all 4 verdicts: eval 1 skill x3, eval 2 skill x2,
    # eval 3 skill x2, eval 4 skill x2
    assert len(opened) == 24 - 9
    shown = "".join(page.texts)
    assert "✗ FAIL" in shown
    assert "✓ PASS" in shown
    assert "not found: the answer does not show it" in shown


def test_the_triggers_section() -> None:
    shown = " ".join(Page(report_html(realistic())).texts)
    assert "Triggers" in shown
    assert "67%" in shown
    assert "(2 of 3)" in shown
    assert "(1 of 4)" in shown
    assert "missed convert miles" in shown


def test_an_empty_cancelled_report_renders() -> None:
    built = build_report(
        batch(), [], status="cancelled", finished_at="x", wall_seconds=0, triggers=None
    )
    text = report_html(built)
    page = Page(text)
    shown = " ".join(page.texts)
    assert "No job was graded." in shown
    assert "cancelled" in shown
    assert "0 of 4 jobs were graded" in shown
    assert page.named("svg")
    assert page.named("rect") == []
    assert "Triggers" not in shown


def test_the_title_names_the_skill_and_its_pass_rate() -> None:
    text = report_html(realistic())
    assert "<title>Evals of unit-converter · 94% with the skill</title>" in text
    assert HOSTILE not in text


def test_jobs_past_the_pages_budget_are_counted_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    one = len(report_html(realistic()).split("<details")[1])
    monkeypatch.setattr("skillweave.evals.html.MAX_JOBS_CHARS", one * 5)
    page = Page(report_html(realistic()))
    assert 3 <= len(page.named("details")) <= 5
    shown = "".join(page.texts)
    assert f"{24 - len(page.named('details'))} more jobs left out of this page" in shown


def test_the_first_pick_is_told_beside_the_top_k() -> None:
    page = report_html(realistic())

    assert "Ranked first: recall 33%" in page
    assert "false triggers 0%" in page
