"""The store's uploaded skills: :class:`StoredSkills`, the one writer of their records.

Called by every door that uploads, installs, enables, removes or reads uploaded skills (the
API, the CLI, agent publishing, installs, the library). It prepares each upload
(``_preparation``), refuses names other sources own (``_ownership``), admits each new version
(:data:`Check`), then writes the package (if new) and the record last (``_records``), so a
failure leaves nothing a reader can see. :meth:`StoredSkills.materialize` hands the enabled
skills to ``_materialization``.

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
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits
from skillweave.skills.stored._materialization import Materializer
from skillweave.skills.stored._model import SkillOrigin, StoredSkill, StoredVersion
from skillweave.skills.stored._ownership import check_distinct, check_owned
from skillweave.skills.stored._preparation import PackagePreparer, PreparedPackage, check_name
from skillweave.skills.stored._records import SkillRecords
from skillweave.skills.stored._versions import (
    Rollback,
    RollbackCheck,
    find_version,
    previous_version,
)
from skillweave.storage import ArtifactStore, keys

__all__ = ["Check", "StoredSkills"]

_ZIP: Final = "application/zip"

Check = Callable[[str, str, bytes], Awaitable[bool]]
"""The admission of a new version (name, version, canonical ZIP): it raises to refuse it, and
returns True to store it switched off until an operator approves it
(``skills.admission.Admissions.check``)."""


class StoredSkills:
    """Uploaded skills kept as package versions in an artifact store.

    Args:
        store: where packages and records live.
        limits: what one package may hold (extraction and building both refuse more).
    """

    def __init__(self, store: ArtifactStore, *, limits: PackageLimits = DEFAULT_LIMITS) -> None:
        self.store = store
        self.limits = limits
        self._records = SkillRecords(store)
        self._preparer = PackagePreparer(limits)
        self._materializer = Materializer(limits)
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
        check_name(name, where="name")
        prepared = await asyncio.to_thread(self._preparer.content, name, description, content)
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
        prepared = await asyncio.to_thread(self._preparer.package, data, name, description)
        prepared.expect(expect_version)
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
            one = await asyncio.to_thread(self._preparer.package, data, None, None)
            one.expect(expect)
            prepared.append((one, origin))
        return await self._add(prepared, reserved=reserved, check=check)

    async def _add(
        self,
        prepared: Sequence[tuple[PreparedPackage, SkillOrigin | None]],
        *,
        reserved: Mapping[str, str] | Collection[str],
        check: Check | None,
    ) -> list[StoredSkill]:
        """Refuse names taken twice or by others, admit each (`check`, which records it in the
        audit log: a version refused for its name is never recorded), then store each (its
        names checked again under the lock: another upload may have taken one meanwhile)."""
        check_distinct((one.name, one.skills) for one, _ in prepared)
        for one, _ in prepared:
            await self._check_owned(one, reserved=reserved)
        held = [
            await check(one.name, one.version, one.data) if check is not None else False
            for one, _ in prepared
        ]
        async with self._names:
            for one, _ in prepared:
                await self._check_owned(one, reserved=reserved)
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
            record = await self._records.require(name)
            if record.enabled != enabled or record.held:
                record = record.model_copy(update={"enabled": enabled, "held": False})
                await self._records.write(record)
            return record

    async def delete(self, name: str) -> None:
        """Remove an uploaded skill: its record, so that no reader sees it any more.

        The versions' packages stay in the store: runs started before pinned them, and a
        run's history names the version it activated, whose scripts the manager runs from
        that package (they are content-addressed, so a later upload of the same content
        reuses them).

        Raises:
            SkillNotFoundError: no uploaded skill of that name.
        """
        async with self._locks[name]:
            await self._records.require(name)
            await self._records.remove(name)

    async def rollback(
        self,
        name: str,
        version: str | None = None,
        *,
        reserved: Mapping[str, str] | Collection[str] = (),
        check: RollbackCheck | None = None,
    ) -> Rollback:
        """Make a stored `version` (full, or a unique prefix; None: the one current before)
        of `name` current again. Its package is validated strictly and its names checked
        against their owners again, `check` judges (and records) it, then the record is
        written. Already current: nothing is done.

        Raises:
            SkillNotFoundError, SkillVersionError: no such skill; no such version, an
                ambiguous prefix, or no earlier one.
            PackageError, SkillFormatError, SkillNameTakenError: the package is no longer
                valid, or a name in it is now another source's; what `check` raises.
        """
        async with self._names, self._locks[name]:
            record = await self._records.require(name)
            target = previous_version(record) if version is None else find_version(record, version)
            if target.version == record.latest:
                return Rollback(record, record.latest, record.latest)
            data = await self._records.read_package(name, target.version)
            prepared = await asyncio.to_thread(self._preparer.package, data, name, None)
            prepared.expect(target.version)
            check_owned(prepared.skills, own=name, reserved=reserved, records=await self.list())
            hold = await check(name, record.latest, target.version, data) if check else False
            rolled = record.rolled_back(target.version, description=prepared.description, hold=hold)
            await self._records.write(rolled)
            return Rollback(rolled, record.latest, target.version)

    # -- reading -------------------------------------------------------------------------------

    async def resolve(self, name: str, version: str) -> str:
        """The full stored version of `name` that `version` (full, or a unique prefix) names.

        Raises:
            SkillNotFoundError: no uploaded skill `name`.
            SkillVersionError: no such version, or an ambiguous prefix.
        """
        return find_version(await self._records.require(name), version).version

    async def list(self) -> list[StoredSkill]:
        """Every uploaded skill, sorted by name."""
        return await self._records.list()

    async def generation(self) -> str | None:
        """What the store's skills are at: a token that every change of a record changes
        (None: no change was ever recorded). One stat, for pollers."""
        return await self._records.generation()

    async def get(self, name: str) -> StoredSkill | None:
        """The uploaded skill `name`, or None (also for a name that cannot be a skill's)."""
        return await self._records.get(name)

    async def read_package(self, name: str, version: str) -> bytes:
        """The stored ZIP of one version.

        Raises:
            SkillNotFoundError: no uploaded skill `name`, or it has no version `version`.
        """
        return await self._records.read_package(name, version)

    async def read_file(self, name: str, version: str, path: str) -> bytes:
        """One file of a stored version, `path` relative to the skill folder.

        Only the package's own entries can be named, so no path can reach outside it.

        Raises:
            SkillNotFoundError: unknown skill or version.
            ResourceNotFoundError: no such file in that version (a '..' path included).
        """
        return await self._records.read_file(name, version, path)

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
        wanted = {record.name: record.latest for record in records if record.enabled}
        return await self._materializer.materialize(dest, wanted, self._records.read_package)

    # -- internals -----------------------------------------------------------------------------

    async def _check_owned(
        self, prepared: PreparedPackage, *, reserved: Mapping[str, str] | Collection[str]
    ) -> None:
        """Refuse the package when one of its skills' names is owned by another source."""
        records = await self.list()
        check_owned(prepared.skills, own=prepared.name, reserved=reserved, records=records)

    async def _store(
        self, prepared: PreparedPackage, *, origin: SkillOrigin | None = None, hold: bool = False
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
            entry = StoredVersion(
                version=prepared.version,
                created_at=datetime.now(UTC),
                size=size,
                sha256=digest,
                files=prepared.files,
                origin=origin,
            )
            record = await self.get(name)
            if record is None:
                record = StoredSkill.first(name, entry, description=prepared.description, hold=hold)
            else:
                record = record.with_version(entry, description=prepared.description, hold=hold)
            await self._records.write(record)
            return record
