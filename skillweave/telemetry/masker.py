"""The one rule for hiding secret values in text and bytes: :class:`SecretMasker`.

Every place that shows or stores text a secret could be in uses it: log lines
(:mod:`skillweave.telemetry.logs`), a run's stdout and stderr, inline and stored in full
(:mod:`skillweave.sandbox.masking`, applied by the MCP manager and its front door).

**A safety net, not a boundary.** Masking catches the accidental print: a log line, a debug
dump, a library echoing its configuration. It is no containment: a script that means to leak
its secret can always encode it some way no list of forms foresees (split, XOR-ed, compressed,
encrypted, encoded twice, one character per line). What keeps a secret is giving it only to
the skill that needs it.

**What is masked.** Each value of at least :data:`MIN_SECRET_CHARS` characters, in these
forms (each form is a fixed string, so each costs one more search, nothing else):

- the raw value (its UTF-8 bytes), reversed, upper-cased and lower-cased;
- JSON string escapes of it (``json.dumps``, ASCII-only and not), when they differ;
- URL encodings of it (``quote`` with and without ``/`` kept, ``quote_plus``), when they differ;
- hexadecimal of its UTF-8 bytes, in lower and upper case (hex is byte-aligned, so it is found
  inside a longer hex dump too);
- base32 of it encoded alone, with and without its ``=`` padding;
- base64 (standard and URL-safe alphabets) of it at any offset inside a longer encoded
  string, such as ``Authorization: Basic base64(user:secret)``: for each of the three byte
  alignments, the characters that only the value's bytes determine (at least
  :data:`MIN_BASE64_CHARS` of them), and the value encoded alone with its padding. Up to two
  bytes at each end of the value share a base64 character with their neighbours and can stay
  partly visible.

Whatever bytes any occurrence of any form covers are replaced, a whole contiguous covered
stretch by one :data:`MASK`: overlapping secrets, or a secret that is a prefix of another, are
hidden whole (the longest match always wins, and nothing of a shorter one is left around it).
With ``cut=True`` (text that was cut off, such as output over its cap) a trailing partial form
of at least :data:`MIN_SECRET_CHARS` characters is masked too.

**What is not.** Values shorter than :data:`MIN_SECRET_CHARS` (replacing ``1`` or ``dev``
everywhere would shred ordinary text while hiding next to nothing: callers warn about them,
naming where the value is configured, never the value); mixed case other than all-upper and
all-lower; base32 inside a longer base32 string; every other transformation (split,
compressed, encrypted, encoded twice, ...). A value that is an ordinary word is masked in its
upper- and lower-case forms too, wherever the word appears: secrets should not be words.

**Streams.** :meth:`SecretMasker.stream` masks a stream chunk by chunk, holding back the last
(longest form - 1) bytes of each chunk (for an ASCII value, the hex form's length - 1), so any form
split across chunks is still caught and the result does not depend on how the stream was cut.
:meth:`SecretMasker.mask_file` masks a file in place (masked bytes are never longer than the
raw ones, since every form is longer than :data:`MASK`). Searching is ``bytes.find`` per form,
at C speed: about 0.15 to 0.25 ms per MiB per form on one core (3 secrets of about 20
characters make 31 forms: 4.9 ms per MiB, a 512 MiB log in about 2.5 s). The cost grows with
the number of forms and of occurrences found.

Written by hand: the standard library has no multi-string search that reports overlapping
matches, and one alternation regex is several times slower than a ``find`` per form.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Sequence
from typing import Final, TypeVar
from urllib.parse import quote, quote_plus

__all__ = [
    "CHUNK_BYTES",
    "MASK",
    "MIN_BASE64_CHARS",
    "MIN_SECRET_CHARS",
    "SecretMasker",
    "StreamMasker",
]

MASK: Final = "***"
"""What a masked stretch becomes."""

MIN_SECRET_CHARS: Final = 4
"""Shorter values are not masked (and trailing partial forms shorter than this neither)."""

MIN_BASE64_CHARS: Final = 8
"""A base64 form shorter than this (a 4- or 5-byte value at some alignments) is left out:
four base64 characters recur by chance in long encoded blobs."""

CHUNK_BYTES: Final = 1024 * 1024
"""Bytes read per step by :meth:`SecretMasker.mask_file`."""

_MASK_BYTES: Final = MASK.encode()
# Every form is at least MIN_SECRET_CHARS long, longer than MASK: masking never lengthens
# bytes, which is what lets mask_file rewrite a file in place.

_T = TypeVar("_T", str, bytes)


def _utf8(text: str) -> bytes:
    try:  # a value read from a non-UTF-8 environment keeps its original bytes
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # other lone surrogates: as Python would write them
        return text.encode("utf-8", "surrogatepass")


def _forms(value: str) -> set[str]:
    """The strings `value` is masked in (see the module docstring)."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    for make in (quote, lambda v: quote(v, safe=""), quote_plus):
        try:
            forms.add(make(value))
        except UnicodeError:  # a lone surrogate: URL encoders refuse it
            continue
    forms |= {value[::-1], value.upper(), value.lower()}
    raw = _utf8(value)
    forms |= {raw.hex(), raw.hex().upper()}
    base32 = base64.b32encode(raw).decode()
    forms |= {base32, base32.rstrip("=")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(raw).decode())  # encoded alone, with padding
        for shift in range(3):  # the value after 0, 1 or 2 bytes of its 3-byte group
            encoded = encode(bytes(shift) + raw).decode()
            first = 1 if shift else 0  # group 0 mixes the preceding bytes in
            last = (shift + len(raw)) // 3  # a last partial group mixes the next ones in
            core = encoded[4 * first : 4 * last]
            if len(core) >= MIN_BASE64_CHARS:
                forms.add(core)
    # Every form is at least as long as the value; said here, since mask_file relies on it.
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def _period(pattern: _T) -> int:
    """The smallest shift at which `pattern` can overlap itself (its length minus its longest
    proper border): the next occurrence can start no nearer than that."""
    border = [0] * len(pattern)
    k = 0
    for i in range(1, len(pattern)):
        while k and pattern[i] != pattern[k]:
            k = border[k - 1]
        if pattern[i] == pattern[k]:
            k += 1
        border[i] = k
    return len(pattern) - border[-1]


