"""An agent's ``name@VERSION`` pins (issue 45, part 4): a run's view shows the pinned skill at
that version from the store, whatever the library serves, beside its other skills as the
library has them; a version the store does not hold refuses the run in one line."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.errors import SignatureError
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillLibrary, SkillVersionError
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


def notes_md(word: str) -> str:
    return (
        f"---\nname: notes\ndescription: Notes ({word}). Use for notes.\n---\n# Notes\n\n{word}\n"
    )


async def services_with_two_versions(
    tmp_path: Path, **skills: object
) -> tuple[AgentServices, str, str]:
    library = tmp_path / "library"
    write_skill(library / "csv-tools", description="Profile CSV files.")
    settings = Settings(
        _env_file=None,
        skills={"dirs": [str(library)], "uploaded_dir": str(tmp_path / "uploaded"), **skills},
    )
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    older = await stored.add_content("notes", "Notes (one). Use for notes.", notes_md("one"))
    newer = await stored.add_content("notes", "Notes (two). Use for notes.", notes_md("two"))
    served = SkillLibrary(settings.skills, dirs=[library], store=store, folder=tmp_path / "up")
    services = AgentServices(
        settings=settings,
        registry=await served.reload(),
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, object()),
    )
    return services, older.latest, newer.latest


async def test_a_pinned_older_version_is_what_the_run_sees(tmp_path: Path) -> None:
    services, older, newer = await services_with_two_versions(tmp_path)
    assert services.registry.get("notes").version == newer
    for pin in (older, older[:8], older[:20].upper()):
        view = await services.views.of_run(("csv-tools", f"notes@{pin}"), None)
        notes = view.get("notes")
        assert (notes.version, notes.description) == (older, "Notes (one). Use for notes.")
        assert view.is_enabled("csv-tools")
        assert sorted(view.attachable()) == ["csv-tools", "notes"]
        skill, _ = await services.views.skill("notes", (f"notes@{pin}",), None)
        assert "one" in skill.path.joinpath("SKILL.md").read_text()
    # The library's own version: its copy, as an unpinned entry would have it.
    view = await services.views.of_run((f"notes@{newer}",), None)
    assert view.get("notes") is services.registry.get("notes")
    assert not view.is_enabled("csv-tools")


async def test_a_version_the_store_does_not_hold_refuses_the_run(tmp_path: Path) -> None:
    services, _, _ = await services_with_two_versions(tmp_path)
    for pin in ("deadbeef", "d" * 64):
        with pytest.raises(SkillVersionError, match="has no stored version") as exc:
            await services.views.of_run((f"notes@{pin}",), None)
        assert "\n" not in str(exc.value)
    with pytest.raises(SkillVersionError, match="no stored version"):
        await services.views.of_run(("ghost@deadbeef",), None)
    with pytest.raises(SkillVersionError, match="is not a valid version"):
        await services.views.of_run(("notes@xyz",), None)


async def test_a_version_todays_trust_policy_refuses_refuses_the_run(tmp_path: Path) -> None:
    services, older, newer = await services_with_two_versions(
        tmp_path, trust={"unsigned": "refuse"}
    )
    with pytest.raises(SignatureError, match="not signed"):
        await services.views.of_run((f"notes@{older}",), None)
    # The library's own version is the library's to judge (at activation, as any skill).
    view = await services.views.of_run((f"notes@{newer}",), None)
    assert view.get("notes").version == newer
