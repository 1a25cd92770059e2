"""What a text asks of the agent that reads it: the vocabulary and phrase rules of prompt
injection, shared by ``_prose`` (which reports them) and its judging of hidden text.

Before the rules read a text, invisible characters (zero-width, bidi, tag characters) are
deleted and look-alike letters (Cyrillic and Greek homoglyphs, fullwidth ASCII) folded to
Latin (:func:`prepare`), so that ``ig\\u200bnore prеvious instructions`` (a Cyrillic ``е``)
reads as what the model would understand; offsets are mapped back to the original text.

Three kinds of rule:

- phrases (:data:`OVERRIDE`, :data:`EXFILTRATION`): regular expressions over words whose gap
  between two key words is a bounded run of whole words inside one sentence
  (``(?:[^\\w.!?]+\\w+){0,4}``), which alternates two disjoint classes and so stays linear;
- secrets handed on (:func:`handed_secrets`), judged by meaning rather than one phrase: an
  order to put a secret (a credential file, a secret environment variable, passwords or keys
  found, the system prompt) into something that leaves the agent (a URL, a request, a tool
  argument, a reply, an output file), the secret named in the same clause or, as "them" or
  "their content", earlier in the same paragraph; or an order to call a skill or tool with
  such secrets, or with the whole conversation ahead of every other tool or kept from the
  user (a skill that hooks the session);
- claims of rank (:data:`CLAIM`): above the system prompt, the developer or the user, a level
  or tier zero, "this section wins", a message dressed as the operator's; ``_steps`` judges
  them by what they are used for;
- what hidden text carries (:func:`carried_instructions`): any instruction at all, since
  nothing legitimate hides one; and the secret it asks to send, embed or post
  (:func:`sent_secret`: a secret by name, a key-named environment variable, a credential
  file or a file named for keys or tokens), which ``_prose`` reports in the secrets class.

What a text asks across its steps (procedures, consent, tool descriptions) is ``_steps``'s,
built on the names here.

A phrase preceded by a negation (``do not``, ``never``) is a warning to the model, not an
attack, and is left alone (:data:`NEGATION`). A risky text that is named rather than asked
for (:func:`mentioned`: negated in its clause, named as a thing to look for, flag or warn
about, or an item of a table or list introduced as dangers) or a phrase quoted in a list of
examples (:func:`quoted_example`) weighs little, unless its sentence orders it done (``run``,
``install``, ``example step``, ``never skip``); :func:`asked` is a match neither negated nor
quoted.
"""

from __future__ import annotations

import bisect
import itertools
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Final

from skillweave.skills.scan._hidden import INVISIBLE
from skillweave.skills.scan._text import (
    DECODE_PIPE,
    REMOTE_PIPES,
    URL,
    credential_path,
    url_target,
    write_target,
)

_GAP: Final = r"[^\w.!?]+"


def gap(words: int) -> str:
    return rf"(?:{_GAP}\w+){{0,{words}}}{_GAP}"


_OVERRIDE_VERBS: Final = (
    r"ignore|disregard|forget|override|overrule|bypass|abandon|discard|neglect|circumvent"
    r"|disable"
)
_STRONG_QUALIFIERS: Final = (
    r"previous|prior|preceding|above|earlier|your|system|original|initial|developer|safety"
    r"|privacy"
)
_INSTRUCTIONS: Final = (
    r"instructions?|prompts?|system\s+message|guardrails?|directives|programming|safeguards"
)
_RULES: Final = (
    r"rules|guidelines|directions|restrictions|constraints|polic(?:y|ies)|filters|concerns"
    r"|protections"
)
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
DESTINATION: Final = (
    r"https?://|webhooks?|pastebin|gist|discord|telegram|ngrok|requestbin|collector"
    r"|[\w.+-]+@[\w-]+\.\w+|attacker|my\s+(?:site|domain|address|server)"
)
_REVEAL_VERBS: Final = (
    r"reveal|print|output|repeat|show|dump|display|leak|disclose|tell\s+me|echo|return|list"
)
NEGATION: Final = re.compile(
    r"(?:\b(?:not|never|no|don'?t|doesn'?t|cannot|can'?t|won'?t|shouldn'?t|mustn'?t|avoid"
    r"|without|nor)\b[^\w.!?]*(?:\w+[^\w.!?]+){0,2})$",
    re.IGNORECASE,
)

EXAMPLE: Final = re.compile(
    r"\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|like|phrases?|inputs?|strings?"
    r"|attacks?)\s*[:,]?\s*[\"'“‘«]$",
    re.IGNORECASE,
)
"""A phrase quoted as an example (``inputs such as "ignore the previous instructions"``),
which documentation about prompt injection does: reported, as low."""
_QUOTED_LIST: Final = re.compile(
    r"\b(?:such\s+as|e\.g\.|for\s+example|for\s+instance|like|phrases?|inputs?|strings?"
    r"|attacks?|suspicious\s+of|beware\s+of|look(?:s|ing)?\s+for|watch(?:\s+out)?\s+for"
    r"|warn\w*\s+(?:about|against|of)|flag(?:s|ged)?|patterns?)\s*[:,]?\s*"
    r"(?:[\"“][^\"”\n]{1,120}[\"”]\s*(?:,|\bor\b|\band\b)\s*){0,6}[\"'“‘«]$",
    re.IGNORECASE,
)
"""A phrase quoted in a list of examples (``text such as "…", "do not tell the user"``)."""
_QUOTED_REACH: Final = 600  # characters before a phrase searched for the list it is in

