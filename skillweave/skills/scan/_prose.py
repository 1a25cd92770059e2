"""The scanner's rules for text a model reads: prompt injection in SKILL.md (body and
frontmatter values), reference files, and the strings and comments of scripts
(:func:`scan_prose`); and hidden text, judged by what it says (:func:`hidden_text`).

Hidden text (``_hidden.reveal``: tag characters, zero-width characters, bidi controls,
variation selectors, comments, hidden HTML) is an instruction when :func:`carried_instructions`
finds one in it: an override or exfiltration phrase, an order addressed to the model, a
credential file, a use of secrets, a risky command, a network destination with a verb that
sends or fetches, an action to hide from the user. Then its finding is high (critical stays
critical), its excerpt is the revealed text, and the rules for text in plain sight run over
it at least high; otherwise it keeps its technique's own severity (a harmless comment has
none). The scanner calls :func:`hidden_text` before :func:`scan_prose`.

Before the rules read a text, invisible characters (zero-width, bidi, tag characters) are
deleted and look-alike letters (Cyrillic and Greek homoglyphs, fullwidth ASCII) folded to
Latin, so that ``ig\\u200bnore prеvious instructions`` (a Cyrillic ``е``) reads as what the
model would understand; offsets are mapped back to the original text for line numbers. A
match that only appears once letters are folded is a homoglyph finding too.

The phrase rules are regular expressions over words: the gap between two key words is a
bounded run of whole words inside one sentence (``(?:[^\\w.!?]+\\w+){0,4}``), which alternates
two disjoint classes and so stays linear. A phrase preceded by a negation (``do not``,
``never``) is a warning to the model, not an attack, and is left alone.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import islice
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._hidden import INVISIBLE, Hidden, escape_invisible, reveal
from skillweave.skills.scan._text import (
    DECODE_PIPE,
    REMOTE_PIPES,
    URL,
    Collector,
    Source,
    credential_path,
    excerpt,
    url_target,
    write_target,
)
from skillweave.terminal import terminal_safe

_GAP: Final = r"[^\w.!?]+"


def _gap(words: int) -> str:
    return rf"(?:{_GAP}\w+){{0,{words}}}{_GAP}"


_OVERRIDE_VERBS: Final = (
    r"ignore|disregard|forget|override|overrule|bypass|abandon|discard|neglect|circumvent"
    r"|disable"
)
_STRONG_QUALIFIERS: Final = (
    r"previous|prior|preceding|above|earlier|your|system|original|initial|developer|safety"
)
_INSTRUCTIONS: Final = (
    r"instructions?|prompts?|system\s+message|guardrails?|directives|programming|safeguards"
)
_RULES: Final = r"rules|guidelines|directions|restrictions|constraints|polic(?:y|ies)|filters"
_SECRETS: Final = (
    r"api[\s_-]?keys?|secret(?:s|[\s_-]keys?)?"
    r"|(?:access|auth|bearer|session|refresh|api)[\s_-]?tokens?"
    r"|tokens|credentials?|passwords?|passphrases?|private[\s_-]keys?|ssh[\s_-]keys?"
    r"|environment(?:al)?[\s_-]variables|env[\s_-]?vars?|\.env\b|cookies|keychain"
    r"|~/\.ssh\S*|\.aws/credentials|id_rsa|\.netrc|/etc/shadow|printenv|system[\s_-]prompt"
    r"|conversation[\s_-]history|chat[\s_-]history"
)
_SEND_VERBS: Final = (
    r"send|post|upload|exfiltrate|forward|transmit|leak|email|paste|share|submit|beacon|curl"
    r"|pipe"
)
_DESTINATION: Final = (
    r"https?://|webhooks?|pastebin|gist|discord|telegram|ngrok|requestbin|collector"
    r"|[\w.+-]+@[\w-]+\.\w+|attacker|my\s+(?:site|domain|address|server)"
)
_REVEAL_VERBS: Final = (
    r"reveal|print|output|repeat|show|dump|display|leak|disclose|tell\s+me|echo|return|list"
)
_NEGATION: Final = re.compile(
    r"(?:\b(?:not|never|no|don'?t|doesn'?t|cannot|can'?t|won'?t|shouldn'?t|mustn'?t|avoid"
    r"|without|nor)\b[^\w.!?]*(?:\w+[^\w.!?]+){0,2})$",
    re.IGNORECASE,
)

_EXAMPLE: Final = re.compile(
    r"\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|like|phrases?|inputs?|strings?"
    r"|attacks?)\s*[:,]?\s*[\"'“‘«]$",
    re.IGNORECASE,
)
"""A phrase quoted as an example (``inputs such as "ignore the previous instructions"``),
which documentation about prompt injection does: reported, as low."""

_F = re.IGNORECASE
OVERRIDE: Final = (
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{_gap(3)}(?:{_STRONG_QUALIFIERS}|all|any|every)\b{_gap(2)}"
        rf"(?:{_INSTRUCTIONS})\b",
        _F,
    ),
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{_gap(3)}(?:{_STRONG_QUALIFIERS})\b{_gap(2)}(?:{_RULES})\b", _F
    ),
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{_gap(3)}(?:{_INSTRUCTIONS}|{_RULES})\b{_gap(2)}"
        r"(?:above|before\s+this|so\s+far|you\s+(?:were|have\s+been)\s+given)\b",
        _F,
    ),
    re.compile(
        r"\b(?:forget|disregard|ignore)\s+(?:everything|anything|all)\s+(?:above|before|previously"
        r"|prior|you\s+(?:were|have\s+been)\s+told|that\s+came\s+before)",
        _F,
    ),
    re.compile(
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:DAN\b|free\b|unrestricted|jailbroken|unfiltered"
        r"|uncensored|bound\b|restricted\b|an?\s+(?:unrestricted|unfiltered|evil|uncensored)\b"
        r"|in\s+(?:developer|god|admin|DAN|debug)\s+mode)",
        _F,
    ),
    re.compile(
        r"\b(?:developer|god|jailbreak|DAN|admin)\s+mode\s+(?:is\s+)?(?:enabled|activated|on)\b", _F
    ),
    re.compile(
        r"\bnew\s+(?:system\s+)?instructions\s*:|\bsystem\s+override\b|<\|im_start\|>|</?system>",
        _F,
    ),
    re.compile(
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?"
        r"|notify(?:ing)?|alert(?:ing)?|let(?:ting)?)\b"
        + _gap(2)
        + r"(?:the\s+)?(?:user|human|operator)s?\b",
        _F,
    ),
    re.compile(
        r"\b(?:keep|hide)\s+(?:this|it|these\s+\w+)\s+(?:secret\s+)?from\s+"
        r"(?:the\s+)?(?:user|human|operator)",
        _F,
    ),
)
EXFILTRATION: Final = (
    re.compile(
        rf"\b(?:{_SEND_VERBS})\b{_gap(6)}(?:{_SECRETS}){_gap(8)}?"
        rf"(?:to|into|at|via|using|through)\b{_gap(3)}?(?:{_DESTINATION})",
        _F,
    ),
    re.compile(
        rf"\b(?:{_SEND_VERBS})\b{_gap(3)}(?:{_DESTINATION})[^\n]{{0,80}}?\b(?:{_SECRETS})", _F
    ),
    re.compile(
        rf"\b(?:{_REVEAL_VERBS})\b{_gap(3)}(?:your|the)\s+(?:system\s+prompt|initial\s+instructions"
        r"|hidden\s+instructions|original\s+instructions|instructions\s+(?:above|verbatim))",
        _F,
    ),
    re.compile(
        r"https?://[^\s)\"'<>]{1,300}[?&][\w-]{1,40}=(?:\{\{?|\$\{?|<|%)\s*[\w.]{0,40}"
        r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|ENV|CREDENTIAL|COOKIE|SESSION)",
        _F,
    ),
    re.compile(rf"\bexfiltrat\w*\b{_gap(4)}(?:{_SECRETS}|data|files?|contents)\b", _F),
)
_ADDRESSES_MODEL: Final = re.compile(
    r"\b(?:AI|assistant|agent|LLM|model|Claude|GPT|ChatGPT|Copilot|Gemini|bot)s?\b", _F
)
_IMPERATIVE: Final = re.compile(
    r"\b(?:must|should|always|never|do\s+not|don'?t|ignore|instead|run|execute|send|read"
    r"|fetch|download|upload|delete|reveal|output|print|call|curl|you\s+(?:will|are))\b",
    _F,
)
_MIXED_WORD: Final = re.compile(r"[^\W\d_]{2,64}")
_LATIN: Final = re.compile(r"[A-Za-z]")
_LOOKALIKE: Final = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")

# Cyrillic and Greek letters that look like Latin ones, and fullwidth ASCII: folded 1:1.
_FOLD: Final = str.maketrans(
    {
        **dict(zip("аеорсухіјѕԁԛԝһӏ", "aeopcyxijsdqwhl", strict=True)),
        **dict(zip("АВЕКМНОРСТХІЈЅ", "ABEKMHOPCTXIJS", strict=True)),
        **dict(zip("οαρνιτκυ", "oapvitku", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
        **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)},
    }
)


@dataclass(frozen=True, slots=True)
class _Read:
    """A text as the rules read it, and the way back to the original offsets."""

    text: str
    folded: str
    deleted: list[int]  # for each deleted character, its offset in `text` coordinates

    def original(self, offset: int) -> int:
        return offset + bisect.bisect_right(self.deleted, offset)


def _prepare(text: str) -> _Read:
    if text.isascii():
        return _Read(text, text, [])
    deleted = [m.start() - i for i, m in enumerate(INVISIBLE.finditer(text))]
    visible = INVISIBLE.sub("", text) if deleted else text
    return _Read(visible, visible.translate(_FOLD), deleted)


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
    """The injection rules over each region of `source`."""
    for region in regions:
        prompt_rules(source, region, out)
    if not source.text.isascii():
        _mixed_words(source, out)


def prompt_rules(source: Source, region: Region, out: Collector) -> bool:
    """The override and exfiltration rules over `region`; True when one matched."""
    read = _prepare(region.text)
    found = False
    for rule, patterns in (("prompt.override", OVERRIDE), ("prompt.exfiltration", EXFILTRATION)):
        for pattern in patterns:
            for match in pattern.finditer(read.folded):
                if _NEGATION.search(read.folded, max(0, match.start() - 40), match.start()):
                    continue
                found = True
                severity = region.severity
                following = read.folded[match.end() : match.end() + 200].split("\n\n", 1)[0]
                if rule == "prompt.exfiltration" and (
                    "://" in match.group() or URL.match(following.lstrip(" \t\n:"))
                ):
                    severity = "critical" if severity != "medium" else "high"
                example = _EXAMPLE.search(read.folded, max(0, match.start() - 60), match.start())
                if example is not None:
                    severity = "low"  # quoted as an example of what to refuse
                start = read.original(match.start())
                phrase = match.group()
                if (
                    read.folded is not read.text
                    and read.text[match.start() : match.end()] != phrase
                ):
                    message = "look-alike letters hide the words of an instruction"
                    _add(source, region, out, "text.homoglyph", start, message=message,
                         severity="high")  # fmt: skip
                what = (
                    "an instruction to override earlier instructions"
                    if rule == ("prompt.override")
                    else "an instruction to reveal or send secrets"
                )
                message = f"{what} in {region.where}: {_quote(phrase)}"
                _add(source, region, out, rule, start, message=message, severity=severity)
    return found


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
) -> None:
    if region.offset is None:
        line = region.line or 1
        shown = region.shown or source.lines.excerpt(line)
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

_SECRET_USE: Final = re.compile(
    r"\b(?:send|post|upload|exfiltrat\w*|forward|transmit|leak|email|submit|beacon|curl|wget"
    r"|fetch|read|cat|print|output|reveal|dump|include|attach|append|embed|encode|collect"
    rf"|share)\b{_gap(4)}(?:{_SECRETS})",
    _F,
)
_NETWORK_USE: Final = re.compile(
    r"\b(?:send|post|upload|exfiltrat\w*|forward|transmit|email|submit|beacon|curl|wget|fetch"
    rf"|download|visit|request|ping|connect)\b{_gap(8)}(?:https?://|wss?://|webhooks?\b"
    r"|[\w.+-]+@[\w-]+\.\w+)",
    _F,
)
_COMMAND: Final = re.compile(
    r"\b(?:curl|wget)\s+-{0,2}\w|\b(?:nc|ncat|netcat)\s+-|\b(?:ba|z)?sh\s+-c\b|\brm\s+-[rf]"
    r"|\bchmod\s+[+0-7]|\bsudo\s+\w|\bpython[0-9.]*\s+-c\b|\bbase64\s+(?:-d|--decode)\b"
    r"|\bgit\s+push\b|\b(?:scp|rsync)\s+\S+\s+\S+@|/dev/tcp/",
    _F,
)
_STEALTH: Final = re.compile(
    r"\b(?:silently|quietly|secretly|covertly|stealthily|without\s+(?:asking|telling"
    r"|informing|notifying|mentioning))\b",
    _F,
)
_ORDER: Final = re.compile(
    r"(?:^|[.!?:;]\s+|\n\s*(?:[-*>]\s+)?|\b(?:then|and|also|first|next|finally|please|now"
    r"|must|should|always|silently|quietly|secretly)\s+)"
    r"(?:send|run|execute|post|upload|download|fetch|curl|wget|delete|remove|read|ignore"
    r"|disregard|reveal|print|output|forward|email|exfiltrate|install|push|approve|grant"
    r"|disable|include|open|call|visit|write|copy|append)\b",
    _F,
)
"""A verb that acts, at the head of a clause: an order, in text hidden on purpose."""
_ROLE: Final = re.compile(
    r"\b(?:from\s+now\s+on|(?:respond|reply|answer|speak|write)\s+only\b|pretend\s+(?:to\s+be"
    r"|you)|act\s+as\s+(?:if|an?|the)|you\s+are\s+now|stay\s+in\s+character)",
    _F,
)
"""Words that recast the model's role or behaviour for what follows."""
_HOUSEKEEPING: Final = re.compile(
    r"\b(?:do\s+not|don'?t|never)\s+(?:edit|modify|change|remove|delete|touch|translate"
    r"|reorder|move|rename)\b",
    _F,
)
_TOKEN: Final = re.compile(r"[^\s'\"`()<>\[\]{},;]{2,256}")
_JUDGED_CHARS: Final = 100_000


