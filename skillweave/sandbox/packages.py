"""Publishing skill packages to the artifact store, where the manager reads them.

A skill's package in the store is the ZIP of its own files (child skills excluded): exactly the
files its version hashes, stored under ``skills/{name}/{version}.zip``. Publishing is
idempotent: a version already in the store is not written again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from skillweave.skills import Skill, build_package
from skillweave.storage import keys
from skillweave.storage.base import ArtifactRef, ArtifactStore

__all__ = ["publish_library", "publish_skill"]


async def publish_skill(store: ArtifactStore, skill: Skill) -> ArtifactRef:
    """Store the package of `skill` at its pinned version (a no-op when it is there)."""
    key = keys.skill_package_key(skill.name, skill.version)
    existing = await store.stat(key)
    if existing is not None:
        return existing
    package = await asyncio.to_thread(build_package, skill.path, include_children=False)
    return await store.put_bytes(key, package, content_type="application/zip")


async def publish_library(store: ArtifactStore, skills: Iterable[Skill]) -> int:
    """Publish every skill; returns how many packages are in the store for them."""
    refs = [await publish_skill(store, skill) for skill in skills]
    return len(refs)
