"""Skill signatures: a skill version signed with Ed25519, the document that carries the
signature, and the trust policy that judges it.

What is signed is a skill's name and version, never its bytes: the version is already the
sha256 over the package's files (``versioning``), so a signature over it covers every file, and
the checks on upload, install, load and execution compare it with a version they computed
themselves. The message (:func:`signed_message`) is a domain-separated byte string binding the
name (compared by ``names.name_key``, as everywhere) to the version, so a signature made for
one skill cannot be replayed onto another skill with the same bytes.

A signature is a small JSON document (:class:`SkillSignature`). It lives beside what it signs,
never inside the package: in a skill folder as the hidden file :data:`SIGNATURE_FILE` (hidden
files are never part of a package, so it does not change the version it signs), beside a ZIP
file as ``<zip>.sig.json`` (:func:`signature_path`), and in the artifact store as
``keys.skill_signature_key(name, version)`` next to the package. Documents come from anyone
who can write those places: they are size-capped and parsed strictly.

A call site that has a skill's name, its version and maybe a document asks
:func:`verify_signature` what the signature says (a :class:`SignatureCheck`) and :func:`decide`
what the policy (``skills.trust``) makes of it, or both at once with :func:`check_trust`, which
raises when the version is refused. A signature that does not match its package (another name
or version: changed after signing) or does not verify under the trusted key it names is refused
whatever the policy says; an unsigned version, or one signed by a key the settings do not list,
follows ``skills.trust.unsigned``. A malformed trusted key is a configuration error, found
before anything is judged (:func:`trusted_keys`): fail closed.

Signing never loses a trusted signature by accident: before a signer replaces a signature a
trusted key made with one no trusted key vouches for (another key, or this key under an id the
settings do not give it), :func:`replaced_trusted_signature` finds it, and the signer refuses
unless told to replace it.

Keys are Ed25519; a private key is PKCS#8 PEM, optionally encrypted with a passphrase, written
with mode 0600 (:func:`generate_keypair`, :func:`write_private_key`); a public key is the
base64 of its 32 raw bytes, as ``skills.trust.keys`` holds it. The ``skillweave skills keygen``,
``sign`` and ``verify`` commands (``skillweave.cli.trust``) are built on this module.

Written on the ``cryptography`` library's Ed25519; only the document, the message and the
policy are ours.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal, NamedTuple, assert_never

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillweave.atomic_write import write_atomic
from skillweave.config import TrustSettings
from skillweave.errors import ConfigError, SignatureError
from skillweave.skills.files import SKILL_FILE, iter_package_files
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.loader import load_skill_file
from skillweave.skills.names import SKILL_REFERENCE_PATTERN, name_key
from skillweave.skills.package import DEFAULT_LIMITS, PackageLimits, extract_package
from skillweave.skills.versioning import package_version, skill_version

__all__ = [
    "KEY_ID_PATTERN",
    "MAX_KEY_FILE_BYTES",
    "MAX_SIGNATURE_BYTES",
    "SIGNATURE_DOMAIN",
    "SIGNATURE_FILE",
    "SIGNATURE_SUFFIX",
    "ReplacedSignature",
    "SignatureCheck",
    "SignatureStatus",
    "SignedSkill",
    "SkillSignature",
    "TrustDecision",
    "archive_identity",
    "check_trust",
    "decide",
    "folder_identity",
    "generate_keypair",
    "key_fingerprint",
    "load_private_key",
    "parse_signature",
    "public_key_b64",
    "read_signature",
    "replaced_trusted_signature",
    "sign_archive",
    "sign_folder",
    "sign_version",
    "signature_bytes",
    "signature_path",
    "signed_message",
    "skill_tree",
    "trusted_keys",
    "validate_key_id",
    "verify_archive",
    "verify_folder",
    "verify_signature",
    "write_private_key",
    "write_signature",
]

SIGNATURE_FILE: Final = ".skillweave-signature.json"
"""The signature of a skill folder, inside it: hidden, so never part of the package it signs."""

SIGNATURE_SUFFIX: Final = ".sig.json"
"""Appended to a ZIP file's name (``pdf.zip.sig.json``) for the signature beside it."""

