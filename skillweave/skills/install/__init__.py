"""Installing skills from where they are published: a folder, a ZIP, or a git repository.

``skillweave skills install SOURCE`` and ``POST /v1/skills/install`` both come here. A source
is read into a temporary folder (:func:`fetched`), the skills in it are found
(:func:`find_skills`; one skill, or every skill of a repository of skills), and each is stored
as an uploaded skill (:class:`~skillweave.skills.stored.StoredSkills`: validated strictly,
rebuilt canonically, its name owned) with its **origin**: the source as given, the ref asked
for, the path inside the source, the commit it resolved to, and the version (the digest of
its files). :class:`SkillsLock` (``skills.lock``) keeps the same per skill, so that an install
can be made again exactly: the same commit, and a refusal if the files no longer hash to the
locked version.

Sources:

* a **git repository**: a URL (``https://``, ``ssh://``, ``git@host:path``, ``file://``) or a
  local repository (a folder with ``.git``, or a bare one). Its committed files at `ref` (a
  branch, a tag or a commit; default: its HEAD) are read, never a working tree. Git runs with
  no user or system configuration, no hooks, no submodules, no prompts, symlinks checked out as
  plain files, and only the https, ssh and file transports (``http://`` and ``git://`` carry
  no integrity and are refused). No submodule is read: a gitlink inside a skill is refused.
* a **ZIP** (``.zip``): unpacked with ``extract_package``'s checks.
* a **folder**: read in place (symlinks are never followed).

A local source (a folder, a ZIP, a repository, a ``file://`` URL) is judged by what would be
read before anything is (:func:`skillweave.skills.confinement.confine`): a ``.git`` file,
``commondir``, alternates, a symlink or a repository config leading outside it is refused, and
with an allowlist (the API's ``SKILLS__INSTALL_SOURCES``) its real path must be allowed too.

`path` narrows a source to a sub-folder; it may not leave the source.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillweave.atomic_write import write_atomic
from skillweave.errors import PackageError, SkillFormatError
from skillweave.skills.admission import Admissions
from skillweave.skills.confinement import FILE_URL, confine, git_env, matches_allowlist, run_git
from skillweave.skills.files import SKILL_FILE, is_skipped_dir
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, build_package, extract_package
from skillweave.skills.signing import SkillSignature, read_signature
from skillweave.skills.spec import name_problems
from skillweave.skills.stored import Check, SkillOrigin, SourceKind, StoredSkill, StoredSkills
from skillweave.storage.audit import AuditEntry

__all__ = [
    "LOCK_FILE",
    "Fetched",
    "Installed",
    "LockedSkill",
    "SkillOrigin",
    "SkillSource",
    "SkillsLock",
    "StagedSkill",
    "fetched",
    "find_skills",
    "install_skills",
    "parse_source",
    "source_allowed",
    "staged_skills",
]

LOCK_FILE: Final = "skills.lock"

_GIT_URL: Final = re.compile(r"^(?:https://|ssh://|file://|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:)")
_INSECURE_URL: Final = re.compile(r"^(?:http|git|ext|fd)://|^ext::|^fd::", re.IGNORECASE)
_DOT_SEGMENT: Final = re.compile(r"/\.\.?(?:/|$)|%2e", re.IGNORECASE)
_REF: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@+-]{0,199}$")
_COMMIT: Final = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_MAX_SKILLS: Final = 500
_MAX_DEPTH: Final = 6
_ZIP_MAX_BYTES: Final = 256 * 1024 * 1024
_LOCK_MAX_BYTES: Final = 4 * 1024 * 1024


class SkillSource(BaseModel):
    """Where to install from: what the user typed, read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SourceKind
    location: str = Field(description="A git URL as given, or an absolute local path.")
    ref: str | None = None
    path: str | None = Field(default=None, description="A sub-folder of the source.")


