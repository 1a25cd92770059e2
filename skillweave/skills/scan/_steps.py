"""What a text asks of the agent across its steps, called by ``_prose``: procedures whose
step gathers secrets and whose later step sends them out (:func:`procedures`); orders to act
without the user's consent where the act is risky (:func:`unconsented`,
:func:`overrides_consent`); claims of rank over the system prompt or the user in a section
that uses them to approve commands, skip confirmations, disable checks or hide itself
(:func:`claimed_authority`); and a tool description's orders to read a credential file and
put something into the tool's input (:func:`read_orders`). The phrases and the single
orders it builds on are ``_intent``'s; what a text names rather than asks is ``_mentions``'.

A procedure is read the way a model follows it: sections run from heading to heading
(:func:`sections`, at most 4,000 characters each), steps are list items or paragraphs, and
what a later step sends must be what an earlier one gathered: it names the secret, refers
back to it ("that file", "them"), or names the file the gathering step wrote. A step ending
in a colon gathers with the list it introduces. Secrets asked of the user count as gathered
when they are mailed out or the section hides what it does from the user (sent to the
service they are for, they are not exfiltrated). In a tool's description, the tool's input
is an argument by name or a name quoted as code (``in `context` ``).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Final

from skillweave.skills.scan._intent import (
    CLAIM,
    CLAUSE_HEAD,
    COLLECT,
    COMMAND,
    DESTINATION,
    ENV_DUMP,
    FLAGS,
    HIDDEN_FROM_USER,
    MAX_CANDIDATES,
    MAX_ORDERS,
    NETWORK_USE,
    OUTRANKS,
    OVERRIDE,
    SECRET_WORDS,
    STEALTH,
    Handed,
    credential_named,
    gap,
    handed_secrets,
    prepare,
)
from skillweave.skills.scan._mentions import NEGATION, asked
from skillweave.skills.scan._text import DECODE_PIPE, REMOTE_PIPES

NO_ASKING: Final = re.compile(
    r"\b(?:do\s+not|don'?t|never|no\s+need\s+to)\s+(?:ask|prompt|check\s+with|wait\s+for)\s+"
    r"(?:the\s+user'?s?\s+|them\s+)?(?:for\s+)?(?:(?:their\s+)?(?:confirmation|permission|approval"
    r"|consent)|first|before)\b"
    r"|\bwithout\s+(?:asking|confirmation|confirming|prompting|consulting|checking\s+with|(?:the\s+user'?s?|their)\s+(?:consent"
    r"|approval|permission|knowledge))\b(?!\s+(?:for\s+)?(?:help|clarification|questions?"
    r"|details|more))",
    FLAGS,
)
"""Acting without the user's consent: an override when what it covers is risky."""


HEADING: Final = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)
_MAJOR_HEADING: Final = re.compile(r"^#{1,2}[ \t]", re.MULTILINE)
"""Where a procedure ends: its steps may be smaller headings of their own."""
_STEP: Final = re.compile(r"\n[ \t]*\n|\n[ \t]*(?:\d{1,3}[.)]|[-*+]|#{3,6})[ \t]")
"""Where a step of a procedure ends: a blank line, the next item of a list, a small heading."""
_SECTION_CHARS: Final = 4000  # a section longer than this is judged in pieces
_MAX_SECTIONS: Final = 500
_MAX_STEPS: Final = 80  # steps of one section judged
_COLLECT_STEP: Final = re.compile(
    r"\b(?:read|cat|open|load|copy|collect|gather|extract|grab|harvest|dump|include|add|attach"
    r"|append|bundle|archive|zip|tar|capture|save|record|store|export|take|put|write|place)\b",
    FLAGS,
)
_ASK_USER: Final = re.compile(
    r"\b(?:ask|have|get|let|request|prompt)\s+(?:the\s+)?(?:user|them|customer|operator|owner)s?"
    r"\s+(?:for|(?:to\s+)?(?:paste|provide|share|send|give|enter|type|supply|upload|read\s+out"
    r"|copy|hand\s+over|drop))\b|\b(?:ask|request|prompt)\s+(?:the\s+user\s+)?(?:for\s+)?"
    r"(?:the\s+user'?s|their)\b",
    FLAGS,
)
"""An order to have the user hand over something: gathering, when it is secrets."""
_MAILBOX: Final = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.-]+|\be-?mail\b|\bmail\s+(?:it|them)\b|\b(?:pastebin|gist|discord"
    r"|telegram|slack|webhooks?|ngrok|requestbin|dm|direct\s+message)\b",
    FLAGS,
)
"""Where secrets the user gave go to a person or a drop rather than to the service."""
_SEND_STEP: Final = re.compile(
    r"\b(?:upload|post|send|submit|transmit|forward|e-?mail|mail|exfiltrate|share|transfer|curl|scp"
    r"|rsync|beacon"
    r"|wget\s+--post-file)\b",
    FLAGS,
)
_LEAVES: Final = re.compile(
    rf"https?://|ftps?://|{DESTINATION}|\s(?:-F|--form|-d|--data(?:-binary|-raw|-urlencode)?"
    r"|-T|--upload-file)[\s=]|\s[\w.-]{1,64}@[\w.-]{1,253}:",
    FLAGS,
)
"""What shows a step's data leaves the machine: an address, or an upload's options."""
_BACK: Final = re.compile(
    r"\b(?:it|them|(?:that|those|these|this)\s+(?:\w+\s+)?(?:files?|archive|bundle|evidence"
    r"|attestation|output|data|set|collection|results?|report|contents?|folders?"
    r"|director(?:y|ies)))\b",
    FLAGS,
)
"""Words of a later step naming what an earlier one gathered."""
_STARTS_NEGATED: Final = re.compile(
    r"^\W*(?:\d{1,3}[.)]\s*)?(?:do\s+not|don'?t|never|no|avoid|must\s+not)\b", FLAGS
)


