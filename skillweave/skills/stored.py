"""Uploaded skills: :class:`StoredSkills`, skill packages kept as versions in the artifact store.

Owns the upload path of the API (``/v1/skills``): a SKILL.md posted as text or a ZIP package is
validated strictly (every spec violation refuses it), rebuilt with ``build_package`` so that the
stored bytes are canonical, and stored under ``skills/{name}/{version}.zip`` — the key the MCP
manager runs scripts from. A small JSON record per skill at ``catalog/skills/{name}.json`` lists
its versions, the latest one and whether it is enabled (or held for an operator's approval).
Every change of a record rewrites one small marker (``keys.SKILLS_GENERATION_KEY``), so that a
reader learns of changes with one stat (:meth:`StoredSkills.generation`).
:meth:`StoredSkills.materialize` writes the enabled skills into a folder a ``SkillScanner`` can
read beside the directory libraries (``skills.library`` does).

Names are owned (DESIGN §8): a package may not bring a skill, at any depth of its tree, whose
name (compared by ``names.name_key``: NFKC-normalized and case-folded) a directory skill or
another uploaded skill (its top or any child of its latest version) already has; that is a
:class:`~skillweave.errors.SkillNameTakenError`. A new version of one's own uploaded skill (the
same top name) replaces the old one, children included. Disabled uploads keep their names.

A version is the sha256 of the package's files (``versioning.package_version``, child skills
included), so packages are content-addressed: the same content uploaded twice is one version and
one object. Everything is validated in a temporary folder before the first write, the package is
written before the record, and the record last, so a failure leaves nothing a reader can see.

Concurrency: writers of one name in this process are serialized by a per-name ``asyncio.Lock``,
so two simultaneous uploads never lose a version, and one more lock serializes every upload's
name check with its write, so two uploads cannot both claim a free name. Writers in other
processes are last-writer-wins on the record (a version may then be missing from it until
uploaded again; two uploads may then hold one name, and discovery keeps it with one of them,
an upload's top before another's child); the packages themselves are content-addressed and
never conflict.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field

from skillweave.errors import (
    ArtifactIntegrityError,
    PackageError,
    ResourceNotFoundError,
    SkillFormatError,
    SkillNameTakenError,
    SkillNotFoundError,
)
from skillweave.skills.files import SKILL_FILE, is_skipped_dir, is_skipped_file
from skillweave.skills.files import iter_package_files as _iter_files
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.model import Skill
from skillweave.skills.names import UPLOADED_ROOT_MARKER, name_key, skill_id
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, build_package, extract_package
from skillweave.skills.spec import name_problems
from skillweave.skills.validation import validate_paths
from skillweave.skills.versioning import package_version
from skillweave.storage import keys
from skillweave.storage.base import ArtifactStore

__all__ = [
    "SkillNameTakenError",
    "SkillOrigin",
    "SourceKind",
    "StoredSkill",
    "StoredSkills",
    "StoredVersion",
    "directory_owners",
]

_ZIP: Final = "application/zip"
_JSON: Final = "application/json"
_READ_ATTEMPTS: Final = 3
# Folders archivers add beside the content; they never make a package "two skills".
_IGNORED_TOP_LEVEL: Final = frozenset({"__MACOSX"})


SourceKind = Literal["git", "zip", "folder", "agent"]
Check = Callable[[str, str, bytes], Awaitable[bool]]
"""The admission of a new version (name, version, canonical ZIP): it raises to refuse it, and
returns True to store it switched off until an operator approves it
(``skills.admission.Admissions.check``)."""


class SkillOrigin(BaseModel):
    """Where an installed skill version came from (``skillweave.skills.install``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="A git URL as given, or a local path.")
    kind: SourceKind
    ref: str | None = Field(default=None, description="The branch, tag or commit asked for.")
    path: str | None = Field(default=None, description="The skill's folder in the source.")
    commit: str | None = Field(default=None, description="The git commit it was read at.")


class StoredVersion(BaseModel):
    """One stored version of an uploaded skill."""

    version: str = Field(description="sha256 of the package's files (paths, sizes and bytes)")
    created_at: datetime
    size: int = Field(ge=0, description="bytes of the stored ZIP")
    sha256: str = Field(description="sha256 of the stored ZIP's bytes")
    files: list[str] = Field(default_factory=list, description="the package's files, sorted")
    origin: SkillOrigin | None = Field(
        default=None, description="where an installed version came from; none: uploaded"
    )


