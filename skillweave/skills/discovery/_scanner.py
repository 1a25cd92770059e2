"""Finding the skills of one or more library roots: :class:`SkillScanner`.

A scan walks each root once. Every folder holding a ``SKILL.md`` is a skill; a skill folder
inside another is its child (DESIGN §3, skill trees). The walk is bounded: outside skills it
goes at most ``max_depth`` folders deep, it stops after ``max_skills`` skills, a skill with
more than ``max_package_files`` files is refused, hidden folders, ``node_modules`` and caches
are skipped, and a symlinked folder is followed only when it stays inside its root (never
inside a skill, whose package holds regular files only).

Hidden folders outside skills are walked when ``include_hidden`` is set (VCS metadata never
is; inside a skill they are never part of its package). Otherwise a root that yields no skill
is walked once more as if they were included, and a :data:`HIDDEN_SKILLS_FIELD` diagnostic
says how many ``SKILL.md`` files its hidden folders hold, in which folders, and how to include
them: libraries written for other agents keep skills under ``skills/.curated/`` and the like.

Rescans are cheap. A walk records every folder's mtime and every package file's mtime and
size. The next scan first stats just those: if nothing moved (a folder's mtime changes when an
entry in it is added, removed or renamed) it returns the previous result without listing a
folder or reading a file. Otherwise it walks again, and each skill whose file signature is
unchanged comes from the cache; only changed skills are parsed and hashed. Signatures written
within :data:`RACY_WINDOW_NS` of a scan are not trusted (coarse filesystem clocks let a same-size
edit keep its mtime) and are verified by hash instead.

A folder without a ``SKILL.md`` on the way from a root to a skill is a **namespace**:
``web/scraper`` is the skill ``scraper`` in the namespace ``web``. A skill keeps its own name
while no other namespace has a skill of that name, and is also known by its qualified name
``web.scraper`` (:attr:`Skill.qualified_name`); when several namespaces have one, each is kept and
known by its qualified name only (``web.parser``, ``pdf.parser``; ``parser`` for one at a root).
A child skill is in its tree's namespace.

Names are owned (DESIGN §8) and compared by :func:`~skillweave.skills.names.name_key`
(NFKC-normalized, case-folded), so 'PDF' and 'pdf' are one name. Roots are given lowest
precedence first: a directory root's skill replaces an earlier directory root's skill of the
same name in the same namespace, with a warning; two skills of one name in one namespace of a
single root keep the first in walk (sorted) order, with a warning. A root holding uploaded
skills (it carries :data:`~skillweave.skills.names.UPLOADED_ROOT_MARKER`; each top folder is
one upload) has no precedence at all: its skills, children included, never replace or sit
beside a directory skill of the same name (in any namespace), and an upload's child never
replaces another upload's skill (the top of an upload owns its name). Each winner's owner is
in :attr:`ScanResult.owners`.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from skillweave.skills.files import SKILL_FILE, is_skipped_dir, is_skipped_file, read_bytes
from skillweave.skills.loader import LoadedSkill, load_skill_file
from skillweave.skills.model import Skill
from skillweave.skills.names import UPLOADED_ROOT_MARKER, SkillOwner, name_key
from skillweave.skills.spec import Diagnostic
from skillweave.skills.versioning import package_version

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_PACKAGE_FILES",
    "DEFAULT_MAX_SKILLS",
    "HIDDEN_SKILLS_FIELD",
    "ScanResult",
    "SkillScanner",
]

logger = logging.getLogger("skillweave.skills")

DEFAULT_MAX_DEPTH: Final = 6
DEFAULT_MAX_SKILLS: Final = 20_000
DEFAULT_MAX_PACKAGE_FILES: Final = 1_000
RACY_WINDOW_NS: Final = 2_000_000_000
"""Files changed less than this before a scan are verified by hash, not by mtime and size:
filesystem timestamps can be as coarse as a second or two."""
HIDDEN_SKILLS_FIELD: Final = "hidden folders"
"""The field of the diagnostic that says a root found no skills but its hidden folders hold
some (the CLI matches on it to say how to include them)."""
_VCS_DIRS: Final = frozenset({".git", ".hg", ".svn"})
"""Hidden folders never walked, even with ``include_hidden``: they hold no skills."""
_SHOWN_HIDDEN_FOLDERS: Final = 5

_Signature = tuple[tuple[str, str, int, int], ...]


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan found.

    Attributes:
        skills: the winning skill of each name, in discovery order (roots in order, each walked
            sorted), with parents and children resolved.
        diagnostics: warnings and refusals, per skill file and for the library as a whole.
        skill_dirs: how many skill folders were seen (including refused and overridden ones).
        owners: who owns each winning skill's name (its directory library, or the upload
            that holds it).
    """

    skills: dict[str, Skill]
    diagnostics: tuple[Diagnostic, ...] = ()
    skill_dirs: int = 0
    owners: Mapping[str, SkillOwner] = field(default_factory=dict)


