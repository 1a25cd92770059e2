"""``skillweave skills keygen``, ``sign`` and ``verify``: skill signatures from the command line.

``keygen`` writes an Ed25519 private key (mode 0600, never over an existing file) and prints
the ``SKILLS__TRUST__KEYS`` line that makes its public key trusted. ``sign`` signs a skill
folder — the top skill and every child skill in it, each at its own version, in a hidden
``.skillweave-signature.json`` per folder — or a ZIP package at the version an upload gives it,
in ``<zip>.sig.json`` beside it; it refuses (exit 2) to replace a signature a trusted key made
with one no trusted key vouches for, unless ``--replace`` says so. ``verify`` judges the same
signatures by ``skills.trust``: exit 0 when every skill is allowed (with the policy's warning,
if any), 1 when one is refused.

A passphrase for the private key comes from ``SKILLWEAVE_SIGNING_PASSPHRASE``; nothing is
prompted, so the commands run the same in CI. The work is ``skillweave.skills.signing``'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.text import Text

from skillweave.cli.console import JsonOption, dump, err, out, shown_path
from skillweave.cli.exits import EXIT_PROBLEM, EXIT_USAGE, errors, fail
from skillweave.config import get_settings
from skillweave.skills import SKILL_FILE, PackageLimits
from skillweave.skills.signing import (
    SignatureCheck,
    SignedSkill,
    SkillSignature,
    decide,
    generate_keypair,
    key_fingerprint,
    load_private_key,
    public_key_b64,
    replaced_trusted_signature,
    sign_archive,
    sign_folder,
    signature_path,
    skill_tree,
    trusted_keys,
    validate_key_id,
    verify_archive,
    verify_folder,
    write_private_key,
)
from skillweave.terminal import terminal_safe

__all__ = ["keygen", "sign", "verify"]

PASSPHRASE_VARIABLE = "SKILLWEAVE_SIGNING_PASSPHRASE"

# The passphrase is read by the option parser from the environment only: it is hidden, so
# that no one is shown a way to put it on a command line (and in the shell's history).
PassphraseOption = Annotated[
    str | None,
    typer.Option(
        "--passphrase",
        envvar=PASSPHRASE_VARIABLE,
        hidden=True,
        show_default=False,
        help=f"The key's passphrase; set {PASSPHRASE_VARIABLE} instead.",
    ),
]
KeyIdOption = Annotated[
    str | None,
    typer.Option(
        "--key-id",
        help="The key's id in skills.trust.keys (default: the first 16 hex digits of the "
        "sha256 of the public key).",
    ),
]


def keygen(
    output: Annotated[
        Path, typer.Option("--out", help="The private key file to write (mode 0600).")
    ],
    key_id: KeyIdOption = None,
    passphrase: PassphraseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Make an Ed25519 signing key; print the SKILLS__TRUST__KEYS line that trusts it.

    The private key is encrypted when SKILLWEAVE_SIGNING_PASSPHRASE is set. An existing file
    is never overwritten.
    """
    if output.exists() or output.is_symlink():
        raise fail(f"{output} exists; a key file is never overwritten", code=EXIT_USAGE)
    named = key_id is not None
    with errors():
        if key_id is not None:
            validate_key_id(key_id)
        pem, public = generate_keypair(passphrase=_secret(passphrase))
        write_private_key(output, pem)
        key_id = key_id or key_fingerprint(public)
    setting = json.dumps({key_id: public})
    if as_json:
        dump(
            {
                "path": str(output),
                "key_id": key_id,
                "public_key": public,
                "encrypted": bool(passphrase),
                "setting": f"SKILLS__TRUST__KEYS='{setting}'",
            }
        )
        return
    encrypted = f", encrypted with {PASSPHRASE_VARIABLE}" if passphrase else ""
    err.print(
        Text(terminal_safe(f"wrote private key {shown_path(output)} (mode 0600{encrypted})")),
        soft_wrap=True,
    )
    how = f"; sign with --key-id {key_id}" if named else ""
    err.print(Text(f"trust it with the line below (merged with any keys already trusted){how}"))
    out.print(Text(f"SKILLS__TRUST__KEYS='{setting}'"), soft_wrap=True)