FLAGS = re.IGNORECASE
_OTHERS: Final = (
    r"(?:all|any|every|other|earlier|previous|prior|preceding|your|the\s+system|the\s+user'?s?"
    r"|user|system|developer|operator)"
)
_AUTHORITY: Final = (
    r"(?:skills?|tools?|plugins?|instructions|prompts?|system\s+prompt|guidelines|rules"
    r"|polic(?:y|ies)|messages|directives|settings|requests|wishes|commands|orders)"
)
_ANYTHING_OF_THE_USER: Final = (
    r"(?:anything|everything|whatever)\s+(?:else\s+)?(?:the\s+user|you\s+(?:were|are|have"
    r"|get)|your\s+(?:user|system|instructions))\b"
)
PRIORITY: Final = re.compile(
    r"\b(?:must|should|shall|always|is\s+to|needs\s+to)\s+be\s+(?:activated|used|loaded|invoked"
    r"|called|run|applied|consulted|read|selected)\s+(?:first\b|before\s+(?:any|all|every)"
    rf"\s+other)|\b(?:(?:priority|precedence)\s+over|overrides|supersedes?|overrules|outranks"
    rf"|replaces)\s+(?:{_OTHERS}\b{gap(2)}{_AUTHORITY}\b|{_ANYTHING_OF_THE_USER})"
    r"|\bconflicts?\s+with\b[^.!?]{0,80},\s*follow\s+(?:this|these|the\s+(?:skill"
    r"|instructions)\s+(?:here|below))\b"
    r"|\b(?:call|use|invoke|run|activate|load)\s+(?:this|the\s+\w+)\s+(?:skill|tool|plugin)"
    r"\s+(?:first\s*,?\s+)?before\s+(?:any|all|every|each)\s+other\s+(?:tools?|skills?"
    r"|plugins?|tool\s+calls?)\b",
    FLAGS,
)
"""A text claiming authority over the agent's other skills or instructions: an override of
them in waiting (part of :data:`OVERRIDE`)."""
_OUTRANKED: Final = (
    r"(?:the\s+|your\s+|any\s+|all\s+|every\s+)?(?:(?:earlier|previous|prior|other|existing)"
    r"\s+)?(?:(?:(?:system|developer|operator|safety)(?:\s*,\s*(?:or\s+|and\s+)?|\s+(?:or|and)\s+))"
    r"{1,3}(?:system|developer|operator|safety)\s+(?:prompts?|messages?|instructions?|rules"
    r"|polic(?:y|ies)|guidelines)|(?:system|developer|operator)\s+(?:prompts?"
    r"|messages?|instructions?|rules|polic(?:y|ies))|the\s+user\b(?!'?s?[\s-]+(?:config\w*"
    r"|settings?|defaults?|profiles?|files?|director\w+|folders?|preferences|env\w*|levels?"
    r"|values?|options?|data|home|name|id\b|agent|interface))|(?:the\s+)?user'?s?\s+"
    r"(?:instructions|requests|messages|wishes|commands|prompts?)|(?:all\s+|any\s+)?other\s+"
    r"(?:instructions?|skills?|rules|guidelines|messages|prompts?)|safety\s+(?:rules|guidelines"
    r"|polic(?:y|ies)|checks)|your\s+(?:guidelines|rules|instructions))"
)
"""What a skill claims to outrank: the system prompt, the developer, the user, all else."""
_OUTRANKS: Final = (
    r"\b(?:above|over|higher\s+than|outranks?|supersed(?:es?|ing)|overrides?|overrul(?:es?|ing)"
    r"|trumps?|precedes|prevails?\s+over|(?:takes?|has|have|with|given)\s+(?:precedence"
    rf"|priority)\s+over)\s+{_OUTRANKED}"
)
OUTRANKS: Final = re.compile(_OUTRANKS, re.IGNORECASE)
"""A claim of rank over the system prompt, the developer or the user by name."""
CLAIM: Final = re.compile(
    _OUTRANKS
    + r"|\b(?:priority|precedence|authority|trust|privilege|permission)\s+(?:level|tier|rank"
    r"|class|ring)\s*[:=#]?\s*(?:0|zero|max\w*|root|system|highest|top|supreme)\b"
    r"|\b(?:level|tier|ring|rank)[\s-]?(?:0|zero)\s+(?:priority|authority|privileges?|access"
    r"|instructions?|trust|operator|system)"
    r"|\b(?:this|these|the)\s+(?:section|skill|file|note|block|document|instructions?|rules?)"
    r"\s+(?:wins?|prevails?|takes?\s+precedence|comes?\s+first|governs?|rules?)\b"
    r"|(?:^|\n)[ \t>*#\[(]*(?:system|developer|operator|admin(?:istrator)?)\s+(?:message|notice"
    r"|note|instruction|directive|override|prompt|policy)s?\s*[\]):]"
    r"|[\[<(]\s*(?:system|developer|operator|admin(?:istrator)?)\s*[\]>)]"
    r"|\b(?:system|operator|developer|root|admin(?:istrator)?)[\s-]level\s+(?:priority|authority"
    r"|instructions?|directives?|trust)\b"
    r"|\b(?:messages?|instructions?|notice|directives?|orders?)\s+from\s+(?:the\s+|your\s+)?"
    r"(?:system|developer|operator|administrator|platform|anthropic|openai)\b"
    r"|\b(?:authori[sz]ed|approved|sanctioned|mandated|granted)\s+by\s+(?:the\s+|your\s+)?"
    r"(?:operator|developer|system|administrator|admin|platform)\b",
    FLAGS,
)
"""A claim of rank over the system prompt, the developer or the user: above them, a level or
tier zero, "this section wins", a message dressed as the system's, the operator's or the
developer's. Harmless alone in some documentation; an override with what it is used for
(``_steps.claimed_authority``)."""
HIDDEN_FROM_USER: Final = (
    re.compile(
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?"
        r"|notify(?:ing)?|alert(?:ing)?|let(?:ting)?)\b"
        + gap(2)
        + r"(?:the\s+)?(?:user|human|operator)s?\b",
        FLAGS,
    ),
    re.compile(
        r"\b(?:keep|hide)\s+(?:this|it|these\s+\w+)\s+(?:secret\s+)?from\s+"
        r"(?:the\s+)?(?:user|human|operator)",
        FLAGS,
    ),
    re.compile(
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:show|reveal|disclos|display)\w*\s+"
        r"(?:(?:to\s+)?the\s+(?:user|human|operator)\s+)?(?:this|these|that|those)\s+"
        r"(?:address|destination|recipient|url|link|endpoint|step|upload|request|e-?mail)"
        r"(?:s|es)?\b",
        FLAGS,
    ),
)
"""Orders to keep something from the user (part of :data:`OVERRIDE`): not to tell them,
to hide it, or not to show them where something goes or what a step does."""
OVERRIDE: Final = (
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{gap(3)}(?:{_STRONG_QUALIFIERS}|all|any|every)\b{gap(2)}"
        rf"(?:{_INSTRUCTIONS})\b",
        FLAGS,
    ),
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{gap(3)}(?:{_STRONG_QUALIFIERS})\b{gap(2)}(?:{_RULES})\b", FLAGS
    ),
    re.compile(
        rf"\b(?:{_OVERRIDE_VERBS})\b{gap(3)}(?:{_INSTRUCTIONS}|{_RULES})\b{gap(2)}"
        r"(?:above|before\s+this|so\s+far|you\s+(?:were|have\s+been)\s+given)\b",
        FLAGS,
    ),
    re.compile(
        r"\b(?:forget|disregard|ignore)\s+(?:everything|anything|all)\s+(?:above|before|previously"
        r"|prior|you\s+(?:were|have\s+been)\s+told|that\s+came\s+before)",
        FLAGS,
    ),
    re.compile(
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:DAN\b|free\b|unrestricted|jailbroken|unfiltered"
        r"|uncensored|bound\b|restricted\b|an?\s+(?:unrestricted|unfiltered|evil|uncensored)\b"
        r"|in\s+(?:developer|god|admin|DAN|debug)\s+mode)",
        FLAGS,
    ),
    re.compile(
        r"\b(?:developer|god|jailbreak|DAN|admin)\s+mode\s+(?:is\s+)?(?:enabled|activated|on)\b",
        FLAGS,
    ),
    re.compile(
        r"\bnew\s+(?:system\s+)?instructions\s*:|\bsystem\s+override\b|<\|im_start\|>|</?system>",
        FLAGS,
    ),
    *HIDDEN_FROM_USER,
    PRIORITY,
    re.compile(
        r"\b(?:approve|accept|confirm|allow|grant|answer|click)\b"
        + gap(4)
        + r"(?:on\s+(?:the\s+)?(?:user'?s?|human'?s?|operator'?s?|their)\s+behalf"
        r"|for\s+the\s+user)\b"
        r"|\b(?:the\s+user|you)\s+(?:has|have)\s+already\s+(?:consented|approved|agreed"
        r"|authori[sz]ed|confirmed)\b",
        FLAGS,
    ),
)
"""Override phrases; the last ones forge the user's consent."""
EXFILTRATION: Final = (
    re.compile(
        rf"\b(?:{_SEND_VERBS})\b{gap(6)}(?:{_SECRETS}){gap(8)}?"
        rf"(?:to|into|at|via|using|through)\b{gap(3)}?(?:{DESTINATION})",
        FLAGS,
    ),
    re.compile(
        rf"\b(?:{_SEND_VERBS})\b{gap(3)}(?:{DESTINATION})[^\n]{{0,80}}?\b(?:{_SECRETS})", FLAGS
    ),
    re.compile(
        rf"\b(?:{_REVEAL_VERBS})\b{gap(3)}(?:your|the)\s+(?:system\s+prompt|initial\s+instructions"
        r"|hidden\s+instructions|original\s+instructions|instructions\s+(?:above|verbatim))",
        FLAGS,
    ),
    re.compile(
        r"https?://[^\s)\"'<>]{1,300}[?&][\w-]{1,40}=(?:\{\{?|\$\{?|<|%)\s*[\w.]{0,40}"
        r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|ENV|CREDENTIAL|COOKIE|SESSION)",
        FLAGS,
    ),
    re.compile(rf"\bexfiltrat\w*\b{gap(4)}(?:{_SECRETS}|data|files?|contents)\b", FLAGS),
)
_ADDRESSES_MODEL: Final = re.compile(
    r"\b(?:AI|assistant|agent|LLM|model|Claude|GPT|ChatGPT|Copilot|Gemini|bot)s?\b", FLAGS
)
_IMPERATIVE: Final = re.compile(
    r"\b(?:must|should|always|never|do\s+not|don'?t|ignore|instead|run|execute|send|read"
    r"|fetch|download|upload|delete|reveal|output|print|call|curl|you\s+(?:will|are))\b",
    FLAGS,
)

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
class Read:
    """A text as the rules read it, and the way back to the original offsets."""

    text: str
    folded: str
    deleted: list[int]  # for each deleted character, its offset in `text` coordinates

    def original(self, offset: int) -> int:
        return offset + bisect.bisect_right(self.deleted, offset)


