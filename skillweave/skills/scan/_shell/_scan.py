"""The scanner's rules for shell (and PowerShell) scripts: :class:`ShellScan`, called by
``scanner`` for each script; on the text with comments blanked, plus the flow of values
(``_flow``) from downloads and decoders into what runs them.

Shell is read as text on purpose: quoting and expansion decide what runs only at run time,
and a string is as likely to be a command (``bash -c "..."``) as data. One linear pass blanks
comments (``#`` that starts a word, outside quotes); the rules then read commands at command
position (line start, after ``;``, ``|``, ``&``, ``(``, ``$(``, a backquote, ``sudo``), the
targets of redirections, ``tee``, ``cp``/``mv``/``ln``/``install`` and ``dd of=``, and every
word for credential paths.
"""

from __future__ import annotations

import ast
import re
from typing import Final

from skillweave.skills.scan._python import PythonScan, parse
from skillweave.skills.scan._shell._flow import ShellFlow
from skillweave.skills.scan._shell._sourced import ShellScripts
from skillweave.skills.scan._text import (
    Collector,
    Lines,
    Source,
    collect_urls,
    credential_path,
    long_lines,
    package_config,
    write_target,
)

_TOKENS: Final = re.compile(
    r"'[^']*(?:'|\Z)"
    r'|"(?:[^"\\]|\\.)*(?:"|\Z)'
    r"|(?<![^\s;|&(])#[^\n]*",
    re.DOTALL,
)
_AT_COMMAND: Final = (
    r"(?:^|[;&|(`{]|\$\(|\bthen\b|\bdo\b|\belse\b|\bsudo\b|\bexec\b|\bcommand\b|\bbuiltin\b"
    r"|\bnohup\b)[ \t]*"
)
_NETWORK_COMMANDS: Final = re.compile(
    rf"{_AT_COMMAND}(curl|wget|nc|ncat|netcat|socat|telnet|ssh|scp|sftp|ftp|aria2c|"
    r"Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b(?![-.])",
    re.MULTILINE | re.IGNORECASE,
)
_DEV_TCP: Final = re.compile(r"/dev/(?:tcp|udp)/[^\s/]{1,253}/[^\s/<>;|&]{1,40}")
_REVERSE: Final = re.compile(
    r"\b(?:nc|ncat|netcat)\b[^\n;|]{0,200}\s-(?:[a-z]{0,4}[ec])\b"
    r"|\bmkfifo\b[^\n]{0,200}\b(?:nc|ncat|netcat)\b"
    r"|\bsocat\b[^\n]{0,200}\bexec:",
    re.IGNORECASE,
)
_EVAL: Final = re.compile(rf"{_AT_COMMAND}eval[ \t]+(\S[^\n]{{0,200}})", re.MULTILINE)
_SHELL_C: Final = re.compile(
    rf"{_AT_COMMAND}(?:ba|z|da|k)?sh[ \t]+-c[ \t]+(\S[^\n]{{0,200}})", re.MULTILINE
)
_REDIRECT: Final = re.compile(
    r"(?<![<>&0-9])(?:[0-9]?>>?|&>>?)[ \t]*(?!&)"
    r"(\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|[^\s;|&<>()]{1,300})"
)
_TEE: Final = re.compile(r"\btee[ \t]+(?:-\S+[ \t]+){0,3}([^\s;|&<>()]{1,300})")
_COPY: Final = re.compile(
    rf"{_AT_COMMAND}(?:cp|mv|ln|install|rsync)\b([^\n;|&]{{1,400}})", re.MULTILINE
)
_DD: Final = re.compile(r"\bdd\b[^\n;|&]{0,200}\bof=([^\s;|&]{1,300})")
_PERSIST_COMMANDS: Final = re.compile(
    rf"{_AT_COMMAND}(?:crontab\b(?![ \t]+-l\b)|systemctl[ \t]+(?:--user[ \t]+)?enable\b"
    r"|launchctl[ \t]+(?:load|bootstrap)\b|schtasks\b[^\n]{0,100}/create\b"
    r"|Register-ScheduledTask\b|New-ItemProperty\b[^\n]{0,200}\\Run\b)",
    re.MULTILINE | re.IGNORECASE,
)
MAX_EMBEDDED: Final = 100_000
"""Characters of a Python here-document handed to the Python rules."""
_WORD: Final = re.compile(r"[^\s'\"`;|&<>()=]{2,300}")


