"""The open ``skills`` CLI's project lock, ``skills-lock.json`` (:class:`SkillsCliLock`), read so
that ``skillweave skills install`` installs what a project locked with ``npx skills add``; and
that CLI's folder hash, its ``computedHash`` (:func:`skills_cli_hash`).

The file, as that CLI writes it (``JSON.stringify(lock, null, 2)``, skills sorted by name)::

    {"version": 1, "skills": {"pdf": {"source": "acme/skills", "sourceType": "github",
     "ref": "main", "skillPath": "skills/pdf/SKILL.md", "computedHash": "<sha256 hex>"}}}

``source`` is ``owner/repo`` for ``github`` (read on ``SKILLS__GIT_HOST``), a URL for ``git``,
a path for ``local``; ``ref`` and ``skillPath`` (the skill's folder, or its SKILL.md) are
optional. Other source types (``node_modules``, ``well-known``…) are refused by name.

``computedHash`` is the SHA-256 of the skill's folder *as that CLI installed it*: its installer
leaves out ``README.md``, ``metadata.json``, names starting with ``_`` and ``.git``; the hash
then takes every regular file but those under ``.git`` and ``node_modules``, sorted by
relative path with JavaScript's ``localeCompare`` (ICU's root collation, not byte order), each
fed as its path then its bytes. :func:`skills_cli_hash` reproduces it for paths in printable
ASCII (the collation is written out for those) and no symlinks; elsewhere it answers None, and
the install says in one line that the hash could not be checked. Older releases of that CLI
did not leave those files out, so both readings are tried; neither matching refuses the skill.

Called by ``skillweave skills install`` without SOURCE (``cli.install``) and by the install
flow (``_installation``), which checks each folder before anything is stored.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.errors import PackageError
from skillweave.skills.install._source import SkillSource, parse_source
from skillweave.skills.spec import name_problems

__all__ = [
    "SKILLS_CLI_LOCK",
    "SkillsCliEntry",
    "SkillsCliLock",
    "SkillsCliRequest",
    "skills_cli_hash",
]

SKILLS_CLI_LOCK: Final = "skills-lock.json"

_MAX_BYTES: Final = 4 * 1024 * 1024
_MAX_FILES: Final = 10_000
_INSTALLER_LEAVES_OUT: Final = frozenset({"README.md", "metadata.json"})
_HASH_SKIPS: Final = frozenset({".git", "node_modules"})
# ICU's root collation of printable ASCII (alternate non-ignorable): punctuation and symbols
# in this order, then digits, then letters with case a tertiary difference (a < A < b).
_PUNCTUATION: Final = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY: Final = {
    **{ch: i for i, ch in enumerate(_PUNCTUATION)},
    **{ch: len(_PUNCTUATION) + i for i, ch in enumerate("0123456789")},
    **{
        ch: len(_PUNCTUATION) + 10 + i
        for i, letter in enumerate("abcdefghijklmnopqrstuvwxyz")
        for ch in (letter, letter.upper())
    },
}
_GIT_TYPES: Final = frozenset({"github", "gitlab", "git"})


class SkillsCliEntry(BaseModel):
    """One skill of ``skills-lock.json``, the fields skillweave reads (others are ignored)."""

    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True)

    source: str = Field(min_length=1, max_length=2048)
    source_type: str = Field(alias="sourceType", min_length=1, max_length=64)
    source_url: str | None = Field(default=None, alias="sourceUrl", max_length=2048)
    ref: str | None = Field(default=None, max_length=200)
    skill_path: str | None = Field(default=None, alias="skillPath", max_length=1024)
    computed_hash: str | None = Field(default=None, alias="computedHash", pattern=r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class SkillsCliRequest:
    """One skill of ``skills-lock.json`` to install: its name, where from, and the
    ``computedHash`` its folder must have (None: the lock gives none)."""

    name: str
    source: SkillSource
    computed_hash: str | None


class SkillsCliLock(BaseModel):
    """``skills-lock.json``: the open ``skills`` CLI's project lock."""

    model_config = ConfigDict(extra="ignore", strict=True)

    version: int = Field(ge=1)
    skills: dict[str, SkillsCliEntry] = Field(default_factory=dict, max_length=500)

    @classmethod
    def load(cls, path: Path) -> SkillsCliLock:
        """The lock at `path`.

        Raises:
            PackageError: it cannot be read, holds a merge conflict, or is not that CLI's
                lock (one line naming the field).
        """
        try:
            with path.open("rb") as handle:
                data = handle.read(_MAX_BYTES + 1)
        except OSError as exc:
            raise PackageError(f"{path}: cannot read the lock file: {exc.strerror}") from None
        if len(data) > _MAX_BYTES:
            raise PackageError(f"{path}: over {_MAX_BYTES} bytes; not a skills lock")
        if b"\n<<<<<<< " in b"\n" + data:
            raise PackageError(f"{path}: holds a merge conflict; resolve it, then install again")
        try:
            lock = cls.model_validate_json(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the file"
            raise PackageError(f"{path}: not a skills-lock.json: {where}: {first['msg']}") from None
        for key in lock.skills:
            name = key.rpartition("::")[2]  # some writers key by `source::name`
            if name_problems(name):
                raise PackageError(f"{path}: {key[:100]!r} is not a skill name")
        return lock

    def requests(self, *, lock_path: Path, git_host: str) -> list[SkillsCliRequest]:
        """Each skill, with the source to install it from and its ``computedHash``.

        Raises:
            PackageError: an entry's source type is not one skillweave installs from, or its
                source cannot be read (one line naming the skill).
        """
        wanted = []
        for key, entry in self.skills.items():
            name = key.rpartition("::")[2]
            try:
                source = _source(entry, lock_path=lock_path, git_host=git_host)
            except PackageError as exc:
                raise PackageError(f"{lock_path.name}: {name}: {exc}") from None
            wanted.append(SkillsCliRequest(name, source, entry.computed_hash))
        return wanted


def skills_cli_hash(folder: Path) -> tuple[str, ...] | None:
    """The ``computedHash`` values the open ``skills`` CLI could have locked for the skill in
    `folder` (its installer's reading, then an older one that left nothing out); None when
    it cannot be reproduced here (a symlink, a path outside printable ASCII, too many files).
    """
    files: list[tuple[str, Path]] = []
    for directory, subdirs, names in os.walk(folder, followlinks=False):
        subdirs[:] = [d for d in subdirs if d not in _HASH_SKIPS]
        base = Path(directory)
        for name in [*names, *subdirs]:
            if (base / name).is_symlink():
                return None
        for name in names:
            relative = (base / name).relative_to(folder).as_posix()
            if not all(ch in _PRIMARY for ch in relative):
                return None
            files.append((relative, base / name))
            if len(files) > _MAX_FILES:
                return None
    installed = [f for f in files if not _left_out_by_installer(f[0])]
    return tuple(dict.fromkeys(_digest(chosen) for chosen in (installed, files)))


def _left_out_by_installer(relative: str) -> bool:
    parts = relative.split("/")
    return parts[-1] in _INSTALLER_LEAVES_OUT or any(part.startswith("_") for part in parts)


def _digest(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for relative, path in sorted(files, key=lambda file: _collation_key(file[0])):
        digest.update(relative.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ICU root order of a printable-ASCII text: primary weights, then case (lower first)."""
    return tuple(_PRIMARY[ch] for ch in text), tuple(int(ch.isupper()) for ch in text)


def _source(entry: SkillsCliEntry, *, lock_path: Path, git_host: str) -> SkillSource:
    path = entry.skill_path
    if path is not None:
        path = path.replace("\\", "/")
        if posixpath.basename(path).upper() == "SKILL.MD":
            path = posixpath.dirname(path)
        path = path.strip("/") or None
    kind = entry.source_type
    if kind == "local":
        location = Path(entry.source).expanduser()
        if not location.is_absolute():
            location = lock_path.parent / location
        return parse_source(str(location), path=path)
    if kind not in _GIT_TYPES:
        raise PackageError(
            f"its source type is {kind[:64]!r}, which skillweave does not install from;"
            " install it from its git repository"
        )
    text = entry.source
    if kind == "gitlab" or (kind == "git" and entry.source_url and "://" not in text):
        text = entry.source_url or text
    if kind == "gitlab" and "://" not in text:
        raise PackageError("a gitlab source without its URL (sourceUrl); install it by URL")
    return parse_source(text, ref=entry.ref, path=path, git_host=git_host, relative_paths=False)