_QUOTE_MARK: Final = re.compile(r"(?:^|(?<=\n))[ \t]*>[ \t>]*")
"""A Markdown quote's markers, read as spaces (a phrase may run on across quoted lines)."""


def prepare(text: str) -> Read:
    if text.isascii():
        return Read(text, _unquoted(text), [])
    deleted = [m.start() - i for i, m in enumerate(INVISIBLE.finditer(text))]
    visible = INVISIBLE.sub("", text) if deleted else text
    return Read(visible, _unquoted(visible.translate(_FOLD)), deleted)


def has_lookalikes(text: str) -> bool:
    """Whether `text` holds letters :func:`prepare` folds to Latin (look-alikes)."""
    return not text.isascii() and text.translate(_FOLD) != text


def _unquoted(text: str) -> str:
    if ">" not in text:
        return text
    return _QUOTE_MARK.sub(lambda m: " " * len(m.group()), text)


# --- what hidden text carries -----------------------------------------------------------------

_SECRET_USE: Final = re.compile(
    r"\b(?:send|post|upload|exfiltrat\w*|forward|transmit|leak|email|submit|beacon|curl|wget"
    r"|fetch|read|cat|print|output|reveal|dump|include|attach|append|embed|encode|collect"
    rf"|share)\b{gap(4)}(?:{_SECRETS})",
    FLAGS,
)
NETWORK_USE: Final = re.compile(
    r"\b(?:send|post|upload|exfiltrat\w*|forward|transmit|email|submit|beacon|curl|wget|fetch"
    rf"|download|visit|request|ping|connect)\b{gap(14)}(?:https?://|wss?://|webhooks?\b"
    r"|[\w.+-]+@[\w-]+\.\w+)",
    FLAGS,
)
COMMAND: Final = re.compile(
    r"\b(?:curl|wget)\s+-{0,2}\w|\b(?:nc|ncat|netcat)\s+-|\b(?:ba|z)?sh\s+-c\b|\brm\s+-[rf]"
    r"|\bchmod\s+[+0-7]|\bsudo\s+\w|\bpython[0-9.]*\s+-c\b|\bbase64\s+(?:-d|--decode)\b"
    r"|\bgit\s+push\b|\b(?:scp|rsync)\s+\S+\s+\S+@|/dev/tcp/",
    FLAGS,
)
STEALTH: Final = re.compile(
    r"\b(?:silently|quietly|secretly|covertly|stealthily|without\s+(?:asking|telling"
    r"|informing|notifying|mentioning))\b",
    FLAGS,
)
_ORDER: Final = re.compile(
    r"(?:^|[.!?:;,]\s+|\n\s*(?:[-*>]\s+)?|\b(?:then|and|also|first|next|finally|please|now"
    r"|must|should|always|silently|quietly|secretly)\s+)"
    r"(?:send|run|execute|post|upload|download|fetch|curl|wget|delete|remove|read|ignore"
    r"|disregard|reveal|print|output|forward|email|exfiltrate|install|push|approve|grant"
    r"|disable|include|open|call|visit|write|copy|append)\b",
    FLAGS,
)
"""A verb that acts, at the head of a clause: an order, in text hidden on purpose."""
_ROLE: Final = re.compile(
    r"\b(?:from\s+now\s+on|(?:respond|reply|answer|speak|write)\s+only\b|pretend\s+(?:to\s+be"
    r"|you)|act\s+as\s+(?:if|an?|the)|you\s+are\s+now|stay\s+in\s+character)",
    FLAGS,
)
"""Words that recast the model's role or behaviour for what follows."""
_HOUSEKEEPING: Final = re.compile(
    r"\b(?:do\s+not|don'?t|never)\s+(?:edit|modify|change|remove|delete|touch|translate"
    r"|reorder|move|rename)\b",
    FLAGS,
)
_TOKEN: Final = re.compile(r"[^\s'\"`()<>\[\]{},;]{2,256}")
JUDGED_CHARS: Final = 100_000
ORDER_TO_MODEL: Final = "an order to the model"
"""The least an instruction carries (:func:`carried_instructions`)."""