SIGNATURE_DOMAIN: Final = b"skillweave skill signature v1\n"
"""What every signed message starts with, so a skillweave signature means nothing elsewhere
(and nothing else signed with the key means a skill signature)."""

MAX_SIGNATURE_BYTES: Final = 4096
"""A document is about 400 bytes; anything over this is refused before it is parsed."""

MAX_KEY_FILE_BYTES: Final = 16 * 1024
"""An Ed25519 PEM key is about 120 bytes (about 300 encrypted)."""

KEY_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""A key id: a short printable label (``ops-2026``, or a fingerprint), no spaces or quotes."""

_FORMAT: Final = 1
_VERSION_PATTERN: Final = r"^[0-9a-f]{64}$"
_SIGNATURE_B64_CHARS: Final = 88  # base64 of 64 bytes
_ED25519_PUBLIC_BYTES: Final = 32
_ED25519_SIGNATURE_BYTES: Final = 64
_FINGERPRINT_HEX: Final = 16
_SHORT_VERSION: Final = 12
_PRIVATE_MODE: Final = 0o600
_PUBLIC_MODE: Final = 0o644
_KEY_ID: Final = re.compile(KEY_ID_PATTERN)
_KEY_ID_FORM: Final = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
# Stands in for the signature while the rest of a new document is checked.
_PLACEHOLDER_SIGNATURE: Final = base64.b64encode(bytes(_ED25519_SIGNATURE_BYTES)).decode("ascii")

SignatureStatus = Literal["valid", "unsigned", "untrusted", "mismatch", "invalid"]


class SkillSignature(BaseModel):
    """A signature of one skill version: the JSON document that travels with the package."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    format: Literal[1] = Field(description="The document's format; only 1 exists.")
    name: str = Field(
        pattern=SKILL_REFERENCE_PATTERN, max_length=255, description="The signed skill's name."
    )
    version: str = Field(
        pattern=_VERSION_PATTERN, description="The signed version: the package's sha256 (hex)."
    )
    key_id: str = Field(pattern=KEY_ID_PATTERN, description="Which key signed it.")
    signature: str = Field(
        min_length=_SIGNATURE_B64_CHARS,
        max_length=_SIGNATURE_B64_CHARS,
        description="Base64 of the 64-byte Ed25519 signature of `signed_message(name, version)`.",
    )
    signed_at: AwareDatetime = Field(description="When it was signed (UTC); informative only.")

    @field_validator("format", mode="before")
    @classmethod
    def _format_is_an_integer(cls, value: object) -> object:
        # A Literal compares by equality, and true == 1.0 == 1 in Python.
        if type(value) is not int:
            raise ValueError("must be the integer 1")
        return value

    @field_validator("signature")
    @classmethod
    def _signature_is_canonical_base64(cls, value: str) -> str:
        raw = _b64decode(value)
        if raw is None or len(raw) != _ED25519_SIGNATURE_BYTES:
            raise ValueError("must be the base64 of a 64-byte Ed25519 signature")
        if base64.b64encode(raw).decode("ascii") != value:
            raise ValueError("must be canonical base64")
        return value

    @field_validator("signed_at")
    @classmethod
    def _signed_at_is_utc(cls, value: datetime) -> datetime:
        if value.utcoffset() != UTC.utcoffset(None):
            raise ValueError("must be in UTC")
        return value.astimezone(UTC)

    @property
    def signature_raw(self) -> bytes:
        """The 64 signature bytes."""
        return base64.b64decode(self.signature)


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """What a signature says about one skill version (:func:`verify_signature`).

    Attributes:
        status: ``valid`` (a trusted key signed this name and version), ``unsigned`` (no
            signature), ``untrusted`` (signed by a key the settings do not list), ``mismatch``
            (the signature is for another name or version: the package changed after it was
            signed) or ``invalid`` (it does not verify under the trusted key it names).
        name: the skill's name, as the caller gave it.
        version: the version the caller computed.
        key_id: the key the signature names; None when unsigned.
        signed_name: the name the signature is for; None when unsigned.
        signed_version: the version the signature is for; None when unsigned.
    """

    status: SignatureStatus
    name: str
    version: str
    key_id: str | None = None
    signed_name: str | None = None
    signed_version: str | None = None

    @property
    def message(self) -> str:
        """What the signature says, in one line, with what to do when it is not ``valid``."""
        skill = f"skill {self.name!r} version {_short(self.version)}"
        match self.status:
            case "valid":
                return f"{skill} is signed by trusted key {self.key_id!r}"
            case "unsigned":
                return (
                    f"{skill} is not signed: sign it with `skillweave skills sign` and a key "
                    "skills.trust.keys lists"
                )
            case "untrusted":
                return (
                    f"{skill} is signed by key {self.key_id!r}, which skills.trust.keys does "
                    "not trust: add it or re-sign with a trusted key"
                )
            case "mismatch":
                return (
                    f"{skill} does not match its signature, which is for skill "
                    f"{self.signed_name!r} version {_short(self.signed_version or '')}: the "
                    "package changed after it was signed; restore the signed files or re-sign it"
                )
            case "invalid":
                return (
                    f"{skill} has a signature that does not verify under trusted key "
                    f"{self.key_id!r}: the signature or the package was tampered with; re-sign it"
                )
            case _:
                assert_never(self.status)


