"""``skills install``'s CLI pieces for the ecosystem's forms: the lock it keeps beside the open
``skills`` CLI's, and ``--list``'s table, whose text comes from the source (hostile: escape
sequences and markup stay text)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from skillweave.cli import install_lock, source_listing
from skillweave.config import Settings
from skillweave.skills.install import (
    LOCK_FILE,
    ListedSkill,
    Marketplace,
    MarketplacePlugin,
    SkillSource,
    SourceListing,
)
from skillweave.skills.scan import ScanReport


def test_the_lock_kept_is_skills_lock_even_beside_skills_lock_json() -> None:
    assert install_lock.LOCK_NAME == LOCK_FILE
    assert install_lock.kept_lock(Path("a/skills-lock.json")) == Path("a/skills.lock")
    assert install_lock.kept_lock(Path("a/other.lock")) == Path("a/other.lock")


def test_the_listing_escapes_what_the_source_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(source_listing, "out", Console(file=buffer, color_system=None, width=200))
    hostile = "Reads PDFs.\x1b]52;c;cm0gLXJmIH4=\x07 [bold]Use[/bold] for PDFs."
    listing = SourceListing(
        source=SkillSource(kind="git", location="file:///host/acme/skills"),
        commit="c" * 40,
        marketplace=Marketplace(
            name="acme",
            plugins=(
                MarketplacePlugin(name="docs", source="./", folder=".", skills=("skills/pdf",)),
                MarketplacePlugin(
                    name="far\x1b[31m", source="github:x/y", unavailable="its source\x1b[2J"
                ),
            ),
        ),
        skills=(
            ListedSkill(
                name="pdf",
                path="skills/pdf",
                version="9" * 64,
                description=hostile,
                plugins=("docs",),
                report=ScanReport(scanner="t", version="9" * 64, findings=[]),
            ),
        ),
    )
    source_listing.show_listing(listing, Settings(), as_json=False)
    printed = buffer.getvalue()
    assert "\x1b" not in printed
    assert "\x07" not in printed
    assert "[bold]Use[/bold]" in printed
    assert "skills/pdf (plugin docs)" in printed
    assert "clean: no findings" in printed
    assert "1 skill in file:///host/acme/skills at commit cccccccccccc; nothing installed" in (
        printed
    )
    assert "plugin far" in printed
    assert "not installable here" in printed
