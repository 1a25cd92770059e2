"""Hidden text and what it says: the scanner's decoders for text a model reads and a person
reviewing the skill does not see. ``_prose.hidden_text`` calls :func:`reveal` on every text
file and judges each piece by what it carries; ``_prose`` also reads :data:`INVISIBLE`.

The hiding techniques decoded here:

- Unicode tag characters (U+E0000-U+E007F, "ASCII smuggling"): each run spelled out in ASCII
  (a subdivision flag, U+1F3F4 followed by lowercase tags and a cancel tag, is an emoji);
- zero-width characters that split words (``ig\\u200bnore``): the line with them removed;
- bits in invisible characters (zero-width, word joiners, Hangul fillers, interlinear
  annotation and musical formatting characters): a long run read as binary with any two of
  its characters as the digits and the others as separators between bytes or markers around
  the run (or four as base 4), under every assignment of digits, kept when the result is
  printable text; the same characters strewn between the visible letters of a line are
  read together as such a run; runs of Unicode spaces of different widths (en, em, thin,
  no-break) too, reported only when they spell text;
- bytes in variation selectors (U+FE00-U+FE0F are 0-15, U+E0100-U+E01EF are 16-255) after a
  character: a run of two or more is never a real emoji or ideograph variation; selectors
  strewn one after each ASCII character of a line spell bytes too; either may be bits;
- bidi controls (embeddings, overrides, isolates): the line as a model reads it (logical
  order) and as a reader sees it (visual order, from ``_bidi.visual_order``), both judged;
- HTML comments, Markdown link-reference comments (``[//]: # (...)``) and HTML elements hidden
  with ``hidden``, ``display:none``, ``visibility:hidden``, a zero size or opacity, an
  offset off screen, a clip or a one-pixel box whose overflow is hidden, on the element or
  through a class or id a ``<style>`` block of the file hides, whatever else the element carries
  (``aria-hidden``): rendered views do not show them;
  found once invisible characters are deleted (``<\u200b!--`` opens a comment for a model);
- text encoded in plain sight in Markdown (:func:`decode_text`, called apart from
  :func:`reveal` for prose only): base64, hexadecimal or binary runs that decode to words.

A piece may carry other readings (:attr:`Hidden.readings`), judged too: tag characters read
in place among the visible letters between them, zero-width runs standing for the spaces
of words glued together (``read\u2060the\u2060file``), bits strewn between letters, and a
bidi line in its visual order.

What a run of invisible characters spells as bits is ``_bits``'s (:func:`decode_bits`, which
this module re-exports); the order a reader sees a bidi line in is ``_bidi``'s
(:func:`visual_order`, re-exported too). Every loop is bounded: at most :data:`MAX_PIECES`
pieces a file, runs and windows capped, and the regular expressions are linear (no two
adjacent quantified parts match the same character).
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
import itertools
import re
from dataclasses import dataclass
from typing import Final, Literal

from skillweave.config import Severity
from skillweave.skills.scan._bidi import visual_order
from skillweave.skills.scan._bits import decode_bits, printable

__all__ = [
    "INVISIBLE",
    "MAX_PIECES",
    "Hidden",
    "decode_text",
    "escape_invisible",
    "reveal",
    "visual_order",
]

MAX_PIECES: Final = 200
"""Pieces of hidden text revealed in one file at most."""
_WINDOW: Final = 400  # characters of a line kept around what hides in it
_MAX_BIT_RUN: Final = 8 * 4096

INVISIBLE: Final = re.compile(
    "[\U000e0000-\U000e007f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060-\u2064\u180e"
    "\u034f\u115f\u1160\u3164\uffa0\u00ad\ufeff\u061c\ufff9-\ufffb\U0001d173-\U0001d17a]"
)
"""Every character deleted before the prose rules read a text."""

Kind = Literal["tags", "zero-width", "bits", "variation", "bidi", "comment", "encoded"]


@dataclass(frozen=True, slots=True)
class Hidden:
    """One piece of hidden text in a file.

    Attributes:
        start: where the hiding starts in the file's text (findings go on its line).
        kind: the technique.
        how: how it was hidden, for messages ("hidden in Unicode tag characters").
        revealed: what the hidden text says, as a model reads it.
        shown: what a reader sees instead, when that is worth showing (bidi), else "".
        severity: the finding's severity when the text carries nothing; None for no finding
            (a harmless comment).
        body: where `revealed` starts in the file's text when it is a slice of it (comments,
            lines), so that findings in it land on their own lines; None otherwise.
        deliberate: no ordinary text hides this way (tag characters, bits, variation
            selectors, zero-width characters inside words), so less makes it an instruction.
        readings: other ways a model may read the same hiding (tag characters read in place
            among the visible letters around them; zero-width characters standing for the
            spaces between words), judged too: the reading that carries most wins.
    """

    start: int
    kind: Kind
    how: str
    revealed: str
    severity: Severity | None
    shown: str = ""
    body: int | None = None
    deliberate: bool = False
    readings: tuple[str, ...] = ()


def reveal(text: str) -> list[Hidden]:
    """Every piece of hidden text in `text`, in order of technique (at most
    :data:`MAX_PIECES`)."""
    pieces: list[Hidden] = []
    if not text.isascii():
        pieces += _tags(text)
        bits, spans = _bits(text)
        pieces += bits
        pieces += _zero_width(text, spans)
        pieces += _variations(text)
        pieces += _bidi(text)
    if "<" in text or "]:" in text:
        pieces += _visible_comments(text)
    return pieces[:MAX_PIECES]


def _visible_comments(text: str) -> list[Hidden]:
    """The comments of `text` as a model reads it: invisible characters cannot hide a
    comment's ``<!--`` from the model (``<\u200b!--``), so they are deleted first and the
    offsets mapped back."""
    if text.isascii() or INVISIBLE.search(text) is None:
        return _comments(text)
    deleted = [m.start() - i for i, m in enumerate(INVISIBLE.finditer(text))]

    def original(offset: int) -> int:
        return offset + bisect.bisect_right(deleted, offset)

    return [
        dataclasses.replace(
            piece,
            start=original(piece.start),
            body=None if piece.body is None else original(piece.body),
        )
        for piece in _comments(INVISIBLE.sub("", text))
    ]


def escape_invisible(text: str) -> str:
    """`text` with every invisible or format character written as ``\\u{XXXX}``."""
    return _ESCAPED.sub(lambda m: f"\\u{{{ord(m.group()):04X}}}", text)


_ESCAPED: Final = re.compile(
    "[\U000e0000-\U000e01ef\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2060-\u2064\u180e\u034f"
    "\u115f\u1160\u3164\uffa0\u00ad\ufeff\u061c\ufe00-\ufe0f\ufff9-\ufffb\U0001d173-\U0001d17a]"
)


# --- tag characters --------------------------------------------------------------------------

_TAGS: Final = re.compile("[\U000e0000-\U000e007f]+")
_FLAG: Final = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")


def _tags(text: str) -> list[Hidden]:
    """One piece a line: the tag runs of a line spelled out together, so that tags strewn
    one by one between visible letters still read as the text they spell."""
    found: list[Hidden] = []
    line_start, spelled, in_place, last = -1, "", "", -1
    for match in itertools.islice(_TAGS.finditer(text), 20 * MAX_PIECES):
        run = match.group()
        if text[match.start() - 1 : match.start()] == "\U0001f3f4" and _FLAG.fullmatch(run):
            continue  # a subdivision flag (England, Scotland, Wales)
        start = text.rfind("\n", 0, match.start()) + 1
        if start != line_start and line_start >= 0:
            found.append(_tag_piece(text, line_start, spelled, in_place))
            spelled, in_place = "", ""
        elif last >= 0 and match.start() - last <= _TAG_GAP:
            in_place += text[last : match.start()]  # visible letters between two tag runs
        line_start, last = start, match.end()
        letters = "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)
        spelled += letters
        in_place += letters
    if line_start >= 0:
        found.append(_tag_piece(text, line_start, spelled, in_place))
    return found


_TAG_GAP: Final = 3
"""Visible characters between two tag runs read with them in place, at most."""


def _tag_piece(text: str, line_start: int, spelled: str, in_place: str) -> Hidden:
    start = _TAGS.search(text, line_start)
    offset = start.start() if start else line_start
    how = "hidden in Unicode tag characters"
    readings = (in_place,) if in_place != spelled else ()
    return Hidden(offset, "tags", how, spelled, "critical", deliberate=True, readings=readings)


# --- zero-width characters: split words, and bits ----------------------------------------------

_ZERO_WIDTH: Final = re.compile(
    "[\u200b\u2060-\u2064\u180e\u034f\u115f\u1160\u3164\uffa0\ufff9-\ufffb\U0001d173-\U0001d17a]"
    "|(?<=[A-Za-z0-9])[\u200c\u200d\u00ad\u200e\u200f\u061c](?=[A-Za-z0-9])|(?<!^)\ufeff"
)
_DIGITS: Final = (
    "\u200b-\u200f\u2060-\u2064\u180e\u034f\ufeff\u00ad\u115f\u1160\u3164\uffa0\u061c"
    "\ufff9-\ufffb\U0001d173-\U0001d17a"
)
"""Invisible characters a hider may use as digits (tag characters and variation selectors
have decoders of their own)."""
_ZERO_WIDTH_RUN: Final = re.compile(f"[{_DIGITS}]{{16,}}")
_SPACE_RUN: Final = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]{16,}")
"""Unicode spaces of different widths, which look alike: bits when they spell text."""
_RUN: Final = re.compile(f"[{_DIGITS}]+")
_SPLITS: Final = re.compile(
    "(?<=[A-Za-z0-9])[\u200b-\u200f\u2060-\u2064\u180e\u034f\u00ad\ufeff]+(?=[A-Za-z0-9])"
)


def _bits(text: str) -> tuple[list[Hidden], list[tuple[int, int]]]:
    """Long runs of invisible characters, decoded as bits where they spell text."""
    found, spans = [], []
    for match in itertools.islice(_ZERO_WIDTH_RUN.finditer(text), MAX_PIECES):
        decoded = decode_bits(match.group()[:_MAX_BIT_RUN])
        spans.append(match.span())
        symbols = len(set(match.group()))
        how = (
            "encoded as bits in zero-width characters"
            if decoded
            else f"in a run of {len(match.group())} zero-width characters ({symbols} distinct)"
        )
        found.append(Hidden(match.start(), "bits", how, decoded, "medium", deliberate=True))
    for match in itertools.islice(_SPACE_RUN.finditer(text), MAX_PIECES):
        decoded = decode_bits(match.group()[:_MAX_BIT_RUN])
        if decoded:  # runs of spaces alone are layout (no-break spaces that indent)
            how = "encoded as bits in Unicode spaces"
            found.append(Hidden(match.start(), "bits", how, decoded, "medium", deliberate=True))
    return found, spans


def _zero_width(text: str, decoded: list[tuple[int, int]]) -> list[Hidden]:
    """One piece a line holding zero-width characters: the line with them removed."""
    found: list[Hidden] = []
    position = 0
    while len(found) < MAX_PIECES:
        match = _ZERO_WIDTH.search(text, position)
        if match is None:
            break
        start, end = _line(text, match.start())
        position = end + 1
        if any(a <= match.start() < b for a, b in decoded):
            continue
        last = match.end()  # the hiding may run on far past the first character
        for later in itertools.islice(
            _ZERO_WIDTH.finditer(text, match.end(), min(end, match.start() + _SPAN)), _SPAN
        ):
            last = later.end()
        window_start = max(start, match.start() - _WINDOW)
        window = text[window_start : min(end, last + _WINDOW)]
        codes = sorted({f"U+{ord(m.group()):04X}" for m in _ZERO_WIDTH.finditer(window)})
        splits = _SPLITS.search(window) is not None
        how = (
            f"split by zero-width characters ({', '.join(codes[:4])})"
            if splits
            else f"with zero-width characters ({', '.join(codes[:4])})"
        )
        revealed = INVISIBLE.sub("", window)
        readings = _spaced_readings(window) + _scattered_bits(window)
        found.append(Hidden(match.start(), "zero-width", how, revealed, "medium",
                            body=window_start, deliberate=splits,
                            readings=readings))  # fmt: skip
    return found


_SPAN: Final = 2_000  # characters of one line searched for the end of a hiding
_SEPARATORS: Final = 3  # distinct runs of zero-width characters tried as word separators
_GLUED: Final = re.compile(r"[^\W\d_]{24,}")
"""Letters no word of a language written with spaces runs to: words glued together."""


def _spaced_readings(window: str) -> tuple[str, ...]:
    """`window` read with each of its most frequent runs of zero-width characters standing
    for a space and the others deleted: a hider who writes words with no space between them
    (``read\u2060\u200dthe\u2060\u200dfile``) splits letters with another run."""
    if _GLUED.search(INVISIBLE.sub("", window)) is None:
        return ()  # the words keep their spaces: deleting the characters reads them
    counts: dict[str, int] = {}
    for run in itertools.islice(_RUN.finditer(window), 4 * _WINDOW):
        counts[run.group()] = counts.get(run.group(), 0) + 1
    common = sorted(counts, key=lambda r: -counts[r])[:_SEPARATORS]
    return tuple(
        INVISIBLE.sub("", _RUN.sub(lambda m, r=run: " " if m.group() == r else "", window))
        for run in common
        if counts[run] >= 3
    )


def _scattered_bits(window: str) -> tuple[str, ...]:
    """The text the zero-width characters of `window` spell as bits when they are strewn
    one or a few at a time between visible letters rather than kept in one run."""
    digits = "".join(m.group() for m in itertools.islice(_RUN.finditer(window), 8 * _SPAN))
    if len(digits) < 16:
        return ()
    decoded = decode_bits(digits)
    return (decoded,) if decoded else ()


def _line(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


# --- variation selectors ---------------------------------------------------------------------

_VARIATIONS: Final = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")
_LONE_VARIATION: Final = re.compile(
    "(?<=[\x20-\x7e])[\ufe00-\ufe0f\U000e0100-\U000e01ef](?![\ufe00-\ufe0f\U000e0100-\U000e01ef\u20e3])"
)
"""A selector after a printable ASCII character (a keycap, ``1\ufe0f\u20e3``, aside): no
letter or digit has a variation to select."""
_MIN_LONE: Final = 8  # selectors strewn after ASCII characters on one line that are read


def _variations(text: str) -> list[Hidden]:
    found = []
    for match in itertools.islice(_VARIATIONS.finditer(text), MAX_PIECES):
        run = match.group()
        decoded = _selector_text(run[:16384])
        if not decoded and len(run) < 16:
            continue  # a doubled selector after an emoji: sloppy, not smuggling
        carrier = escape_invisible(text[max(0, match.start() - 1) : match.start()])
        how = f"encoded in {len(run)} variation selectors after {carrier!r}"
        found.append(Hidden(match.start(), "variation", how, decoded, "medium", deliberate=True))
    return found + _strewn_variations(text)


def _selector_text(run: str) -> str:
    """What selectors spell: one byte each (U+FE00-U+FE0F are 0-15, U+E0100-U+E01EF are
    16-255), or bits when a few distinct selectors are the digits."""
    data = bytes(ord(c) - 0xFE00 if ord(c) < 0xFE10 else ord(c) - 0xE0100 + 16 for c in run)
    return printable(data) or decode_bits(run)


def _strewn_variations(text: str) -> list[Hidden]:
    """One piece a line whose ASCII characters carry selectors one at a time, where they
    spell text together."""
    found: list[Hidden] = []
    line_start, first, run = -1, 0, []
    for match in itertools.islice(_LONE_VARIATION.finditer(text), 64 * MAX_PIECES):
        start = text.rfind("\n", 0, match.start()) + 1
        if start != line_start:
            found += _strewn_piece(first, run)
            line_start, first, run = start, match.start(), []
        run.append(match.group())
    return (found + _strewn_piece(first, run))[:MAX_PIECES]


def _strewn_piece(start: int, selectors: list[str]) -> list[Hidden]:
    if len(selectors) < _MIN_LONE:
        return []
    decoded = _selector_text("".join(selectors))
    if not decoded:
        return []
    how = f"encoded in {len(selectors)} variation selectors strewn after letters"
    return [Hidden(start, "variation", how, decoded, "medium", deliberate=True)]


# --- bidi controls ---------------------------------------------------------------------------

_BIDI: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")
_RTL_LETTER: Final = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def _bidi(text: str) -> list[Hidden]:
    """One piece a line holding bidi controls: its logical and its visual order, both
    judged (the visual order is a reading). Low in right-to-left text without overrides
    (embeddings and isolates are how such text is written), high elsewhere; an override in
    a line without right-to-left letters is deliberate (it only serves to reverse Latin)."""
    found: list[Hidden] = []
    position = 0
    while len(found) < MAX_PIECES:
        match = _BIDI.search(text, position)
        if match is None:
            break
        start, end = _line(text, match.start())
        position = end + 1
        window_start = max(start, match.start() - _WINDOW)
        window = text[window_start : min(end, match.start() + _WINDOW)]
        override = "\u202d" in window or "\u202e" in window
        rtl = _RTL_LETTER.search(window) is not None
        codes = sorted({f"U+{ord(m.group()):04X}" for m in _BIDI.finditer(window)})
        revealed = INVISIBLE.sub("", window)
        shown = INVISIBLE.sub("", visual_order(window))
        severity: Severity = "low" if rtl and not override else "high"
        how = f"reordered by bidi controls ({', '.join(codes[:4])})"
        found.append(
            Hidden(match.start(), "bidi", how, revealed, severity, shown=shown, body=window_start,
                   deliberate=override and not rtl,
                   readings=(shown,) if shown != revealed else ())
        )  # fmt: skip
    return found


# --- text encoded in plain sight ------------------------------------------------------------

_ENCODED: Final = re.compile(
    r"(?<![\w+/=-])(?P<base64>(?:[A-Za-z0-9+/]{4}){6,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"
    r"|(?:[A-Za-z0-9_-]{4}){6,}(?:[A-Za-z0-9_-]{2,3})?)(?![\w+/=-])"
    r"|(?<![0-9A-Fa-f])(?P<hex>(?:[0-9A-Fa-f]{2}){12,})(?![0-9A-Fa-f])"
    r"|(?<![01])(?P<binary>[01]{8}(?:[ ,]?[01]{8}){5,})(?![01])"
)
_DIGIT_SETS: Final = (
    ("binary", re.compile(r"[01 ,]+")),
    ("hex", re.compile(r"[0-9A-Fa-f]+")),
)
"""Runs whose digits could be binary or hexadecimal are tried as such before base64."""
_MAX_ENCODED: Final = 65_536  # characters of one encoded run decoded
_WORDS: Final = 0.8  # share of letters, spaces and common punctuation in decoded prose


def decode_text(text: str) -> list[Hidden]:
    """Runs of base64, hexadecimal or binary digits in `text` (Markdown a model reads) that
    decode to prose: a model reads such text as easily as plain words, a reviewer does not.
    A run that decodes to anything else (a hash, an image, a token's JSON) is left alone."""
    found: list[Hidden] = []
    for match in itertools.islice(_ENCODED.finditer(text), 4 * MAX_PIECES):
        run = match.group()[:_MAX_ENCODED]
        kinds = [k for k, digits in _DIGIT_SETS if digits.fullmatch(run)] + ["base64"]
        kind, decoded = next(
            ((k, d) for k in kinds if (d := _prose_of(_decoded(run, k)))), ("base64", "")
        )
        if decoded:
            how = f"encoded in {'hexadecimal' if kind == 'hex' else kind}"
            found.append(Hidden(match.start(), "encoded", how, decoded, None))
            if len(found) >= MAX_PIECES:
                break
    return found


def _decoded(run: str, kind: str) -> bytes:
    try:
        if kind == "hex":
            return bytes.fromhex(run)
        if kind == "binary":
            digits = re.sub(r"[ ,]", "", run)
            return bytes(int(digits[i : i + 8], 2) for i in range(0, len(digits), 8))
        padded = run + "=" * (-len(run) % 4)
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return b""


def _prose_of(data: bytes) -> str:
    """`data` as text when it reads as words (letters, spaces, punctuation), else ""."""
    text = printable(data)
    if " " not in text:
        return ""
    wordy = sum(c.isalpha() or c in " .,:;'\"-/~_()?!" for c in text)
    return text if wordy >= _WORDS * len(text) else ""


# --- comments and hidden elements ------------------------------------------------------------

_MARKDOWN_COMMENT: Final = re.compile(
    r"^\[[^\]\n]{0,40}\]:\s*(?:#|<>)\s*"
    r"(?:\"([^\"\n]{0,2000})\"|\(([^)\n]{0,2000})\)|'([^'\n]{0,2000})')",
    re.MULTILINE,
)
_HIDDEN_OPEN: Final = re.compile(r"<(div|span|p|section|aside|template)\b([^<>]{0,600})>", re.I)
_HIDING: Final = (
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d])"
    r"|opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*transparent"
    r"|(?:left|right|top|bottom|text-indent|margin(?:-left|-top)?)\s*:\s*-\d{3,}"
    r"|clip\s*:\s*rect\(\s*0|clip-path\s*:\s*inset\(\s*(?:50|100)%|transform\s*:\s*scale\(\s*0\s*\)"
)
"""Styles that keep an element's text from view: not displayed, transparent, off screen,
clipped away or shrunk to nothing."""
_TINY_BOX: Final = re.compile(r"\b(?:max-)?(?:width|height)\s*:\s*[01](?:px)?(?![.\w])", re.I)
_OVERFLOW_HIDDEN: Final = re.compile(r"\boverflow\s*:\s*hidden", re.I)
_HIDDEN_ATTRIBUTE: Final = re.compile(rf"(?:^|\s)hidden(?=[\s=/]|$)|{_HIDING}", re.I)
_TAG: Final = re.compile(r"<[^<>]{0,300}>")
_STYLE: Final = re.compile(r"<style\b[^<>]{0,200}>([^<]{0,20000})", re.I)
_CLASS_RULE: Final = re.compile(r"((?:[.#][\w-]{1,60}[\s,]*){1,10})\{([^{}]{0,500})\}")
_CLASS_ATTRIBUTE: Final = re.compile(r"\b(class|id)\s*=\s*[\"']([^\"'<>]{0,300})[\"']", re.I)
_HIDING_STYLE: Final = re.compile(_HIDING, re.I)
_MAX_STYLES: Final = 20
_MAX_COMMENTS: Final = 500
_MAX_ELEMENT: Final = 100_000


