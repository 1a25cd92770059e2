"""Who a skill's secrets, credentials and network bind to (``skillweave.sandbox.bindings``):
exactly one canonical name, at a version the name's owner holds (the manager's own library,
or an uploaded skill's record); anything else is refused, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from skillweave.config import SandboxSettings
from skillweave.errors import ConfigError
from skillweave.sandbox.bindings import SkillOwnership, check_bound_settings
from skillweave.skills import Skill
from skillweave.skills.names import NOT_BOUND, bound_name, canonical_form
from skillweave.skills.stored import StoredSkills
from skillweave.storage.local import LocalArtifactStore

V1, V2, V3 = "1" * 64, "2" * 64, "3" * 64


def _skill(name: str, version: str) -> Skill:
    return Skill(name=name, description="d", path=Path("/nowhere") / name, version=version)


@pytest.mark.parametrize(
    ("name", "bound", "form"),
    [
        ("probe-a", "probe-a", "probe-a"),
        ("PROBE-A", None, "probe-a"),
        ("ｐｒｏｂｅ-ａ", None, "probe-a"),
        ("ＰＲＯＢＥ－Ａ", None, "probe-a"),
        ("probe--a", None, "probe-a"),
        ("web.parser", None, "web-parser"),
        ("a" * 65, None, "a" * 64),
        ("---", None, None),
    ],
)
def test_only_a_canonical_name_is_bound(name: str, bound: str | None, form: str | None) -> None:
    assert bound_name(name) == bound
    assert canonical_form(name) == form


async def test_a_name_that_is_not_canonical_is_refused_before_any_owner(tmp_path: Path) -> None:
    ownership = SkillOwnership(LocalArtifactStore(tmp_path), [_skill("PROBE-A", V1)])
    assert await ownership.refusal("PROBE-A", V1) == NOT_BOUND
    assert await ownership.refusal("ｐｒｏｂｅ-ａ", V1) == NOT_BOUND
    # The directory skill PROBE-A owns the name: a canonical 'probe-a' published elsewhere
    # is not its owner's either.
    refusal = await ownership.refusal("probe-a", V1)
    assert refusal is not None
    assert "PROBE-A" in refusal


async def test_a_directory_skill_binds_the_versions_the_library_held(tmp_path: Path) -> None:
    ownership = SkillOwnership(LocalArtifactStore(tmp_path), [_skill("probe-a", V1)])
    assert await ownership.refusal("probe-a", V1) is None
    refusal = await ownership.refusal("probe-a", V2)
    assert refusal is not None
    assert "does not own the name" in refusal
    ownership.use_registry([_skill("probe-a", V2)])  # edited: a run pinned to V1 keeps it
    assert await ownership.refusal("probe-a", V1) is None
    assert await ownership.refusal("probe-a", V2) is None


async def test_an_uploaded_skill_binds_the_versions_of_its_record(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    text = "---\nname: upl-a\ndescription: Does a thing. Use when testing.\n---\nBody.\n"
    record = await StoredSkills(store).add_content("upl-a", "Does a thing. Use when testing.", text)
    ownership = SkillOwnership(store)
    assert await ownership.refusal("upl-a", record.latest) is None
    refusal = await ownership.refusal("upl-a", V3)
    assert refusal is not None
    assert "uploaded skill" in refusal


async def test_a_name_without_a_known_owner_binds_nothing(tmp_path: Path) -> None:
    refusal = await SkillOwnership(LocalArtifactStore(tmp_path)).refusal("stray-a", V1)
    assert refusal is not None
    assert "no owner" in refusal


@pytest.mark.parametrize(
    ("section", "setting"),
    [
        ({"skill_secrets": {"PROBE-A": {"K": SecretStr("v" * 20)}}}, "SANDBOX__SKILL_SECRETS"),
        ({"egress": {"approvals": {"PROBE-A": {}}}}, "SANDBOX__EGRESS__APPROVALS"),
        (
            {"egress": {"credentials": {"ｐｒｏｂｅ-ａ": []}}},
            "SANDBOX__EGRESS__CREDENTIALS",
        ),
    ],
)
def test_every_table_keyed_by_skill_is_checked_at_start_up(
    section: dict[str, object], setting: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{setting} names .* write it as 'probe-a'"):
        check_bound_settings(SandboxSettings.model_validate(section))