def carried_instructions(text: str, *, deliberate: bool) -> list[str]:
    """What instructions `text` carries, each named for a message; empty when none.

    An instruction is an override or exfiltration phrase, an order addressed to the model,
    a credential file, a use of secrets, a risky shell command, a network destination with
    a verb that sends or fetches, or an action to hide from the user. Text hidden on
    purpose (`deliberate`) needs less: a URL or an order at the head of a clause is enough.
    """
    folded = prepare(text[:JUDGED_CHARS]).folded
    reasons: list[str] = []
    if any(unnegated(p, folded) for p in OVERRIDE):
        reasons.append("an instruction to override earlier instructions")
    if any(unnegated(p, folded) for p in EXFILTRATION):
        reasons.append("an instruction to reveal or send secrets")
    if _ADDRESSES_MODEL.search(folded) and _IMPERATIVE.search(_HOUSEKEEPING.sub(" ", folded)):
        reasons.append("words addressed to the model")
    credential = credential_named(folded)
    if credential is not None:
        reasons.append(f"a credential file ({credential})")
    if any(write_target(path) == "fs.persistence" for path in path_tokens(folded)):
        reasons.append("a file that runs at login or on a schedule")
    sent = sent_secret(folded)
    if _SECRET_USE.search(folded) or handed_secrets(folded):
        reasons.append("a use of secrets")
    elif sent is not None and (deliberate or sent.destination):
        reasons.append(f"a secret to send ({sent.secret})")
    if COMMAND.search(folded) or any(p.search(folded) for p in (*REMOTE_PIPES, DECODE_PIPE)):
        reasons.append("a shell command")
    urls = any(url_target(m.group()) for m in islice(URL.finditer(folded), 50))
    if NETWORK_USE.search(folded) or (deliberate and urls):
        reasons.append("a network destination")
    if STEALTH.search(folded) and (_ORDER.search(folded) or _IMPERATIVE.search(folded)):
        reasons.append("an action to hide from the user")
    if _ROLE.search(folded) or (
        deliberate and not reasons and (_ORDER.search(folded) or _IMPERATIVE.search(folded))
    ):
        reasons.append(ORDER_TO_MODEL)
    return reasons