def _comments(text: str) -> list[Hidden]:
    """HTML comments (found with ``str.find``: a comment of any length is read whole),
    Markdown link-reference comments, and HTML elements hidden by an attribute or style."""
    found = []
    position = text.find("<!--")
    while position >= 0 and len(found) < _MAX_COMMENTS:
        end = text.find("-->", position + 4)
        close = len(text) if end < 0 else end
        body = text[position + 4 : close]
        found.append(Hidden(position, "comment", "in an HTML comment", body, None,
                            body=position + 4))  # fmt: skip
        position = -1 if end < 0 else text.find("<!--", end + 3)
    for match in itertools.islice(_MARKDOWN_COMMENT.finditer(text), _MAX_COMMENTS):
        group = next(g for g in range(1, 4) if match.group(g) is not None)
        body = match.group(group)
        found.append(Hidden(match.start(), "comment", "in a Markdown comment", body, None,
                            body=match.start(group)))  # fmt: skip
    hidden_classes = _hidden_classes(text) if "<style" in text.lower() else set()
    inside = 0  # the end of the last hidden element: one nested in it is read with it
    for match in itertools.islice(_HIDDEN_OPEN.finditer(text), _MAX_COMMENTS):
        if match.start() < inside or not _hides(match.group(2), hidden_classes):
            continue
        closing = re.compile(rf"</{match.group(1)}\s*>", re.IGNORECASE)
        close = closing.search(text, match.end(), match.end() + _MAX_ELEMENT)
        inside = close.end() if close else match.end() + _MAX_ELEMENT
        inner = text[match.end() : close.start() if close else inside]
        body = _TAG.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), inner)  # offsets kept
        how = f"in a hidden HTML <{match.group(1).lower()}>"
        found.append(Hidden(match.start(), "comment", how, body, None, body=match.end()))
    return found


