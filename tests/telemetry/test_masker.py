"""The secret masker: forms, overlapping and nested secrets, cut text, and streams that split
a secret across chunks (the result never depends on where a stream was cut)."""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from urllib.parse import quote

import pytest

from skillweave.telemetry.masker import MASK, MIN_SECRET_CHARS, SecretMasker

SECRET = "sk-live-7f3a9c1e"


def _reference(data: bytes, patterns: list[bytes]) -> bytes:
    """Masking the slow, obvious way: every byte any occurrence covers, each contiguous
    covered stretch as one MASK."""
    covered = [False] * len(data)
    for pattern in patterns:
        for at in range(len(data) - len(pattern) + 1):
            if data[at : at + len(pattern)] == pattern:
                covered[at : at + len(pattern)] = [True] * len(pattern)
    out = bytearray()
    for at, byte in enumerate(data):
        if not covered[at]:
            out.append(byte)
        elif at == 0 or not covered[at - 1]:
            out += MASK.encode()
    return bytes(out)


def _streamed(masker: SecretMasker, data: bytes, cuts: list[int], *, cut: bool = False) -> bytes:
    stream = masker.stream()
    out = b""
    start = 0
    for end in [*sorted(cuts), len(data)]:
        out += stream.feed(data[start:end])
        start = end
    return out + stream.finish(cut=cut)


def test_the_raw_value_is_masked_in_text_and_bytes() -> None:
    masker = SecretMasker([SECRET])
    assert masker.mask_text(f"key={SECRET}; again {SECRET}.") == "key=***; again ***."
    assert masker.mask_bytes(f"key={SECRET}\n".encode()) == b"key=***\n"
    assert masker.mask_text("nothing here") == "nothing here"


def test_a_secret_that_is_a_prefix_of_another_never_leaves_the_longer_ones_tail() -> None:
    masker = SecretMasker(["abcd1234", "abcd12345678"])
    assert masker.mask_text("x abcd12345678 y abcd1234 z") == "x *** y *** z"
    # In either order of registration.
    assert SecretMasker(["abcd12345678", "abcd1234"]).mask_text("abcd123456789") == "***9"


def test_overlapping_secrets_are_masked_as_one_stretch() -> None:
    masker = SecretMasker(["alpha-beta", "beta-gamma"])
    assert masker.mask_text("<alpha-beta-gamma>") == "<***>"
    # A secret next to itself, or overlapping itself, leaves nothing of it either.
    assert SecretMasker(["abab-abab"]).mask_text("abab-abab-abab-abab!") == "***!"
    assert SecretMasker(["aaaa"]).mask_text("b" + "a" * 11 + "b") == "b***b"


def test_short_values_are_not_masked() -> None:
    masker = SecretMasker(["abc", "", "1"])
    assert not masker
    assert masker.mask_text("abc 1") == "abc 1"
    assert SecretMasker(["x" * MIN_SECRET_CHARS]).mask_text("xxxx") == MASK


@pytest.mark.parametrize(
    "shown",
    [
        pytest.param(lambda s: json.dumps({"key": s}), id="json"),
        pytest.param(lambda s: f"https://host/x?key={quote(s, safe='')}", id="url"),
        pytest.param(lambda s: base64.b64encode(s.encode()).decode(), id="base64-alone"),
        pytest.param(
            lambda s: "Basic " + base64.b64encode(f"user:{s}".encode()).decode(), id="basic-1"
        ),
        pytest.param(
            lambda s: "Basic " + base64.b64encode(f"me:{s}:x".encode()).decode(), id="basic-2"
        ),
        pytest.param(
            lambda s: base64.urlsafe_b64encode(f"ab{s}".encode()).decode(), id="base64url"
        ),
    ],
)
def test_common_encodings_are_masked(shown: object) -> None:
    secret = 'p@ss/w"rd+é~?>>?' + SECRET  # characters every encoding changes
    text = shown(secret)  # type: ignore[operator]
    masked = SecretMasker([secret]).mask_text(text)
    assert MASK in masked
    for form in (secret, json.dumps(secret)[1:-1], quote(secret, safe="")):
        assert form not in masked
    # Of a base64 form, at most the characters shared with a neighbour byte stay.
    encoded = base64.b64encode(secret.encode()).decode()
    assert encoded[4:-4] not in masked


ENCODED_FORMS = {
    "hex": lambda s: s.encode().hex(),
    "HEX": lambda s: s.encode().hex().upper(),
    "base32": lambda s: base64.b32encode(s.encode()).decode(),
    "base32-unpadded": lambda s: base64.b32encode(s.encode()).decode().rstrip("="),
    "reversed": lambda s: s[::-1],
    "upper": lambda s: s.upper(),
    "lower": lambda s: s.lower(),
}


@pytest.mark.parametrize("form", sorted(ENCODED_FORMS))
def test_hex_base32_reversed_and_case_folded_forms_are_masked(form: str) -> None:
    secret = "Sk-Live-7f3A9c1E-pad"  # mixed case, and 20 bytes: base32 without padding
    for value in (secret, secret + "xy"):  # ... and with it
        shown = ENCODED_FORMS[form](value)
        assert shown != value or form in ("upper", "lower")
        masker = SecretMasker([value])
        assert masker.mask_text(f"<{shown}>") == "<***>", shown
        assert masker.mask_bytes(f"out: {shown}\n".encode()) == b"out: ***\n"


