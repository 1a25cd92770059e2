"""Round four of the Python rules: declared packages one keystroke from a popular one
(``dependencies.typosquat``)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from skillweave.config import Severity
from skillweave.skills.scan import ScanReport, scan_files
from skillweave.skills.scan._typosquat import typosquat_of
from skillweave.skills.scan.report import severity_rank

SKILL = b"---\nname: probe\ndescription: A probe skill for the scanner's tests.\n---\n\n# Probe\n"


def scan(files: Mapping[str, str | bytes], skill: bytes = SKILL) -> ScanReport:
    encoded = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    return scan_files({"SKILL.md": skill, **encoded}, version="v")


def worst(report: ScanReport, rule: str) -> Severity | None:
    found = [f.severity for f in report.findings if f.rule == rule]
    return max(found, key=severity_rank) if found else None


# --- class 7: typosquats ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "popular"),
    [
        ("numpyy", "numpy"),  # a letter added
        ("matplotlb", "matplotlib"),  # a letter dropped
        ("sqlalchemu", "sqlalchemy"),  # a letter swapped
        ("cryptograpyh", "cryptography"),  # two neighbours transposed
        ("python-dotenw", "python-dotenv"),  # a letter swapped at the end
    ],
)
def test_a_name_one_keystroke_from_a_popular_one_is_named(name: str, popular: str) -> None:
    assert typosquat_of(name) == popular


@pytest.mark.parametrize(
    "name",
    ["requests", "requests-oauthlib", "pyaml", "scapy", "boto", "jinja", "flask-cors", "uvx"],
)
def test_popular_names_their_extensions_and_known_neighbours_are_not(name: str) -> None:
    assert typosquat_of(name) is None


def test_a_requirements_file_with_a_typosquat_is_high_and_shows_the_line() -> None:
    report = scan(
        {
            "requirements.txt": "beautifulsoup4==4.12\nbeautfulsoup4==4.12\n",
            "scripts/run.py": "import bs4\n",
        }
    )
    found = [f for f in report.findings if f.rule == "dependencies.typosquat"]
    assert [f.severity for f in found] == ["high"]
    assert "beautifulsoup4" in found[0].message
    assert "beautfulsoup4" in found[0].excerpt


def test_a_pep723_block_with_a_confusable_capital_is_high() -> None:
    script = (
        '# /// script\n# dependencies = [\n#   "XlsxWriter>=3",\n#   "pyarrovv",\n'
        '#   "psutiI",\n# ]\n# ///\nimport xlsxwriter\n'
    )
    report = scan({"scripts/export.py": script})  # pyarrovv is two keystrokes away: not flagged
    found = sorted(
        f.message.split()[1] for f in report.findings if f.rule == "dependencies.typosquat"
    )
    assert found == ["psutii,"]
    assert worst(report, "dependencies.typosquat") == "high"


def test_popular_packages_declared_together_are_clean() -> None:
    report = scan(
        {
            "requirements.txt": "requests>=2\nrequests-oauthlib\npython-dateutil\nopenpyxl\n",
            "scripts/run.py": "import requests, requests_oauthlib, dateutil, openpyxl\n",
        }
    )
    assert worst(report, "dependencies.typosquat") is None