def sign(
    path: Annotated[Path, typer.Argument(help="A skill folder, or a skill package (ZIP).")],
    *,
    key: Annotated[Path, typer.Option("--key", help="The private key file (from keygen).")],
    key_id: KeyIdOption = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Replace a signature a trusted key made even when no trusted key vouches for "
            "the new one (another key, or an id skills.trust.keys does not give this key).",
        ),
    ] = False,
    passphrase: PassphraseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Sign a skill folder, child skills included, or a ZIP package.

    Each skill of a folder is signed at its own version, in a hidden .skillweave-signature.json
    in its folder; a ZIP at the version an upload gives it, in <zip>.sig.json beside it. A
    signature a trusted key made is replaced only by one a trusted key makes, or with --replace.
    """
    _check_exists(path)
    with errors():
        private = load_private_key(key, passphrase=_secret(passphrase))
        if not replace:
            _keep_trusted_signatures(path, private, key_id=key_id)
        if path.is_dir():
            signed = sign_folder(path, private, key_id=key_id)
        else:
            signed = [sign_archive(path, private, key_id=key_id, limits=_limits())]
        trust = get_settings().skills.trust
    if as_json:
        dump([_signed_json(skill, signature) for skill, signature in signed])
    else:
        for skill, signature in signed:
            where = shown_path(signature_path(skill.path))
            line = f"signed {skill.name} {skill.version[:12]} with key {signature.key_id} → {where}"
            out.print(Text(terminal_safe(line)), soft_wrap=True)
    used = signed[0][1].key_id
    if trust.keys.get(used) != public_key_b64(private):
        note = (
            f"note: skills.trust.keys does not trust key {used!r} with this public key; add "
            f"SKILLS__TRUST__KEYS='{json.dumps({used: public_key_b64(private)})}'"
        )
        err.print(Text(terminal_safe(note), style="yellow"), soft_wrap=True)


def verify(
    path: Annotated[Path, typer.Argument(help="A skill folder, or a skill package (ZIP).")],
    as_json: JsonOption = False,
) -> None:
    """Check signatures against skills.trust.keys and the skills.trust.unsigned policy.

    A folder's skill and each child skill in it are checked. Exit 0 when every one is
    allowed (a warning is printed when the policy warns), 1 when one is refused.
    """
    _check_exists(path)
    with errors():
        policy = get_settings().skills.trust
        keys = trusted_keys(policy)
        if path.is_dir():
            checked = verify_folder(path, trusted=keys)
        else:
            checked = [verify_archive(path, trusted=keys, limits=_limits())]
    decisions = [(skill, check, decide(check, policy)) for skill, check in checked]
    refused = any(not decision.allowed for _, _, decision in decisions)
    if as_json:
        dump(
            {
                "ok": not refused,
                "skills": [
                    {"path": str(skill.path), **_check_json(check), **decision._asdict()}
                    for skill, check, decision in decisions
                ],
            }
        )
    else:
        for skill, check, decision in decisions:
            if decision.error:
                line = f"error: {decision.error} ({shown_path(skill.path)})"
                err.print(Text(terminal_safe(line), style="bold red"), soft_wrap=True)
            elif decision.warning:
                line = f"warning: {decision.warning}"
                out.print(Text(terminal_safe(line), style="yellow"), soft_wrap=True)
            else:
                line = f"{check.status}: {check.name} {check.version[:12]}"
                if check.status == "valid":
                    line += f" signed by {check.key_id}"
                out.print(Text(terminal_safe(line), style="green"), soft_wrap=True)
    if refused:
        raise typer.Exit(EXIT_PROBLEM)


def _keep_trusted_signatures(path: Path, private: Ed25519PrivateKey, *, key_id: str | None) -> None:
    """Refuse (exit 2) to replace a signature a trusted key made with one no trusted key
    vouches for, saying which key signed it and how to sign or replace it on purpose."""
    targets = skill_tree(path) if path.is_dir() else [path]
    new_id = key_id or key_fingerprint(private)
    found = replaced_trusted_signature(
        targets, private, key_id=new_id, trusted=trusted_keys(get_settings().skills.trust)
    )
    if found is None:
        return
    how = (
        f"sign with --key-id {found.known_as[0]} (this key's id in skills.trust.keys)"
        if found.known_as
        else "sign with a key skills.trust.keys trusts and its --key-id"
    )
    raise fail(
        f"{shown_path(found.path)} is signed by trusted key {found.existing!r}, and a "
        f"signature under key {found.key_id!r}, which skills.trust.keys does not trust with "
        f"this key, would replace it: {how}, or pass --replace to replace it",
        code=EXIT_USAGE,
    )


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise fail(f"no such file or folder: {path}", code=EXIT_USAGE)
    if path.is_dir() and not (path / SKILL_FILE).is_file():
        raise fail(f"{path}: not a skill folder (no {SKILL_FILE})", code=EXIT_USAGE)


def _secret(passphrase: str | None) -> bytes | None:
    return passphrase.encode("utf-8") if passphrase else None


def _limits() -> PackageLimits:
    settings = get_settings().skills
    return PackageLimits(
        max_files=settings.package_max_files,
        max_bytes=settings.package_max_bytes,
        max_ratio=settings.package_max_ratio,
    )


def _signed_json(skill: SignedSkill, signature: SkillSignature) -> dict[str, Any]:
    return {
        "path": str(skill.path),
        "signature_path": str(signature_path(skill.path)),
        "name": skill.name,
        "version": skill.version,
        "key_id": signature.key_id,
    }


def _check_json(check: SignatureCheck) -> dict[str, Any]:
    return {
        "name": check.name,
        "version": check.version,
        "status": check.status,
        "key_id": check.key_id,
        "signed_name": check.signed_name,
        "signed_version": check.signed_version,
    }