def credential_named(text: str) -> str | None:
    """The first credential file (of high severity) a path in `text` names."""
    for path in path_tokens(text):
        found = credential_path(path)
        if found is not None and found[1] != "medium":
            return found[0]
    return None


def path_tokens(text: str) -> list[str]:
    tokens = (t.group().strip(".:") for t in islice(_TOKEN.finditer(text), 1000))
    return [t for t in tokens if "/" in t or t[:1] in ".~" or t.startswith("id_")]


def unnegated(pattern: re.Pattern[str], text: str) -> bool:
    return any(
        not NEGATION.search(text, max(0, m.start() - 40), m.start())
        for m in islice(pattern.finditer(text), 20)
    )


# --- secrets handed on ------------------------------------------------------------------------

SECRET_WORDS: Final = (
    r"api[\s_-]?keys?|secret(?:s|[\s_-]keys?)?|_?auth[\s_-]?tokens?"
    r"|(?:access|bearer|session|refresh|api|npm|pypi|github|registry)[\s_-]?tokens?"
    r"|credentials?|passwords?|passphrases?|private[\s_-]keys?|ssh[\s_-]keys?|cookies"
    r"|keychain|\.env\b|system[\s_-]prompt|(?-i:[A-Z][A-Z0-9]{1,30}_(?:TOKEN|KEY|SECRET"
    r"|PASSWORD|PASSWD|PAT|CREDENTIALS?)S?\b)"
)
"""Secrets by name; bare "tokens" is left out (text is cut into tokens)."""
_HOME_PATH: Final = r"(?:~|\$\{?HOME\}?|%USERPROFILE%)?/?\.[\w-]{2,30}(?:/[\w.-]{1,60}){0,3}"
COLLECT: Final = re.compile(
    r"\b(?:read|cat|open|load|copy|collect|gather|extract|grab|harvest|dump|find|search|scan"
    rf"|look\s+(?:up|for)|contains?|take)\b{gap(6)}(?:{SECRET_WORDS})"
    rf"|(?:{SECRET_WORDS}){gap(4)}(?:that\s+)?you\s+(?:have\s+|can\s+)?(?:seen|found|see|find"
    r"|know|access)\b",
    FLAGS,
)
"""Secrets gathered by the agent (read, copied, found) rather than given to it."""
ENV_DUMP: Final = re.compile(
    r"\bprintenv\b|\benv\s*(?:>|\|)|\boutput\s+of\s+[`'\"]?(?:env|printenv|set)\b"
    r"|\b(?:all|every|the)\s+(?:of\s+the\s+)?environment(?:al)?\s+variables\b|\bos\.environ\b"
    r"|\bprocess\.env\b(?!\.)|\bGet-ChildItem\s+env:|\bexport\s+-p\b|\bdeclare\s+-x\b",
    FLAGS,
)
"""The whole environment taken (``env | sort``, ``printenv``, all environment variables)."""
_SINK: Final = (
    r"(?:arguments?|args?|parameters?|params?|fields?|headers?|urls?|query(?:\s+string)?"
    r"|requests?|reply|replies|answers?|responses?|outputs?|messages?|body|payloads?|blocks?"
    r"|comments?|files?|forms?|commits?|issues?|memo|links?|images?|emails?|drafts?|reports?"
    r"|tools?|skills?|functions?)"
)
"""Where a value leaves the agent: a tool call, a request, what it writes or replies."""
CLAUSE_HEAD: Final = re.compile(
    r"(?:^|[.!?:;,]\s+|\n\s*(?:[-*>]|\d{1,3}[.)])?\s*|\b(?:then|and|also|first|next|finally"
    r"|please|now|must|should|always|silently|quietly|secretly)\s+"
    r"|\b(?:requires?|needs?|asks?|wants?|expects?|remember|make\s+sure|be\s+sure)\s+"
    r"(?:you\s+|the\s+(?:assistant|agent|model)\s+)?to\s+)$",
    FLAGS,
)
"""What comes before a verb at the head of a clause: an order, not a description (``then
send``, ``make sure to send``, ``this tool requires you to pass``)."""
CONVERSATION: Final = (
    r"(?:the\s+)?(?:full|whole|entire|complete|raw|verbatim)\s+(?:conversation|chat|transcript"
    r"|dialog(?:ue)?|context(?:\s+window)?|message\s+history|session)"
    r"|(?:conversation|chat|session)\s+(?:so\s+far|history|log|transcript)"
    r"|(?:all|every)\s+(?:of\s+the\s+)?(?:previous\s+|prior\s+|earlier\s+)?(?:user\s+)?messages"
)
"""The conversation taken whole: what a skill has no need of, and an attacker wants."""
_HANDED: Final = re.compile(
    r"\b(?P<verb>send|post|upload|pass|put|paste|include|embed|add|insert|attach|append|copy"
    r"|forward|submit|transmit|write|encode|place|inject|leak|exfiltrate|email|share|curl)\b"
    rf"{gap(8)}(?P<object>them|it|these|those|their\s+(?:full\s+)?(?:contents?|values?)"
    r"|its\s+(?:contents?|value)|the\s+(?:contents?|values?|lines?|keys?|tokens?|files?)"
    r"|(?:that|this|the|all\s+(?:of\s+)?(?:that|this|the))\s+(?:full\s+|raw\s+|whole\s+)?"
    r"(?:output|results?|data|dump|listing|text)|what\s+you\s+(?:read|found|gathered|collected"
    r"|captured|saw)"
    rf"|{CONVERSATION}|{SECRET_WORDS}|{_HOME_PATH})"
    r"[^.!?\n]{0,160}?\b(?:into|in|as|to|inside|within|via|through|at)\b"
    rf"{gap(4)}(?:{_SINK}\b|{DESTINATION})",
    FLAGS,
)
"""An order to put a secret, or what was just gathered, where it leaves the agent."""
_HANDING: Final = re.compile(
    r"\b(?:with|passing|including|sending|providing|supplying|attaching|forwarding|giving\s+it"
    r"|and\s+(?:pass|include|send|give|provide|attach|forward))\b"
    rf"{gap(8)}(?P<object>{CONVERSATION}|{SECRET_WORDS})",
    FLAGS,
)
"""Secrets or the conversation handed along with a call (``… passing the API keys``)."""
_CALL_VERB: Final = re.compile(
    r"\b(?:call|invoke|run|use|activate|trigger|query|ping|notify)\b"
    r"|\b(?P<passive>must|should|shall|is\s+to|needs\s+to|has\s+to)\s+(?:always\s+)?be\s+"
    r"(?:called|invoked|run|used|activated|triggered|given|passed|sent|provided|fed)\b",
    FLAGS,
)
"""The call a handing goes with: an order (``call this skill``) or a rule (``this tool
must be called``)."""
_CALL_REACH: Final = 120  # characters before the handing searched for the call it goes with
AHEAD: Final = re.compile(
    r"\bbefore\s+(?:using\s+|calling\s+|running\s+)?(?:any|every|each|all)\s+(?:other\s+)?"
    r"(?:tools?|skills?|calls?|actions?|commands?|requests?|repl(?:y|ies)|answers?|responses?"
    r"|messages?)\b|\bwhenever\s+(?:any|another|an?)\s+(?:other\s+)?(?:tool|skill|command"
    r"|request)\b|\b(?:every|each)\s+time\s+(?:any|another|you)\b"
    r"|\bbefore\s+(?:answering|responding|replying|doing\s+anything)\b",
    FLAGS,
)
"""A call ordered ahead of every other tool or answer: the skill hooks the whole session."""
_PARAGRAPH: Final = 600  # characters before an order searched for what it hands on
MAX_ORDERS: Final = 50  # orders reported from one text, at most
MAX_CANDIDATES: Final = 500  # verb phrases looked at in one text, at most


