"""An agent spec's ``name@VERSION`` pins on the command line (issue 45, part 4): the skill is
checked by name when the spec is read, a malformed pin is bad input naming the file, and a
prefix becomes the full version before the run starts (the one the store or library holds),
or the run is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.agent import AgentSpec
from skillweave.cli.agent_run import load_agent
from skillweave.cli.versions import resolve_spec_pins
from skillweave.config import Settings
from skillweave.errors import AgentSpecError
from skillweave.skills import SkillLibrary
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


def notes_md(word: str) -> str:
    return f"---\nname: notes\ndescription: Notes ({word}). Use it.\n---\n# Notes\n\n{word}\n"


async def test_pins_are_checked_by_name_and_resolved_where_the_run_starts(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path / "library" / "house-style", description="House style. Use it.")
    settings = Settings(_env_file=None, skills={"dirs": [str(tmp_path / "library")]})
    store = LocalArtifactStore(tmp_path / "store")
    stored = StoredSkills(store)
    older = (await stored.add_content("notes", "Notes (one). Use it.", notes_md("one"))).latest
    newer = (await stored.add_content("notes", "Notes (two). Use it.", notes_md("two"))).latest
    library = SkillLibrary(
        settings.skills, dirs=[tmp_path / "library"], store=store, folder=tmp_path / "up"
    )
    registry = await library.reload()
    style = registry.get("house-style").version

    spec_file = tmp_path / "agent.yaml"
    spec_file.write_text(f"skills: [notes@{older[:8]}, house-style@{style[:9]}, notes]\n")
    spec = load_agent(spec_file, registry)
    pinned = await resolve_spec_pins(spec, store, registry, source=str(spec_file))
    assert pinned.skills == (f"notes@{older}", f"house-style@{style}", "notes")
    assert await resolve_spec_pins(AgentSpec(), store, registry, source="x") == AgentSpec()

    for entry, says in (
        ("notes@xyz12345", "is not a valid version"),
        ("ghost@deadbeef", "unknown skill 'ghost'"),
    ):
        spec_file.write_text(f"skills: [{entry}]\n")
        with pytest.raises(AgentSpecError, match=says) as exc:
            load_agent(spec_file, registry)
        assert str(spec_file) in str(exc.value)
    for entry, says in (
        ("notes@deadbeef", f"no stored version 'deadbeef' \\(its versions: {newer[:12]}"),
        ("house-style@deadbeef", "skill 'house-style' has no stored version 'deadbeef'"),
    ):
        spec = AgentSpec(skills=(entry,))
        with pytest.raises(AgentSpecError, match=says):
            await resolve_spec_pins(spec, store, registry, source=str(spec_file))
