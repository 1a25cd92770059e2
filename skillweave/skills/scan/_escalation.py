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

An install-time script of a ``package.json`` that only runs a file of the package is low
(``dependencies.install-script``, from ``_javascript._package``); :func:`escalate_install_scripts`
makes it high when that file itself runs, fetches, sends or hides code (a finding of its own
at high or above): npm runs it on install, before anyone has called a tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from skillweave.config import Severity
from skillweave.skills.network import Destination
from skillweave.skills.scan._text import Collector
from skillweave.skills.scan.report import severity_rank

__all__ = [
    "EXFILTRATION_RULE",
    "RULE",
    "SENDS",
    "UNKNOWN_HOST",
    "escalate_install_scripts",
    "escalate_undeclared_network",
]

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
_INSTALL_SCRIPT: Final = "dependencies.install-script"
_RUN_AT_INSTALL: Final = ("exec.", "network.", "secrets.", "fs.", "obfuscation.")
"""The findings of a file run at install that make its install script high."""
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


def escalate_install_scripts(out: Collector) -> None:
    """Raise a package.json's low install-time script to high when a file of the package
    it names (``node scripts/setup.cjs``, ``sh ./tools/fetch.sh``) has a finding of its own
    at high or above."""
    for finding in [f for f in out.findings if f.rule == _INSTALL_SCRIPT and f.severity == "low"]:
        base = finding.path.rsplit("/", 1)[0] + "/" if "/" in finding.path else ""
        named = {base + word.strip("'\"").removeprefix("./") for word in finding.message.split()}
        worst = next(
            (f for f in out.findings
             if f.path in named and f.rule.startswith(_RUN_AT_INSTALL)
             and severity_rank(f.severity) >= severity_rank("high")),
            None,
        )  # fmt: skip
        if worst is not None:
            out.add(_INSTALL_SCRIPT, finding.path, finding.line,
                    f"{finding.message}; {worst.path}: {worst.message}", finding.excerpt,
                    severity="high")  # fmt: skip


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
