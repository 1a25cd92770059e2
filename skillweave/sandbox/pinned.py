"""A skill at the version pinned at its activation, even after the library moved on.

Activation pins a skill's version (DESIGN §3: a running run, or an MCP session, never sees a
skill change under it) and publishes its package to the store (``sandbox.packages``). Reading
its files later needs that version: :func:`skill_at` returns the library's copy while it still
has that version, else unpacks the stored package once into ``SKILLS__PINNED_DIR``-style
folders (``name@version``). Used by the MCP front door; the agent's services hold the same rule.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
from pathlib import Path

from skillweave.errors import ArtifactNotFoundError, SkillFormatError
from skillweave.skills import SKILL_FILE, Skill, SkillRegistry, extract_package, load_skill_file
from skillweave.storage import ArtifactStore, keys

__all__ = ["skill_at"]


async def skill_at(
    store: ArtifactStore,
    registry: SkillRegistry,
    name: str,
    version: str,
    *,
    pinned_dir: Path,
) -> Skill:
    """`name` at `version`: the registry's copy while it has that version, else the package
    of that version from `store`, unpacked once into `pinned_dir`.

    Raises:
        ArtifactNotFoundError: the package of that version is not in the store (gone).
        SkillFormatError: the stored package does not hold that skill.
    """
    if name in registry:
        skill = registry.get(name)
        if skill.version == version:
            return skill
    key = keys.skill_package_key(name, version)
    folder = pinned_dir / f"{name}@{version}"
    if not (folder / SKILL_FILE).is_file():
        ref = await store.stat(key)
        if ref is None:
            raise ArtifactNotFoundError(key)
        await asyncio.to_thread(_unpack, await store.get_bytes(ref), folder)
    loaded = await asyncio.to_thread(load_skill_file, folder / SKILL_FILE)
    skill = loaded.skill
    if skill is None or (skill.name != name and not name.endswith(f".{skill.name}")):
        why = "; ".join(d.message for d in loaded.diagnostics) or "another skill's package"
        raise SkillFormatError(key, f"not a package of {name!r}: {why}")
    own = skill.name
    if own == name:
        return dataclasses.replace(skill, version=version, source=folder.parent)
    # Pinned under its qualified name (``formats.pdf.parser``: namesakes in other namespaces).
    return dataclasses.replace(
        skill,
        name=name,
        namespace=name[: -len(own) - 1],
        short_name=own,
        version=version,
        source=folder.parent,
    )


def _unpack(package: bytes, folder: Path) -> None:
    """Unpack `package` into `folder` (a name@version folder) through a private temporary
    folder and a rename, so that a reader never sees half a skill."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        top = extract_package(package, temp)[0]  # a package may hold its skill in a folder
        try:
            top.rename(folder)
        except OSError:  # another reader unpacked the same version first
            if not (folder / SKILL_FILE).is_file():
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)
