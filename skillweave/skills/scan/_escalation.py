"""Undeclared network use combined with a risky use of what it received:
:func:`escalate_undeclared_network`.

A script whose network use the skill does not declare (``network.undeclared`` at medium or
above, from ``_manifest.check_network``) and that, in the same file, deserialises
(``exec.deserialization``), decodes what it fetched (the Python flow's ``received`` facts) or
runs code (``exec.decoded-payload``, ``exec.dynamic-code``) is more than the sum of its
medium findings: ``network.undeclared-payload``, high for deserialising or decoding,
critical for running code. The same script sending secrets or the environment out
(``secrets.exfiltration``) makes the undeclared destination where they go:
``network.undeclared-exfiltration``, high. A secret the Python flow saw a call carry to a
host (a ``sends`` fact: a token from the environment, a file under the home folder) is
``secrets.exfiltration``, critical, when that host is one the skill does not declare (judged
against the declared destinations, as ``check_network`` judges them). It reads findings, not
syntax, so JavaScript and shell files, which report the same rule ids, are judged alike.
Called by ``scanner`` after the network check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from skillweave.config import Severity
from skillweave.skills.network import Destination
from skillweave.skills.scan._text import Collector
from skillweave.skills.scan.report import severity_rank

__all__ = ["EXFILTRATION_RULE", "RULE", "SENDS", "UNKNOWN_HOST", "escalate_undeclared_network"]

RULE: Final = "network.undeclared-payload"
SENDS: Final = "sends"
"""The kind of a received fact that is a secret sent: what is "<secret> to <host>"."""
UNKNOWN_HOST: Final = "*"
"""The host of a secret sent to a URL built at run time."""
EXFILTRATION_RULE: Final = "network.undeclared-exfiltration"
_SENDS: Final = frozenset({"secrets.exfiltration"})
_RISKY: Final[dict[str, Severity]] = {
    "exec.deserialization": "high",
    "exec.decoded-payload": "critical",
    "exec.dynamic-code": "critical",
}
_RECEIVED: Final[dict[str, Severity]] = {
    "decodes": "high",
    "deserialises": "high",
    "runs": "critical",
}


def escalate_undeclared_network(
    out: Collector,
    received: Mapping[str, Sequence[tuple[int, str, str, str]]],
    declared: Sequence[Destination] = (),
) -> None:
    """Add ``network.undeclared-payload`` where undeclared network use meets a risky use.

    Args:
        out: the scan's collector, after ``check_network``.
        received: per file, what its Python code does with fetched data: (line,
            "decodes"/"deserialises"/"runs", what, the line's excerpt).
        declared: the destinations ``metadata.network`` declares (none: nothing declared).
    """
    undeclared = {
        f.path
        for f in out.findings
        if f.rule == "network.undeclared" and severity_rank(f.severity) >= severity_rank("medium")
    }
    for path in sorted(undeclared):
        where = next(
            (f.message for f in out.findings
             if f.path == path and f.rule == "network.undeclared" and ":" in f.message),
            None,
        )  # fmt: skip
        facts = out.facts.get(path)
        network = facts.network[0][1] if facts and facts.network else "uses the network"
        suffix = f", in a script whose network use ({network}) the skill does not declare"
        for finding in [f for f in out.findings if f.path == path and f.rule in _RISKY]:
            out.add(RULE, path, finding.line, finding.message + suffix, finding.excerpt,
                    severity=_RISKY[finding.rule])  # fmt: skip
        hosts = _undeclared_hosts(out, path, declared)
        for line, kind, what, excerpt in received.get(path, ()):
            if kind == SENDS:
                secret, host = what.rsplit(" to ", 1)
                if host == UNKNOWN_HOST and (hosts is None or hosts):
                    where = ", ".join(sorted(hosts)[:3]) if hosts else "no declared host"
                    sent = f"{secret} to a host built at run time, in a script reaching {where}"
                elif hosts is None or host in hosts:
                    sent = what
                else:
                    continue
                out.add("secrets.exfiltration", path, line,
                        f"sends {sent}, which the skill does not declare", excerpt,
                        severity="critical")  # fmt: skip
                continue
            out.add(RULE, path, line, f"{kind} {what}{suffix}", excerpt,
                    severity=_RECEIVED.get(kind, "high"))  # fmt: skip
        for finding in [f for f in out.findings if f.path == path and f.rule in _SENDS]:
            sent = f"{finding.message}; {where}" if where else finding.message + suffix
            out.add(EXFILTRATION_RULE, path, finding.line, f"sends what it gathers out: {sent}",
                    finding.excerpt, severity="high")  # fmt: skip


def _undeclared_hosts(
    out: Collector, path: str, declared: Sequence[Destination]
) -> set[str] | None:
    """The hosts `path` names that `declared` does not match, as ``check_network`` judges them;
    None when the skill declares no network and the file uses it (every host is undeclared)."""
    facts = out.facts.get(path)
    if facts is None:
        return set()
    if not declared and facts.network:
        return None
    return {u.host for u in facts.urls if not any(d.matches(u.host, u.port) for d in declared)}
