"""Skill signatures: a version signed with Ed25519 verifies; any change to the package, the
name or the signature is refused whatever the policy; unsigned and untrusted follow it;
documents and trusted keys are read strictly."""

from __future__ import annotations

import base64
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillweave.config import TrustSettings
from skillweave.errors import ConfigError, SignatureError
from skillweave.skills.package import build_package
from skillweave.skills.signing import (
    MAX_SIGNATURE_BYTES,
    SIGNATURE_FILE,
    SignatureCheck,
    SkillSignature,
    archive_identity,
    check_trust,
    decide,
    folder_identity,
    generate_keypair,
    key_fingerprint,
    load_private_key,
    parse_signature,
    public_key_b64,
    read_signature,
    sign_archive,
    sign_folder,
    sign_version,
    signature_bytes,
    signed_message,
    trusted_keys,
    verify_archive,
    verify_folder,
    verify_signature,
    write_private_key,
    write_signature,
)
from skillweave.skills.stored import StoredSkills
from skillweave.skills.versioning import skill_version
from skillweave.storage import keys
from skillweave.storage.local import LocalArtifactStore
from tests.conftest import write_skill

SIGNED_AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
VERSION = "ab" * 32


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture
def trusted(key: Ed25519PrivateKey) -> dict[str, str]:
    return {"ops-2026": public_key_b64(key)}


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return write_skill(
        tmp_path / "pdf",
        description="Fill PDF forms. Use when a PDF form must be filled.",
        files={
            "scripts/fill.py": "print('filled')\n",
            "references/forms.md": "# Forms\n",
            "assets/logo.bin": bytes(range(256)),
        },
    )


def _check(folder: Path, trusted: dict[str, str]) -> SignatureCheck:
    ((_, check),) = verify_folder(folder, trusted=trusted)
    return check


def _document(key: Ed25519PrivateKey) -> dict[str, object]:
    signature = sign_version(key, name="pdf", version=VERSION, key_id="ops-2026", now=SIGNED_AT)
    return json.loads(signature_bytes(signature))


# --- round trip --------------------------------------------------------------------------


def test_a_signed_folder_verifies_and_the_signature_does_not_change_its_version(
    skill: Path, key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    before = skill_version(skill)

    ((signed, signature),) = sign_folder(skill, key, key_id="ops-2026", now=SIGNED_AT)

    assert (skill / SIGNATURE_FILE).is_file()
    assert skill_version(skill) == before == signed.version == signature.version
    assert signature.name == "pdf"
    assert read_signature(skill) == signature
    check = _check(skill, trusted)
    assert check.status == "valid"
    assert check.key_id == "ops-2026"
    assert decide(check, TrustSettings(unsigned="refuse")).allowed


def test_the_document_round_trips_and_its_store_key_sits_beside_the_package(
    key: Ed25519PrivateKey,
) -> None:
    signature = sign_version(key, name="pdf", version=VERSION, key_id="ops-2026", now=SIGNED_AT)
    data = signature_bytes(signature)

    assert parse_signature(data) == signature
    assert json.loads(data)["signed_at"] == "2026-03-01T12:00:00Z"
    assert json.loads(data)["format"] == 1
    assert keys.skill_signature_key("pdf", VERSION) == f"skills/pdf/{VERSION}.sig.json"
    assert keys.skill_package_key("pdf", VERSION) == f"skills/pdf/{VERSION}.zip"


def test_the_key_id_defaults_to_the_public_keys_fingerprint(key: Ed25519PrivateKey) -> None:
    signature = sign_version(key, name="pdf", version=VERSION)
    assert signature.key_id == key_fingerprint(key) == key_fingerprint(public_key_b64(key))
    assert len(signature.key_id) == 16
    int(signature.key_id, 16)


def test_names_are_compared_as_everywhere_else(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    signature = sign_version(key, name="PDF", version=VERSION, key_id="ops-2026")
    check = verify_signature(signature, name="pdf", version=VERSION, trusted=trusted)
    assert check.status == "valid"
    assert signed_message("PDF", VERSION) == signed_message("pdf", VERSION)
    assert signed_message("pdf", VERSION).startswith(b"skillweave skill signature v1\n")


# --- tampering ---------------------------------------------------------------------------


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda s: _flip_last_byte(s / "SKILL.md"), id="SKILL.md"),
        pytest.param(lambda s: _flip_last_byte(s / "scripts/fill.py"), id="script"),
        pytest.param(lambda s: _flip_last_byte(s / "references/forms.md"), id="reference"),
        pytest.param(lambda s: _flip_last_byte(s / "assets/logo.bin"), id="binary asset"),
        pytest.param(lambda s: (s / "scripts/extra.py").write_text("x\n"), id="added file"),
        pytest.param(lambda s: (s / "references/forms.md").unlink(), id="removed file"),
        pytest.param(
            lambda s: (s / "scripts/fill.py").rename(s / "scripts/fil1.py"), id="renamed file"
        ),
    ],
)
def test_any_change_to_the_package_is_a_mismatch_refused_whatever_the_policy(
    skill: Path, key: Ed25519PrivateKey, trusted: dict[str, str], tamper: object
) -> None:
    sign_folder(skill, key, key_id="ops-2026")

    tamper(skill)  # type: ignore[operator]

    check = _check(skill, trusted)
    assert check.status == "mismatch"
    assert check.signed_version != check.version
    decision = decide(check, TrustSettings(unsigned="allow"))
    assert not decision.allowed
    assert decision.error is not None
    assert "changed after it was signed" in decision.error
    assert "\n" not in decision.error


