"""Signing and verifying what is on disk: a skill folder with its child skills, or a ZIP file.

:func:`skill_tree` lists a folder's skills, :func:`folder_identity` and
:func:`archive_identity` give each the name and version a signature is about (a
:class:`SignedSkill`), :func:`sign_folder`, :func:`sign_archive`, :func:`verify_folder` and
:func:`verify_archive` sign or check them all. Signing never loses a trusted signature by
accident: before a signer replaces a signature a trusted key made with one no trusted key
vouches for, :func:`replaced_trusted_signature` finds it, and the signer refuses unless told.

Called by ``skillweave skills sign`` and ``verify`` (``cli.trust``) and by tests that sign
skills; built on the document (``_document``) and the verdict (``_verdict``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from skillweave.errors import SignatureError
from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.loader import load_skill_file
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, extract_package
from skillweave.skills.signing._document import (
    SkillSignature,
    read_signature,
    sign_version,
    write_signature,
)
from skillweave.skills.signing._signing_keys import decode_keys, public_key_b64
from skillweave.skills.signing._verdict import SignatureCheck, verify_signature
from skillweave.skills.versioning import package_version, skill_version

__all__ = [
    "ReplacedSignature",
    "SignedSkill",
    "archive_identity",
    "folder_identity",
    "replaced_trusted_signature",
    "sign_archive",
    "sign_folder",
    "skill_tree",
    "verify_archive",
    "verify_folder",
]


@dataclass(frozen=True, slots=True)
class SignedSkill:
    """A skill a signature is about: where it is, its name and the version its files give.

    Attributes:
        path: the skill folder, or the ZIP file.
        name: the skill's name (a folder's as lenient loading gives it; a ZIP's top skill's
            frontmatter name, as an upload takes it).
        version: the version a check compares the signature with (see :func:`folder_identity`
            and :func:`archive_identity`).
    """

    path: Path
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class ReplacedSignature:
    """A signature a trusted key made that a new one no trusted key vouches for would replace
    (:func:`replaced_trusted_signature`).

    Attributes:
        path: the skill folder or ZIP file it signs.
        existing: the key id the signature there names (one ``skills.trust.keys`` lists).
        key_id: the key id the new signature would name.
        known_as: the ids ``skills.trust.keys`` gives the signing key, sorted (empty: none).
    """

    path: Path
    existing: str
    key_id: str
    known_as: tuple[str, ...]


def skill_tree(root: Path) -> list[Path]:
    """The skill folder `root` and every child skill folder in it, the top first, then by path.

    A child is a folder holding a SKILL.md inside the tree, found the way packing finds files
    (hidden folders, dependency caches and symlinks are never walked).

    Raises:
        SignatureError: `root` holds no SKILL.md.
    """
    if not (root / SKILL_FILE).is_file():
        raise SignatureError(f"{root}: not a skill folder (no {SKILL_FILE})")
    children = sorted(
        relative.rpartition("/")[0]
        for relative, _ in iter_package_files(root, include_children=True)
        if relative.endswith("/" + SKILL_FILE)
    )
    return [root, *(root / child for child in children)]


def folder_identity(folder: Path) -> SignedSkill:
    """A skill folder's name, as lenient loading (and so the library) gives it, and its own
    version (child skills excluded): what the library pins, loads and runs.

    Raises:
        SignatureError: the folder's SKILL.md cannot be loaded as a skill.
    """
    loaded = load_skill_file(folder / SKILL_FILE)
    if loaded.skill is None:
        fatal = next((d for d in loaded.diagnostics if d.fatal), None)
        reason = f"{fatal.field}: {fatal.message}" if fatal else "not a skill"
        raise SignatureError(f"{folder}: cannot load the skill: {reason}")
    return SignedSkill(folder, loaded.skill.name, skill_version(folder))


def archive_identity(source: Path, *, limits: PackageLimits = DEFAULT_LIMITS) -> SignedSkill:
    """A ZIP package's top skill name and its version, as an upload computes them.

    The package is extracted (``package.extract_package``: every safety check and limit) into
    a temporary folder, and its version is ``versioning.package_version`` over the top skill's
    files, child skills included: the version ``StoredSkills`` stores the upload under.

    Raises:
        PackageError: the archive is unreadable, unsafe or over `limits`.
        SkillFormatError: its top SKILL.md has no readable frontmatter.
        SignatureError: its top SKILL.md names no skill.
    """
    with tempfile.TemporaryDirectory(prefix="skillweave-sign-") as temp:
        extracted = Path(temp) / "package"
        top = extract_package(source, extracted, limits=limits)[0]
        text = (top / SKILL_FILE).read_text(encoding="utf-8", errors="replace")
        front = parse_frontmatter(text, path=f"{source.name}: {SKILL_FILE}")
        name = front.data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise SignatureError(f"{source}: the package's {SKILL_FILE} names no skill")
        files = iter_package_files(top, include_children=True)
        version = package_version((relative, entry.path) for relative, entry in files)
    return SignedSkill(source, name.strip(), version)


def sign_folder(
    root: Path,
    key: Ed25519PrivateKey,
    *,
    key_id: str | None = None,
    now: datetime | None = None,
) -> list[tuple[SignedSkill, SkillSignature]]:
    """Sign a skill folder and every child skill in it, each at its own version, writing
    :data:`SIGNATURE_FILE` into each folder.

    Every skill is identified before any file is written, so a tree with one unloadable
    skill gets no signature at all.

    Raises:
        SignatureError: a skill of the tree cannot be loaded, or a document cannot be written.
    """
    skills = [folder_identity(folder) for folder in skill_tree(root)]
    signed = [
        (skill, sign_version(key, name=skill.name, version=skill.version, key_id=key_id, now=now))
        for skill in skills
    ]
    for skill, signature in signed:
        write_signature(skill.path, signature)
    return signed


def sign_archive(
    path: Path,
    key: Ed25519PrivateKey,
    *,
    key_id: str | None = None,
    limits: PackageLimits = DEFAULT_LIMITS,
    now: datetime | None = None,
) -> tuple[SignedSkill, SkillSignature]:
    """Sign a ZIP package's top skill at the package's version (:func:`archive_identity`),
    writing ``<zip>.sig.json`` beside it.

    Raises:
        PackageError: the archive cannot be read.
        SignatureError: it names no skill, or the document cannot be written.
    """
    skill = archive_identity(path, limits=limits)
    signature = sign_version(key, name=skill.name, version=skill.version, key_id=key_id, now=now)
    write_signature(path, signature)
    return skill, signature


def verify_folder(
    root: Path, *, trusted: Mapping[str, str] | Mapping[str, Ed25519PublicKey]
) -> list[tuple[SignedSkill, SignatureCheck]]:
    """Check the signature of a skill folder and of every child skill in it (see
    :func:`sign_folder`), the top first.

    Raises:
        SignatureError: a skill cannot be loaded, or a document is malformed.
        ConfigError: a trusted key is malformed.
    """
    keys = decode_keys(trusted)
    checked = []
    for folder in skill_tree(root):
        skill = folder_identity(folder)
        signature = read_signature(folder)
        check = verify_signature(signature, name=skill.name, version=skill.version, trusted=keys)
        checked.append((skill, check))
    return checked


def verify_archive(
    path: Path,
    *,
    trusted: Mapping[str, str] | Mapping[str, Ed25519PublicKey],
    limits: PackageLimits = DEFAULT_LIMITS,
) -> tuple[SignedSkill, SignatureCheck]:
    """Check the signature beside a ZIP package (``<zip>.sig.json``).

    Raises:
        PackageError: the archive cannot be read.
        SignatureError: it names no skill, or the document is malformed.
        ConfigError: a trusted key is malformed.
    """
    keys = decode_keys(trusted)
    skill = archive_identity(path, limits=limits)
    signature = read_signature(path)
    return skill, verify_signature(signature, name=skill.name, version=skill.version, trusted=keys)


def replaced_trusted_signature(
    targets: Iterable[Path],
    key: Ed25519PrivateKey,
    *,
    key_id: str,
    trusted: Mapping[str, Ed25519PublicKey],
) -> ReplacedSignature | None:
    """The first of `targets` (skill folders or ZIP files) whose signature a trusted key made
    and that signing with `key` under `key_id` would replace with a signature no trusted key
    vouches for: `key_id` is not in `trusted`, or names another key there. Signing then loses
    a trusted signature for an untrusted or invalid one, which the signer must ask for.

    A signature under a key `trusted` does not list, or a document that cannot be read or
    parsed, vouches for nothing: replacing it loses nothing.

    Args:
        targets: what would be signed (:func:`skill_tree` of a folder, or a ZIP file).
        key: the signing key.
        key_id: the key id the new signatures would name.
        trusted: ``skills.trust.keys``, decoded (:func:`trusted_keys`).
    """
    public = public_key_b64(key)
    known_as = tuple(
        sorted(kid for kid, value in trusted.items() if public_key_b64(value) == public)
    )
    if key_id in known_as:
        return None
    for target in targets:
        try:
            existing = read_signature(target)
        except SignatureError:
            continue
        if existing is not None and existing.key_id in trusted:
            return ReplacedSignature(target, existing.key_id, key_id, known_as)
    return None