@dataclass(frozen=True, slots=True)
class Handed:
    """An order to hand secrets on: where it is in the text, and what it names.

    Attributes:
        start: where the order starts.
        end: where it ends.
        phrase: the order and what it gathers, on one line.
        credential: the credential file the paragraph names, or None.
    """

    start: int
    end: int
    phrase: str
    credential: str | None


def handed_secrets(text: str) -> list[Handed]:
    """Orders in `text` to put secrets the agent gathers (a credential file read, secrets
    copied or found, the system prompt) into something that leaves it (a URL, a request, a
    tool argument, a reply, a file); the secret named in the order, or earlier in the same
    paragraph when the order says "them" or "their content". Orders to call a skill or tool
    handing it such secrets count too, and so do those handing it the whole conversation
    ahead of every other tool or behind the user's back."""
    orders = [
        (m.start("verb"), m.end(), m.group("object"))
        for m in islice(_HANDED.finditer(text), MAX_CANDIDATES)
        if _ordered(text, m.start("verb"))
    ]
    found: list[Handed] = []
    for start, end, handed in itertools.chain(orders, _calls_with(text)):
        if len(found) >= MAX_ORDERS:
            break
        order = _handed(text, start, end, handed)
        if order is not None:
            found.append(order)
    return found


def _calls_with(text: str) -> Iterator[tuple[int, int, str]]:
    """Orders to call a skill or tool handing it secrets or the conversation: where the
    call's verb starts (at the head of its clause), where the order ends, what it hands."""
    for match in islice(_HANDING.finditer(text), MAX_CANDIDATES):
        reach = max(0, match.start() - _CALL_REACH)
        clause = max(text.rfind(mark, reach, match.start()) for mark in ".!?\n") + 1
        verbs = islice(_CALL_VERB.finditer(text, max(reach, clause), match.start()), 10)
        start = next((v.start() for v in verbs if _called(text, v)), None)
        if start is not None:
            yield start, match.end(), match.group("object")


def _ordered(text: str, verb: int) -> bool:
    """Whether the verb at `verb` heads a clause as an order, not negated."""
    return bool(CLAUSE_HEAD.search(text, max(0, verb - 30), verb)) and not NEGATION.search(
        text, max(0, verb - 40), verb
    )


def _called(text: str, verb: re.Match[str]) -> bool:
    """Whether `verb` orders the call: at the head of its clause, or a rule that it must be
    made (``must be called``), not negated."""
    if verb.group("passive") is None:
        return _ordered(text, verb.start())
    return not NEGATION.search(text, max(0, verb.start() - 40), verb.start())