class TrustDecision(NamedTuple):
    """What the policy makes of a :class:`SignatureCheck` (:func:`decide`).

    Attributes:
        allowed: whether the version may be uploaded, installed, loaded or run.
        warning: one line to show (log, CLI) when it is allowed under ``unsigned: warn``.
        error: one line saying why it is refused, and what to do; None when allowed.
    """

    allowed: bool
    warning: str | None
    error: str | None


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


# --- the message and the document ---------------------------------------------------------


def signed_message(name: str, version: str) -> bytes:
    """The bytes a signature of skill `name` at `version` signs.

    ``SIGNATURE_DOMAIN``, the name's ``name_key`` and the version, separated by newlines: a
    name holds no control characters (``SKILL_REFERENCE_PATTERN``) and a version is 64 hex
    digits, so the parts cannot run into each other.
    """
    return SIGNATURE_DOMAIN + name_key(name).encode("utf-8") + b"\n" + version.encode("ascii")


def parse_signature(data: bytes | str, *, source: str = "signature") -> SkillSignature:
    """Read a signature document, strictly.

    Args:
        data: the document's JSON.
        source: where it is from, for the error (a path or a store key).

    Raises:
        SignatureError: it is over :data:`MAX_SIGNATURE_BYTES`, not JSON, or not exactly a
            :class:`SkillSignature` (a missing, extra or malformed field); one line.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_SIGNATURE_BYTES:
        raise SignatureError(f"{source}: not a skill signature: over {MAX_SIGNATURE_BYTES} bytes")
    try:
        return SkillSignature.model_validate_json(raw)
    except ValidationError as exc:
        raise SignatureError(f"{source}: not a skill signature: {_first_problem(exc)}") from None


def signature_bytes(signature: SkillSignature) -> bytes:
    """The document's JSON, as it is written to files and the store."""
    return (signature.model_dump_json(indent=2) + "\n").encode("utf-8")


def signature_path(path: Path) -> Path:
    """Where the signature of `path` lives: ``<folder>/.skillweave-signature.json`` for a skill
    folder, ``<file>.sig.json`` for a ZIP file."""
    if path.is_dir():
        return path / SIGNATURE_FILE
    return path.with_name(path.name + SIGNATURE_SUFFIX)


def read_signature(path: Path) -> SkillSignature | None:
    """The signature of a skill folder or ZIP file (:func:`signature_path`); None if it has none.

    The document is read without following a symlink and no further than the size cap.

    Raises:
        SignatureError: the document cannot be read or is malformed.
    """
    where = signature_path(path)
    data = _read_capped(where, MAX_SIGNATURE_BYTES, what="skill signature")
    return None if data is None else parse_signature(data, source=str(where))


