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
``sign`` and ``verify`` commands (``skillweave.cli.trust``) are built on this package.

Written on the ``cryptography`` library's Ed25519; only the document, the message and the
policy are ours. The modules, lowest first:

* ``_capped_read``: bounded reads of signature and key files (no planted symlinks).
* ``_signing_keys``: Ed25519 key files, the public key's text form, key ids, trusted keys.
* ``_document``: the signature document, the message it signs, signing a version, reading and
  writing a document beside a folder or ZIP file.
* ``_verdict``: what a signature says (:class:`SignatureCheck`) and what the policy makes of it
  (:class:`TrustDecision`, :func:`check_trust`).
* ``_targets``: signing and verifying a skill folder tree or a ZIP file on disk.
"""

from skillweave.skills.signing._document import (
    MAX_SIGNATURE_BYTES,
    SIGNATURE_DOMAIN,
    SIGNATURE_FILE,
    SIGNATURE_SUFFIX,
    SkillSignature,
    parse_signature,
    read_signature,
    sign_version,
    signature_bytes,
    signature_path,
    signed_message,
    write_signature,
)
from skillweave.skills.signing._signing_keys import (
    KEY_ID_PATTERN,
    MAX_KEY_FILE_BYTES,
    generate_keypair,
    key_fingerprint,
    load_private_key,
    public_key_b64,
    trusted_keys,
    validate_key_id,
    write_private_key,
)
from skillweave.skills.signing._targets import (
    ReplacedSignature,
    SignedSkill,
    archive_identity,
    folder_identity,
    replaced_trusted_signature,
    sign_archive,
    sign_folder,
    skill_tree,
    verify_archive,
    verify_folder,
)
from skillweave.skills.signing._verdict import (
    SignatureCheck,
    SignatureStatus,
    TrustDecision,
    check_trust,
    decide,
    verify_signature,
)

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