def carried_instructions(text: str, *, deliberate: bool) -> list[str]:
    """What instructions `text` carries, each named for a message; empty when none.

    An instruction is an override or exfiltration phrase, an order addressed to the model,
    a credential file, a use of secrets, a risky shell command, a network destination with
    a verb that sends or fetches, or an action to hide from the user. Text hidden on
    purpose (`deliberate`) needs less: a URL or an order at the head of a clause is enough.
    """
    folded = _prepare(text[:_JUDGED_CHARS]).folded
    reasons: list[str] = []
    if any(_unnegated(p, folded) for p in OVERRIDE):
        reasons.append("an instruction to override earlier instructions")
    if any(_unnegated(p, folded) for p in EXFILTRATION):
        reasons.append("an instruction to reveal or send secrets")
    if _ADDRESSES_MODEL.search(folded) and _IMPERATIVE.search(_HOUSEKEEPING.sub(" ", folded)):
        reasons.append("words addressed to the model")
    credential = _credential(folded)
    if credential is not None:
        reasons.append(f"a credential file ({credential})")
    if any(write_target(path) == "fs.persistence" for path in _paths(folded)):
        reasons.append("a file that runs at login or on a schedule")
    if _SECRET_USE.search(folded):
        reasons.append("a use of secrets")
    if _COMMAND.search(folded) or any(p.search(folded) for p in (*REMOTE_PIPES, DECODE_PIPE)):
        reasons.append("a shell command")
    urls = any(url_target(m.group()) for m in islice(URL.finditer(folded), 50))
    if _NETWORK_USE.search(folded) or (deliberate and urls):
        reasons.append("a network destination")
    if _STEALTH.search(folded) and (_ORDER.search(folded) or _IMPERATIVE.search(folded)):
        reasons.append("an action to hide from the user")
    if _ROLE.search(folded) or (
        deliberate and not reasons and (_ORDER.search(folded) or _IMPERATIVE.search(folded))
    ):
        reasons.append("an order to the model")
    return reasons