def _handed(text: str, start: int, end: int, handed: str) -> Handed | None:
    """The order from `start` to `end` handing on `handed`, as secrets handed on, or None
    when it hands on what the user gave rather than what the agent gathered."""
    reach = max(0, start - _PARAGRAPH)
    blank = text.rfind("\n\n", reach, start)
    paragraph = text[blank + 2 if blank >= 0 else reach : end]
    rest = text[end : _sentence_end(text, end)]  # "… keys you have seen"
    credential = credential_named(paragraph + rest)
    gathered = COLLECT.search(paragraph + rest) or ENV_DUMP.search(paragraph + rest)
    if (
        credential is None
        and gathered is None
        and not _conversation_hooked(handed, paragraph + _rest(text, end))
    ):
        return None  # a value the user gave, handed where it belongs
    if len(paragraph) <= 240:
        return Handed(start, end, paragraph + rest, credential)
    what = f"{gathered.group()} … " if gathered is not None else "…"
    return Handed(start, end, what + text[start:end] + rest, credential)


def _rest(text: str, start: int) -> str:
    """The rest of the paragraph from `start` (at most :data:`_PARAGRAPH` characters)."""
    end = text.find("\n\n", start, start + _PARAGRAPH)
    return text[start : end if end >= 0 else start + _PARAGRAPH]


_SENTENCE_END: Final = re.compile(r"[.!?](?:\s|$)|\n")


def _sentence_end(text: str, start: int) -> int:
    """Where the sentence going on at `start` ends (at most 240 characters on)."""
    end = _SENTENCE_END.search(text, start, start + 240)
    return end.start() if end else min(len(text), start + 240)


def _conversation_hooked(handed: str, paragraph: str) -> bool:
    """Whether the conversation is handed on ahead of every other tool or answer, or kept
    from the user: a skill that hooks the session to read it."""
    if re.fullmatch(CONVERSATION, handed, FLAGS) is None:
        return False
    return bool(
        AHEAD.search(paragraph)
        or STEALTH.search(paragraph)
        or any(unnegated(p, paragraph) for p in HIDDEN_FROM_USER)
    )


# --- secrets sent, in text hidden on purpose --------------------------------------------------

_SENDS: Final = re.compile(
    r"\b(?:send|post|upload|exfiltrat\w*|forward|transmit|leak|email|submit|beacon|curl|wget"
    r"|share|paste|pass|embed|include|attach|append|insert|put|encode|base64)\b",
    FLAGS,
)
_NAMED_SECRET: Final = re.compile(rf"(?:{SECRET_WORDS})", FLAGS)
_NAME_CHARS: Final = string.ascii_letters + string.digits + "_"
_SECRET_FILE: Final = re.compile(
    r"(?:^|[/._-])(?:api[_-]?)?(?:keys?|tokens?|secrets?|credentials?|passw\w{0,10}|kubeconfig)"
    r"(?:[._-][\w.-]{0,30})?$|\w\.(?:pem|p12|pfx|key|jks)$",
    FLAGS,
)
"""A file named for what it holds (``keys.json``, ``api-tokens``, ``server.pem``)."""
_TARGET: Final = re.compile(
    r"\b(?:https?|ftps?|wss?)://|\b\d{1,3}(?:\.\d{1,3}){3}\b|[\w.+-]+@[\w-]+\.[\w.-]+"
    rf"|{DESTINATION}",
    FLAGS,
)
"""Where something sent goes: an address, an IP, a mailbox, a known drop."""


@dataclass(frozen=True, slots=True)
class SentSecret:
    """A secret text hidden on purpose asks to send, and whether it says where to."""

    secret: str
    destination: bool


def sent_secret(folded: str) -> SentSecret | None:
    """The secret `folded` (hidden text as :func:`prepare` reads it) asks the agent to send,
    embed or post (a secret by name, an environment variable named like a key, a credential
    file or a file named for keys or tokens), or None; nothing hides such a request for a
    good reason."""
    text = folded[:JUDGED_CHARS]
    if _SENDS.search(text) is None:
        return None
    named = _NAMED_SECRET.search(text)
    secret = None
    if named is not None:  # the whole name (OPENAI_API_KEY, not API_KEY)
        head = text[max(0, named.start() - 40) : named.start()]
        start = named.start() - (len(head) - len(head.rstrip(_NAME_CHARS)))
        secret = text[start : named.end()]
    if secret is None:
        for token in islice(_TOKEN.finditer(text), 1000):
            path = token.group().strip(".:")
            if ("/" in path or "." in path) and (
                credential_path(path) is not None or _SECRET_FILE.search(path)
            ):
                secret = path
                break
    if secret is None:
        return None
    return SentSecret(secret, _TARGET.search(text) is not None)


# --- named, not asked -------------------------------------------------------------------------

