"""``skills.lock``: what was installed, from where, at which commit, as which version
(:class:`SkillsLock`), so that an install can be made again exactly.

Called by ``skillweave skills install`` (``cli.install``: it records each install and
re-installs from the lock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.atomic_write import write_atomic
from skillweave.errors import PackageError
from skillweave.skills.install._source import SkillSource, is_git_url, parse_source
from skillweave.skills.stored import SkillOrigin

__all__ = ["LOCK_FILE", "LockedSkill", "SkillsLock"]

LOCK_FILE: Final = "skills.lock"

_LOCK_MAX_BYTES: Final = 4 * 1024 * 1024


class LockedSkill(SkillOrigin):
    """One skill of ``skills.lock``: its name, origin and version."""

    name: str
    version: str = Field(pattern=r"^[0-9a-f]{64}$", description="The digest of its files.")


class SkillsLock(BaseModel):
    """``skills.lock``: what was installed, from where, at which commit, as which version.

    The file is JSON, sorted, one entry per skill; a local source is kept relative to the lock
    file's folder when it lies inside it, so that a project's lock works wherever it is
    checked out.
    """

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    skills: dict[str, LockedSkill] = Field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> SkillsLock:
        """The lock at `path`; an empty one when there is none.

        Raises:
            PackageError: the file is not a lock this version reads (one line).
        """
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as exc:
            raise PackageError(f"{path}: cannot read the lock file: {exc.strerror}") from None
        if len(data) > _LOCK_MAX_BYTES:
            raise PackageError(f"{path}: over {_LOCK_MAX_BYTES} bytes; not a skills lock")
        try:
            lock = cls.model_validate_json(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise PackageError(f"{path}: not a skills lock: {where}: {first['msg']}") from None
        for name, entry in lock.skills.items():
            if entry.name != name:
                raise PackageError(f"{path}: the entry {name!r} names {entry.name!r}")
        return lock

    def save(self, path: Path) -> None:
        """Write the lock (atomically: a reader sees the old file or the new one)."""
        data = json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
        write_atomic(path, data.encode())

    def record(self, name: str, version: str, origin: SkillOrigin, *, lock_path: Path) -> None:
        """Keep `name`'s version and origin, a local source relative to the lock's folder when
        inside it."""
        source = origin.source
        if not is_git_url(source):
            local = Path(source)
            if local.is_absolute() and local.is_relative_to(lock_path.parent.absolute()):
                source = local.relative_to(lock_path.parent.absolute()).as_posix() or "."
        entry = LockedSkill(name=name, version=version, **{**origin.model_dump(), "source": source})
        self.skills = dict(sorted({**self.skills, name: entry}.items()))

    def source_of(self, entry: LockedSkill, *, lock_path: Path) -> SkillSource:
        """The source to install `entry` from again (a relative local path is the lock's)."""
        location = entry.source
        if not is_git_url(location) and not Path(location).is_absolute():
            location = str((lock_path.parent / location).absolute())
        return parse_source(location, ref=entry.ref, path=entry.path or None)
