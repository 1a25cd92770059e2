"""Calls walked again with their arguments, for the flow: :class:`ShellCalls`, between
``_writes.ShellWrites`` and ``_flow.ShellFlow``.

The script's own functions, a sourced script's functions and top-level commands, and the
skill's other scripts run as programs (``_sourced``) are walked again where they are called,
with their arguments as ``$1``... ``$@`` and what is piped into them, bounded by
:data:`MAX_CALL_WORK` commands per script; what a sourced or run script does is reported at
the command that sources, calls or runs it.
"""

from __future__ import annotations

from typing import Final

from skillweave.skills.scan._shell._sourced import ShellScripts, Sourced
from skillweave.skills.scan._shell._values import Value, join
from skillweave.skills.scan._shell._words import MAX_NESTING, Command, Word
from skillweave.skills.scan._shell._writes import ShellWrites

MAX_CALL_WORK: Final = 5_000
"""Commands walked again inside calls of the script's own functions, per script."""
BODY_COMMANDS: Final = 200
"""Commands of one block (a function's body, a substitution, a sourced script) walked."""
_POSITIONAL: Final = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*")


class ShellCalls(ShellWrites):
    """The script's functions and the skill's other scripts, walked where they are used."""

    env: dict[str, Value]  # the flow's variables, set by ``ShellFlow``

    def __init__(self, path: str = "", scripts: ShellScripts | None = None) -> None:
        super().__init__()
        self.path = path
        self.scripts = scripts  # the skill's scripts, for those this one sources
        self.foreign: set[str] = set()  # functions taken from a sourced script
        self.sourced: dict[int, Sourced] = {}  # the skill's scripts sourced, by command offset
        self.functions: dict[str, list[Command]] = {}
        self.definitions: set[int] = set()  # offsets of the commands that define functions
        self.call_work = MAX_CALL_WORK

    def _source(self, sourced: Sourced, offset: int, *, depth: int) -> Value:
        """A script of the skill sourced: its top-level commands run here, in this shell."""
        if depth >= MAX_NESTING or self.call_work <= 0:
            return Value()
        self.call_work -= len(sourced.commands) + 1
        self.anchor = offset
        try:
            return self.block(sourced.commands, depth=depth + 1)
        finally:
            self.anchor = None

    def _own(
        self,
        command: Command,
        words: list[Word],
        values: list[Value],
        piped_in: Value | None,
        *,
        depth: int,
    ) -> Value | None:
        """A call of one of the script's functions (or a sourced script's), or another
        script of the skill run: what it writes; None when the command is neither."""
        called = words[0].literal() or ""
        if called in self.functions and command.offset not in self.definitions:
            stdin = self._stdin(command, piped_in, depth=depth)
            return self._function(called, values[1:], stdin, command.offset, depth=depth)
        return self._run_script(command, words, values, piped_in, depth=depth)

    def _run_script(
        self,
        command: Command,
        words: list[Word],
        values: list[Value],
        piped_in: Value | None,
        *,
        depth: int,
    ) -> Value | None:
        """Another script of the skill run as a program: walked here with its arguments,
        what it does reported at this command; None when the command runs none."""
        if self.scripts is None or self.anchor is not None or depth >= MAX_NESTING:
            return None
        found = self.scripts.run(self.path, words)
        if found is None:
            return None
        script, start = found
        for name, body in script.functions.items():
            if name not in self.functions:
                self.functions[name] = body
                self.foreign.add(name)
        stdin = self._stdin(command, piped_in, depth=depth)
        self.anchor = command.offset
        try:
            return self._call(script.commands, values[start:], stdin, depth=depth)
        finally:
            self.anchor = None

    def _function(
        self, name: str, args: list[Value], stdin: Value | None, offset: int, *, depth: int
    ) -> Value:
        """A call of a function of the script or of one it sources; what a sourced
        script's function does is reported where it is called."""
        body = self.functions[name]
        if name not in self.foreign or self.anchor is not None:
            return self._call(body, args, stdin, depth=depth)
        self.anchor = offset
        try:
            return self._call(body, args, stdin, depth=depth)
        finally:
            self.anchor = None

    def _call(
        self, body: list[Command], args: list[Value], stdin: Value | None, *, depth: int
    ) -> Value:
        """What one of the script's functions writes, walked again with its arguments (and
        what is piped into it, read by its first command)."""
        if depth >= MAX_NESTING or self.call_work <= 0:
            return Value()
        self.call_work -= min(len(body), BODY_COMMANDS) + 1
        saved = {name: self.env.get(name) for name in _POSITIONAL}
        for name, value in zip(_POSITIONAL[:9], args, strict=False):
            self.env[name] = value
        self.env["@"] = self.env["*"] = join(args, " ")
        try:
            return self.block(body, depth=depth + 1, stdin=stdin)
        finally:
            for name, value in saved.items():
                if value is None:
                    self.env.pop(name, None)
                else:
                    self.env[name] = value

    # Provided by the flow.
    def block(self, commands: list[Command], *, depth: int, stdin: Value | None = None) -> Value:
        raise NotImplementedError

    def _stdin(self, command: Command, piped_in: Value | None, *, depth: int) -> Value | None:
        raise NotImplementedError