def test_a_signature_for_another_skill_is_a_mismatch(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    # The same bytes under another name: a signature for 'pdf' does not vouch for 'docx'.
    signature = sign_version(key, name="pdf", version=VERSION, key_id="ops-2026")
    check = verify_signature(signature, name="docx", version=VERSION, trusted=trusted)
    assert check.status == "mismatch"
    assert check.signed_name == "pdf"
    with pytest.raises(SignatureError) as caught:
        check_trust(signature, name="docx", version=VERSION, policy=TrustSettings(keys=trusted))
    assert caught.value.status == "mismatch"


def test_a_document_whose_name_was_edited_does_not_verify(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    document = _document(key)
    document["name"] = "docx"
    forged = parse_signature(json.dumps(document))
    check = verify_signature(forged, name="docx", version=VERSION, trusted=trusted)
    assert check.status == "invalid"
    assert not decide(check, TrustSettings(unsigned="allow")).allowed


def test_forged_signature_bytes_are_invalid(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    document = _document(key)
    raw = bytearray(base64.b64decode(str(document["signature"])))
    raw[0] ^= 0x01
    document["signature"] = base64.b64encode(bytes(raw)).decode()
    forged = parse_signature(json.dumps(document))

    check = verify_signature(forged, name="pdf", version=VERSION, trusted=trusted)

    assert check.status == "invalid"
    decision = decide(check, TrustSettings(unsigned="allow"))
    assert not decision.allowed
    assert "tampered" in (decision.error or "")


def test_a_signature_by_another_key_under_a_trusted_key_id_is_invalid(
    trusted: dict[str, str],
) -> None:
    impostor = Ed25519PrivateKey.generate()
    signature = sign_version(impostor, name="pdf", version=VERSION, key_id="ops-2026")
    check = verify_signature(signature, name="pdf", version=VERSION, trusted=trusted)
    assert check.status == "invalid"


def test_a_bare_signature_of_the_version_is_not_a_skill_signature(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    # Without the domain and the name, the same key's signature means nothing here.
    document = _document(key)
    document["signature"] = base64.b64encode(key.sign(VERSION.encode())).decode()
    check = verify_signature(
        parse_signature(json.dumps(document)), name="pdf", version=VERSION, trusted=trusted
    )
    assert check.status == "invalid"


def test_a_signature_by_an_unknown_key_is_untrusted(trusted: dict[str, str]) -> None:
    stranger = Ed25519PrivateKey.generate()
    signature = sign_version(stranger, name="pdf", version=VERSION, key_id="someone-else")

    check = verify_signature(signature, name="pdf", version=VERSION, trusted=trusted)

    assert check.status == "untrusted"
    assert check.key_id == "someone-else"
    assert "skills.trust.keys does not trust" in check.message


def test_no_signature_is_unsigned(skill: Path, trusted: dict[str, str]) -> None:
    assert read_signature(skill) is None
    assert _check(skill, trusted).status == "unsigned"


# --- the policy --------------------------------------------------------------------------

_POLICY_MATRIX = [
    # status, unsigned policy, allowed, warns
    ("valid", "allow", True, False),
    ("valid", "warn", True, False),
    ("valid", "refuse", True, False),
    ("unsigned", "allow", True, False),
    ("unsigned", "warn", True, True),
    ("unsigned", "refuse", False, False),
    ("untrusted", "allow", True, False),
    ("untrusted", "warn", True, True),
    ("untrusted", "refuse", False, False),
    ("mismatch", "allow", False, False),
    ("mismatch", "warn", False, False),
    ("mismatch", "refuse", False, False),
    ("invalid", "allow", False, False),
    ("invalid", "warn", False, False),
    ("invalid", "refuse", False, False),
]


@pytest.mark.parametrize(("status", "policy", "allowed", "warns"), _POLICY_MATRIX)
def test_decide(status: str, policy: str, allowed: bool, warns: bool) -> None:
    check = SignatureCheck(
        status,  # type: ignore[arg-type]
        "pdf",
        VERSION,
        key_id=None if status == "unsigned" else "ops-2026",
        signed_name=None if status == "unsigned" else "pdf",
        signed_version=None if status == "unsigned" else "cd" * 32,
    )

    decision = decide(check, TrustSettings(unsigned=policy))  # type: ignore[arg-type]

    assert decision.allowed is allowed
    assert (decision.warning is not None) is warns
    assert (decision.error is None) is allowed
    for line in (decision.warning, decision.error):
        assert line is None or ("\n" not in line and "'pdf'" in line and "abababababab" in line)


def test_check_trust_returns_the_warning_or_raises_the_refusal() -> None:
    stranger = Ed25519PrivateKey.generate()
    signature = sign_version(stranger, name="pdf", version=VERSION, key_id="someone")
    warning = check_trust(signature, name="pdf", version=VERSION, policy=TrustSettings())
    assert warning is not None
    assert "'someone', which skills.trust.keys does not trust" in warning
    assert check_trust(None, name="pdf", version=VERSION, policy=TrustSettings()) is not None
    allow = TrustSettings(unsigned="allow")
    assert check_trust(None, name="pdf", version=VERSION, policy=allow) is None
    with pytest.raises(SignatureError) as caught:
        check_trust(None, name="pdf", version=VERSION, policy=TrustSettings(unsigned="refuse"))
    assert caught.value.status == "unsigned"
    assert "skills.trust.unsigned=refuse" in str(caught.value)


def test_check_trust_of_a_valid_signature_returns_no_warning(
    key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    signature = sign_version(key, name="pdf", version=VERSION, key_id="ops-2026")
    policy = TrustSettings(keys=trusted, unsigned="refuse")
    assert check_trust(signature, name="pdf", version=VERSION, policy=policy) is None


# --- trusted keys ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key_id", "value"),
    [
        ("ops-2026", "not base64!"),
        ("ops-2026", base64.b64encode(bytes(31)).decode()),
        ("ops-2026", base64.b64encode(bytes(33)).decode()),
        ("ops-2026", ""),
        ("ops-2026", "ÄÖÜ"),
        ("bad id", base64.b64encode(bytes(32)).decode()),
    ],
)
def test_a_malformed_trusted_key_is_a_config_error_naming_it(key_id: str, value: str) -> None:
    good = public_key_b64(Ed25519PrivateKey.generate())
    settings = TrustSettings(keys={"good": good, key_id: value}, unsigned="allow")

    with pytest.raises(ConfigError) as caught:
        trusted_keys(settings)

    message = str(caught.value)
    assert repr(key_id) in message
    assert "\n" not in message
    # Fail closed: nothing is judged, not even an unsigned version under `allow`.
    with pytest.raises(ConfigError):
        check_trust(None, name="pdf", version=VERSION, policy=settings)
    with pytest.raises(ConfigError):
        verify_signature(None, name="pdf", version=VERSION, trusted=settings.keys)


def test_trusted_keys_decodes_every_key(trusted: dict[str, str]) -> None:
    decoded = trusted_keys(TrustSettings(keys=trusted))
    assert list(decoded) == ["ops-2026"]
    assert public_key_b64(decoded["ops-2026"]) == trusted["ops-2026"]


# --- malformed documents -----------------------------------------------------------------


def _with(key: Ed25519PrivateKey, **changes: object) -> str:
    document = _document(key)
    for field, value in changes.items():
        if value is ...:
            del document[field]
        else:
            document[field] = value
    return json.dumps(document)


def _non_canonical(key: Ed25519PrivateKey) -> str:
    signature = str(_document(key)["signature"])
    # The last character before '==' carries 4 unused bits; setting one keeps the bytes.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet[alphabet.index(signature[-3]) ^ 0x01]
    return signature[:-3] + last + "=="


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(lambda k: b"", "Invalid JSON", id="empty"),
        pytest.param(lambda k: b"{", "Invalid JSON", id="truncated"),
        pytest.param(lambda k: b"\xff\xfe{}", "Invalid JSON", id="not UTF-8"),
        pytest.param(lambda k: b"[]", "object", id="array"),
        pytest.param(lambda k: b"null", "object", id="null"),
        pytest.param(lambda k: _with(k, version=...), "version", id="missing field"),
        pytest.param(lambda k: _with(k, extra="x"), "extra", id="extra field"),
        pytest.param(lambda k: _with(k, format=2), "format", id="format 2"),
        pytest.param(lambda k: _with(k, format=True), "format", id="format true"),
        pytest.param(lambda k: _with(k, format="1"), "format", id="format string"),
        pytest.param(lambda k: _with(k, version="AB" * 32), "version", id="uppercase version"),
        pytest.param(lambda k: _with(k, version="ab" * 31), "version", id="short version"),
        pytest.param(lambda k: _with(k, name="a/b"), "name", id="slash in name"),
        pytest.param(lambda k: _with(k, name="a\nb"), "name", id="newline in name"),
        pytest.param(lambda k: _with(k, name=""), "name", id="empty name"),
        pytest.param(lambda k: _with(k, name=["pdf"]), "name", id="list name"),
        pytest.param(lambda k: _with(k, key_id="ops 2026"), "key_id", id="space in key id"),
        pytest.param(lambda k: _with(k, key_id="k" * 65), "key_id", id="long key id"),
        pytest.param(lambda k: _with(k, signature="AAAA"), "signature", id="short signature"),
        pytest.param(
            lambda k: _with(k, signature="!" * 88), "signature", id="signature not base64"
        ),
        pytest.param(
            lambda k: _with(k, signature=_non_canonical(k)), "canonical", id="non-canonical"
        ),
        pytest.param(
            lambda k: _with(k, signed_at="2026-03-01T12:00:00"), "signed_at", id="naive time"
        ),
        pytest.param(
            lambda k: _with(k, signed_at="2026-03-01T13:00:00+01:00"), "UTC", id="not UTC"
        ),
        pytest.param(lambda k: _with(k, signed_at=1767225600), "signed_at", id="epoch time"),
        pytest.param(
            lambda k: b" " * MAX_SIGNATURE_BYTES + b"{}", "over 4096 bytes", id="over the cap"
        ),
    ],
)
def test_a_malformed_document_is_one_line(
    key: Ed25519PrivateKey, make: object, expected: str
) -> None:
    data = make(key)  # type: ignore[operator]

    with pytest.raises(SignatureError) as caught:
        parse_signature(data, source="pdf/.skillweave-signature.json")

    message = str(caught.value)
    assert message.startswith("pdf/.skillweave-signature.json: not a skill signature: ")
    assert expected in message
    assert "\n" not in message
    assert caught.value.status is None


def test_a_symlinked_or_oversized_signature_file_is_refused(
    skill: Path, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(
        signature_bytes(sign_version(key, name="pdf", version=skill_version(skill)))
    )
    (skill / SIGNATURE_FILE).symlink_to(elsewhere)
    with pytest.raises(SignatureError, match="cannot read skill signature"):
        read_signature(skill)

    (skill / SIGNATURE_FILE).unlink()
    (skill / SIGNATURE_FILE).write_bytes(b"{" + b" " * (MAX_SIGNATURE_BYTES * 4) + b"}")
    with pytest.raises(SignatureError, match="over 4096 bytes"):
        read_signature(skill)


def test_a_signature_cannot_be_made_for_a_malformed_name_or_version(
    key: Ed25519PrivateKey,
) -> None:
    with pytest.raises(SignatureError, match="version: must be 64 lowercase hex digits"):
        sign_version(key, name="pdf", version="not-a-version")
    with pytest.raises(SignatureError, match="name: must be a skill name"):
        sign_version(key, name="pdf\nx", version=VERSION)
    with pytest.raises(ConfigError, match="key id"):
        sign_version(key, name="pdf", version=VERSION, key_id="no spaces please")


# --- keys --------------------------------------------------------------------------------


def test_a_private_key_is_written_0600_and_never_overwritten(tmp_path: Path) -> None:
    pem, public = generate_keypair()
    path = write_private_key(tmp_path / "signing.pem", pem)

    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public_key_b64(load_private_key(path)) == public
    with pytest.raises(SignatureError, match="never overwritten"):
        write_private_key(path, generate_keypair()[0])
    assert path.read_bytes() == pem


def test_an_encrypted_key_needs_its_passphrase(tmp_path: Path) -> None:
    pem, public = generate_keypair(passphrase=b"correct horse")
    path = write_private_key(tmp_path / "signing.pem", pem)
    assert pem.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----")

    with pytest.raises(SignatureError, match="SKILLWEAVE_SIGNING_PASSPHRASE") as missing:
        load_private_key(path)
    with pytest.raises(SignatureError, match="wrong passphrase") as wrong:
        load_private_key(path, passphrase=b"battery staple")
    for caught in (missing, wrong):
        assert "\n" not in str(caught.value)

    key = load_private_key(path, passphrase=b"correct horse")
    assert public_key_b64(key) == public
    signature = sign_version(key, name="pdf", version=VERSION, key_id="ops")
    check = verify_signature(signature, name="pdf", version=VERSION, trusted={"ops": public})
    assert check.status == "valid"


def test_a_passphrase_is_ignored_for_a_key_that_is_not_encrypted(tmp_path: Path) -> None:
    pem, public = generate_keypair()
    path = write_private_key(tmp_path / "signing.pem", pem)
    assert public_key_b64(load_private_key(path, passphrase=b"unused")) == public


@pytest.mark.parametrize(
    "content",
    [b"", b"not a key", b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"],
)
def test_a_file_that_is_not_a_key_is_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "signing.pem"
    path.write_bytes(content)
    with pytest.raises(SignatureError, match="not a PEM private key") as caught:
        load_private_key(path)
    assert "\n" not in str(caught.value)


def test_a_missing_key_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SignatureError, match="no key file"):
        load_private_key(tmp_path / "missing.pem")


# --- skill trees and ZIP packages --------------------------------------------------------


def test_a_tree_signs_each_skill_at_its_own_version(
    tmp_path: Path, key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    top = write_skill(tmp_path / "kit", files={"references/r.md": "R\n"})
    child = write_skill(top / "csv-stats", files={"scripts/stats.py": "print(1)\n"})

    signed = sign_folder(top, key, key_id="ops-2026")

    assert [skill.path for skill, _ in signed] == [top, child]
    assert [skill.name for skill, _ in signed] == ["kit", "csv-stats"]
    assert [skill.version for skill, _ in signed] == [skill_version(top), skill_version(child)]
    assert (child / SIGNATURE_FILE).is_file()
    assert [check.status for _, check in verify_folder(top, trusted=trusted)] == ["valid"] * 2

    # A child's files are its own package: changing one is the child's mismatch only.
    _flip_last_byte(child / "scripts/stats.py")
    statuses = [check.status for _, check in verify_folder(top, trusted=trusted)]
    assert statuses == ["valid", "mismatch"]


def test_a_folder_is_identified_as_the_library_loads_it(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "pdf-tools", name="PDF-Tools")
    skill = folder_identity(folder)
    assert (skill.name, skill.version) == ("PDF-Tools", skill_version(folder))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("no frontmatter\n")
    with pytest.raises(SignatureError, match="cannot load the skill"):
        folder_identity(broken)


async def test_a_zip_is_signed_at_the_version_its_upload_is_stored_under(
    tmp_path: Path, key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    top = write_skill(tmp_path / "kit", files={"scripts/run.py": "print(1)\n"})
    write_skill(top / "csv-stats")
    archive = tmp_path / "kit.zip"
    archive.write_bytes(build_package(top))

    record = await StoredSkills(LocalArtifactStore(tmp_path / "store")).add_package(
        archive.read_bytes()
    )
    skill, signature = sign_archive(archive, key, key_id="ops-2026")

    assert (skill.name, skill.version) == (record.name, record.latest)
    assert signature.version == record.latest
    assert (tmp_path / "kit.zip.sig.json").is_file()
    assert read_signature(archive) == signature
    assert verify_archive(archive, trusted=trusted)[1].status == "valid"


def test_a_rebuilt_zip_with_one_changed_byte_is_a_mismatch(
    tmp_path: Path, key: Ed25519PrivateKey, trusted: dict[str, str]
) -> None:
    top = write_skill(tmp_path / "kit", files={"scripts/run.py": "print(1)\n"})
    archive = tmp_path / "kit.zip"
    archive.write_bytes(build_package(top))
    sign_archive(archive, key, key_id="ops-2026")

    _flip_last_byte(top / "scripts/run.py")
    archive.write_bytes(build_package(top))

    assert verify_archive(archive, trusted=trusted)[1].status == "mismatch"
    assert archive_identity(archive).version == skill_version(top)


def test_a_signature_written_for_a_zip_sits_beside_it(
    tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    archive = tmp_path / "pdf.zip"
    archive.write_bytes(b"")
    signature = sign_version(key, name="pdf", version=VERSION)
    assert write_signature(archive, signature) == tmp_path / "pdf.zip.sig.json"
    assert read_signature(archive) == signature
    assert isinstance(read_signature(archive), SkillSignature)
