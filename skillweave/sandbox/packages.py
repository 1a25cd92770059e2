"""Publishing skill packages to the artifact store, where the manager reads them.

A skill's package in the store is the ZIP of its own files (child skills excluded): exactly the
files its version hashes, stored under ``skills/{name}/{version}.zip``. Publishing is
idempotent: a version already in the store is not written again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from skillweave.errors import InvalidKeyError, PackageError, SignatureError
from skillweave.skills import Skill, build_package
from skillweave.skills.signing import read_signature, signature_bytes
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["publish_library", "publish_skill"]

logger = logging.getLogger("skillweave.sandbox")


async def publish_skill(store: ArtifactStore, skill: Skill) -> ArtifactRef:
    """Store the package of `skill` at its pinned version (a no-op when it is there), with the
    signature its folder holds beside it (``skills.signing``: the manager checks it)."""
    key = keys.skill_package_key(skill.name, skill.version)
    existing = await store.stat(key)
    if existing is not None:
        return existing
    package = await asyncio.to_thread(build_package, skill.path, include_children=False)
    try:
        signature = await asyncio.to_thread(read_signature, skill.path)
    except SignatureError as exc:  # unreadable: the manager finds none, and the policy says
        logger.warning("skill %r: its signature is not published: %s", skill.name, exc)
        signature = None
    if signature is not None:
        await store.put_bytes(
            keys.skill_signature_key(skill.name, skill.version),
            signature_bytes(signature),
            content_type="application/json",
        )
    return await store.put_bytes(key, package, content_type="application/zip")


async def publish_library(store: ArtifactStore, skills: Iterable[Skill]) -> int:
    """Publish every skill that can be; returns how many packages are in the store for them.

    A skill whose package cannot be built (over the package limits) or keyed (a name no key
    can hold) is logged and skipped: one such skill in a library must not stop a manager from
    starting, and activating it says why (`publish_skill` raises again there).
    """
    published = 0
    for skill in skills:
        try:
            await publish_skill(store, skill)
        except (PackageError, InvalidKeyError) as exc:
            logger.warning("skill %r is not published: %s", skill.name, exc)
            continue
        published += 1
    return published
