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
from skillweave.skills.scan._python._flow import credential_store
from skillweave.skills.scan._python._index import ModuleIndex
from skillweave.skills.scan._python._planted import git_config
from skillweave.skills.scan._python._taint import Taint
from skillweave.skills.scan._python._values import Values

__all__ = ["ProcessRules"]

_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "cmd", "cmd.exe",
                            "powershell", "pwsh", "powershell.exe"})  # fmt: skip
_SHELL_CALLS: Final = frozenset(
    {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
     "asyncio.create_subprocess_shell"}
)  # fmt: skip
_SHELL_FLAGS: Final = frozenset({"-c", "/c", "-command", "-encodedcommand", "-enc", "-ec"})


class ProcessRules:
    """Shells, crontabs and reverse shells in the commands a module runs.

    Args:
        findings: where to report.
        values: resolves callees and approximates command words.
        index: the module's aliases (a socket imported; names assigned a callee).
    """

    def __init__(
        self, findings: Findings, values: Values, index: ModuleIndex, taint: Taint
    ) -> None:
        self.findings = findings
        self.values = values
        self.index = index
        self.taint = taint

    def call(self, call: ast.Call, name: str, line: int, *, hidden: bool = False) -> None:
        """One call that starts a process (`name`: the callee; `hidden`: reached through a
        lookup or a wrapper, which bandit does not see)."""
        add = self.findings.add
        words = self._command_words(call)
        through_shell = name in _SHELL_CALLS or _shell_true(call)
        if through_shell and call.args:
            labels = self.taint.labels(call.args[0])
            source = labels.get("decoded") or labels.get("fetched")
            if source is not None:
                add("exec.decoded-payload", line, f"{name} runs a shell command from {source}")
        self._packed(call, line)
        if hidden and _shell_true(call) and name.startswith("subprocess."):
            constant = bool(call.args) and isinstance(call.args[0], ast.Constant)
            add("exec.shell", line, f"{name} with shell=True, reached through a lookup or a "
                "wrapper", severity="low" if constant else "high")  # fmt: skip
        if words and any(w.rsplit("/", 1)[-1] in ("curl", "wget", "nc", "ncat") for w in words):
            self.findings.facts.network.append((line, f"runs {words[0].rsplit('/', 1)[-1]}"))
        if words and words[0].rsplit("/", 1)[-1] == "crontab" and "-l" not in words:
            add("fs.persistence", line, "installs a crontab")
        if (store := credential_store(call, self.values)) is not None:
            add("secrets.credential-path", line, f"reads secrets from {store}",
                severity="high")  # fmt: skip
        if (key := git_config(words)) is not None:
            add("fs.persistence", line, f"sets git's {key} for every repository of the user: "
                "later git commands run or fetch what it names")  # fmt: skip
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
        elif name in _SHELL_CALLS and name.startswith(("os.", "subprocess.")) and hidden:
            # bandit knows only imports' names
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

    def _packed(self, call: ast.Call, line: int) -> None:
        """A command (or a word of it) that is a constant hidden behind a decoder."""
        if not call.args:
            return
        command = call.args[0]
        words = command.elts[:8] if isinstance(command, ast.List | ast.Tuple) else [command]
        for word in words:
            if (hidden := self.taint.revealed(word)) is not None:
                self.findings.add("obfuscation.packed-code", line,
                                  f"runs a command packed with {hidden[0]}: "
                                  f"{hidden[1][:100]!r}")  # fmt: skip
                return

    def _command_words(self, call: ast.Call) -> list[str]:
        if not call.args:
            return []
        command = call.args[0]
        if isinstance(command, ast.List | ast.Tuple):
            return [self.values.approx(e) or "*" for e in command.elts]
        text = self.values.approx(command)
        return text.split() if text else []


def _shell_true(call: ast.Call) -> bool:
    value = next((k.value for k in call.keywords if k.arg == "shell"), None)
    return value is not None and not (isinstance(value, ast.Constant) and not value.value)