@dataclass(slots=True)
class _Found:
    """A skill folder met during the walk, before loading."""

    path: str
    root_index: int
    parent: _Found | None
    linked: bool = False  # reached through a symlinked folder
    files: list[tuple[str, str, int, int]] = field(default_factory=list)
    overflow: bool = False
    loaded: LoadedSkill | None = None
    version: str = ""


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
class _Snapshot:
    """What the last full walk saw, to prove cheaply that nothing changed since."""

    dirs: tuple[tuple[str, int], ...]
    files: tuple[tuple[str, int, int], ...]
    missing_roots: tuple[str, ...]
    paths: tuple[str, ...]
    walk_diagnostics: tuple[Diagnostic, ...]
    uploaded: frozenset[int]
    result: ScanResult
    trusted: bool


class SkillScanner:
    """Scans skill library roots, caching what has not changed since the last scan.

    An unchanged rescan lists no folder and reads no file: it stats the folders and files the
    last walk saw (a folder's mtime changes whenever an entry is added, removed or renamed in
    it) and returns the previous result. Any difference means a full walk, in which skills
    whose files kept their signature are taken from the cache and only changed ones are
    parsed and hashed again.

    Args:
        roots: library roots, lowest precedence first. Missing roots are skipped quietly
            (the default roots need not exist).
        max_depth: how deep to look for skills outside skill folders.
        max_skills: stop after this many skill folders.
        max_package_files: refuse a skill with more files than this.
        include_hidden: also look for skills in hidden folders (outside skills).
    """

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_skills: int = DEFAULT_MAX_SKILLS,
        max_package_files: int = DEFAULT_MAX_PACKAGE_FILES,
        include_hidden: bool = False,
    ) -> None:
        self.roots = [Path(root).expanduser().absolute() for root in roots]
        self.max_depth = max_depth
        self.max_skills = max_skills
        self.max_package_files = max_package_files
        self.include_hidden = include_hidden
        self.full_walks = 0
        self._cache: dict[str, _CacheEntry] = {}
        self._snapshot: _Snapshot | None = None

    def scan(self) -> ScanResult:
        """Return the skills of the roots, walking and loading only what changed."""
        with _gc_paused():
            snapshot = self._snapshot
            if snapshot is not None and snapshot.trusted and _still_valid(snapshot):
                return snapshot.result
            return self._full_scan(snapshot)

    def _full_scan(self, previous: _Snapshot | None) -> ScanResult:
        self.full_walks += 1
        started = time.time_ns()
        diagnostics: list[Diagnostic] = []
        found: list[_Found] = []
        dirs: list[tuple[str, int]] = []
        missing: list[str] = []
        uploaded: set[int] = set()
        for index, root in enumerate(self.roots):
            if len(found) >= self.max_skills:
                break
            if not root.is_dir():
                missing.append(str(root))
                continue
            if (root / UPLOADED_ROOT_MARKER).is_file():
                uploaded.add(index)
            before = len(found)
            skipped_hidden = self._walk(
                root, index, found, dirs, diagnostics, include_hidden=self.include_hidden
            )
            no_skills = len(found) == before
            if skipped_hidden and no_skills and (hint := self._hidden_skills(root, index, dirs)):
                diagnostics.append(hint)
        if len(found) >= self.max_skills:
            where = str(self.roots[0]) if len(self.roots) == 1 else "skills"
            message = f"stopped after {self.max_skills} skills (skills.max_skills); rest not loaded"
            diagnostics.append(Diagnostic(where, "library", message))
        walk_diagnostics = tuple(diagnostics)

        cache: dict[str, _CacheEntry] = {}
        unchanged = True
        for item in found:
            unchanged &= self._load(item, cache, diagnostics, started)
        self._cache = cache
        paths = tuple(item.path for item in found)
        if (
            previous is not None
            and unchanged
            and previous.paths == paths
            and previous.walk_diagnostics == walk_diagnostics
            and previous.uploaded == uploaded
        ):
            result = previous.result
        else:
            result = _resolve(found, self.roots, frozenset(uploaded), diagnostics)
            for diagnostic in result.diagnostics:
                logger.warning("%s", diagnostic)

        horizon = started - RACY_WINDOW_NS
        self._snapshot = _Snapshot(
            dirs=tuple(dirs),
            files=tuple((p, mtime, size) for item in found for _, p, mtime, size in item.files),
            missing_roots=tuple(missing),
            paths=paths,
            walk_diagnostics=walk_diagnostics,
            uploaded=frozenset(uploaded),
            result=result,
            trusted=all(e.trusted for e in cache.values()) and all(m < horizon for _, m in dirs),
        )
        return result

    def _load(
        self, item: _Found, cache: dict[str, _CacheEntry], out: list[Diagnostic], started: int
    ) -> bool:
        """Load `item` from cache or disk; True when the cached entry still holds."""
        skill_file = os.path.join(item.path, SKILL_FILE)
        if item.overflow:
            message = f"has more than {self.max_package_files} files; not loaded"
            out.append(Diagnostic(skill_file, "package", message, fatal=True))
            return item.path not in self._cache
        signature = _signature(item)
        trusted = all(mtime < started - RACY_WINDOW_NS for _, _, mtime, _ in signature)
        entry = self._cache.get(item.path)
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

    def _walk(
        self,
        root: Path,
        index: int,
        found: list[_Found],
        dirs_seen: list[tuple[str, int]],
        out: list[Diagnostic],
        *,
        include_hidden: bool,
    ) -> int:
        """Walk one root, appending the skill folders it holds to `found`; returns how many
        hidden folders outside skills were skipped (0 when `include_hidden`)."""
        real_root = os.path.realpath(root)
        visited = {real_root}
        skipped_hidden = 0
        # The hot loop of a scan: it meets every folder and file of the library once.
        stat, scandir = os.stat, os.scandir
        # (directory, depth below root, owning skill, path prefix inside the owner's package,
        # reached through a symlink)
        stack: list[tuple[str, int, _Found | None, str, bool]] = [(str(root), 0, None, "", False)]
        while stack:
            directory, depth, owner, prefix, linked = stack.pop()
            dirs: list[os.DirEntry[str]] = []
            hidden: list[os.DirEntry[str]] = []
            files: list[os.DirEntry[str]] = []
            is_skill = False
            try:
                # Stat before listing: a change during the listing then shows up next time.
                dirs_seen.append((directory, stat(directory).st_mtime_ns))
                with scandir(directory) as iterator:
                    for entry in iterator:
                        name = entry.name
                        if entry.is_dir():
                            if not is_skipped_dir(name):
                                dirs.append(entry)
                            elif name[0] == "." and name not in _VCS_DIRS:
                                hidden.append(entry)
                        elif entry.is_file(follow_symlinks=False):
                            files.append(entry)
                            if name == SKILL_FILE:
                                is_skill = True
            except OSError as exc:
                out.append(Diagnostic(directory, "library", f"cannot be read: {exc.strerror}"))
                continue
            if is_skill:
                if len(found) >= self.max_skills:
                    return skipped_hidden
                owner = _Found(directory, index, owner, linked=linked)
                prefix = ""
                found.append(owner)
            if owner is not None:
                if not owner.overflow:
                    self._record(owner, files, prefix)
            elif hidden:  # outside skills only: a skill's package never holds hidden folders
                if include_hidden:
                    dirs += hidden
                else:
                    skipped_hidden += len(hidden)
            if len(dirs) > 1:
                dirs.sort(key=_entry_name, reverse=True)  # reversed: the stack pops in name order
            for entry in dirs:
                link = entry.is_symlink()
                if link:
                    if owner is not None or not self._follow(entry.path, real_root, visited):
                        continue
                elif owner is None and depth >= self.max_depth:
                    continue
                stack.append(
                    (entry.path, depth + 1, owner, f"{prefix}{entry.name}/", linked or link)
                )
        return skipped_hidden

    def _record(self, owner: _Found, files: list[os.DirEntry[str]], prefix: str) -> None:
        """Add one folder's package files to `owner`, noting when it has too many."""
        records = owner.files
        for entry in files:
            name = entry.name
            if not is_skipped_file(name):
                info = entry.stat()
                records.append((prefix + name, entry.path, info.st_mtime_ns, info.st_size))
        owner.overflow = len(records) > self.max_package_files

    def _hidden_skills(
        self, root: Path, index: int, dirs_seen: list[tuple[str, int]]
    ) -> Diagnostic | None:
        """For a root that found no skills: walk it again with hidden folders included and,
        if that finds skill folders, the diagnostic that says where and how to include them.

        The folders of this walk join the snapshot, so that a skill added to a hidden folder
        later updates the hint."""
        probe: list[_Found] = []
        probe_dirs: list[tuple[str, int]] = []
        self._walk(root, index, probe, probe_dirs, [], include_hidden=True)
        seen = {path for path, _ in dirs_seen}
        dirs_seen += (entry for entry in probe_dirs if entry[0] not in seen)
        if not probe:
            return None
        folders: dict[str, int] = {}
        for item in probe:
            folder = _hidden_folder(os.path.relpath(item.path, root))
            folders[folder] = folders.get(folder, 0) + 1
        counts = sorted(folders.items())
        shown = ", ".join(f"{folder} ({count})" for folder, count in counts[:_SHOWN_HIDDEN_FOLDERS])
        if len(counts) > _SHOWN_HIDDEN_FOLDERS:
            shown += f" and {len(counts) - _SHOWN_HIDDEN_FOLDERS} more"
        message = (
            f"no skills found, but hidden folders here hold {len(probe)} {SKILL_FILE} "
            f"file(s), skipped because their folders start with '.': {shown}. To include "
            "them, set SKILLS__INCLUDE_HIDDEN=true (skills.include_hidden), or add each "
            "folder as a library root of its own (--dir, SKILLS__DIRS)"
        )
        return Diagnostic(str(root), HIDDEN_SKILLS_FIELD, message)

    def _follow(self, path: str, real_root: str, visited: set[str]) -> bool:
        real = os.path.realpath(path)
        if real in visited:
            return False
        if os.path.commonpath([real, real_root]) != real_root:
            logger.info("not following %s: it leads outside %s", path, real_root)
            return False
        visited.add(real)
        return True


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector. A scan allocates some 10^5 small objects that all
    survive it; generational collections would walk them again and again for nothing (the
    pause saves about a tenth of a cold scan). Reference counting still frees as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _hidden_folder(relative: str) -> str:
    """The first hidden folder of a skill's path relative to its root, with the folders
    above it (``skills/.curated/pdf`` → ``skills/.curated``)."""
    parts = relative.split(os.sep)
    for position, part in enumerate(parts):
        if part.startswith("."):
            return "/".join(parts[: position + 1])
    return relative  # pragma: no cover - only skills under hidden folders are asked about


