"""Reading and writing the store's skill records and packages: :class:`SkillRecords`.

A record per skill lives at ``keys.skill_index_key(name)`` (``catalog/skills/{name}.json``);
each version's canonical ZIP at ``keys.skill_package_key(name, version)``. Every change of a
record rewrites the generation marker (``keys.SKILLS_GENERATION_KEY``) after it, so that a
reader that sees the new marker finds the new record and a poller learns of changes with one
stat. No locking here: ``StoredSkills``, the only caller, serializes its writers.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from datetime import UTC, datetime
from typing import Final

from pydantic import ValidationError

from skillweave.errors import (
    ArtifactIntegrityError,
    ResourceNotFoundError,
    SkillFormatError,
    SkillNotFoundError,
)
from skillweave.skills.spec import name_problems
from skillweave.skills.stored._model import StoredSkill
from skillweave.storage import ArtifactStore, keys

__all__ = ["SkillRecords"]

_JSON: Final = "application/json"
_READ_ATTEMPTS: Final = 3


class SkillRecords:
    """The uploaded skills' records and packages in an artifact store.

    Args:
        store: where packages and records live.
    """

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store

    async def list(self) -> list[StoredSkill]:
        """Every uploaded skill, sorted by name."""
        out: list[StoredSkill] = []
        for ref in await self.store.list(keys.SKILLS_PREFIX):
            name = ref.key.removeprefix(keys.SKILLS_PREFIX).removesuffix(".json")
            record = await self.get(name)
            if record is not None:
                out.append(record)
        return sorted(out, key=lambda skill: skill.name)

    async def generation(self) -> str | None:
        """What the store's skills are at: a token that every change of a record changes
        (None: no change was ever recorded). One stat, for pollers."""
        ref = await self.store.stat(keys.SKILLS_GENERATION_KEY)
        return ref.sha256 if ref is not None else None

    async def get(self, name: str) -> StoredSkill | None:
        """The uploaded skill `name`, or None (also for a name that cannot be a skill's)."""
        if name_problems(name):
            return None
        key = keys.skill_index_key(name)
        # A record replaced between `stat` and the read fails its hash check; read it again.
        for attempt in range(_READ_ATTEMPTS):
            ref = await self.store.stat(key)
            if ref is None:
                return None
            try:
                raw = await self.store.get_bytes(ref)
            except ArtifactIntegrityError:
                if attempt == _READ_ATTEMPTS - 1:
                    raise
                continue
            try:
                return StoredSkill.model_validate_json(raw)
            except ValidationError as exc:
                raise SkillFormatError(key, f"the skill record is not valid: {exc}") from None
        return None  # pragma: no cover - the loop returns or raises

    async def require(self, name: str) -> StoredSkill:
        """The uploaded skill `name`.

        Raises:
            SkillNotFoundError: there is none.
        """
        record = await self.get(name)
        if record is None:
            raise SkillNotFoundError(name)
        return record

    async def write(self, record: StoredSkill) -> None:
        """Write `record`, then the generation marker."""
        await self.store.put_bytes(
            keys.skill_index_key(record.name),
            record.model_dump_json(indent=2).encode(),
            content_type=_JSON,
        )
        await self.changed(record.name)

    async def remove(self, name: str) -> None:
        """Remove the record of `name` (its packages stay), then rewrite the marker."""
        await self.store.delete(keys.skill_index_key(name))
        await self.changed(name)

    async def changed(self, name: str) -> None:
        """Rewrite the generation marker (after the record: a reader that sees the new
        marker finds the new record)."""
        marker = {
            "changed": name,
            "at": datetime.now(UTC).isoformat(),
            "nonce": os.urandom(8).hex(),
        }
        await self.store.put_bytes(
            keys.SKILLS_GENERATION_KEY, json.dumps(marker).encode(), content_type=_JSON
        )

    async def read_package(self, name: str, version: str) -> bytes:
        """The stored ZIP of one version.

        Raises:
            SkillNotFoundError: no uploaded skill `name`, or it has no version `version`.
        """
        record = await self.require(name)
        if record.version(version) is None:
            raise SkillNotFoundError(f"{name}@{version}")
        ref = await self.store.stat(keys.skill_package_key(name, version))
        if ref is None:
            raise SkillNotFoundError(f"{name}@{version}")
        return await self.store.get_bytes(ref)

    async def read_file(self, name: str, version: str, path: str) -> bytes:
        """One file of a stored version, `path` relative to the skill folder.

        Only the package's own entries can be named, so no path can reach outside it.

        Raises:
            SkillNotFoundError: unknown skill or version.
            ResourceNotFoundError: no such file in that version (a '..' path included).
        """
        parts = path.replace("\\", "/").split("/")
        if not path or any(part in {"", ".", ".."} for part in parts):
            raise ResourceNotFoundError(name, path, "no such file in the skill")
        data = await self.read_package(name, version)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            try:
                info = archive.getinfo(f"{name}/{path}")
            except KeyError:
                raise ResourceNotFoundError(name, path, "no such file in the skill") from None
            if info.is_dir():
                raise ResourceNotFoundError(name, path, "no such file in the skill")
            return archive.read(info)