def _hidden_classes(text: str) -> set[str]:
    """Classes and ids a ``<style>`` block of `text` hides (``.ops{display:none}``, ``#n``),
    with their ``.`` or ``#``: an element of such a class or id is hidden as surely as one
    with the style written on it."""
    found: set[str] = set()
    for style in itertools.islice(_STYLE.finditer(text), _MAX_STYLES):
        for rule in itertools.islice(_CLASS_RULE.finditer(style.group(1)), _MAX_COMMENTS):
            if _HIDING_STYLE.search(rule.group(2)) or _tiny(rule.group(2)):
                found.update(re.findall(r"[.#][\w-]{1,60}", rule.group(1)))
    return found


def _hides(attributes: str, hidden_classes: set[str]) -> bool:
    """Whether an element's `attributes` hide it: the ``hidden`` attribute, a hiding style
    (not displayed, transparent, off screen, clipped, a box of a pixel), or a class or id a
    style block hides, whatever else the element carries (``aria-hidden``)."""
    if _HIDDEN_ATTRIBUTE.search(attributes) or _tiny(attributes):
        return True
    if not hidden_classes:
        return False
    for named in itertools.islice(_CLASS_ATTRIBUTE.finditer(attributes), 4):
        mark = "." if named.group(1).lower() == "class" else "#"
        if not hidden_classes.isdisjoint(mark + name for name in named.group(2).split()):
            return True
    return False


def _tiny(style: str) -> bool:
    """Whether `style` shrinks a box to a pixel or none and hides what overflows it."""
    return bool(_TINY_BOX.search(style) and _OVERFLOW_HIDDEN.search(style))
