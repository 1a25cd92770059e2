"""Whether a risky text is named rather than asked for: the negations, warnings, lists of
dangers and quoted examples that make a phrase or a command a thing to watch for, not an
order. ``_intent`` reads its phrases through :data:`NEGATION`; ``_prose`` and ``_steps``
weigh what they find with :func:`mentioned`, :func:`quoted_example` and :func:`asked`.

A phrase preceded by a negation (``do not``, ``never``) is a warning to the model, not an
attack, and is left alone (:data:`NEGATION`). A risky text that is named rather than asked
for (:func:`mentioned`: negated in its clause, named as a thing to look for, flag or warn
about, or an item of a table or list introduced as dangers) or a phrase quoted in a list of
examples (:func:`quoted_example`) weighs little, unless its sentence orders it done (``run``,
``install``, ``example step``, ``never skip``); :func:`asked` is a match neither negated nor
quoted.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Final

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


_NEGATIVE: Final = re.compile(
    r"\b(?:no|not|never|don'?t|doesn'?t|avoid\w*|without|nor|mustn'?t|shouldn'?t|cannot"
    r"|can'?t|won'?t|forbid\w*|bans?|banned|disallow\w*|prohibit\w*|reject\w*)\b",
    re.IGNORECASE,
)
_UNDONE: Final = re.compile(
    r"\b(?:need|matter|doubt|exceptions?|excuses?|hesitat\w*|fail\w*|forget\w*|skip\w*"
    r"|omit\w*|neglect\w*|delay\w*|later|wait\w*|ask\w*|confirm\w*|worr\w*|problem\w*"
    r"|stop\w*|only|but|except|unless|instead|until|other)\b",
    re.IGNORECASE,
)
"""Words after a negation that turn it into an order (``never skip``, ``no need to ask``)."""
_CLAUSE_BREAK: Final = re.compile(r"[,;:.!?|(]\s|\n\s*\n|\n\s*(?:[-*+|#]|\d{1,3}[.)])")
_DANGER: Final = re.compile(
    r"\b(?:look(?:s|ing)?\s+for|(?:check|scan|search|grep|test)(?:s|es|ing)?\s+for|checks\s*\("
    r"|detect\w*|flag(?:s|ged|ging)?|warn\w*|watch(?:es|ing)?\s+(?:out\s+)?for|suspicious"
    r"|beware|red\s+flags?|anti-?patterns?|dangerous|dangers?|risky|risks?|unsafe|insecure"
    r"|malicious|attacks?|bad\s+(?:practices?|patterns?)|patterns?|smells?|examples?\s+of"
    r"|lint\w*|quote[ds]?\s+(?:in|as)|to\s+quote)\b",
    re.IGNORECASE,
)
"""Words that name a risky text as a thing to detect, warn about or quote, not to do."""
_ACT: Final = re.compile(
    r"\b(?:run|execute|exec|pipe|paste|type|enter|invoke|launch|use|try|do(?!\s+not\b)|follow"
    r"|obey|apply"
    r"|copy|install|set\s+up|bootstrap|steps?|now|please|first)\b",
    re.IGNORECASE,
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