@dataclass(frozen=True, slots=True)
class Fetched:
    """A source read into a folder: its root, the commit of a git source, and the folders
    where its tree has a submodule (a gitlink: another repository's commit, never read)."""

    root: Path
    commit: str | None
    submodules: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class StagedSkill:
    """One skill found in a source, packaged: its name, where in the source, its ZIP, and the
    signature that came with it (``.skillweave-signature.json`` in its folder)."""

    name: str
    path: str
    package: bytes
    signature: SkillSignature | None = None


def parse_source(text: str, *, ref: str | None = None, path: str | None = None) -> SkillSource:
    """Read what a user typed as a source.

    Raises:
        PackageError: an insecure or unreadable source, a bad ref or path (one line).
    """
    text = text.strip()
    if not text or "\x00" in text or len(text) > 2048:
        raise PackageError("a skill source must be a git URL, a ZIP or a folder")
    if ref is not None and not _REF.match(ref):
        raise PackageError(f"--ref {ref!r}: not a branch, tag or commit name")
    sub = _sub_path(path) if path else None
    if _INSECURE_URL.match(text):
        raise PackageError(
            f"{text}: http://, git:// and ext:: sources carry no integrity; use https:// or ssh://"
        )
    if _GIT_URL.match(text):
        return SkillSource(kind="git", location=text, ref=ref, path=sub)
    local = Path(text).expanduser().absolute()
    if local.is_file() and local.suffix.lower() == ".zip":
        kind: SourceKind = "zip"
    elif local.is_dir():
        kind = "git" if _is_repository(local) else "folder"
    elif local.exists():
        raise PackageError(f"{text}: not a ZIP, a folder or a git repository")
    else:
        raise PackageError(f"{text}: no such file or folder, and not a git URL")
    if kind != "git" and ref is not None:
        raise PackageError(f"{text}: --ref needs a git repository; this is a {kind}")
    return SkillSource(kind=kind, location=str(local), ref=ref, path=sub)


def source_allowed(text: str, patterns: Sequence[str]) -> bool:
    """Whether the source a user typed matches one of `patterns` (``SKILLS__INSTALL_SOURCES``),
    judged before anything is read (a refusal says nothing of what exists). A local path is
    made absolute and its ``..`` resolved first; a URL with a dot segment never matches."""
    text = text.strip()
    if _GIT_URL.match(text):
        if _DOT_SEGMENT.search(text):
            return False
        location = text
    else:
        location = os.path.abspath(os.path.expanduser(text))
    return matches_allowlist(location, patterns)


@contextmanager
def fetched(
    source: SkillSource, *, commit: str | None = None, allowed: Sequence[str] | None = None
) -> Iterator[Fetched]:
    """The source's files in a folder for the length of the context (removed after), judged
    first (:func:`~skillweave.skills.confinement.confine`): nothing is read of a source that
    leads outside itself.

    Args:
        source: what to read.
        commit: a git source is read at this commit (a locked install), not at its ref.
        allowed: the allowlist its real path must match too (the API's); None: none.

    Raises:
        PackageError: the source leads outside itself or cannot be read (one line).
    """
    if commit is not None and not _COMMIT.match(commit):
        raise PackageError(f"commit {commit!r}: not a full git commit id")
    with tempfile.TemporaryDirectory(prefix="skillweave-install-") as temp:
        work = Path(temp)
        scratch = work / "scratch"
        scratch.mkdir()
        judged = confine(
            source.kind,
            source.location,
            remote=bool(_GIT_URL.match(source.location)),
            allowed=allowed,
            scratch=scratch,
        )
        submodules: tuple[Path, ...] = ()
        if source.kind == "git":
            root, resolved, submodules = _clone(source, work, commit=commit, git_dir=judged.git_dir)
        elif source.kind == "zip":
            root, resolved = _unzip(judged.root or Path(source.location), work), None
        else:
            root, resolved = judged.root or Path(source.location), None
        if source.path:
            root = _inside(root, source.path, what=source.location)
        yield Fetched(root=root, commit=resolved, submodules=submodules)