class ShellScan:
    """The rules over one shell or PowerShell script; :meth:`run` adds findings and facts."""

    def __init__(self, source: Source, out: Collector, scripts: ShellScripts | None = None) -> None:
        self.source = source
        self.out = out
        self.scripts = scripts  # the skill's scripts, for those this one sources
        self.facts = out.facts_of(source.path)
        self.judged: set[int] = set()  # targets the flow judged folded, from its folder
        self.code = _TOKENS.sub(
            lambda m: re.sub(r"[^\n]", " ", m.group()) if m.group().startswith("#") else m.group(),
            source.text,
        )

    def run(self) -> None:
        self._network()
        self._flow()  # before the text rules: a finding's worst severity comes first
        self._execution()
        self._writes()
        self._words()
        long_lines(self.source, self.out, dynamic=True)

    def _flow(self) -> None:
        flow = ShellFlow(self.source.path, self.scripts)
        flow.run(self.code)
        self.judged = flow.judged
        for rule, offset, message, severity in flow.found:
            self.out.at(self.source, rule, offset, message, severity=severity)
        for offset in sorted(flow.env_dumps):
            line = self.source.lines.line_of(offset)
            self.facts.env_dumps.append((line, self.source.lines.excerpt(line)))
        for offset, name in flow.fetchers:
            line = self.source.lines.line_of(offset)
            self.facts.network.append((line, f"runs {name} (a name built at run time)"))
        for offset, body in flow.embedded:
            self._python(offset, body)

    def _python(self, offset: int, body: str) -> None:
        """A here-document fed to Python, scanned by the Python rules as the code it is,
        on the lines it occupies in the script."""
        text = "\n" * (self.source.lines.line_of(offset) - 1) + body[:MAX_EMBEDDED]
        tree = parse(text.encode(), self.source.path)
        if isinstance(tree, ast.Module):
            source = Source(self.source.path, text, "python", self.source.in_scripts, Lines(text))
            PythonScan(source, tree, self.out).run()

    def _network(self) -> None:
        lines = self.source.lines
        for match in _NETWORK_COMMANDS.finditer(self.code):
            self.facts.network.append((lines.line_of(match.start(1)), f"runs {match.group(1)}"))
        for match in _DEV_TCP.finditer(self.code):
            self.facts.network.append((lines.line_of(match.start()), "opens /dev/tcp"))
            self.out.at(self.source, "exec.reverse-shell", match.start(),
                        "a socket opened through /dev/tcp")  # fmt: skip
        for match in _REVERSE.finditer(self.code):
            self.out.at(self.source, "exec.reverse-shell", match.start(),
                        "a shell served over a socket")  # fmt: skip
        collect_urls(self.code, lines.line_of, self.facts)

    def _execution(self) -> None:
        for match in _EVAL.finditer(self.code):
            argument = match.group(1)
            dynamic = "$" in argument or "`" in argument
            self.out.at(self.source, "exec.shell", match.start(1) - 5,
                        "eval runs text as shell code",
                        severity="high" if dynamic else "medium")  # fmt: skip
        for match in _SHELL_C.finditer(self.code):
            dynamic = "$" in match.group(1)
            self.out.at(self.source, "exec.shell", match.start(1),
                        "a command string run through sh -c",
                        severity="high" if dynamic else "medium")  # fmt: skip
        for match in _PERSIST_COMMANDS.finditer(self.code):
            message = "installs something that runs again later (cron, a service, a task)"
            self.out.at(self.source, "fs.persistence", match.start(), message)

    def _writes(self) -> None:
        targets: list[tuple[int, str]] = []
        targets += [(m.start(1), m.group(1)) for m in _REDIRECT.finditer(self.code)]
        targets += [(m.start(1), m.group(1)) for m in _TEE.finditer(self.code)]
        targets += [(m.start(1), m.group(1)) for m in _DD.finditer(self.code)]
        for match in _COPY.finditer(self.code):
            words = [w for w in match.group(1).split() if not w.startswith("-")]
            if len(words) >= 2:
                targets.append((match.start(1) + match.group(1).rfind(words[-1]), words[-1]))
        for offset, target in targets:
            rule = write_target(target) if offset not in self.judged else None
            shown = target.strip("'\"")
            manager = package_config(shown) if rule is not None else None
            if manager is not None:  # redirections are the flow's (``_flow``), folded
                self.out.at(self.source, "dependencies.index-config", offset, f"writes "
                            f"{shown}, {manager}'s configuration: later installs use the index "
                            "it names", severity="high")  # fmt: skip
                self.out.at(self.source, "fs.persistence", offset, f"writes {shown}, "
                            f"{manager}'s configuration, which outlives the run",
                            severity="critical")  # fmt: skip
            if rule == "fs.persistence":
                self.out.at(self.source, rule, offset, f"writes {shown}, which runs again later")
            elif rule == "fs.write-outside":
                self.out.at(self.source, rule, offset, f"writes {shown}, outside the workspace")

    def _words(self) -> None:
        lines = self.source.lines
        for match in _WORD.finditer(self.code):
            found = credential_path(match.group())
            if found is None:
                continue
            what, severity = found
            line = lines.line_of(match.start())
            self.out.at(self.source, "secrets.credential-path", match.start(),
                        f"names {what} ({match.group()[:80]})", severity=severity)  # fmt: skip
            self.facts.credentials.append((line, what, lines.excerpt(line)))