@pytest.mark.parametrize("form", sorted(ENCODED_FORMS))
def test_each_encoded_form_is_caught_across_every_chunk_boundary(form: str) -> None:
    secret = "Sk-Live-7f3A9c1E-pad1"
    masker = SecretMasker([secret])
    shown = ENCODED_FORMS[form](secret).encode()
    data = b"before " + shown + b" middle " + shown + b" after"
    whole = masker.mask_bytes(data)
    assert whole == b"before *** middle *** after"
    for boundary in range(len(data) + 1):
        assert _streamed(masker, data, [boundary]) == whole, boundary
    for first in range(0, len(data), 7):  # two cuts, one inside each copy
        assert _streamed(masker, data, [first, len(data) - 1 - first // 2]) == whole, first


def test_a_hex_dump_hides_the_secret_inside_a_longer_hex_string() -> None:
    masker = SecretMasker([SECRET])
    dump = ("00ff" + SECRET.encode().hex() + "0a").upper()
    assert masker.mask_text(dump) == "00FF***0A"


def test_a_file_masks_the_encoded_forms_in_place(tmp_path: Path) -> None:
    masker = SecretMasker([SECRET])
    lines = [ENCODED_FORMS[form](SECRET) for form in sorted(ENCODED_FORMS)] * 50
    path = tmp_path / "log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    masker.mask_file(path, chunk_bytes=13)
    assert path.read_text(encoding="utf-8") == "***\n" * len(lines)


def test_a_cut_text_hides_a_trailing_partial_secret() -> None:
    masker = SecretMasker([SECRET])
    cut_here = f"output ends in {SECRET[:9]}"
    assert masker.mask_text(cut_here, cut=True) == "output ends in ***"
    assert masker.mask_text(cut_here) == cut_here  # not cut: a whole text is taken as is
    # Under MIN_SECRET_CHARS characters of it, nothing is masked.
    assert masker.mask_text(f"ends in {SECRET[:3]}", cut=True) == f"ends in {SECRET[:3]}"


def test_a_stream_catches_a_secret_split_at_every_possible_chunk_boundary() -> None:
    masker = SecretMasker([SECRET])
    data = f"before {SECRET} after".encode()
    whole = masker.mask_bytes(data)
    assert whole == b"before *** after"
    for boundary in range(len(data) + 1):
        assert _streamed(masker, data, [boundary]) == whole, boundary


def test_streams_match_whole_masking_and_the_reference_under_random_cuts() -> None:
    rng = random.Random(20)
    secrets = ["abcd1234", "abcd12345678", "1234abcd", "zzzz", "zz-zz-zz"]
    masker = SecretMasker(secrets)
    alphabet = b"abcdz1234- "
    for _ in range(300):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 120)))
        # Plant secrets, some straddling or overlapping each other.
        for _ in range(rng.randrange(0, 4)):
            at = rng.randrange(0, len(data) + 1)
            data = data[:at] + rng.choice(secrets).encode() + data[at:]
        # The raw and reversed forms are the only ones this alphabet can spell.
        expected = _reference(data, [f.encode() for s in secrets for f in (s, s[::-1])])
        assert masker.mask_bytes(data) == expected
        assert masker.mask_text(data.decode()) == expected.decode()
        cuts = [rng.randrange(0, len(data) + 1) for _ in range(rng.randrange(0, 8))]
        assert _streamed(masker, data, cuts) == expected, (data, cuts)


def test_a_cut_stream_hides_its_trailing_partial_secret_however_it_was_chunked() -> None:
    masker = SecretMasker([SECRET])
    data = f"xx {SECRET} yy {SECRET[:10]}".encode()
    for boundary in range(len(data) + 1):
        assert _streamed(masker, data, [boundary], cut=True) == b"xx *** yy ***"


def test_a_file_is_masked_in_place_in_small_chunks(tmp_path: Path) -> None:
    masker = SecretMasker([SECRET, SECRET + "-longer"])
    filler = b"0123456789" * 7
    data = b"".join(
        filler[: 1 + i % 50] + SECRET.encode() + b"-longer" * (i % 2) for i in range(200)
    )
    path = tmp_path / "log"
    path.write_bytes(data + b"\n" + SECRET[:6].encode())
    size = masker.mask_file(path, cut=True, chunk_bytes=17)
    masked = path.read_bytes()
    assert size == len(masked)
    assert masked == masker.mask_bytes(data) + b"\n" + MASK.encode()
    assert SECRET.encode() not in masked
    assert masked.count(MASK.encode()) == 201


def test_a_masker_without_secrets_passes_everything_through(tmp_path: Path) -> None:
    masker = SecretMasker()
    stream = masker.stream()
    assert stream.feed(b"abc") == b"abc"
    assert stream.finish(cut=True) == b""
    path = tmp_path / "log"
    path.write_bytes(b"unchanged")
    assert masker.mask_file(path) == 9
    assert path.read_bytes() == b"unchanged"