def _still_valid(snapshot: _Snapshot) -> bool:
    """True when no folder or file the snapshot saw has changed and no missing root appeared."""
    stat = os.stat
    try:
        for path, mtime in snapshot.dirs:
            if stat(path).st_mtime_ns != mtime:
                return False
        for path, mtime, size in snapshot.files:
            result = stat(path)
            if result.st_mtime_ns != mtime or result.st_size != size:
                return False
    except OSError:
        return False
    return not any(os.path.isdir(root) for root in snapshot.missing_roots)


def _version(item: _Found, preloaded: dict[str, bytes] | None = None) -> str:
    return package_version(((rel, path) for rel, path, _, _ in item.files), preloaded=preloaded)


def _signature(item: _Found) -> _Signature:
    # Walk order, not sorted: an unchanged folder lists in the same order, and a reordered one
    # merely costs a reload. Versions sort their input, so they never depend on this order.
    return tuple(item.files)


def _resolve(
    found: list[_Found], roots: list[Path], uploaded: frozenset[int], out: list[Diagnostic]
) -> ScanResult:
    """Give each name to one owner, name the winners, and link parents and children.

    Names (compared by ``name_key``) are owned per namespace: two skills of one name in one
    namespace are settled by :func:`_precedence`; in different namespaces both are kept. An
    uploaded skill never takes a name a directory skill has in any namespace."""
    winners: dict[tuple[str, str], _Found] = {}  # by (namespace key, name key)
    namespaces: dict[str, str] = {}  # by path
    for item in found:
        if item.loaded is None or item.loaded.skill is None:
            continue
        namespace = namespaces[item.path] = _namespace(item, roots, uploaded)
        key = (name_key(namespace), name_key(item.loaded.skill.name))
        previous = winners.get(key)
        if previous is None:
            winners[key] = item
            continue
        if os.path.realpath(item.path) == os.path.realpath(previous.path):
            # The same folder reached through a symlink: one skill, kept under its real path.
            if os.path.realpath(item.path) == item.path:
                winners[key] = item
            continue
        replaces, message = _precedence(previous, item, roots, uploaded)
        out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
        if replaces:
            del winners[key]  # re-insert so that order follows the overriding root
            winners[key] = item

    # An upload may not take a directory skill's name from another namespace either.
    held = {key[1]: item for key, item in winners.items() if item.root_index not in uploaded}
    for key, item in list(winners.items()):
        owner = held.get(key[1])
        if item.root_index in uploaded and owner is not None:
            _, message = _precedence(owner, item, roots, uploaded)
            out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
            del winners[key]

    # A name held in several namespaces is known by its qualified names only.
    holders: dict[str, int] = {}
    for _, name in winners:
        holders[name] = holders.get(name, 0) + 1
    named: dict[str, _Found] = {}
    taken: dict[str, _Found] = {}  # by name key
    for (_, key), item in winners.items():
        bare, namespace = _name(item), namespaces[item.path]
        qualified = f"{namespace}.{bare}" if namespace else bare
        name = qualified if holders[key] > 1 else bare
        previous = taken.get(name_key(name))
        if previous is not None:
            there = os.path.join(previous.path, SKILL_FILE)
            message = f"skill {name!r} is also at {there}, which is kept; this one is ignored"
            out.append(Diagnostic(os.path.join(item.path, SKILL_FILE), "name", message))
            continue
        taken[name_key(name)] = named[name] = item
    return _link(
        named,
        namespaces=namespaces,
        roots=roots,
        uploaded=uploaded,
        out=out,
        found=found,
    )