def find_skills(root: Path) -> list[Path]:
    """The skill folders of a source: `root` when it is one, else every top-most folder below
    it (hidden and VCS folders aside) that holds a SKILL.md; a skill's own sub-folders are
    its own (children), not found again.

    Raises:
        PackageError: no skill, or more than the installer takes at once.
    """
    if (root / SKILL_FILE).is_file():
        return [root]
    found: list[Path] = []
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or is_skipped_dir(entry.name):
                continue
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if (path / SKILL_FILE).is_file():
                found.append(path)
                if len(found) > _MAX_SKILLS:
                    raise PackageError(f"more than {_MAX_SKILLS} skills in one source")
            elif depth + 1 < _MAX_DEPTH:
                stack.append((path, depth + 1))
    if not found:
        raise PackageError(f"no {SKILL_FILE} in the source (looked {_MAX_DEPTH} folders deep)")
    return sorted(found)


def staged_skills(
    root: Path,
    *,
    only: Sequence[str] = (),
    limits: PackageLimits = DEFAULT_LIMITS,
    signature: SkillSignature | None = None,
    submodules: Sequence[Path] = (),
) -> list[StagedSkill]:
    """Every skill of a fetched source (those named in `only`, when given), packaged under
    its frontmatter name (a repository's root folder is rarely named like its skill), each
    with the signature in its folder (else `signature`: a ZIP's, beside it).

    Raises:
        PackageError: a name of `only` is not in the source; a folder cannot be packaged; a
            submodule (of `submodules`) lies inside a skill.
        SkillFormatError: a SKILL.md has no readable name.
    """
    staged = []
    for folder in find_skills(root):
        name = _skill_name(folder)
        if only and name not in only:
            continue
        relative = folder.relative_to(root).as_posix()
        for link in submodules:
            if link.is_relative_to(folder):
                inner = link.relative_to(root).as_posix()
                raise PackageError(
                    f"{inner}: a submodule (another repository's commit) inside the skill"
                    f" {name!r}; an install reads no submodule: commit its files into this"
                    " repository, or install that repository on its own"
                )
        package = build_package(folder, limits=limits, top=name)
        staged.append(
            StagedSkill(
                name=name,
                path="" if relative == "." else relative,
                package=package,
                signature=read_signature(folder) or signature,
            )
        )
    missing = sorted(set(only) - {skill.name for skill in staged})
    if missing:
        raise PackageError(f"the source has no skill named {', '.join(map(repr, missing))}")
    return staged


# --- the lock file ---------------------------------------------------------------------------


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
        if not _GIT_URL.match(source):
            local = Path(source)
            if local.is_absolute() and local.is_relative_to(lock_path.parent.absolute()):
                source = local.relative_to(lock_path.parent.absolute()).as_posix() or "."
        entry = LockedSkill(name=name, version=version, **{**origin.model_dump(), "source": source})
        self.skills = dict(sorted({**self.skills, name: entry}.items()))

    def source_of(self, entry: LockedSkill, *, lock_path: Path) -> SkillSource:
        """The source to install `entry` from again (a relative local path is the lock's)."""
        location = entry.source
        if not _GIT_URL.match(location) and not Path(location).is_absolute():
            location = str((lock_path.parent / location).absolute())
        return parse_source(location, ref=entry.ref, path=entry.path or None)


# --- reading sources -------------------------------------------------------------------------


def _sub_path(path: str) -> str:
    pure = PurePosixPath(path.replace("\\", "/").strip("/"))
    if path.startswith("/") or any(part in ("..", "") for part in pure.parts) or "\x00" in path:
        raise PackageError(f"--path {path!r}: must be a relative path inside the source")
    return pure.as_posix()


def _inside(root: Path, sub: str, *, what: str) -> Path:
    target = (root / sub).resolve()
    if not target.is_relative_to(root.resolve()):
        raise PackageError(f"{what}: --path {sub!r} leaves the source")
    if not target.is_dir():
        raise PackageError(f"{what}: no folder {sub!r} in the source")
    return target


