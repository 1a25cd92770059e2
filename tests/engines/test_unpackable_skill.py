"""A library skill whose package is refused (here: a file compressing past the ratio limit)
can still be activated for its instructions; the activation says its scripts cannot run,
and no run fails on it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from skillweave.agent.effect_models import LoadSkillInput
from skillweave.config import Settings
from skillweave.engines.services import AgentServices
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillLibrary
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


async def test_an_unpackable_skill_activates_with_a_note(tmp_path: Path) -> None:
    library = tmp_path / "library"
    write_skill(
        library / "zeros",
        description="Carries a file of zeros. Use when testing package limits.",
        files={"data/zeros.bin": "\0" * (2 * 1024 * 1024), "scripts/run.py": "print(1)\n"},
    )
    settings = Settings(_env_file=None, skills={"dirs": [str(library)]})
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, object()),  # never called: no tool schemas are asked for
    )
    loaded = await services.load_skill(
        LoadSkillInput(run_id="run-1", skill="zeros", seq=0, tool_call_id="call-1")
    )
    assert loaded.skill == "zeros"
    assert any("scripts cannot run" in note for note in loaded.notes)
    assert await store.stat(keys.skill_package_key("zeros", loaded.version)) is None