def write_signature(path: Path, signature: SkillSignature) -> Path:
    """Write `signature` for a skill folder or ZIP file (:func:`signature_path`), atomically.

    Returns:
        The document's path.

    Raises:
        SignatureError: it cannot be written.
    """
    where = signature_path(path)
    _write_atomic(where, signature_bytes(signature), mode=_PUBLIC_MODE)
    return where


# --- keys ---------------------------------------------------------------------------------


def generate_keypair(*, passphrase: bytes | None = None) -> tuple[bytes, str]:
    """A new Ed25519 key pair.

    Args:
        passphrase: encrypts the private key when given (non-empty).

    Returns:
        The private key as PKCS#8 PEM, and the public key as ``skills.trust.keys`` holds it
        (base64 of its 32 raw bytes).
    """
    key = Ed25519PrivateKey.generate()
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption()
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    return pem, public_key_b64(key)


def write_private_key(path: Path, pem: bytes) -> Path:
    """Write a private key to a new file with mode 0600; never over an existing file.

    Raises:
        SignatureError: `path` exists (a key is never overwritten) or cannot be written.
    """
    try:
        # Linked into place: never over a file, nor through a link someone left at `path`.
        write_atomic(path, pem, mode=_PRIVATE_MODE, exclusive=True)
    except FileExistsError:
        raise SignatureError(f"{path} exists; a key file is never overwritten") from None
    except OSError as exc:
        raise SignatureError(f"cannot write key file {path}: {exc.strerror}") from None
    return path


