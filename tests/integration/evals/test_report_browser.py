"""The HTML report in a real browser: headless Chromium loads the page from disk and its DOM
holds the chart and the table (skipped where Chromium is not installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skillweave.evals.html import report_html
from tests.evals.reports import realistic

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def _dom(page: Path, profile: Path) -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_chromium_renders_the_chart_and_the_table(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(report_html(realistic()), encoding="utf-8")
    dom = _dom(page, tmp_path / "profile")
    assert '<svg class="chart" role="img"' in dom
    assert dom.count("<rect ") == 4 * 2
    assert dom.count('class="whisker"') == 7
    assert "<h2>Evals</h2>" in dom
    assert '<td class="prompt">Convert 5 km to miles</td>' in dom
    assert dom.count("<details") == 24