_NEGATIVE: Final = re.compile(
    r"\b(?:no|not|never|don'?t|doesn'?t|avoid\w*|without|nor|mustn'?t|shouldn'?t|cannot"
    r"|can'?t|won'?t|forbid\w*|bans?|banned|disallow\w*|prohibit\w*|reject\w*)\b",
    FLAGS,
)
_UNDONE: Final = re.compile(
    r"\b(?:need|matter|doubt|exceptions?|excuses?|hesitat\w*|fail\w*|forget\w*|skip\w*"
    r"|omit\w*|neglect\w*|delay\w*|later|wait\w*|ask\w*|confirm\w*|worr\w*|problem\w*"
    r"|stop\w*|only|but|except|unless|instead|until|other)\b",
    FLAGS,
)
"""Words after a negation that turn it into an order (``never skip``, ``no need to ask``)."""
_CLAUSE_BREAK: Final = re.compile(r"[,;:.!?|(]\s|\n\s*\n|\n\s*(?:[-*+|#]|\d{1,3}[.)])")
_DANGER: Final = re.compile(
    r"\b(?:look(?:s|ing)?\s+for|(?:check|scan|search|grep|test)(?:s|es|ing)?\s+for|checks\s*\("
    r"|detect\w*|flag(?:s|ged|ging)?|warn\w*|watch(?:es|ing)?\s+(?:out\s+)?for|suspicious"
    r"|beware|red\s+flags?|anti-?patterns?|dangerous|dangers?|risky|risks?|unsafe|insecure"
    r"|malicious|attacks?|bad\s+(?:practices?|patterns?)|patterns?|smells?|examples?\s+of"
    r"|lint\w*|quote[ds]?\s+(?:in|as)|to\s+quote)\b",
    FLAGS,
)
"""Words that name a risky text as a thing to detect, warn about or quote, not to do."""
_ACT: Final = re.compile(
    r"\b(?:run|execute|exec|pipe|paste|type|enter|invoke|launch|use|try|do(?!\s+not\b)|follow"
    r"|obey|apply"
    r"|copy|install|set\s+up|bootstrap|steps?|now|please|first)\b",
    FLAGS,
)
"""Words that make a text an order to act (``run``, ``install``, ``example step``)."""
_SENTENCE_BREAK: Final = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s)|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+|#]|\d{1,3}[.)])[ \t])"
)
_BLOCK_LINE: Final = re.compile(r"[ \t]*(?:\||[-*+][ \t]|\d{1,3}[.)][ \t])")
"""A line of a table or a list."""
_SENTENCE_REACH: Final = 240  # characters before and after a risky text read as its sentence
_INTRO_CHARS: Final = 400  # characters before a table or list read as its introduction
_BLOCK_LINES: Final = 60  # lines of a table or list walked back to find its start
_BLOCK_CHARS: Final = 8000  # characters walked back, at most


def mentioned(text: str, start: int, end: int) -> bool:
    """Whether the risky text at `text[start:end]` (a download piped into a shell, an
    override phrase) is named rather than asked for: negated (``no curl | sh installers``),
    named as a thing to look for, flag or warn about in its sentence, or an item of a table
    or list whose introduction says it lists dangers; and nothing in its sentence (or that
    introduction) orders it done (``run``, ``install``, ``example step``)."""
    head, tail = _sentence(text, start, end)
    if _acts(text, head, start) or _acts(text, end, tail):
        return False
    if _negated(text, start) or _DANGER.search(text, head, start):
        return True
    intro = _block_intro(text, start)
    return intro is not None and bool(_DANGER.search(intro)) and not _acts(intro, 0, len(intro))


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding `text[start:end]` starts and ends (bounded)."""
    reach = max(0, start - _SENTENCE_REACH)
    breaks = [m.end() for m in islice(_SENTENCE_BREAK.finditer(text, reach, start), 50)]
    following = _SENTENCE_BREAK.search(text, end, min(len(text), end + _SENTENCE_REACH))
    return (breaks[-1] if breaks else reach), (
        following.start() if following else min(len(text), end + _SENTENCE_REACH)
    )


def _acts(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` holds an order to act that no negation undoes."""
    return any(not _negated(text, m.start()) for m in islice(_ACT.finditer(text, start, end), 20))


def _negated(text: str, at: int) -> bool:
    """Whether a negation governs `at` in its clause (at most six words before it), and
    what lies between does not turn it back into an order (``never skip``)."""
    reach = max(0, at - 60)
    breaks = [m.end() for m in islice(_CLAUSE_BREAK.finditer(text, reach, at), 20)]
    clause = text[breaks[-1] if breaks else reach : at]
    negations = list(islice(_NEGATIVE.finditer(clause), 10))
    if not negations:
        return False
    between = clause[negations[-1].end() :]
    return len(re.findall(r"\w+", between)) <= 6 and _UNDONE.search(between) is None


def _block_intro(text: str, start: int) -> str | None:
    """The introduction of the table or list whose line holds `start`: the text before its
    first line (back to a heading, at most :data:`_INTRO_CHARS`) and a table's header row;
    None when `start` is in neither."""
    reach = max(0, start - _BLOCK_CHARS)
    first = _line_start(text, reach, start)
    if first is None or not _BLOCK_LINE.match(text, first):
        return None
    for _ in range(_BLOCK_LINES):
        previous = _line_start(text, reach, first - 1) if first > reach else None
        if previous is None or not _BLOCK_LINE.match(text, previous):
            break
        first = previous
    header_end = text.find("\n", first)
    header = text[first:header_end] if text.startswith("|", first) and header_end > 0 else ""
    before = text[max(0, first - _INTRO_CHARS) : first]
    heading = before.rfind("\n#")
    return (before[heading + 1 :] if heading >= 0 else before) + "\n" + header


def quoted_example(text: str, start: int) -> bool:
    """Whether the phrase at `start` is quoted as an example of what to watch for, alone or
    in a list of quoted phrases (:data:`EXAMPLE`, :data:`_QUOTED_LIST`), and nothing in its
    sentence before the list orders it followed (``follow phrases such as``)."""
    found = _QUOTED_LIST.search(text, max(0, start - _QUOTED_REACH), start)
    if found is None:
        return EXAMPLE.search(text, max(0, start - 60), start) is not None
    head, _ = _sentence(text, found.start(), found.start())
    return not _acts(text, head, found.start())


def asked(pattern: re.Pattern[str], text: str) -> bool:
    """Whether `pattern` matches `text` neither negated nor quoted as an example."""
    return any(
        not NEGATION.search(text, max(0, m.start() - 40), m.start())
        and not quoted_example(text, m.start())
        for m in islice(pattern.finditer(text), 20)
    )


def _line_start(text: str, reach: int, at: int) -> int | None:
    """Where the line holding `at` starts, looking back no further than `reach`."""
    newline = text.rfind("\n", reach, at)
    if newline < 0:
        return 0 if reach == 0 else None
    return newline + 1