def load_private_key(path: Path, *, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    """Read an Ed25519 private key (PKCS#8 PEM) written by :func:`write_private_key`.

    Args:
        path: the key file.
        passphrase: decrypts an encrypted key; ignored for a key that is not encrypted.

    Raises:
        SignatureError: the file cannot be read, is not an Ed25519 PEM private key, is
            encrypted and no passphrase was given, or the passphrase is wrong; one line.
    """
    data = _read_capped(path, MAX_KEY_FILE_BYTES, what="key file", follow=True)
    if data is None:
        raise SignatureError(f"no key file {path}")
    encrypted = b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data
    if encrypted and not passphrase:
        raise SignatureError(
            f"key file {path} is encrypted: set SKILLWEAVE_SIGNING_PASSPHRASE to its passphrase"
        )
    try:
        key = serialization.load_pem_private_key(data, password=passphrase if encrypted else None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        hint = "wrong passphrase, or " if encrypted else ""
        raise SignatureError(
            f"cannot read key file {path}: {hint}not a PEM private key "
            "(make one with `skillweave skills keygen`)"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"key file {path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def public_key_b64(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The public key (of a private key) as ``skills.trust.keys`` holds it: base64, 32 bytes."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def key_fingerprint(key: Ed25519PrivateKey | Ed25519PublicKey | str) -> str:
    """The default key id: the first 16 hex digits of the sha256 of the raw public key (of a
    key, or given as ``skills.trust.keys`` holds it)."""
    raw = base64.b64decode(key if isinstance(key, str) else public_key_b64(key))
    return hashlib.sha256(raw).hexdigest()[:_FINGERPRINT_HEX]


def validate_key_id(key_id: str) -> str:
    """Check that `key_id` can name a key (:data:`KEY_ID_PATTERN`) and return it.

    Raises:
        ConfigError: it cannot.
    """
    if not _KEY_ID.fullmatch(key_id):
        raise ConfigError(f"key id {key_id[:80]!r} is not valid: use {_KEY_ID_FORM}")
    return key_id


def trusted_keys(settings: TrustSettings) -> dict[str, Ed25519PublicKey]:
    """The keys ``skills.trust.keys`` trusts, every one checked before any is used.

    Raises:
        ConfigError: a key id is not valid or a key is not the base64 of a 32-byte Ed25519
            public key; the message names the key id.
    """
    return _decode_keys(settings.keys)


# --- signing and verifying ----------------------------------------------------------------


def sign_version(
    key: Ed25519PrivateKey,
    *,
    name: str,
    version: str,
    key_id: str | None = None,
    now: datetime | None = None,
) -> SkillSignature:
    """Sign skill `name` at `version`.

    Args:
        key: the signing key.
        name: the skill's name.
        version: its version (64 hex digits).
        key_id: names the key in the document; its fingerprint when not given.
        now: the signing time (UTC); the current time when not given.

    Raises:
        SignatureError: the name or version cannot be signed (malformed).
        ConfigError: the key id is not valid.
    """
    key_id = validate_key_id(key_id) if key_id is not None else key_fingerprint(key)
    document = {
        "format": _FORMAT,
        "name": name,
        "version": version,
        "key_id": key_id,
        "signature": _PLACEHOLDER_SIGNATURE,
        "signed_at": (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0),
    }
    try:
        unsigned = SkillSignature.model_validate(document)
    except ValidationError as exc:
        raise SignatureError(f"cannot sign skill {name[:80]!r}: {_first_problem(exc)}") from None
    # Sign what was checked: the name and version are well-formed by now.
    raw = key.sign(signed_message(unsigned.name, unsigned.version))
    return unsigned.model_copy(update={"signature": base64.b64encode(raw).decode("ascii")})


def verify_signature(
    signature: SkillSignature | None,
    *,
    name: str,
    version: str,
    trusted: Mapping[str, str] | Mapping[str, Ed25519PublicKey],
) -> SignatureCheck:
    """What `signature` says about skill `name` at `version`, given the trusted keys.

    A signature for another name (compared by ``name_key``) or version is a ``mismatch``
    before anything else, whoever signed it: the package is not the one that was signed.

    Args:
        signature: the version's signature document, or None when it has none.
        name: the skill's name, as the call site knows it.
        version: the version the call site computed from the package's bytes.
        trusted: key id → public key, as :func:`trusted_keys` returns them or as
            ``skills.trust.keys`` holds them (base64); all are checked first.

    Raises:
        ConfigError: a trusted key is malformed (named).
    """
    keys = _decode_keys(trusted)
    if signature is None:
        return SignatureCheck("unsigned", name, version)
    found = {
        "key_id": signature.key_id,
        "signed_name": signature.name,
        "signed_version": signature.version,
    }
    if name_key(signature.name) != name_key(name) or signature.version != version:
        return SignatureCheck("mismatch", name, version, **found)
    public = keys.get(signature.key_id)
    if public is None:
        return SignatureCheck("untrusted", name, version, **found)
    try:
        public.verify(signature.signature_raw, signed_message(name, version))
    except InvalidSignature:
        return SignatureCheck("invalid", name, version, **found)
    return SignatureCheck("valid", name, version, **found)


def decide(check: SignatureCheck, policy: TrustSettings) -> TrustDecision:
    """What the trust policy makes of `check`.

    ``valid`` is allowed; ``mismatch`` and ``invalid`` are refused whatever the policy;
    ``unsigned`` and ``untrusted`` follow ``policy.unsigned``: allowed, allowed with a warning,
    or refused.
    """
    match check.status:
        case "valid":
            return TrustDecision(True, None, None)
        case "mismatch" | "invalid":
            return TrustDecision(False, None, check.message)
        case "unsigned" | "untrusted":
            match policy.unsigned:
                case "allow":
                    return TrustDecision(True, None, None)
                case "warn":
                    return TrustDecision(
                        True, f"{check.message} (skills.trust.unsigned=warn)", None
                    )
                case "refuse":
                    return TrustDecision(
                        False,
                        None,
                        f"{check.message}; skills.trust.unsigned=refuse accepts only versions a "
                        "trusted key signed",
                    )
                case _:
                    assert_never(policy.unsigned)
        case _:
            assert_never(check.status)


def check_trust(
    signature: SkillSignature | None, *, name: str, version: str, policy: TrustSettings
) -> str | None:
    """Verify and decide in one call: for the upload, install, load and execution checks.

    Returns:
        The warning to show when the version is allowed with one, else None.

    Raises:
        SignatureError: the policy refuses the version (`status` says why); one line.
        ConfigError: a trusted key is malformed (named).
    """
    check = verify_signature(signature, name=name, version=version, trusted=trusted_keys(policy))
    decision = decide(check, policy)
    if not decision.allowed:
        raise SignatureError(decision.error or check.message, status=check.status)
    return decision.warning


# --- skill folders and ZIP files ----------------------------------------------------------


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
    keys = _decode_keys(trusted)
    checked = []
    for folder in skill_tree(root):
        skill = folder_identity(folder)
        signature = read_signature(folder)
        check = verify_signature(signature, name=skill.name, version=skill.version, trusted=keys)
        checked.append((skill, check))
    return checked


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
    keys = _decode_keys(trusted)
    skill = archive_identity(path, limits=limits)
    signature = read_signature(path)
    return skill, verify_signature(signature, name=skill.name, version=skill.version, trusted=keys)


# --- helpers ------------------------------------------------------------------------------


def _short(version: str) -> str:
    return f"{version[:_SHORT_VERSION]}…" if len(version) > _SHORT_VERSION else repr(version)


_PATTERN_FORMS: Final = {
    "name": "must be a skill name: 1-255 characters, no '/', '\\' or control characters",
    "version": "must be 64 lowercase hex digits (a package's sha256)",
    "key_id": f"must be {_KEY_ID_FORM}",
}


def _first_problem(exc: ValidationError) -> str:
    """The first problem of a document, in one line, in words rather than regular expressions."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    reason = " ".join(str(first["msg"]).split())
    if first["type"] == "string_pattern_mismatch" and where in _PATTERN_FORMS:
        reason = _PATTERN_FORMS[where]
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where + ': ' if where else ''}{reason}{more}"


def _b64decode(value: str) -> bytes | None:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def _decode_keys(
    trusted: Mapping[str, str] | Mapping[str, Ed25519PublicKey],
) -> dict[str, Ed25519PublicKey]:
    keys: dict[str, Ed25519PublicKey] = {}
    for key_id, value in trusted.items():
        if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
            raise ConfigError(
                f"skills.trust.keys: key id {str(key_id)[:80]!r} is not valid: use {_KEY_ID_FORM}"
            )
        if isinstance(value, Ed25519PublicKey):
            keys[key_id] = value
            continue
        raw = _b64decode(value.strip()) if isinstance(value, str) else None
        if raw is None or len(raw) != _ED25519_PUBLIC_BYTES:
            raise ConfigError(
                f"skills.trust.keys[{key_id!r}] is not an Ed25519 public key (the base64 of 32"
                " bytes): set it to the key `skillweave skills keygen` printed"
            )
        try:
            keys[key_id] = Ed25519PublicKey.from_public_bytes(raw)
        except ValueError:
            raise ConfigError(
                f"skills.trust.keys[{key_id!r}] is not a valid Ed25519 public key"
            ) from None
    return keys


def _read_capped(path: Path, cap: int, *, what: str, follow: bool = False) -> bytes | None:
    """A small regular file's bytes, refused over `cap`; None when there is no such file.

    A symlink is followed only when `follow` says so: a signature sits in a folder anyone may
    have written, while a key file is one the user named (a mounted secret is often a link).
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SignatureError(f"cannot read {what} {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SignatureError(f"{what} {path} is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= cap and (chunk := os.read(fd, cap + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise SignatureError(f"cannot read {what} {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise SignatureError(f"{what} {path} is over {cap} bytes")
    return data


def _write_atomic(path: Path, data: bytes, *, mode: int) -> None:
    try:
        write_atomic(path, data, mode=mode)
    except OSError as exc:
        raise SignatureError(f"cannot write {path}: {exc.strerror}") from None