class StoredSkill(BaseModel):
    """An uploaded skill: its record in the store."""

    name: str
    description: str
    enabled: bool = True
    held: bool = Field(
        default=False,
        description="switched off until an operator approves its latest version (the scan"
        " policy said approve); enabling it is the approval",
    )
    latest: str
    versions: list[StoredVersion]
    source: Literal["uploaded"] = "uploaded"

    @computed_field(  # type: ignore[prop-decorator]
        description="stable across versions; an agent's skill_ids take it"
    )
    @property
    def id(self) -> str:
        return skill_id(self.name)

    def version(self, version: str) -> StoredVersion | None:
        """The stored version `version`, or None."""
        return next((v for v in self.versions if v.version == version), None)

    @property
    def latest_version(self) -> StoredVersion:
        """The latest version's entry."""
        found = self.version(self.latest)
        return found if found is not None else self.versions[-1]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A validated, canonical package ready to store."""

    name: str
    description: str
    version: str
    files: list[str]
    data: bytes

    @property
    def skills(self) -> list[tuple[str, str]]:
        """``(where in the package, name)`` of every skill in it, the top first."""
        return _package_skills(self.name, self.files)


class StoredSkills:
    """Uploaded skills kept as package versions in an artifact store.

    Args:
        store: where packages and records live.
        limits: what one package may hold (extraction and building both refuse more).
    """

    def __init__(self, store: ArtifactStore, *, limits: PackageLimits = DEFAULT_LIMITS) -> None:
        self.store = store
        self.limits = limits
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._names = asyncio.Lock()

    # -- writing -------------------------------------------------------------------------------

    async def add_content(
        self,
        name: str,
        description: str,
        content: str,
        *,
        reserved: Mapping[str, str] | Collection[str] = (),
        check: Check | None = None,
    ) -> StoredSkill:
        """Store a skill given as the text of its SKILL.md (a new version, or the same one).

        Args:
            name: the skill's name; the frontmatter ``name`` must equal it.
            description: must equal the frontmatter ``description`` (whitespace aside).
            content: the whole SKILL.md.
            reserved: names owned by other sources (directory skills), each mapped to its
                owner in words (a bare collection: "a directory skill"); refused.
            check: the admission of the new version (:data:`Check`).

        Raises:
            SkillFormatError: the SKILL.md breaks a spec rule, or a field disagrees.
            SkillNameTakenError: the name is reserved or another upload's (case and Unicode
                forms aside).
        """
        _check_name(name, where="name")
        prepared = await asyncio.to_thread(self._prepare_content, name, description, content)
        [record] = await self._add([(prepared, None)], reserved=reserved, check=check)
        return record

    async def add_package(
        self,
        data: bytes,
        *,
        name: str | None = None,
        description: str | None = None,
        reserved: Mapping[str, str] | Collection[str] = (),
        origin: SkillOrigin | None = None,
        expect_version: str | None = None,
        check: Check | None = None,
    ) -> StoredSkill:
        """Store a skill uploaded as a ZIP package (rebuilt canonically before storing).

        The archive must hold exactly one top skill: a SKILL.md at its root or in its one top
        folder (child skills inside it are allowed).

        Args:
            data: the ZIP's bytes.
            name: when given, the skill's name must equal it.
            description: when given, the skill's description must equal it.
            reserved: names owned by other sources (directory skills), each mapped to its
                owner in words (a bare collection: "a directory skill"); refused.
            origin: where an installed package came from, kept with a new version.
            expect_version: the version the package must have (a locked install); refused
                otherwise, before anything is stored.
            check: the admission of the new version (:data:`Check`).

        Raises:
            UnsafePackageError: an entry is unsafe (traversal, symlink, bomb...); names it.
            PackageError: not a ZIP, no SKILL.md, more than one top skill, not the version
                expected...
            SkillFormatError: a SKILL.md breaks a spec rule, or a field disagrees (two skills
                of one name in the package included).
            SkillNameTakenError: a skill of the package, at any depth, has a reserved name or
                one another upload holds (case and Unicode forms aside).
        """
        prepared = await asyncio.to_thread(self._prepare_package, data, name, description)
        _expected(prepared, expect_version)
        [record] = await self._add([(prepared, origin)], reserved=reserved, check=check)
        return record

    async def add_packages(
        self,
        packages: Sequence[tuple[bytes, SkillOrigin | None, str | None]],
        *,
        reserved: Mapping[str, str] | Collection[str] = (),
        check: Check | None = None,
    ) -> list[StoredSkill]:
        """Store several packages (an install of a repository of skills) all or none: each
        ``(ZIP, origin, expected version)`` is validated, checked against its expected
        version and `check`, and its names against the owners, before the first is stored.

        Raises:
            what :meth:`add_package` raises, and what `check` raises.
        """
        prepared = []
        for data, origin, expect in packages:
            one = await asyncio.to_thread(self._prepare_package, data, None, None)
            _expected(one, expect)
            prepared.append((one, origin))
        return await self._add(prepared, reserved=reserved, check=check)

    async def _add(
        self,
        prepared: Sequence[tuple[_Prepared, SkillOrigin | None]],
        *,
        reserved: Mapping[str, str] | Collection[str],
        check: Check | None,
    ) -> list[StoredSkill]:
        """Refuse names taken twice or by others, admit each (`check`, which records it in the
        audit log: a version refused for its name is never recorded), then store each (its
        names checked again under the lock: another upload may have taken one meanwhile)."""
        seen: dict[str, str] = {}
        for one, _ in prepared:
            for where, name in one.skills:
                other = seen.setdefault(name_key(name), one.name)
                if other != one.name:
                    raise SkillNameTakenError(
                        name, path=where, owner=f"the skill {other!r} of the same source"
                    )
        for one, _ in prepared:
            await self._check_owned(one.skills, own=one.name, reserved=reserved)
        held = [
            await check(one.name, one.version, one.data) if check is not None else False
            for one, _ in prepared
        ]
        async with self._names:
            for one, _ in prepared:
                await self._check_owned(one.skills, own=one.name, reserved=reserved)
            return [
                await self._store(one, origin=origin, hold=hold)
                for (one, origin), hold in zip(prepared, held, strict=True)
            ]

    async def set_enabled(self, name: str, enabled: bool) -> StoredSkill:
        """Enable or disable an uploaded skill.

        Raises:
            SkillNotFoundError: no uploaded skill of that name.
        """
        async with self._locks[name]:
            record = await self._require(name)
            if record.enabled != enabled or record.held:
                record = record.model_copy(update={"enabled": enabled, "held": False})
                await self._write_record(record)
            return record

    async def delete(self, name: str) -> None:
        """Remove an uploaded skill: its record, so that no reader sees it any more.

        The versions' packages stay in the store: runs started before pinned them, and a
        job's history names the version it activated, whose scripts the manager runs from
        that package (they are content-addressed, so a later upload of the same content
        reuses them).

        Raises:
            SkillNotFoundError: no uploaded skill of that name.
        """
        async with self._locks[name]:
            await self._require(name)
            await self.store.delete(keys.skill_index_key(name))
            await self._changed(name)

    # -- reading -------------------------------------------------------------------------------

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

    async def read_package(self, name: str, version: str) -> bytes:
        """The stored ZIP of one version.

        Raises:
            SkillNotFoundError: no uploaded skill `name`, or it has no version `version`.
        """
        record = await self._require(name)
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

    async def materialize(
        self, dest: Path, *, records: Sequence[StoredSkill] | None = None
    ) -> Path:
        """Write the latest version of every enabled uploaded skill to ``dest/<name>/``.

        `dest` belongs to this method: a folder already holding a skill at its latest version
        is kept, others are replaced, and skills no longer enabled or stored are removed. A
        ``SkillScanner`` given `dest` as a root then sees the uploaded skills.

        Args:
            dest: the folder.
            records: the records to materialize, when the caller has just read them
                (default: :meth:`list`).

        Returns:
            `dest`.
        """
        if records is None:
            records = await self.list()
        wanted = {record.name: record for record in records if record.enabled}
        await asyncio.to_thread(_prepare_dest, dest)
        for name, record in wanted.items():
            current = await asyncio.to_thread(_folder_version, dest / name)
            if current == record.latest:
                continue
            data = await self.read_package(name, record.latest)
            await asyncio.to_thread(self._install, data, dest, name)
        await asyncio.to_thread(_prune, dest, set(wanted))
        return dest

    # -- internals -----------------------------------------------------------------------------

    async def _check_owned(
        self,
        skills: Iterable[tuple[str, str]],
        *,
        own: str,
        reserved: Mapping[str, str] | Collection[str],
    ) -> None:
        """Refuse `skills` (``(where, name)``) when one's name is owned by another source: a
        reserved one, or another uploaded skill (the upload `own`, whose new version this is,
        excepted)."""
        owners: dict[str, tuple[str, str]] = {}  # name key -> (the owner's spelling, owner)
        for taken in reserved:
            owner = reserved[taken] if isinstance(reserved, Mapping) else "a directory skill"
            owners.setdefault(name_key(taken), (taken, owner))
        for record in await self.list():
            if record.name == own:
                continue
            for where, held in _package_skills(record.name, record.latest_version.files):
                owner = f"the uploaded skill {record.name!r}"
                if where != record.name:
                    owner += f" (its child skill at {where!r})"
                owners.setdefault(name_key(held), (held, owner))
        for where, name in skills:
            found = owners.get(name_key(name))
            if found is not None:
                raise SkillNameTakenError(name, path=where, owner=found[1], owned_as=found[0])

    async def _require(self, name: str) -> StoredSkill:
        record = await self.get(name)
        if record is None:
            raise SkillNotFoundError(name)
        return record

    async def _write_record(self, record: StoredSkill) -> None:
        await self.store.put_bytes(
            keys.skill_index_key(record.name),
            record.model_dump_json(indent=2).encode(),
            content_type=_JSON,
        )
        await self._changed(record.name)

    async def _changed(self, name: str) -> None:
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

    async def _store(
        self, prepared: _Prepared, *, origin: SkillOrigin | None = None, hold: bool = False
    ) -> StoredSkill:
        """Store the package (if new), then the record, under the name's lock; `hold`: the
        skill is switched off until an operator enables (approves) this version."""
        name = prepared.name
        async with self._locks[name]:
            key = keys.skill_package_key(name, prepared.version)
            ref = await self.store.put_if_absent(key, prepared.data, content_type=_ZIP)
            if ref is None:
                ref = await self.store.stat(key)
            size = ref.size if ref is not None else len(prepared.data)
            digest = ref.sha256 if ref is not None else hashlib.sha256(prepared.data).hexdigest()
            record = await self.get(name)
            entry = StoredVersion(
                version=prepared.version,
                created_at=datetime.now(UTC),
                size=size,
                sha256=digest,
                files=prepared.files,
                origin=origin,
            )
            if record is None:
                record = StoredSkill(
                    name=name,
                    description=prepared.description,
                    enabled=not hold,
                    held=hold,
                    latest=prepared.version,
                    versions=[entry],
                )
            else:
                versions = [v for v in record.versions if v.version != prepared.version]
                existing = record.version(prepared.version)
                # Re-uploading a version keeps its first date, and makes it the latest again;
                # an install of it says where it came from.
                if existing is not None and origin is not None:
                    existing = existing.model_copy(update={"origin": origin})
                versions.append(existing if existing is not None else entry)
                record = record.model_copy(
                    update={
                        "description": prepared.description,
                        "enabled": record.enabled and not hold,
                        # Held until approved: a new version of a held skill stays held.
                        "held": hold or (record.held and not record.enabled),
                        "latest": prepared.version,
                        "versions": versions,
                    }
                )
            await self._write_record(record)
            return record

    def _prepare_content(self, name: str, description: str, content: str) -> _Prepared:
        with tempfile.TemporaryDirectory(prefix="skillweave-upload-") as temp:
            folder = Path(temp) / name
            folder.mkdir()
            (folder / SKILL_FILE).write_text(content, encoding="utf-8")
            return self._prepare_folder(folder, temp=Path(temp), name=name, description=description)

    def _prepare_package(self, data: bytes, name: str | None, description: str | None) -> _Prepared:
        if name is not None:
            _check_name(name, where="name")
        with tempfile.TemporaryDirectory(prefix="skillweave-upload-") as temp:
            extracted = Path(temp) / "package"
            skill_dirs = extract_package(data, extracted, limits=self.limits)
            top = skill_dirs[0]
            if top == extracted:
                # A SKILL.md at the archive's root: the folder takes the frontmatter's name.
                top = extracted.rename(Path(temp) / _frontmatter_name(extracted))
            else:
                _check_single_top(extracted, top)
            return self._prepare_folder(top, temp=Path(temp), name=name, description=description)

    def _prepare_folder(
        self, folder: Path, *, temp: Path, name: str | None, description: str | None
    ) -> _Prepared:
        """Validate a skill folder strictly and build its canonical package."""
        report = validate_paths([folder], strict=True)
        if report.errors:
            shown = "; ".join(
                _relative(d.path, temp) + f": {d.field}: {d.message}" for d in report.errors[:5]
            )
            more = f" (and {len(report.errors) - 5} more)" if len(report.errors) > 5 else ""
            raise SkillFormatError(
                _relative(str(folder), temp), f"not a valid skill: {shown}{more}"
            )
        front = parse_frontmatter(
            (folder / SKILL_FILE).read_text(encoding="utf-8"), path=f"{folder.name}/{SKILL_FILE}"
        )
        skill_name = str(front.data["name"])
        skill_description = " ".join(str(front.data["description"]).split())
        where = f"{folder.name}/{SKILL_FILE}"
        if name is not None and name != skill_name:
            raise SkillFormatError(
                where, f"the frontmatter name {skill_name!r} does not match the name {name!r}"
            )
        if description is not None and " ".join(description.split()) != skill_description:
            raise SkillFormatError(
                where, "the frontmatter description does not match the description given"
            )
        files = sorted(_iter_files(folder, include_children=True), key=lambda item: item[0])
        version = package_version((relative, entry.path) for relative, entry in files)
        data = build_package(folder, limits=self.limits)
        return _Prepared(
            name=skill_name,
            description=skill_description,
            version=version,
            files=[relative for relative, _ in files],
            data=data,
        )

    def _install(self, data: bytes, dest: Path, name: str) -> None:
        """Extract a package beside ``dest/<name>`` and swap it in."""
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dest))
        try:
            extract_package(data, staging, limits=self.limits)
            target = dest / name
            if target.exists():
                shutil.rmtree(target)
            (staging / name).rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _expected(prepared: _Prepared, version: str | None) -> None:
    if version is not None and prepared.version != version:
        raise PackageError(
            f"{prepared.name}: its files hash to version {prepared.version[:12]}, not the"
            f" locked {version[:12]}: the source (or the lock) changed since; check it, then"
            " `skillweave skills update` locks what it holds now"
        )


def directory_owners(skills: Iterable[Skill]) -> dict[str, str]:
    """The names directory skills own (a namespaced skill known by its qualified name holds
    its own name too), each mapped to its owner in words: the `reserved` of an upload."""
    owned: dict[str, str] = {}
    for skill in skills:
        for name in (skill.name, skill.short_name):
            if name:
                owned.setdefault(name, f"the directory skill {skill.name!r} at {skill.path}")
    return owned


def _package_skills(top: str, files: Iterable[str]) -> list[tuple[str, str]]:
    """``(where, name)`` of every skill of a package named `top` with these `files` (relative to
    its folder): the top, then each folder holding a SKILL.md, as ``top/…/child``. Strict
    validation made each child's name equal its folder's, so the paths say the names."""
    found = [(top, top)]
    for path in sorted(files):
        folder, _, file = path.rpartition("/")
        if folder and file == SKILL_FILE:
            found.append((f"{top}/{folder}", folder.rpartition("/")[2]))
    return found


def _check_name(name: str, *, where: str) -> None:
    problems = name_problems(name)
    if problems:
        raise SkillFormatError(where, f"{name!r} is not a valid skill name: {'; '.join(problems)}")


def _relative(path: str, temp: Path) -> str:
    try:
        return str(Path(path).relative_to(temp))
    except ValueError:
        return path


def _frontmatter_name(folder: Path) -> str:
    front = parse_frontmatter(
        (folder / SKILL_FILE).read_text(encoding="utf-8", errors="replace"), path=SKILL_FILE
    )
    name = front.data.get("name")
    if not isinstance(name, str) or name_problems(name):
        raise SkillFormatError(SKILL_FILE, f"name {name!r} is missing or not a valid skill name")
    return name


def _check_single_top(extracted: Path, top: Path) -> None:
    """The archive holds one top folder, the skill, and nothing beside it."""
    if top.parent != extracted:
        raise PackageError(
            f"{top.relative_to(extracted).as_posix()}/{SKILL_FILE}: the skill must be at the"
            " archive's root or in its one top folder"
        )
    for entry in extracted.iterdir():
        if entry == top or entry.name in _IGNORED_TOP_LEVEL:
            continue
        if entry.is_dir() and is_skipped_dir(entry.name):
            continue
        if entry.is_file() and is_skipped_file(entry.name):
            continue
        raise PackageError(
            f"{entry.name}: the archive must hold one top skill folder ({top.name}/) and"
            " nothing beside it"
        )


def _folder_version(folder: Path) -> str | None:
    if not (folder / SKILL_FILE).is_file():
        return None
    files = _iter_files(folder, include_children=True)
    return package_version((relative, entry.path) for relative, entry in files)


def _prepare_dest(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / UPLOADED_ROOT_MARKER).touch()
    for leftover in dest.glob(".staging-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _prune(dest: Path, keep: set[str]) -> None:
    for entry in os.scandir(dest):
        stale = not entry.name.startswith(".") and entry.name not in keep
        if stale and entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