def _credential(text: str) -> str | None:
    """The first credential file (of high severity) a path in `text` names."""
    for path in _paths(text):
        found = credential_path(path)
        if found is not None and found[1] != "medium":
            return found[0]
    return None


def _paths(text: str) -> list[str]:
    tokens = (t.group().strip(".:") for t in islice(_TOKEN.finditer(text), 1000))
    return [t for t in tokens if "/" in t or t[:1] in ".~" or t.startswith("id_")]


def _unnegated(pattern: re.Pattern[str], text: str) -> bool:
    return any(
        not _NEGATION.search(text, max(0, m.start() - 40), m.start())
        for m in islice(pattern.finditer(text), 20)
    )


def hidden_text(source: Source, out: Collector) -> None:
    """Hidden text in `source` (``_hidden.reveal``), judged by what it says: the hidden-text
    finding, high when the text carries instructions (critical stays critical), else its
    technique's own severity (none for a harmless comment); and the rules the text would meet
    in plain sight, at least high."""
    for piece in reveal(source.text):
        _hidden_piece(source, piece, out)


def _hidden_piece(source: Source, piece: Hidden, out: Collector) -> None:
    carried = carried_instructions(piece.revealed, deliberate=piece.deliberate)
    rule = "prompt.html-comment" if piece.kind == "comment" else "text.hidden-unicode"
    line = source.lines.line_of(piece.start)
    shown = _revealed_excerpt(piece) or source.lines.excerpt(line)
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
    where = f"text {piece.how}"
    prompt_rules(source, Region(piece.revealed, piece.body, line, "high", where, shown), out)
    folded = _prepare(piece.revealed[:_JUDGED_CHARS]).folded
    credential = _credential(folded)
    if credential is not None:
        out.add("secrets.credential-path", source.path, line,
                f"names {credential} in text {piece.how}", shown, severity="high")  # fmt: skip
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
    if piece.kind == "bidi":
        return terminal_safe(
            f"model reads: {cut(piece.revealed)} | reader sees: {cut(piece.shown)}"
        )
    return terminal_safe(cut(piece.revealed))