def _namespace(item: _Found, roots: list[Path], uploaded: frozenset[int]) -> str:
    """The folders between the item's library root and its tree's top skill, joined with
    dots (leading dots of hidden folders dropped); empty at the root and for uploads."""
    if item.root_index in uploaded:
        return ""
    top, root = _top(item).path, str(roots[item.root_index])
    if _top(item).linked:  # a symlinked folder is in the namespace of where it really is
        top, root = os.path.realpath(top), os.path.realpath(root)
    relative = os.path.relpath(os.path.dirname(top), root)
    if relative == os.curdir:
        return ""
    return ".".join(part.lstrip(".") or part for part in relative.split(os.sep))


def _link(
    winners: dict[str, _Found],
    *,
    namespaces: Mapping[str, str],
    roots: list[Path],
    uploaded: frozenset[int],
    out: list[Diagnostic],
    found: list[_Found],
) -> ScanResult:
    """The scan's result: the winners (by name) with parents and children linked."""
    by_path = {item.path: name for name, item in winners.items()}
    parents: dict[str, str | None] = {}
    children: dict[str, list[str]] = {name: [] for name in winners}
    for name, item in winners.items():
        ancestor = item.parent
        while ancestor is not None and ancestor.path not in by_path:
            ancestor = ancestor.parent  # a refused or overridden parent: attach to the next one up
        parent_name = by_path[ancestor.path] if ancestor is not None else None
        parents[name] = parent_name
        if parent_name is not None:
            children[parent_name].append(name)

    skills: dict[str, Skill] = {}
    for name, item in winners.items():
        loaded = item.loaded.skill if item.loaded is not None else None
        if loaded is None:  # pragma: no cover - winners hold loaded skills only
            continue
        skills[name] = replace(
            loaded,
            name=name,
            version=item.version,
            parent=parents[name],
            children=tuple(sorted(children[name])),
            source=roots[item.root_index],
            namespace=namespaces[item.path],
            short_name=loaded.name if name != loaded.name else "",
        )
    owners = {name: _owner(item, roots, uploaded) for name, item in winners.items()}
    return ScanResult(skills=skills, diagnostics=tuple(out), skill_dirs=len(found), owners=owners)


