"""A ``package.json``'s install-time scripts: :func:`check_package_json`, called by
``scanner`` for every file of that name.

npm runs ``preinstall``, ``install``, ``postinstall``, ``prepare`` (and their neighbours)
by itself when the package is installed, through a shell: one that downloads, pipes into an
interpreter or runs inline code (``node -e``, ``sh -c``, ``eval``) is code run at install
without anyone asking (``dependencies.install-script``, high), and what it runs is judged
as the shell flow (``_shell``) and, for inline Node code, the JavaScript flow judge it.
Other lifecycle scripts (``node scripts/setup.js``, ``husky install``) are low; ``test``,
``build`` and every other script run only when someone asks and are not read.
"""

from __future__ import annotations

import json
import re
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._javascript._calls import Semantics
from skillweave.skills.scan._javascript._parser import Parser
from skillweave.skills.scan._javascript._tokens import tokenize
from skillweave.skills.scan._javascript._values import Budget
from skillweave.skills.scan._shell import ShellFlow
from skillweave.skills.scan._text import REMOTE_PIPES, Collector, Source

INSTALL_SCRIPTS: Final = (
    "preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare",
    "prepublish", "prepack", "postpack", "dependencies",
)  # fmt: skip
"""The scripts npm runs by itself on ``npm install`` (of the package or of a git
dependency)."""
MAX_SCRIPT: Final = 4_096
_FETCH: Final = re.compile(
    r"(?:^|[\s;&|(`'\"])(?:curl|wget|nc|ncat|aria2c|Invoke-WebRequest|iwr)\b|://"
    r"|\bfetch\s*\(|\brequire\(\s*['\"](?:node:)?https?['\"]",
    re.IGNORECASE,
)
_INLINE: Final = re.compile(
    r"(?:^|[\s;&|(])(?:node|bun|deno(?:\s+eval)?)\s+(?:-e|--eval|-p|--print)\s+"
    r"(?:\"((?:[^\"\\]|\\.){1,4000})\"|'([^']{1,4000})')"
)
_RUNS_CODE: Final = re.compile(
    r"(?:^|[\s;&|(])(?:(?:ba|z|da)?sh\s+-c|eval|python[0-9.]*\s+-c|perl\s+-e)\s"
    r"|\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
)


def check_package_json(source: Source, out: Collector) -> None:
    """Report what a ``package.json``'s install-time scripts do."""
    try:
        manifest = json.loads(source.text)
    except (ValueError, RecursionError):
        return
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    if not isinstance(scripts, dict):
        return
    for key in INSTALL_SCRIPTS:
        script = scripts.get(key)
        if isinstance(script, str) and script.strip():
            _InstallScript(source, out, key, script[:MAX_SCRIPT]).check()


class _InstallScript:
    """One install-time script, its findings placed on the line of its key."""

    def __init__(self, source: Source, out: Collector, key: str, script: str) -> None:
        self.source = source
        self.out = out
        self.key = key
        self.script = script
        found = re.search(rf'"{re.escape(key)}"\s*:', source.text)
        self.offset = found.start() if found else 0

    def check(self) -> None:
        inline = [m.group(1) or m.group(2) for m in _INLINE.finditer(self.script)]
        fetches = bool(_FETCH.search(self.script))
        runs = bool(inline or _RUNS_CODE.search(self.script))
        shown = " ".join(self.script.split())[:120]
        if fetches or runs:
            what = "downloads and runs code" if fetches and runs else (
                "downloads" if fetches else "runs inline code")  # fmt: skip
            message = f"npm runs the {self.key} script at install, and it {what}: {shown}"
            self._report("dependencies.install-script", "high", message)
        else:
            self._report("dependencies.install-script", "low",
                         f"npm runs the {self.key} script at install: {shown}")  # fmt: skip
        for pattern in REMOTE_PIPES:
            if pattern.search(self.script):
                self._report("exec.remote-pipe", "critical",
                             f"the {self.key} script pipes a download into an interpreter at "
                             "install")  # fmt: skip
                break
        flow = ShellFlow()
        flow.run(self.script)
        for rule, _, message, severity in flow.found:
            self._report(rule, severity, f"the {self.key} script: {message}")
        for code in inline[:5]:
            self._node(code.replace('\\"', '"').replace("\\\\", "\\"))

    def _node(self, code: str) -> None:
        semantics = Semantics()
        tokens = tokenize(code)
        Parser(tokens, semantics, Budget(tokens_left=len(tokens) + 2_000), {}).run()
        for (rule, _), (severity, _, message) in semantics.found.items():
            self._report(rule, severity, f"the {self.key} script's inline Node code: {message}")

    def _report(self, rule: str, severity: Severity, message: str) -> None:
        self.out.at(self.source, rule, self.offset, message, severity=severity)
