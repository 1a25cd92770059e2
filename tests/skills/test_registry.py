from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.config import SkillsSettings
from skillweave.errors import SkillNotFoundError
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.library import SkillLibrary
from skillweave.skills.registry import SkillRegistry
from tests.conftest import MakeSkill


def test_attachable_grows_with_the_tree(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("kit")
    make_skill("kit/a")
    make_skill("kit/b")
    make_skill("kit/a/deep")
    make_skill("other")
    make_skill("kit/c", extra='metadata:\n  enabled: "false"')
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "lib"]).scan())
    assert registry.attachable() == ("kit", "other")
    assert registry.attachable(["kit"]) == ("kit", "other", "a", "b")
    assert registry.attachable(["kit", "a"]) == ("kit", "other", "a", "b", "deep")
    assert registry.attachable(["missing"]) == ("kit", "other")


def test_unknown_skill_error_lists_what_is_available(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("one")
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "lib"]).scan())
    with pytest.raises(SkillNotFoundError, match="unknown skill 'two'; available: one"):
        registry.get("two")


def test_search_respects_enabled_state(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("pdf-reader", description="Read PDF documents and extract text.")
    make_skill(
        "pdf-old", description="Legacy PDF text extraction.", extra='metadata:\n  enabled: "false"'
    )
    registry = SkillRegistry.from_scan(SkillScanner([tmp_path / "lib"]).scan())
    assert [h.name for h in registry.search("extract pdf text")] == ["pdf-reader"]
    everything = registry.search("extract pdf text", enabled_only=False)
    assert {h.name for h in everything} == {"pdf-reader", "pdf-old"}


def test_library_refresh_reuses_the_registry_until_something_changes(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    make_skill("one")
    library = SkillLibrary(SkillsSettings(), dirs=[tmp_path / "lib"])
    first = library.refresh()
    assert library.refresh() is first
    make_skill("two")
    second = library.refresh()
    assert second is not first
    assert second.names == ("one", "two")


def test_library_uses_configured_dirs_and_disabled_list(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    make_skill("one")
    make_skill("two")
    settings = SkillsSettings(dirs=[str(tmp_path / "lib")], disabled=["two"])
    registry = SkillLibrary(settings).refresh()
    assert registry.names == ("one", "two")
    assert registry.is_enabled("one")
    assert not registry.is_enabled("two")


def test_unknown_skill_error_stays_short_in_a_large_library() -> None:
    from skillweave.errors import SkillNotFoundError

    error = SkillNotFoundError("x", available=tuple(f"skill-{i}" for i in range(100)))
    assert str(error).endswith("skill-19 and 80 more")
    assert len(error.available) == 100