def _spans(buffer: _T, patterns: Sequence[tuple[_T, int]], *, cut: bool) -> list[tuple[int, int]]:
    """The stretches of `buffer` some occurrence covers, merged when they overlap or touch,
    in order. With `cut`, a trailing partial pattern covers the end too."""
    found: list[tuple[int, int]] = []
    for pattern, period in patterns:
        at = buffer.find(pattern)
        while at >= 0:
            found.append((at, at + len(pattern)))
            at = buffer.find(pattern, at + period)
    if cut:
        start = _partial_tail(buffer, [pattern for pattern, _ in patterns])
        if start is not None:
            found.append((start, len(buffer)))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _partial_tail(buffer: _T, patterns: Sequence[_T]) -> int | None:
    """Where the longest proper prefix (of at least MIN_SECRET_CHARS) of a pattern that
    `buffer` ends with starts, or None."""
    best: int | None = None
    for pattern in patterns:
        for length in range(min(len(pattern) - 1, len(buffer)), MIN_SECRET_CHARS - 1, -1):
            if buffer.endswith(pattern[:length]):
                start = len(buffer) - length
                best = start if best is None else min(best, start)
                break
    return best


def _apply(buffer: _T, spans: Iterable[tuple[int, int]], mask: _T) -> _T:
    parts: list[_T] = []
    position = 0
    for start, end in spans:
        parts += (buffer[position:start], mask)
        position = end
    parts.append(buffer[position:])
    return buffer[:0].join(parts)


