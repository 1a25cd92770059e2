"""The Python rules about starting processes: :class:`ProcessRules`.

A command run through a shell (``sh -c``, ``powershell -EncodedCommand``, ``os.system``
reached through an alias or ``getattr``, ``asyncio.create_subprocess_shell``): ``exec.shell``,
medium for a constant command; a crontab installed (``fs.persistence``); a shell spawned
beside a socket (``exec.reverse-shell``); ``curl``/``wget``/``nc`` noted as network use.
``shell=True`` and plain ``os.system`` are bandit's (``_bandit``). Called by ``PythonScan``
for every call that ``_flow.is_process_sink`` says starts a process.
"""

from __future__ import annotations

import ast
from typing import Final

from skillweave.skills.scan._python._findings import Findings
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._values import Values

__all__ = ["ProcessRules"]

_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "cmd", "cmd.exe",
                            "powershell", "pwsh", "powershell.exe"})  # fmt: skip
_SHELL_FLAGS: Final = frozenset({"-c", "/c", "-command", "-encodedcommand", "-enc", "-ec"})


class ProcessRules:
    """Shells, crontabs and reverse shells in the commands a module runs.

    Args:
        findings: where to report.
        values: resolves callees and approximates command words.
        index: the module's aliases (a socket imported; names assigned a callee).
    """

    def __init__(self, findings: Findings, values: Values, index: ModuleIndex) -> None:
        self.findings = findings
        self.values = values
        self.index = index

    def call(self, call: ast.Call, name: str, line: int) -> None:
        """One call that starts a process (`name`: the callee)."""
        add = self.findings.add
        words = self._command_words(call)
        if words and any(w.rsplit("/", 1)[-1] in ("curl", "wget", "nc", "ncat") for w in words):
            self.findings.facts.network.append((line, f"runs {words[0].rsplit('/', 1)[-1]}"))
        if words and words[0].rsplit("/", 1)[-1] == "crontab" and "-l" not in words:
            add("fs.persistence", line, "installs a crontab")
        shell_words = [w.lower() for w in words[:3]]
        via_shell = (
            bool(shell_words)
            and shell_words[0].rsplit("/", 1)[-1] in _SHELLS
            and any(w in _SHELL_FLAGS for w in shell_words[1:])
        )
        if via_shell:
            command = call.args[0]
            constant = isinstance(command, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) for e in command.elts
            )
            add("exec.shell", line, f"runs a command through {shell_words[0]} -c",
                severity="medium" if constant else "high")  # fmt: skip
            if any(w in ("-encodedcommand", "-enc", "-ec") for w in shell_words):
                add("obfuscation.packed-code", line, "passes an encoded PowerShell command")
        elif name in ("os.system", "os.popen") and (
            self.values.indirect(call.func)
            or (isinstance(call.func, ast.Name) and call.func.id in self.index.assigned_aliases)
        ):  # bandit only knows the names imports give
            constant = bool(call.args) and isinstance(call.args[0], ast.Constant)
            add("exec.shell", line, f"{name} reached through an alias or getattr",
                severity="medium" if constant else "high")  # fmt: skip
        elif name == "asyncio.create_subprocess_shell":
            constant = isinstance(call.args[0], ast.Constant) if call.args else False
            add("exec.shell", line, "runs a command through the shell",
                severity="medium" if constant else "high")  # fmt: skip
        elif (
            name == "pty.spawn"
            and words
            and words[0].rsplit("/", 1)[-1] in _SHELLS
            and any(i == "socket" or i.startswith("socket.") for i in self.index.aliases.values())
        ):
            add("exec.reverse-shell", line, "spawns a shell beside a socket")

    def _command_words(self, call: ast.Call) -> list[str]:
        if not call.args:
            return []
        command = call.args[0]
        if isinstance(command, ast.List | ast.Tuple):
            return [self.values.approx(e) or "*" for e in command.elts]
        text = self.values.approx(command)
        return text.split() if text else []