def _is_repository(folder: Path) -> bool:
    return (folder / ".git").exists() or (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    )


def _skill_name(folder: Path) -> str:
    where = f"{folder.name}/{SKILL_FILE}"
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillFormatError(where, f"cannot be read: {exc}") from None
    name = parse_frontmatter(text, path=where).data.get("name")
    problems = name_problems(name) if isinstance(name, str) else ["no name"]
    if problems or not isinstance(name, str):
        raise SkillFormatError(where, f"name: {'; '.join(problems)}")
    return name


def _unzip(archive: Path, work: Path) -> Path:
    try:
        size = archive.stat().st_size
        if size > _ZIP_MAX_BYTES:
            raise PackageError(f"{archive}: over {_ZIP_MAX_BYTES} bytes")
        data = archive.read_bytes()
    except OSError as exc:
        raise PackageError(f"{archive}: cannot read: {exc.strerror}") from None
    root = work / "package"
    extract_package(data, root)
    return root


def _clone(
    source: SkillSource, work: Path, *, commit: str | None, git_dir: Path | None
) -> tuple[Path, str, tuple[Path, ...]]:
    """Clone the source (a local one from its judged git directory, exactly: served by
    ``git-upload-pack --strict``, which guesses no ``/.git`` and reads no ``.git`` file) and
    check out the commit; the submodules of its tree come back as the folders they would be."""
    env = git_env(work)
    checkout = work / "checkout"
    what = source.location
    if git_dir is None:
        location, local = source.location, []
    else:
        location = FILE_URL + quote(str(git_dir), safe="/")
        local = ["--upload-pack=git-upload-pack --strict"]
    run_git(
        [
            "clone",
            "--quiet",
            "--no-checkout",
            "--no-recurse-submodules",
            *local,
            "--",
            location,
            str(checkout),
        ],
        cwd=work,
        env=env,
        what=what,
    )
    target = commit or source.ref or "HEAD"
    if commit is None and source.ref is not None:
        # A branch of the origin, a tag, or a commit: whichever the name resolves to.
        for candidate in (f"origin/{source.ref}", f"refs/tags/{source.ref}", source.ref):
            try:
                target = run_git(
                    ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
                    cwd=checkout,
                    env=env,
                    what=what,
                )
                break
            except PackageError:
                continue
        else:
            raise PackageError(f"{what}: no branch, tag or commit {source.ref!r}")
    run_git(["checkout", "--quiet", "--detach", target, "--"], cwd=checkout, env=env, what=what)
    resolved = run_git(["rev-parse", "HEAD"], cwd=checkout, env=env, what=what)
    if commit is not None and resolved != commit:
        raise PackageError(f"{what}: commit {commit} is not in the repository")
    tree = run_git(["ls-tree", "-r", "-z", "--full-tree", "HEAD"], cwd=checkout, env=env, what=what)
    submodules = tuple(
        checkout / entry.split("\t", 1)[1]
        for entry in tree.split("\0")
        if entry.startswith("160000 ") and "\t" in entry
    )
    shutil.rmtree(checkout / ".git", ignore_errors=True)
    return checkout, resolved, submodules


# --- installing ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Installed:
    """One installed skill: its stored record, the version installed and its origin."""

    record: StoredSkill
    version: str
    origin: SkillOrigin