def _name(item: _Found) -> str:
    skill = item.loaded.skill if item.loaded is not None else None
    return skill.name if skill is not None else os.path.basename(item.path)


def _top(item: _Found) -> _Found:
    while item.parent is not None:
        item = item.parent
    return item


def _owner(item: _Found, roots: list[Path], uploaded: frozenset[int]) -> SkillOwner:
    if item.root_index in uploaded:
        return SkillOwner("uploaded", os.path.basename(_top(item).path))
    return SkillOwner("directory", str(roots[item.root_index]))


def _precedence(
    previous: _Found, item: _Found, roots: list[Path], uploaded: frozenset[int]
) -> tuple[bool, str]:
    """Whether `item` replaces `previous` (a skill of the same name key, found earlier), and
    the warning that says what happened."""
    name = _name(item)
    there = os.path.join(previous.path, SKILL_FILE)
    previous_upload = previous.root_index in uploaded
    item_upload = item.root_index in uploaded
    taken = f"skill {name!r}: the name is owned by {_owner(previous, roots, uploaded)} ({there})"
    if not previous_upload and not item_upload:
        if previous.root_index == item.root_index:
            return False, f"duplicate skill name {name!r}; {there} is kept, this one is ignored"
        return True, f"skill {name!r} overrides the one in {roots[previous.root_index]}"
    if not item_upload:  # a directory skill always wins over an upload
        owner = _owner(previous, roots, uploaded)
        return (
            True,
            f"directory skill {name!r} owns the name; the one {owner} holds ({there}) is ignored",
        )
    if not previous_upload:
        return False, f"{taken}; an uploaded skill may not shadow it, this one is ignored"
    if _top(previous) is _top(item):
        return False, f"duplicate skill name {name!r}; {there} is kept, this one is ignored"
    if item.parent is None and previous.parent is not None:
        # The top of an upload owns its name; another upload's child may not take it.
        return True, f"uploaded skill {name!r} owns the name; the child at {there} is ignored"
    return False, f"{taken}; another upload's skill may not shadow it, this one is ignored"