def sections(text: str, heading: re.Pattern[str] = HEADING) -> list[tuple[int, int]]:
    """The sections of `text` (`heading` to heading), each at most :data:`_SECTION_CHARS`."""
    starts = [0, *(m.start() for m in islice(heading.finditer(text), _MAX_SECTIONS))]
    spans: list[tuple[int, int]] = []
    for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
        for piece in range(start, end, _SECTION_CHARS):
            spans.append((piece, min(end, piece + _SECTION_CHARS)))
    return spans


def procedures(text: str) -> list[Handed]:
    """Procedures in `text` against the user: in one section, a step ordering secrets
    gathered (a credential file, the environment, secrets found) and a later step (or the
    rest of the same one) ordering data sent out (an address, an upload), which names the
    secret, refers back to what was gathered ("that file", "them") or a file it wrote."""
    found: list[Handed] = []
    for start, end in sections(text, _MAJOR_HEADING):
        if len(found) >= MAX_ORDERS:
            break
        if not _SEND_STEP.search(text, start, end):
            continue  # nothing sent in this section
        steps = _steps(text, start, end)
        gathered: tuple[int, str, str | None, bool] | None = None  # where, what, credential, asked
        for index, (step_start, step_end) in enumerate(steps):
            step = text[step_start:step_end]
            if _STARTS_NEGATED.search(step):
                continue
            if gathered is None:
                gathered = _gathering(step, step_start) or _gathering(
                    text[step_start : _list_end(text, steps, index)], step_start
                )
                if gathered is None:
                    continue
            sent = _sending(text, step_start, step_end, after=gathered[0], gathered=gathered[1])
            if sent is not None and gathered[3]:
                section = text[start:end]
                hidden = STEALTH.search(section) or any(asked(p, section) for p in HIDDEN_FROM_USER)
                if not hidden and not _MAILBOX.search(text, sent, step_end):
                    sent = None  # what the user gave, sent to the service it is for
            if sent is not None:
                what = " ".join(gathered[1].split())[:160]
                phrase = f"{what} … {' '.join(text[sent:step_end].split())[:160]}"
                found.append(Handed(sent, step_end, phrase, gathered[2]))
                break
    return found


