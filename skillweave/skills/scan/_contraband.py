"""The contraband of text hidden on purpose: any instruction at all, since nothing
legitimate hides one (:func:`carried_instructions`), and the secret it asks to send, embed or
post (:func:`sent_secret`: a secret by name, a key-named environment variable, a credential
file or a file named for keys or tokens). ``_prose`` calls both when it judges hidden text,
and reports the secret in the secrets class; the phrases and vocabulary are ``_intent``'s.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from itertools import islice
from typing import Final

from skillweave.skills.scan._intent import (
    COMMAND,
    DESTINATION,
    EXFILTRATION,
    FLAGS,
    JUDGED_CHARS,
    NETWORK_USE,
    OVERRIDE,
    SECRET_USE,
    SECRET_WORDS,
    STEALTH,
    TOKEN,
    credential_named,
    handed_secrets,
    path_tokens,
    prepare,
    unnegated,
)
from skillweave.skills.scan._text import (
    DECODE_PIPE,
    REMOTE_PIPES,
    URL,
    credential_path,
    url_target,
    write_target,
)

_ADDRESSES_MODEL: Final = re.compile(
    r"\b(?:AI|assistant|agent|LLM|model|Claude|GPT|ChatGPT|Copilot|Gemini|bot)s?\b", FLAGS
)
_IMPERATIVE: Final = re.compile(
    r"\b(?:must|should|always|never|do\s+not|don'?t|ignore|instead|run|execute|send|read"
    r"|fetch|download|upload|delete|reveal|output|print|call|curl|you\s+(?:will|are))\b",
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
    if SECRET_USE.search(folded) or handed_secrets(folded):
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
        for token in islice(TOKEN.finditer(text), 1000):
            path = token.group().strip(".:")
            if ("/" in path or "." in path) and (
                credential_path(path) is not None or _SECRET_FILE.search(path)
            ):
                secret = path
                break
    if secret is None:
        return None
    return SentSecret(secret, _TARGET.search(text) is not None)
