"""The scanner's rules for text a model reads: prompt injection in SKILL.md (body and
frontmatter values), reference files, and the strings and comments of scripts.

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
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._text import INVISIBLE, URL, Collector, Source, excerpt

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
_COMMENTS: Final = re.compile(
    r"<!--((?:[^-]|-(?!->)){0,20000})(?:-->|\Z)"
    r"|^\[[^\]\n]{0,40}\]:\s*(?:#|<>)\s*"
    r"(?:\"([^\"\n]{0,2000})\"|\(([^)\n]{0,2000})\)|'([^'\n]{0,2000})')",
    re.MULTILINE,
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
    """

    text: str
    offset: int | None
    line: int | None
    severity: Severity
    where: str


def scan_prose(source: Source, regions: list[Region], out: Collector) -> None:
    """The injection rules over each region of `source`."""
    for region in regions:
        _region(source, region, out)
        if region.offset is not None:
            _comments(source, region, out)
    if not source.text.isascii():
        _mixed_words(source, out)


def _region(source: Source, region: Region, out: Collector, *, inside: str = "") -> bool:
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
                message = f"{what} in {inside or region.where}: {_quote(phrase)}"
                _add(source, region, out, rule, start, message=message, severity=severity)
    return found


def _comments(source: Source, region: Region, out: Collector) -> None:
    """HTML and Markdown comments that address the model or hold an instruction."""
    assert region.offset is not None
    for match in _COMMENTS.finditer(region.text):
        group = next(g for g in range(1, 5) if match.group(g) is not None)
        body = match.group(group)
        inner = Region(
            body, region.offset + match.start(group), None, region.severity, region.where
        )
        instructs = _region(source, inner, out, inside=f"a comment in {region.where}")
        read = _prepare(body)
        if instructs or (_ADDRESSES_MODEL.search(read.folded) and _IMPERATIVE.search(read.folded)):
            message = (
                f"a hidden comment in {region.where} speaks to the model: "
                f"{_quote(read.text.strip())}"
            )
            _add(source, region, out, "prompt.html-comment", match.start(), message=message,
                 severity="high")  # fmt: skip


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
        out.add(rule, source.path, line, message, source.lines.excerpt(line), severity=severity)
    else:
        out.at(source, rule, region.offset + offset, message, severity=severity)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(excerpt(text[:100] + ("…" if len(text) > 100 else "")))