async def install_skills(
    stored: StoredSkills,
    source: SkillSource,
    *,
    only: Sequence[str] = (),
    reserved: Mapping[str, str] | Collection[str] = (),
    commit: str | None = None,
    expect: Mapping[str, str] | None = None,
    admissions: Admissions | None = None,
    allowed: Sequence[str] | None = None,
) -> list[Installed]:
    """Install the skills of `source` (those named in `only`) as uploaded skills, all or none.

    Args:
        stored: where they go.
        source: where they come from.
        only: the names to install (default: every skill of the source).
        reserved: names other sources own (directory skills): refused.
        commit: read a git source at this commit (a locked install).
        expect: name → the version it must have (a locked install); refused otherwise.
        admissions: the signature and scan checks of each version, and the audit log's
            records of them and of the install, all before any is stored
            (``skills.admission``; None: neither checked nor recorded).
        allowed: an allowlist the source's real path must match too (the API's
            ``SKILLS__INSTALL_SOURCES``); None: any source (the CLI's user reads it).

    Raises:
        PackageError, SkillFormatError, SkillNameTakenError: one line, nothing stored.
        SignatureError, SkillScanError: what `admissions` refuses; nothing stored.
        AuditLogError: the audit log cannot record the install; nothing stored.
    """
    staged, resolved = await asyncio.to_thread(
        _fetch_and_stage, source, tuple(only), commit, stored.limits, allowed
    )
    missing = sorted(set(expect or {}) - {skill.name for skill in staged})
    if missing:
        raise PackageError(f"{source.location}: no skill {', '.join(map(repr, missing))} any more")
    origins = [
        SkillOrigin(
            source=source.location,
            kind=source.kind,
            ref=source.ref,
            path="/".join(part for part in (source.path, skill.path) if part) or None,
            commit=resolved,
        )
        for skill in staged
    ]
    if admissions is not None:
        admissions.signatures.update(
            {skill.name: skill.signature for skill in staged if skill.signature is not None}
        )
    records = await stored.add_packages(
        [
            (skill.package, origin, (expect or {}).get(skill.name))
            for skill, origin in zip(staged, origins, strict=True)
        ],
        reserved=reserved,
        check=_announcing(admissions, stored, origins) if admissions is not None else None,
    )
    if admissions is not None:
        for record in records:
            await admissions.keep(record.name)
    return [
        Installed(record=record, version=record.latest, origin=origin)
        for record, origin in zip(records, origins, strict=True)
    ]


def _announcing(
    admissions: Admissions, stored: StoredSkills, origins: Sequence[SkillOrigin]
) -> Check:
    """The ``check`` of one install's packages (called once each, in order): each admitted
    (``Admissions.check``: its scan and signature recorded), then, once the last one is, the
    ``install`` (or ``update``) records of them all, before any is stored. A record that
    cannot be written raises ``AuditLogError`` from here, and nothing is stored."""
    checked: list[tuple[str, str, bool]] = []

    async def check(name: str, version: str, package: bytes) -> bool:
        held = await admissions.check(name, version, package)
        checked.append((name, version, held))
        if len(checked) == len(origins):
            entries = [
                _install_entry(name, version, held, origin, await stored.get(name))
                for (name, version, held), origin in zip(checked, origins, strict=True)
            ]
            await admissions.announce(entries)
        return held

    return check


def _install_entry(
    name: str, version: str, held: bool, origin: SkillOrigin, earlier: StoredSkill | None
) -> AuditEntry:
    """The record of installing `version` of `name` (an ``update`` of an `earlier` one)."""
    return AuditEntry(
        event="update" if earlier is not None else "install",
        skill=name,
        version=version,
        details={
            "previous": earlier.latest if earlier is not None else None,
            # What the store will make of it: held off, or as the earlier version was.
            "enabled": (earlier.enabled if earlier is not None else True) and not held,
            **origin.model_dump(),
        },
    )


def _fetch_and_stage(
    source: SkillSource,
    only: tuple[str, ...],
    commit: str | None,
    limits: PackageLimits,
    allowed: Sequence[str] | None,
) -> tuple[list[StagedSkill], str | None]:
    with fetched(source, commit=commit, allowed=allowed) as got:
        sidecar = read_signature(Path(source.location)) if source.kind == "zip" else None
        staged = staged_skills(
            got.root, only=only, limits=limits, signature=sidecar, submodules=got.submodules
        )
        return staged, got.commit