class SecretMasker:
    """Masks a fixed set of secret values, and their common encodings, in text and bytes.

    Args:
        values: the secrets; values shorter than :data:`MIN_SECRET_CHARS` are ignored
            (the caller warns about those it was configured with).

    Attributes:
        values: the values masked.
        overlap: bytes a stream holds back between chunks (the longest form's length - 1).
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values: frozenset[str] = frozenset(v for v in values if len(v) >= MIN_SECRET_CHARS)
        texts = sorted({f for v in self.values for f in _forms(v)}, key=len, reverse=True)
        forms = sorted({_utf8(text) for text in texts}, key=len, reverse=True)
        self._text = [(text, _period(text)) for text in texts]
        self._bytes = [(form, _period(form)) for form in forms]
        self.overlap = len(forms[0]) - 1 if forms else 0

    def __bool__(self) -> bool:
        return bool(self._bytes)

    def mask_text(self, text: str, *, cut: bool = False) -> str:
        """`text` with every secret form replaced (`cut`: it was cut off at its end)."""
        if not self._text or not text:
            return text
        return _apply(text, _spans(text, self._text, cut=cut), MASK)

    def mask_bytes(self, data: bytes, *, cut: bool = False) -> bytes:
        """`data` with every secret form replaced (`cut`: it was cut off at its end)."""
        if not self._bytes or not data:
            return data
        return _apply(data, _spans(data, self._bytes, cut=cut), _MASK_BYTES)

    def stream(self) -> StreamMasker:
        """A masker for one stream of bytes, fed chunk by chunk."""
        return StreamMasker(self._bytes, overlap=self.overlap)

    def mask_file(
        self, path: str | os.PathLike[str], *, cut: bool = False, chunk_bytes: int = CHUNK_BYTES
    ) -> int:
        """Mask the file at `path` in place, streamed; its new size.

        Safe in place: what is written never passes what was read (a masked stretch is
        never shorter than :data:`MASK`, and a chunk's output lags its input by the overlap).
        """
        stream = self.stream()
        read = written = 0
        with open(path, "r+b") as file:
            while True:
                file.seek(read)
                chunk = file.read(chunk_bytes)
                if not chunk:
                    break
                read += len(chunk)
                out = stream.feed(chunk)
                file.seek(written)
                file.write(out)
                written += len(out)
            out = stream.finish(cut=cut)
            file.seek(written)
            file.write(out)
            written += len(out)
            file.truncate(written)
        return written


class StreamMasker:
    """Masks one byte stream: :meth:`feed` each chunk, then :meth:`finish`. The output is
    the same as :meth:`SecretMasker.mask_bytes` of the whole, however the stream is cut.

    It keeps the raw bytes from (emitted - overlap) on: every occurrence that covers a byte
    not yet emitted then lies whole in what it keeps once `overlap` bytes beyond that byte
    arrived, so each emitted byte's coverage is final.
    """

    def __init__(self, patterns: Sequence[tuple[bytes, int]], *, overlap: int) -> None:
        self._patterns = patterns
        self._overlap = overlap
        self._buffer = b""
        self._base = 0  # stream offset of _buffer[0]
        self._emitted = 0  # stream offset up to which output was given
        self._masking = False  # the last byte given was masked (a stretch may go on)

    def feed(self, chunk: bytes) -> bytes:
        """The masked output `chunk` makes final (lagging by the overlap)."""
        if not self._patterns:
            return chunk
        self._buffer += chunk
        return self._emit(self._base + len(self._buffer) - self._overlap, cut=False)

    def finish(self, *, cut: bool = False) -> bytes:
        """The rest of the output (`cut`: the stream was cut off, e.g. at a capture cap, so a
        trailing partial secret is masked too)."""
        if not self._patterns:
            return b""
        out = self._emit(self._base + len(self._buffer), cut=cut)
        self._buffer = b""
        return out

    def _emit(self, upto: int, *, cut: bool) -> bytes:
        if upto <= self._emitted:
            return b""
        buffer, base = self._buffer, self._base
        first = position = self._emitted - base
        limit = upto - base
        out = bytearray()
        masked_to = -1
        for found_start, found_end in _spans(buffer, self._patterns, cut=cut):
            if found_end <= position:
                continue
            if found_start >= limit:
                break
            start, end = max(found_start, position), min(found_end, limit)
            out += buffer[position:start]
            if not (start == first and self._masking):  # else: a stretch going on
                out += _MASK_BYTES
            position = masked_to = end
        out += buffer[position:limit]
        self._masking = masked_to == limit
        self._emitted = upto
        keep_from = max(base, upto - self._overlap)
        self._buffer = buffer[keep_from - base :]
        self._base = keep_from
        return bytes(out)
