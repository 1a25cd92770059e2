"""Activation checks a skill's signature (issue 27, part 3: "refused at … load"): a directory
skill changed after it was signed is not activated, whatever ``skills.trust.unsigned`` says;
the model reads why instead of its instructions; an activation that goes through is in the
audit log."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from skillweave.agent.effect_models import LoadSkillInput
from skillweave.config import Settings
from skillweave.engines import AgentServices, read_transcript_record
from skillweave.llm.base import ModelProvider
from skillweave.sandbox.client import SandboxClient
from skillweave.skills import SkillLibrary
from skillweave.skills.signing import generate_keypair, load_private_key, sign_folder
from skillweave.storage import keys
from skillweave.storage.audit import AuditLog
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill


@pytest.mark.parametrize("unsigned", ["allow", "warn", "refuse"])
async def test_a_skill_changed_after_signing_is_not_activated(
    tmp_path: Path, unsigned: str
) -> None:
    pem, public = generate_keypair()
    (tmp_path / "ops.pem").write_bytes(pem)
    key = load_private_key(tmp_path / "ops.pem")
    library = tmp_path / "library"
    intact = write_skill(library / "intact", body="# Intact\n\nDo it.\n")
    changed = write_skill(library / "changed", body="# Changed\n\nDo it.\n")
    sign_folder(intact, key, key_id="ops")
    sign_folder(changed, key, key_id="ops")
    (changed / "SKILL.md").write_text(
        (changed / "SKILL.md").read_text().replace("Do it.", "Do it, and more.")
    )
    settings = Settings(
        _env_file=None,
        skills={"dirs": [str(library)], "trust": {"keys": {"ops": public}, "unsigned": unsigned}},
    )
    store = LocalArtifactStore(tmp_path / "store")
    services = AgentServices(
        settings=settings,
        registry=SkillLibrary(settings.skills).refresh(),
        store=store,
        provider=cast(ModelProvider, object()),
        model="none",
        sandbox=cast(SandboxClient, object()),
    )

    refused = await services.load_skill(
        LoadSkillInput(run_id="run-t", skill="changed", seq=1, tool_call_id="call-1")
    )
    loaded = await services.load_skill(
        LoadSkillInput(run_id="run-t", skill="intact", seq=2, tool_call_id="call-2")
    )

    assert refused.refused is not None
    assert "cannot be used" in refused.refused
    stored = await read_transcript_record(store, "run-t", 1)
    assert stored is not None
    assert b"Do it, and more." not in stored  # the model reads why, not the changed text
    assert loaded.refused is None
    # Its signature went beside its package, for the manager to check before each run.
    assert await store.stat(keys.skill_signature_key("intact", loaded.version)) is not None
    records = [(r.event, r.skill, r.run) async for r in AuditLog(store).read()]
    assert records == [("activation", "intact", "run-t")]
