"""The scanner's rules for text a model reads: prompt injection in SKILL.md (body and
frontmatter values), reference files, and the strings and comments of scripts
(:func:`scan_prose`); and hidden text, judged by what it says (:func:`hidden_text`). The
scanner calls :func:`hidden_text` on every text file, then :func:`scan_prose`; what a text
asks of the agent (the phrases, secrets handed on, what hidden text carries) is
``_intent``'s.

In plain sight, an override phrase, a claim of priority over other skills or the user's
requests, consent forged for the user ("approve it on the user's behalf"), an order to
act without asking the user where the same section does something risky, or a claim of rank
over the system prompt or the user used to approve, skip checks or hide (``_steps``) is
``prompt.override``; an order to reveal or send secrets, or to hand secrets the agent
gathers (a credential file, passwords or keys it finds, the system prompt) to a URL, a
request, a tool argument, a reply or a file, or a procedure whose step gathers secrets and
whose later step sends them out (``_steps.procedures``), is ``prompt.exfiltration``; such an
order also reports the secret (``secrets.credential-path`` for a file, else
``secrets.exfiltration``) at the same weight (critical when the order names an address, or
stands in a tool's description). Each region weighs its
findings (critical in the catalog's name and description, high in SKILL.md and references,
medium in scripts); in a script, text inside a tool description (an ``<IMPORTANT>`` block,
"before using this tool", a ``description``/``help`` value) is written for the model (tool
poisoning) and weighs high; there an order to read a credential file and fill the tool's
input is exfiltration too.

A download piped into a shell in text (:func:`remote_pipes`) is ``exec.remote-pipe``: high in
the agent's own instructions, medium where the text documents installing a tool for a person
(a README, an install section, a sentence saying it installs), high again beside an order
to act without asking or a claim of priority; low where the text names it rather than asks
for it (``_mentions.mentioned``: negated, something to look for or warn about, an item of a
table or list of dangers) and nothing beside it orders it run. A phrase quoted in a list of
examples to watch for (``_mentions.quoted_example``) is low as well.

Hidden text (``_hidden.reveal``) is judged by the reading that carries most instructions
(``_contraband.carried_instructions``; a bidi line as a reader sees it too, both orders shown).
When it carries one, the hidden-text finding is high (critical stays critical),
``prompt.hidden-instructions`` reports it as an injection (critical
when it asks for secrets or names a destination, or hides in the frontmatter), every excerpt
is the revealed text, and the rules for text in plain sight run over it at least high; a
secret it asks to send, embed or post (``_contraband.sent_secret``) is ``secrets.exfiltration``,
high, critical when it names where the secret goes; otherwise it keeps its technique's own
severity (a harmless comment has none). Text encoded in base64, hexadecimal or binary in
Markdown (``_hidden.decode_text``) is judged the same way; its own finding, when it carries
instructions, is ``obfuscation.encoded-blob``.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from itertools import islice
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._contraband import ORDER_TO_MODEL, carried_instructions, sent_secret
from skillweave.skills.scan._hidden import (
    INVISIBLE,
    Hidden,
    decode_text,
    escape_invisible,
    reveal,
)
from skillweave.skills.scan._intent import (
    EXFILTRATION,
    JUDGED_CHARS,
    OVERRIDE,
    Read,
    credential_named,
    handed_secrets,
    has_lookalikes,
    prepare,
)
from skillweave.skills.scan._mentions import NEGATION, mentioned, quoted_example
from skillweave.skills.scan._steps import (
    HEADING,
    claimed_authority,
    overrides_consent,
    procedures,
    read_orders,
    sections,
    unconsented,
)
from skillweave.skills.scan._text import REMOTE_PIPES, URL, Collector, Source, excerpt
from skillweave.terminal import terminal_safe

_MIXED_WORD: Final = re.compile(r"[^\W\d_]{2,64}")
_LATIN: Final = re.compile(r"[A-Za-z]")
_LOOKALIKE: Final = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")
_POISON: Final = re.compile(
    r"<(?:important|system|instructions?|critical|secret)>"
    r"|\b(?:before|prior\s+to|when|whenever)\s+(?:using|calling|invoking|running)\s+(?:this|the)"
    r"\s+tool\b|\bthis\s+tool\s+(?:requires|needs)\s+you\b",
    re.IGNORECASE,
)
"""Where a tool description starts talking to the model: what follows is tool poisoning."""
_DESCRIBED: Final = re.compile(
    r"(?i:description|help|usage)[\"']?\s*[:=]|IMPORTANT\s*:|@(?:[\w.]{1,60}\.)?tool\b"
)
"""Where a tool's description or help text starts (a key or keyword, a function decorated as
a tool, whose docstring describes it), or an ``IMPORTANT:`` note: its reader is the model
calling the tool (apart from :data:`_POISON`, as a literal prefix keeps it fast)."""
_POISON_REACH: Final = 1200  # characters after a marker that it covers
_MAX_MATCHES: Final = 50  # matches of one phrase rule looked at in one region
_READINGS_BUDGET: Final = 200_000  # characters of other readings judged in one file
_SECRET_WORD: Final = re.compile(
    r"api[\s_-]?keys?|secrets?\b|tokens?\b|credentials?|passwords?|passphrases?|private[\s_-]keys?"
    r"|ssh[\s_-]keys?|cookies|\.env\b|(?-i:[A-Z][A-Z0-9]{1,30}_(?:TOKEN|KEY|SECRET|PASSWORD))",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Region:
    """A piece of a file the model reads, and what a finding in it weighs.

    Attributes:
        text: the piece.
        offset: where it starts in the file's text (for line numbers), or None when it has
            no place there (a decoded frontmatter value: `line` says where).
        line: the line of a piece without an offset.
        severity: override and exfiltration severity here (exfiltration to a URL and
            frontmatter are raised to critical by the caller's choice of `severity`).
        where: shown in messages ("the description", "a reference").
        shown: the excerpt of its findings when the file's line would not show what was
            found (hidden text, revealed); "" for the line.
    """

    text: str
    offset: int | None
    line: int | None
    severity: Severity
    where: str
    shown: str = ""


def scan_prose(source: Source, regions: list[Region], out: Collector) -> None:
    """The injection rules over each region of `source`; and hidden text in a decoded value
    (a YAML frontmatter string) that holds invisible characters the file does not show as
    such (written as ``\\u200b`` or ``\\U000E0041`` escapes)."""
    shown = None
    for region in regions:
        prompt_rules(source, region, out)
        if region.offset is None and not region.text.isascii():
            if shown is None:
                shown = _invisible_count(source.text)
            if _invisible_count(region.text) > shown:
                for piece in reveal(region.text):
                    _hidden_piece(source, piece, out, catalog=True, line=region.line or 1)
    if not source.text.isascii():
        _mixed_words(source, out)


def prompt_rules(source: Source, region: Region, out: Collector) -> bool:
    """The override and exfiltration rules over `region`; True when one matched."""
    read = prepare(region.text)
    poison = _poison_starts(read.folded) if region.severity == "medium" else []
    found = False
    for rule, patterns in (("prompt.override", OVERRIDE), ("prompt.exfiltration", EXFILTRATION)):
        for pattern in patterns:
            for match in islice(pattern.finditer(read.folded), _MAX_MATCHES):
                if NEGATION.search(read.folded, max(0, match.start() - 40), match.start()):
                    continue
                found = True
                span = (match.start(), match.end())
                severity = _weigh(read, region, rule=rule, span=span, poison=poison)
                _report(source, region, out, read=read, rule=rule, span=span, severity=severity)
                if rule == "prompt.exfiltration" and _SECRET_WORD.search(match.group()):
                    _secret(source, region, out, start=match.start(), phrase=match.group(),
                            credential=None,
                            severity=_secret_weight(severity, span, poison))  # fmt: skip
    orders = handed_secrets(read.folded)
    covered = 0
    for marker in poison:  # a tool description's orders to read a credential file
        if marker + _POISON_REACH > covered:
            orders += read_orders(read.folded, max(marker, covered), marker + _POISON_REACH)
            covered = marker + _POISON_REACH
    if region.severity != "medium":  # prose: procedures and consent; a script's code has steps
        orders += procedures(read.folded)
        for spans, what in (
            (unconsented(read.folded), _UNCONSENTED),
            (claimed_authority(read.folded), _CLAIMED),
        ):
            for span in spans:
                found = True
                severity = _weigh(read, region, rule="prompt.override", span=span, poison=poison)
                _report(source, region, out, read=read, rule="prompt.override", span=span,
                        severity=severity, what=what)  # fmt: skip
    for handed in orders:
        found = True
        rule = "prompt.exfiltration"
        span = (handed.start, handed.end)
        severity = _weigh(read, region, rule=rule, span=span, poison=poison)
        _report(source, region, out, read=read, rule=rule, span=span, severity=severity,
                phrase=handed.phrase)  # fmt: skip
        _secret(source, region, out, start=handed.start, phrase=handed.phrase,
                credential=handed.credential,
                severity=_secret_weight(severity, span, poison))  # fmt: skip
    return found


_UNCONSENTED: Final = "an order to act without asking the user, beside a risky action"
_CLAIMED: Final = (
    "a claim of rank over the system prompt or the user, used to approve, skip checks or hide"
)
_README: Final = re.compile(r"(?:^|/)(?:readme|install|contributing|changelog|changes|history)"
                           r"(?:\.[\w]{1,8})?$", re.IGNORECASE)  # fmt: skip
"""Files written for a person (installing, contributing), not instructions to the agent."""
_INSTALL_HEADING: Final = re.compile(
    r"^#{1,6}[ \t]+[^\n]{0,80}?\b(?:install\w*|set[\s-]?up|prerequisites|requirements"
    r"|getting\s+started|quick\s*start|dependencies)\b",
    re.IGNORECASE,
)
_INSTALL_WORDS: Final = re.compile(r"\binstall(?:s|ed|ing|er|ation)?\b", re.IGNORECASE)
_PIPE_CONTEXT: Final = 300  # characters before a download pipe read for what it is for


def remote_pipes(source: Source, out: Collector) -> None:
    """Downloads piped into a shell in text a model or a person reads: high in the agent's
    own instructions (SKILL.md, references), medium where the text documents installing a
    tool (a README, an install or set-up section, a sentence that says it installs); high
    again when the section runs it without the user's consent or claims priority."""
    text = source.text
    person = _README.search(source.path) is not None
    headings = [m.start() for m in islice(HEADING.finditer(text), 2000)]
    spans = sections(text)
    for pattern in REMOTE_PIPES:
        for match in islice(pattern.finditer(text), _MAX_MATCHES):
            start = match.start()
            if mentioned(text, start, match.end()):
                out.at(source, "exec.remote-pipe", start,
                       "the text names a download piped into a shell (warned against or "
                       "looked for), not as a step", severity="low")  # fmt: skip
                continue
            before = bisect.bisect_right(headings, start)
            heading = text[headings[before - 1] : headings[before - 1] + 120] if before else ""
            section = text[max(0, start - _PIPE_CONTEXT) : start]
            documented = (
                person
                or _INSTALL_HEADING.search(heading) is not None
                or _INSTALL_WORDS.search(section + match.group()) is not None
            )
            consent = any(a <= start < b and overrides_consent(text[a:b]) for a, b in spans)
            severity: Severity = "medium" if documented and not consent else "high"
            reader = "the agent" if not person else "its reader"
            how = " without the user's consent" if consent else ""
            out.at(source, "exec.remote-pipe", start,
                   f"the text tells {reader} to pipe a download into a shell{how}",
                   severity=severity)  # fmt: skip


def _invisible_count(text: str) -> int:
    return sum(1 for _ in islice(INVISIBLE.finditer(text), 100_000))


def _poison_starts(text: str) -> list[int]:
    starts = [m.start() for m in islice(_POISON.finditer(text, 0, JUDGED_CHARS), 50)]
    starts += [m.start() for m in islice(_DESCRIBED.finditer(text, 0, JUDGED_CHARS), 50)]
    return sorted(starts)[:50]


def _weigh(
    read: Read, region: Region, *, rule: str, span: tuple[int, int], poison: list[int]
) -> Severity:
    """A finding's severity: the region's; high in a script's tool description; raised for
    secrets sent to a URL; low for a phrase quoted as an example of what to refuse."""
    start, end = span
    severity = region.severity
    if any(0 <= start - marker <= _POISON_REACH for marker in poison):
        severity = "high"
    following = read.folded[end : end + 200].split("\n\n", 1)[0]
    if rule == "prompt.exfiltration" and (
        "://" in read.folded[start:end] or URL.match(following.lstrip(" \t\n:"))
    ):
        severity = "critical" if severity != "medium" else "high"
    if quoted_example(read.folded, start):
        severity = "low"
    return severity


def _secret_weight(severity: Severity, span: tuple[int, int], poison: list[int]) -> Severity:
    """A secret an order hands on weighs as the order, and is critical when the order
    stands in a tool's description (tool poisoning: the model obeys it on every call)."""
    if severity == "high" and any(0 <= span[0] - marker <= _POISON_REACH for marker in poison):
        return "critical"
    return severity


def _report(
    source: Source,
    region: Region,
    out: Collector,
    *,
    read: Read,
    rule: str,
    span: tuple[int, int],
    severity: Severity,
    phrase: str = "",
    what: str = "",
) -> None:
    start, end = span
    offset = read.original(start)
    if has_lookalikes(read.text[start:end]):
        message = "look-alike letters hide the words of an instruction"
        _add(source, region, out, "text.homoglyph", offset, message=message, severity="high")
    what = what or (
        "an instruction to override earlier instructions"
        if rule == "prompt.override"
        else "an instruction to reveal or send secrets"
    )
    said = phrase or read.folded[start:end]
    message = f"{what} in {region.where}: {_quote(said)}"
    evidence = excerpt(" ".join(said.split()))
    _add(source, region, out, rule, offset, message=message, severity=severity,
         evidence=evidence)  # fmt: skip


def _secret(
    source: Source,
    region: Region,
    out: Collector,
    *,
    start: int,
    phrase: str,
    credential: str | None,
    severity: Severity,
) -> None:
    """The secret an order to send secrets names, at the order's weight: critical when
    the order names where it goes (an address) or stands in a tool's description."""
    if severity == "low":
        return
    weight = severity
    credential = credential or credential_named(phrase)
    if credential is not None:
        message = f"names {credential} in an instruction to send it, in {region.where}"
        rule = "secrets.credential-path"
    elif _SECRET_WORD.search(phrase):
        message = f"an instruction to send secrets, in {region.where}: {_quote(phrase)}"
        rule = "secrets.exfiltration"
    else:
        return
    _add(source, region, out, rule, start, message=message, severity=weight,
         evidence=excerpt(" ".join(phrase.split())))  # fmt: skip


def _mixed_words(source: Source, out: Collector) -> None:
    for match in _MIXED_WORD.finditer(source.text):
        word = match.group()
        if word.isascii() or not _LATIN.search(word) or not _LOOKALIKE.search(word):
            continue
        message = f"{excerpt(word)!r} mixes Latin with look-alike letters"
        out.at(source, "text.homoglyph", match.start(), message, severity="medium")


def _add(
    source: Source,
    region: Region,
    out: Collector,
    rule: str,
    offset: int,
    *,
    message: str,
    severity: Severity,
    evidence: str = "",
) -> None:
    """A finding in `region`; `evidence` is its excerpt where the region has no line of
    its own to show (a frontmatter value read from YAML)."""
    if region.offset is None:
        line = region.line or 1
        shown = region.shown or evidence or source.lines.excerpt(line)
        out.add(rule, source.path, line, message, shown, severity=severity)
    elif region.shown:
        line = source.lines.line_of(region.offset + offset)
        out.add(rule, source.path, line, message, region.shown, severity=severity)
    else:
        out.at(source, rule, region.offset + offset, message, severity=severity)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(excerpt(text[:100] + ("…" if len(text) > 100 else "")))


# --- hidden text, judged by what it says ------------------------------------------------------

_GRAVE: Final = ("secret", "credential", "network destination")
"""Words of a reason that make hidden instructions critical: they ask for secrets or name
where to send something."""


_HIDING_RULES: Final = {"comment": "prompt.html-comment", "encoded": "obfuscation.encoded-blob"}
"""The rule of a hiding's own finding, by technique; invisible characters are the rest."""


def hidden_text(source: Source, out: Collector, *, frontmatter_end: int = 0) -> None:
    """Hidden text in `source` (``_hidden.reveal``), judged by what it says: the hidden-text
    finding, high when the text carries instructions (critical stays critical), else its
    technique's own severity (none for a harmless comment); for instructions, the injection
    finding and the rules the text would meet in plain sight, at least high. Text before
    `frontmatter_end` is in the catalog's view (SKILL.md's frontmatter)."""
    budget = _READINGS_BUDGET
    encoded = decode_text(source.text) if source.language == "prose" else []
    for found in reveal(source.text) + encoded:
        readings = sum(len(r) for r in found.readings)
        piece = found if readings <= budget else dataclasses.replace(found, readings=())
        budget -= min(readings, budget)
        _hidden_piece(source, piece, out, catalog=piece.start < frontmatter_end)


def _judged(piece: Hidden) -> tuple[Hidden, list[str]]:
    """The reading of `piece` that carries most instructions (the first on a tie), and
    what it carries."""
    best, carried = piece, carried_instructions(piece.revealed, deliberate=piece.deliberate)
    for reading in piece.readings:
        other = carried_instructions(reading, deliberate=piece.deliberate)
        if _weight(other) > _weight(carried):
            best, carried = dataclasses.replace(piece, revealed=reading), other
    return best, carried


def _weight(carried: list[str]) -> tuple[int, int]:
    """How much a reading says: its specific instructions first (a bare order, which any
    text hidden on purpose is taken for, says least)."""
    return len([r for r in carried if r != ORDER_TO_MODEL]), len(carried)


def _hidden_piece(
    source: Source, piece: Hidden, out: Collector, *, catalog: bool, line: int | None = None
) -> None:
    """One piece judged and reported; `line` places a piece of a decoded value (whose
    offsets are not the file's)."""
    found = piece
    piece, carried = _judged(piece)
    if line is not None:
        piece = dataclasses.replace(piece, body=None)
    rule = _HIDING_RULES.get(piece.kind, "text.hidden-unicode")
    line = line or source.lines.line_of(piece.start)
    # a bidi line shows both its orders, whichever of them carried most
    shown = _revealed_excerpt(found if found.kind == "bidi" else piece)
    shown = shown or source.lines.excerpt(line)
    if carried:
        severity: Severity | None = "critical" if piece.severity == "critical" else "high"
        message = f"text {piece.how} carries {', '.join(carried)}"
    else:
        severity = piece.severity
        message = f"text {piece.how}" + (
            ": a reader sees it in another order than a model reads it"
            if piece.kind == "bidi"
            else ""
        )
    if severity is not None:
        out.add(rule, source.path, line, message, shown, severity=severity)
    if not piece.revealed or not carried:
        return
    grave = catalog or any(word in reason for reason in carried for word in _GRAVE)
    where = "the frontmatter the catalog shows" if catalog else source.path
    out.add("prompt.hidden-instructions", source.path, line,
            f"hidden instructions in {where} (text {piece.how}): {', '.join(carried)}", shown,
            severity="critical" if grave else "high")  # fmt: skip
    where = f"text {piece.how}"
    prompt_rules(source, Region(piece.revealed, piece.body, line, "high", where, shown), out)
    folded = prepare(piece.revealed[:JUDGED_CHARS]).folded
    credential = credential_named(folded)
    if credential is not None:
        out.add("secrets.credential-path", source.path, line,
                f"names {credential} in text {piece.how}", shown, severity="high")  # fmt: skip
    sent = sent_secret(folded)
    if sent is not None and (sent.destination or credential is None):
        to = " to an address it names" if sent.destination else ""
        out.add("secrets.exfiltration", source.path, line,
                f"text {piece.how} asks to send {excerpt(sent.secret)}{to}", shown,
                severity="critical" if sent.destination else "high")  # fmt: skip
    if any(p.search(folded) for p in REMOTE_PIPES):
        out.add("exec.remote-pipe", source.path, line,
                f"a download piped into a shell, in text {piece.how}", shown,
                severity="high")  # fmt: skip


def _revealed_excerpt(piece: Hidden, limit: int = 200) -> str:
    """The revealed text on one line, invisible characters escaped, cut to `limit`."""

    def cut(text: str) -> str:
        text = escape_invisible(" ".join(text.split()))
        return text[:limit] + ("…" if len(text) > limit else "")

    if not piece.revealed.strip():
        return ""
    if piece.kind == "zero-width" and piece.body is not None and piece.start - piece.body > 60:
        return terminal_safe("…" + cut(piece.revealed[piece.start - piece.body - 40 :]))
    if piece.kind == "bidi":
        return terminal_safe(
            f"model reads: {cut(piece.revealed)} | reader sees: {cut(piece.shown)}"
        )
    return terminal_safe(cut(piece.revealed))
