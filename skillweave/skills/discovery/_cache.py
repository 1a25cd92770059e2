"""What makes rescans cheap: the loaded skills by file signature (:class:`SkillCache`) and the
last walk's :class:`Snapshot`.

A walk records every folder's mtime and every package file's mtime and size. The next scan
first stats just those (:meth:`Snapshot.still_valid`): if nothing moved (a folder's mtime
changes when an entry in it is added, removed or renamed) ``SkillScanner`` returns the
previous result without listing a folder or reading a file. Otherwise it walks again, and each
skill whose file signature is unchanged comes from the cache; only changed skills are parsed
and hashed. Signatures written within :data:`RACY_WINDOW_NS` of a scan are not trusted (coarse
filesystem clocks let a same-size edit keep its mtime) and are verified by hash instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillweave.skills.discovery._found import FileRecord, FoundSkill, ScanResult
from skillweave.skills.files import SKILL_FILE, read_bytes
from skillweave.skills.loader import LoadedSkill, load_skill_file
from skillweave.skills.spec import Diagnostic
from skillweave.skills.versioning import package_version

__all__ = ["RACY_WINDOW_NS", "SkillCache", "Snapshot"]

RACY_WINDOW_NS: Final = 2_000_000_000
"""Files changed less than this before a scan are verified by hash, not by mtime and size:
filesystem timestamps can be as coarse as a second or two."""

_Signature = tuple[FileRecord, ...]


@dataclass(frozen=True, slots=True)
class _CacheEntry:
    """A loaded skill and the file signature (paths, mtimes, sizes) it was loaded from.

    ``trusted`` says whether an equal signature proves equal content: only when every mtime is
    older than the read by more than the racy window, because filesystem clocks are coarse and
    a write in the same tick as our read would leave mtime and size unchanged (git calls such
    entries "racy"). An untrusted entry is verified by hashing its files again.
    """

    signature: _Signature
    loaded: LoadedSkill
    version: str
    trusted: bool


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the last full walk saw, to prove cheaply that nothing changed since."""

    dirs: tuple[tuple[str, int], ...]
    files: tuple[tuple[str, int, int], ...]
    missing_roots: tuple[str, ...]
    paths: tuple[str, ...]
    walk_diagnostics: tuple[Diagnostic, ...]
    uploaded: frozenset[int]
    result: ScanResult
    trusted: bool

    def still_valid(self) -> bool:
        """True when no folder or file seen has changed and no missing root appeared."""
        stat = os.stat
        try:
            for path, mtime in self.dirs:
                if stat(path).st_mtime_ns != mtime:
                    return False
            for path, mtime, size in self.files:
                result = stat(path)
                if result.st_mtime_ns != mtime or result.st_size != size:
                    return False
        except OSError:
            return False
        return not any(os.path.isdir(root) for root in self.missing_roots)


class SkillCache:
    """The skills loaded by the last walk, by folder, each with the signature it was read at.

    Args:
        max_package_files: the bound a refused (overflowing) skill broke, for its diagnostic.
    """

    def __init__(self, *, max_package_files: int) -> None:
        self.max_package_files = max_package_files
        self._entries: dict[str, _CacheEntry] = {}

    @property
    def trusted(self) -> bool:
        """Whether every entry's signature proves its content (none is racy)."""
        return all(entry.trusted for entry in self._entries.values())

    def load_all(self, found: Iterable[FoundSkill], out: list[Diagnostic], started: int) -> bool:
        """Load each of `found` (from the cache or disk), keeping only these entries; True
        when every one was reused from the cache."""
        cache: dict[str, _CacheEntry] = {}
        unchanged = True
        for item in found:
            unchanged &= self._load(item, cache, out, started)
        self._entries = cache
        return unchanged

    def _load(
        self, item: FoundSkill, cache: dict[str, _CacheEntry], out: list[Diagnostic], started: int
    ) -> bool:
        """Load `item` from cache or disk; True when the cached entry still holds."""
        skill_file = os.path.join(item.path, SKILL_FILE)
        if item.overflow:
            message = f"has more than {self.max_package_files} files; not loaded"
            out.append(Diagnostic(skill_file, "package", message, fatal=True))
            return item.path not in self._entries
        signature = _signature(item)
        trusted = all(mtime < started - RACY_WINDOW_NS for _, _, mtime, _ in signature)
        entry = self._entries.get(item.path)
        if entry is not None and entry.signature == signature and not entry.trusted:
            # Racy: the same mtime and size do not prove the same bytes; the hash does.
            same = entry.loaded.skill is not None and _version(item) == entry.version
            entry = _CacheEntry(signature, entry.loaded, entry.version, trusted) if same else None
        reused = entry is not None and entry.signature == signature
        if not reused:
            try:
                raw: bytes | None = read_bytes(skill_file)
            except OSError:
                raw = None  # the loader reports why it cannot be read
            loaded = load_skill_file(Path(skill_file), raw=raw)
            version = ""
            if loaded.skill is not None:
                version = _version(item, {skill_file: raw} if raw is not None else None)
            entry = _CacheEntry(signature, loaded, version, trusted)
        cache[item.path] = entry
        item.loaded, item.version = entry.loaded, entry.version
        out.extend(entry.loaded.diagnostics)
        return reused


def _version(item: FoundSkill, preloaded: dict[str, bytes] | None = None) -> str:
    return package_version(((rel, path) for rel, path, _, _ in item.files), preloaded=preloaded)


def _signature(item: FoundSkill) -> _Signature:
    # Walk order, not sorted: an unchanged folder lists in the same order, and a reordered one
    # merely costs a reload. Versions sort their input, so they never depend on this order.
    return tuple(item.files)
