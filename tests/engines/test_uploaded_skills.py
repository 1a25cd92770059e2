"""The store's skills join (and leave) the library an engine's services serve."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillLibrary
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

SKILL_MD = """---
name: greeter
description: Greets people. Use when someone says hello.
---
# Greeter

Say hello back.
"""


async def test_served_library_holds_enabled_uploads_beside_directory_skills(
    tmp_path: Path,
) -> None:
    library = tmp_path / "library"
    write_skill(library / "csv-tools", description="Profile CSV files.")
    settings = Settings(_env_file=None, skills={"dirs": [str(library)]})
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, object()),
    )
    stored = StoredSkills(store)
    dest = tmp_path / "uploaded"
    served = SkillLibrary(settings.skills, dirs=[library], store=store, folder=dest)
    await served.reload()
    services.serve_library(served)
    before = services.view(None)
    assert "greeter" not in before

    record = await stored.add_content(
        "greeter", "Greets people. Use when someone says hello.", SKILL_MD
    )
    services.use_registry(await served.reload())
    assert {s.name for s in services.registry} == {"csv-tools", "greeter"}
    assert services.registry.get("greeter").version == record.latest
    assert "greeter" in services.view(None)  # the cached view was dropped

    await stored.set_enabled("greeter", False)
    services.use_registry(await served.reload())
    assert {s.name for s in services.registry} == {"csv-tools"}
    assert not (dest / "greeter").exists()


async def test_a_published_skill_is_served_at_once(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, skills={"dirs": [str(tmp_path / "none")]})
    store = LocalArtifactStore(tmp_path / "store")
    served = SkillLibrary(settings.skills, dirs=[], store=store, folder=tmp_path / "up")
    services = AgentServices(
        settings=settings,
        registry=await served.reload(),
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, object()),
    )
    services.serve_library(served)
    await StoredSkills(store).add_content(
        "greeter", "Greets people. Use when someone says hello.", SKILL_MD
    )
    assert services.authoring.published is not None
    await services.authoring.published()
    assert "greeter" in services.registry