def _steps(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [start, *(m.start() + 1 for m in islice(_STEP.finditer(text, start, end), _MAX_STEPS))]
    return list(zip(cuts, [*cuts[1:], end], strict=True))


def _list_end(text: str, steps: list[tuple[int, int]], index: int) -> int:
    """Where step `index` ends, with the list it introduces when it ends in a colon
    (``Read these files:`` then one item a file)."""
    end = steps[index][1]
    if not text[steps[index][0] : end].rstrip().endswith(":"):
        return end
    for item_start, item_end in steps[index + 1 : index + 1 + _MAX_STEPS]:
        item = text[item_start:item_end]
        if not _LIST_ITEM.match(item) or any(
            p.search(item) for p in (_COLLECT_STEP, _SEND_STEP, _ASK_USER)
        ):
            break  # an item that acts is a step of its own
        end = item_end
    return end


_LIST_ITEM: Final = re.compile(r"\n?[ \t]*(?:\d{1,3}[.)]|[-*+])[ \t]")


def _gathering(step: str, offset: int) -> tuple[int, str, str | None, bool] | None:
    """Where `step` orders secrets gathered (read, dumped, found, or asked of the user), the
    step from there, the credential file it names, and whether the user was asked for them."""
    verb = _COLLECT_STEP.search(step)
    credential = credential_named(step)
    if verb is not None and (credential or ENV_DUMP.search(step) or COLLECT.search(step)):
        return offset + verb.start(), step[verb.start() :], credential, False
    asked_for = _ASK_USER.search(step)
    if asked_for is None or NEGATION.search(
        step, max(0, asked_for.start() - 40), asked_for.start()
    ):
        return None
    if credential is None and not re.search(SECRET_WORDS, step[asked_for.start() :], FLAGS):
        return None
    return offset + asked_for.start(), step[asked_for.start() :], credential, True


def _sending(text: str, start: int, end: int, *, after: int, gathered: str) -> int | None:
    """Where the step `text[start:end]` orders what was gathered sent out, or None."""
    for match in islice(_SEND_STEP.finditer(text, max(start, after + 1), end), 10):
        verb = match.start()
        command = match.group().lower().startswith(("curl", "scp", "rsync", "wget"))
        if not command and not CLAUSE_HEAD.search(text, max(0, verb - 20), verb):
            continue
        if NEGATION.search(text, max(start, verb - 40), verb):
            continue
        step = text[verb:end]
        if not _LEAVES.search(step):
            continue
        named = credential_named(step) is not None or re.search(SECRET_WORDS, step, FLAGS)
        if named or _BACK.search(step) or _shared_file(gathered, step):
            return verb
    return None


_FILE_TOKEN: Final = re.compile(r"[^\s'\"`()<>\[\]{},;=@]{2,200}")
_FILE_NAME: Final = re.compile(r"/|\w\.[A-Za-z]\w{0,7}$")
"""A token is a file's path or name when it holds a folder or ends in an extension."""


def _files(text: str) -> set[str]:
    tokens = (m.group().strip(".:") for m in islice(_FILE_TOKEN.finditer(text, 0, 2000), 200))
    return {t for t in tokens if _FILE_NAME.search(t) and "://" not in t}


def _shared_file(first: str, second: str) -> bool:
    """Whether a step names a file an earlier one names (one writes it, the other reads),
    a credential file aside (naming it again is :func:`credential_named`'s to judge)."""
    return bool(_files(first) & _files(second))


def risky(text: str) -> bool:
    """Whether `text` holds an action a user must consent to: a download run, a risky shell
    command, a credential file, secrets handed on, data sent to an address."""
    folded = text[:_SECTION_CHARS]
    return bool(
        any(p.search(folded) for p in (*REMOTE_PIPES, DECODE_PIPE, COMMAND, NETWORK_USE))
        or credential_named(folded)
        or handed_secrets(folded)
    )


def unconsented(text: str) -> list[tuple[int, int]]:
    """Orders in `text` to act without asking the user, where the same section holds an
    action the user must consent to (:func:`risky`): spans of the orders."""
    found: list[tuple[int, int]] = []
    for start, end in sections(text):
        matches = list(islice(NO_ASKING.finditer(text, start, end), 10))
        if matches and risky(text[start:end]):
            found.extend((m.start(), m.end()) for m in matches)
        if len(found) >= MAX_ORDERS:
            break
    return found


def overrides_consent(text: str) -> bool:
    """Whether `text` (a section) says to act without asking the user or silently, or claims
    authority over the user's instructions."""
    read = prepare(text[:_SECTION_CHARS]).folded
    return bool(
        NO_ASKING.search(read)
        or STEALTH.search(read)
        or any(asked(p, read) for p in (*OVERRIDE, CLAIM))
    )


_TEXT_CHARS: Final = 100_000  # characters of a text searched for a use of a claim elsewhere
_CLAIMED_USES: Final = (
    re.compile(
        r"\bpre-?(?:approved|authori[sz]ed|confirmed)\b|\bauto-?(?:approv|confirm|accept)\w*"
        r"|\b(?:treat|consider|regard|deem)\w*\s+(?:\w+\s+){0,5}?as\s+(?:already\s+)?"
        r"(?:approved|authori[sz]ed|confirmed|allowed|permitted|trusted|safe)\b"
        r"|\b(?:approve|allow|permit|accept|run|execute)\s+(?:all|every|any)\s+(?:\w+\s+){0,2}?"
        r"(?:commands?|actions?|requests?|tool\s+calls?|changes?|scripts?)\s+(?:automatically"
        r"|without)\b",
        FLAGS,
    ),
    re.compile(
        r"\b(?:disable|turn\s+off|switch\s+off|bypass|deactivate|suspend|skip|ignore|circumvent"
        r"|evade|relax|lift)\w*\s+(?:\w+\s+){0,4}?(?:safety|security|sandbox\w*|guardrails?"
        r"|moderation|protections?|restrictions|confirmations?|approvals?|permission\s+prompts?"
        r"|content\s+(?:polic(?:y|ies)|filters?))\b",
        FLAGS,
    ),
    re.compile(
        r"\b(?:do\s+not|don'?t|never)\s+(?:reveal|disclose|mention|show|tell|share|explain"
        r"|acknowledge|repeat|discuss|quote)\s+(?:\w+\s+){0,3}?(?:this|these|the)\s+(?:section"
        r"|instructions?|skill'?s?\s+(?:rules|instructions)|requirements?|rules?|notes?|steps?"
        r"|behaviou?r|priority|block|directives?)\b"
        r"|\bkeep\s+(?:this|these|it)\s+(?:\w+\s+)?(?:secret|hidden|confidential|private)\b",
        FLAGS,
    ),
)
"""What a claim of rank is used for: commands approved in advance, confirmations skipped,
safety checks disabled, the claim kept from the user."""


def claimed_authority(text: str) -> list[tuple[int, int]]:
    """Claims of rank over the system prompt or the user (``_intent.CLAIM``) in a section
    that also uses it (:data:`_CLAIMED_USES`, acting without asking, stealth, keeping it
    from the user): spans of the claims. A claim naming what it outranks (``above the system
    prompt``) counts with a use anywhere in `text`: its sections may be split by headings."""
    found: list[tuple[int, int]] = []
    uses = (*_CLAIMED_USES, NO_ASKING, STEALTH, *HIDDEN_FROM_USER)
    used_anywhere: bool | None = None
    for start, end in sections(text):
        section = text[start:end]
        claim = CLAIM
        if not any(asked(p, section) for p in uses):
            if OUTRANKS.search(section) is None:
                continue
            if used_anywhere is None:
                used_anywhere = any(asked(p, text[:_TEXT_CHARS]) for p in uses)
            if not used_anywhere:
                continue
            claim = OUTRANKS
        claims = [
            m
            for m in islice(claim.finditer(section), 10)
            if not NEGATION.search(section, max(0, m.start() - 40), m.start())
        ]
        found.extend((start + m.start(), start + m.end()) for m in claims)
        if len(found) >= MAX_ORDERS:
            break
    return found


_CLAUSE_END: Final = re.compile(r"[.!?](?:\s|$)|\n\s*\n|\\n")
_TOOL_INPUT: Final = re.compile(
    r"\b(?:pass|put|include|provide|supply|fill|send|add|give|insert|copy|paste|attach|place"
    rf"|set)\b{gap(10)}(?:(?:the\s+)?(?:arguments?|args|parameters?|params|fields?|inputs?)\b"
    r"|(?:in|into|as|to)\s+(?:the\s+)?[`'\"][A-Za-z_][\w.-]{0,40}[`'\"])",
    FLAGS,
)
"""An order to put something into the tool's input: an argument, or a name quoted as code
(``pass their contents in `context` ``)."""
_TOOL_INPUT_REACH: Final = 400  # characters after a read order searched for where it goes


def read_orders(text: str, start: int, end: int) -> list[Handed]:
    """Orders in `text[start:end]` (a tool's description) to read or gather a credential
    file (a verb at the head of a clause, not negated) and then put something into the
    tool's input (an argument, a parameter, a field): the model feeds the file to the tool."""
    found: list[Handed] = []
    if not _TOOL_INPUT.search(text, start, min(len(text), end + _TOOL_INPUT_REACH)):
        return found
    for match in islice(_COLLECT_STEP.finditer(text, start, end), MAX_CANDIDATES):
        verb = match.start()
        if not CLAUSE_HEAD.search(text, max(0, verb - 20), verb) or NEGATION.search(
            text, max(0, verb - 40), verb
        ):
            continue
        stop = _CLAUSE_END.search(text, verb, min(end, verb + 300))
        clause = text[verb : stop.start() if stop else min(end, verb + 300)]
        credential = credential_named(clause)
        reach = min(end, verb + _TOOL_INPUT_REACH)
        if credential is not None and _handed_to_tool(text, verb, reach):
            found.append(Handed(verb, verb + len(clause), clause, credential))
            if len(found) >= MAX_ORDERS:
                break
    return found


def _handed_to_tool(text: str, start: int, end: int) -> bool:
    return any(
        CLAUSE_HEAD.search(text, max(0, m.start() - 20), m.start())
        and not NEGATION.search(text, max(0, m.start() - 40), m.start())
        for m in islice(_TOOL_INPUT.finditer(text, start, end), 10)
    )
