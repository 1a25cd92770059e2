"""The trust verdict: what a signature says about one skill version, and what the policy
(``skills.trust``) makes of it.

A call site that has a skill's name, its version and maybe a document asks
:func:`verify_signature` what the signature says (a :class:`SignatureCheck`) and :func:`decide`
what the policy makes of it, or both at once with :func:`check_trust`, which raises when the
version is refused. A signature that does not match its package (another name or version:
changed after signing) or does not verify under the trusted key it names is refused whatever
the policy says; an unsigned version, or one signed by a key the settings do not list, follows
``skills.trust.unsigned``.

Called by the upload, install, load and execution checks (``skills.admission``, the manager's
admission), the folder and ZIP checks (``_targets``) and ``skillweave skills verify``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, assert_never

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from skillweave.config import TrustSettings
from skillweave.errors import SignatureError
from skillweave.skills.names import name_key
from skillweave.skills.signing._document import SkillSignature, signed_message
from skillweave.skills.signing._signing_keys import decode_keys, trusted_keys

__all__ = [
    "SignatureCheck",
    "SignatureStatus",
    "TrustDecision",
    "check_trust",
    "decide",
    "verify_signature",
]

_SHORT_VERSION: Final = 12

SignatureStatus = Literal["valid", "unsigned", "untrusted", "mismatch", "invalid"]


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
    keys = decode_keys(trusted)
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


def _short(version: str) -> str:
    return f"{version[:_SHORT_VERSION]}…" if len(version) > _SHORT_VERSION else repr(version)
