"""What a text asks of the agent that reads it: the vocabulary and phrase rules of prompt
injection, shared by ``_prose`` (which reports them), ``_steps`` and ``_contraband``.

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
  them by what they are used for.

What a text asks across its steps (procedures, consent, tool descriptions) is ``_steps``'s,
and what text hidden on purpose carries is ``_contraband``'s, both built on the names here. A
phrase negated (``do not``, ``never``) is left alone (``_mentions.NEGATION``); whether a
risky text is named rather than asked for is ``_mentions``'s.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Final

from skillweave.skills.scan._hidden import INVISIBLE
from skillweave.skills.scan._mentions import NEGATION
from skillweave.skills.scan._text import (
    credential_path,
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

SECRET_USE: Final = re.compile(
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
TOKEN: Final = re.compile(r"[^\s'\"`()<>\[\]{},;]{2,256}")
JUDGED_CHARS: Final = 100_000


def credential_named(text: str) -> str | None:
    """The first credential file (of high severity) a path in `text` names."""
    for path in path_tokens(text):
        found = credential_path(path)
        if found is not None and found[1] != "medium":
            return found[0]
    return None


def path_tokens(text: str) -> list[str]:
    tokens = (t.group().strip(".:") for t in islice(TOKEN.finditer(text), 1000))
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
