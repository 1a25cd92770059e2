"""An install an agent asks for keeps where it came from: the registry's label on the stored
version's origin (what ``skills versions`` and the API's versions show), and an index entry
whose source is an ``owner/repo`` read on ``SKILLS__GIT_HOST``, as ``skills install`` reads it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillweave.config import Settings
from skillweave.engines import AgentServices
from skillweave.skills import SkillRegistry, SkillScanner
from skillweave.skills.stored import StoredSkills, origin_text
from skillweave.storage.local import LocalArtifactStore
from tests.agent.harness import FakeSandbox, write_skill
from tests.engines.registry_skills import (
    LABEL,
    TALLY,
    registry_settings,
    skill_repository,
    write_index,
)
from tests.engines.test_acquisition import install_of, request


def _services(tmp_path: Path, store: LocalArtifactStore, **skills: object) -> AgentServices:
    settings = Settings(
        _env_file=None, skills={**registry_settings(tmp_path / "index.json"), **skills}
    )
    library = tmp_path / "skills"
    write_skill(library, "notes")
    return AgentServices(
        settings=settings,
        registry=SkillRegistry.from_scan(SkillScanner([library]).scan()),
        store=store,
        provider=None,
        model=None,
        sandbox=FakeSandbox(store),  # type: ignore[arg-type]
    )


async def _requested_and_installed(tmp_path: Path, **skills: object) -> StoredSkills:
    store = LocalArtifactStore(tmp_path / "store")
    ready = await _services(tmp_path, store, **skills).prepare_skill_request(request())
    assert ready.ready, ready.summary
    done = await _services(tmp_path, store, **skills).install_skill(install_of(ready))
    assert done.installed, done.summary
    return StoredSkills(store)


async def test_the_stored_version_names_the_registry_it_came_from(tmp_path: Path) -> None:
    write_index(skill_repository(tmp_path / "library"), tmp_path / "index.json")
    stored = await _requested_and_installed(tmp_path)

    record = await stored.get(TALLY)
    assert record is not None
    origin = record.latest_version.origin
    assert origin is not None
    assert origin.registry == LABEL
    assert origin.path == f"skills/{TALLY}"
    assert f"(registry {LABEL}, path skills/{TALLY}, ref " in origin_text(origin)


async def test_an_owner_repo_entry_is_read_on_the_git_host(tmp_path: Path) -> None:
    host = tmp_path / "host"
    repo = skill_repository(tmp_path / "library")
    shutil.copytree(repo, host / "acme" / "skills.git")
    index = write_index(repo, tmp_path / "index.json")
    document = json.loads(index.read_text())
    for entry in document["skills"]:  # a hand-written index: the source as owner/repo
        entry["source"] = "acme/skills"
    index.write_text(json.dumps(document))

    stored = await _requested_and_installed(tmp_path, git_host=f"file://{host}")

    record = await stored.get(TALLY)
    assert record is not None
    origin = record.latest_version.origin
    assert origin is not None
    assert origin.kind == "git"
    assert origin.source.startswith(f"file://{host}/acme/skills")
    assert origin.registry == LABEL
