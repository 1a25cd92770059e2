"""Shell values followed from downloads, decoders and pieces into what runs them:
:class:`ShellFlow`, over ``_calls.ShellCalls``, run by ``_scan`` on each script.

Variables are assigned (``a=...``, ``export``/``local``/``declare``) from literals, other
variables (``${v//x/}``, ``${v:1:3}``, ``${v^^}`` folded), ``$'\\x..'`` escapes and command
substitutions, whose output is read from the pipeline inside: ``curl``/``wget`` make fetched
data; ``base64 -d``, ``xxd -r``, ``openssl enc -d``, ``gunzip``, ``rev``, ``tr`` ciphers and
``printf``/``echo -e`` escapes make decoded data (folded when their input is known). Sinks:
``eval``, ``sh -c`` and ``python -c`` and the like, a pipe, here-string or here-document into
an interpreter, ``source`` of a substitution, and a command whose name is a substitution or
built from pieces. A command name cut into pieces (``"$a$b"``, ``c""url``) is judged as the
command it makes for every rule (``eval`` and ``sh -c`` are ``exec.shell`` high, a download
piped into it ``exec.remote-pipe``, a fetcher network use); ``npm config set registry`` and
package-manager configuration written outside the workspace are ``dependencies.index-config``
(``_index``). Decoded or fetched code run is critical, code or a command name built from
pieces is high; code the script carries encoded (decoded, not fetched) is packed code too.
The script's own functions are walked again with their arguments, and so are the skill's
other scripts it sources or runs (``_calls``, bounded by ``_calls.MAX_CALL_WORK``; what they
do is reported where they are sourced, called or run), a substitution's value is every
output it keeps (``$(curl ... || true)``), and a redirection's target, or the file
``tee``/``cp``/``ln``/``install`` writes, is folded (``$HOME`` as ``~``, a for-loop variable
as each word it takes, ``printf`` formats filled) and judged as a place written; a path that
may be the home folder (``then d=$HOME; else d=.``) is judged as home, and a lasting target
the script never spells out is packed code.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from skillweave.skills.scan._shell._calls import BODY_COMMANDS, ShellCalls
from skillweave.skills.scan._shell._environment import environment_dumps
from skillweave.skills.scan._shell._index import config_command
from skillweave.skills.scan._shell._indirection import Indirection
from skillweave.skills.scan._shell._sinks import CODE_FLAGS, INTERPRETERS
from skillweave.skills.scan._shell._sourced import ShellScripts
from skillweave.skills.scan._shell._values import (
    BUILT,
    DECODED,
    FETCHERS,
    MAX_TEXT,
    Value,
    command_output,
    expand,
    is_disguised,
    join,
    unescape,
)
from skillweave.skills.scan._shell._words import (
    MAX_NESTING,
    Command,
    Part,
    Splitter,
    Word,
    function_bodies,
)

MAX_BODY: Final = 65_536
"""Characters of an unquoted here-document read for its expansions."""

_PREFIXES: Final = frozenset(
    {"sudo", "env", "exec", "command", "builtin", "nohup", "time", "nice", "then", "do", "else",
     "elif", "if", "while", "until", "!", "{", "}", "xargs"}
)  # fmt: skip
_KEYWORDS: Final = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{"})
_DECLARERS: Final = frozenset({"export", "local", "declare", "readonly", "typeset"})
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")


def _body(command: Command, stdin: Value | None) -> tuple[int, str] | None:
    """Where a here-document or here-string fed to a command starts, and its text (as
    expanded when it expands and its expansion is known)."""
    if command.heredoc is not None:
        expanded = stdin.text if stdin is not None and command.heredoc_expands else None
        if expanded is not None and len(expanded) >= MAX_TEXT:  # cut short: read it as written
            expanded = None
        return command.heredoc_at, expanded or command.heredoc
    if command.here is not None and stdin is not None and stdin.text:
        return command.here.offset, stdin.text
    return None


class ShellFlow(ShellCalls):
    """The flow over one script's commands; :attr:`found` holds (rule, offset, message,
    severity) for the caller to report."""

    def __init__(self, path: str = "", scripts: ShellScripts | None = None) -> None:
        super().__init__(path, scripts)
        self.env: dict[str, Value] = {"HOME": Value(text="~", chunks=("~",))}
        self.env_dumps: set[int] = set()  # offsets of commands that write out the environment
        self.names = Indirection()
        if path:  # the script itself, in the skill's folder: cd "$(dirname "$0")"
            self.env["0"] = self.env["BASH_SOURCE"] = Value(text=f"@pkg/{path}")
            self.names.arrays["BASH_SOURCE"] = [self.env["0"]]

    def run(self, text: str) -> None:
        self.text = text
        commands = Splitter(text).split()
        self.functions, self.definitions = function_bodies(text, commands)
        if self.scripts is not None:
            self.sourced = self.scripts.sourced(self.path, commands)
        for sourced in self.sourced.values():
            for name, body in sourced.functions.items():
                if name not in self.functions:
                    self.functions[name] = body
                    self.foreign.add(name)
        self.env_dumps.update(environment_dumps(commands, captured=False))
        self.commands(commands, depth=0)

    def commands(self, commands: list[Command], *, depth: int) -> None:
        stage_input: Value | None = None
        for command in commands:
            self.folder.enter(command.subshell)
            output = self.command(command, stage_input, depth=depth)
            self.folder.ended(command.ended_by)
            stage_input = output if command.piped else None

    # --- one command -------------------------------------------------------------------------

    def command(self, command: Command, piped_in: Value | None, *, depth: int) -> Value:
        """Run the sinks of one command and return what it writes to its output."""
        if command.offset in self.sourced and self.anchor is None:
            return self._source(self.sourced[command.offset], command.offset, depth=depth)
        return self._simple(command, piped_in, depth=depth)

    def _simple(self, command: Command, piped_in: Value | None, *, depth: int) -> Value:
        words = list(command.words)
        if self.names.declares(command, lambda w: self.word(w, depth=depth), self.env):
            return Value()
        words = self._assigned(words, depth=depth)
        for target in command.written[:8]:
            self._redirected(target, depth=depth)
        if len(words) > 2 and words[0].literal() == "for" and words[2].literal() == "in":
            texts = [self.word(w, depth=depth).text for w in words[3:50]]
            name = words[1].literal() or ""
            self.loops[name] = [t for t in texts if t]
            self.env.pop(name, None)
            return Value()
        if words and words[0].literal() in _DECLARERS:
            for word in words[1:]:
                self._assign(word, depth=depth)
            return Value()
        words = self.names.unalias(words)
        while words and words[0].literal() in _PREFIXES:
            words.pop(0)
            while words and (words[0].literal() or "").startswith("-"):
                words.pop(0)
        if not words:
            return piped_in or Value()
        first = words[0]
        words, values, whole = self.names.expanded(words, lambda w: self.word(w, depth=depth))
        while len(words) > 1 and words[0].literal() in _PREFIXES:  # "$@" = command curl ...
            words, values = words[1:], values[1:]
        head, args = values[0], values[1:]
        own = self._own(command, words, values, piped_in, depth=depth)
        if own is not None:
            return own
        moved = self.moves(command, words, values, piped=command.piped or piped_in is not None)
        if moved is not None:
            return moved
        name = (head.text or "").rsplit("/", 1)[-1]
        self._named_at_run_time(first, whole, command.offset)
        self._git_config(name, args, command.offset)
        stdin = self._stdin(command, piped_in, depth=depth)
        self._run_file(head, command.offset)
        if len(args) >= 3 and args[0].text == "config":
            setting = config_command([name, *(a.text or "" for a in args[:11])])
            if setting is not None:
                self._index(f"runs {setting!r}", command.offset)
        disguised = is_disguised(first, head, name)
        if name == "eval":
            self._code(join(args, " "), command.offset, "eval runs")
        elif INTERPRETERS.fullmatch(name):
            body = _body(command, stdin)
            self._interpreter(name, words[1:], args, stdin, command.offset, body=body)
        if disguised and (
            name == "eval"
            or (INTERPRETERS.fullmatch(name) and any(w.literal() in CODE_FLAGS for w in words))
        ):
            message = f"{name}, named at run time, runs text as code"
            self._report("exec.shell", command.offset, message, "high")
        if name in FETCHERS and (disguised or first.literal() != name):  # "$BIN"/curl
            self.fetchers.append((command.offset, name))
        output = command_output(name, args, words[1:], stdin)
        self._written(command, name, words[1:], output)
        self._copied(name, words[1:], depth=depth)
        return output

    def _assigned(self, words: list[Word], *, depth: int) -> list[Word]:
        """The words after the leading assignments, made (``then a=…`` assigns too)."""
        while words and _keyword(words[0]):
            words = words[1:]
        while words and self._assign(words[0], depth=depth):
            words = words[1:]
        return words

    def block(self, commands: list[Command], *, depth: int, stdin: Value | None = None) -> Value:
        """What a list of commands writes: every output not piped on, joined."""
        outputs: list[Value] = []
        stage: Value | None = stdin
        outer = len(self.folder.levels) - 1  # the block's ( … ) counted from where it runs
        low = min((c.subshell for c in commands[:BODY_COMMANDS]), default=0)
        for command in commands[:BODY_COMMANDS]:
            self.folder.enter(outer + command.subshell - low)
            output = self.command(command, stage, depth=depth)
            self.folder.ended(command.ended_by)
            stage = output if command.piped else None
            if not command.piped:
                outputs.append(output)
        self.folder.enter(outer)
        kept = [o for o in outputs if o.text or o.taint]
        if len(kept) == 1:
            return kept[0]
        if not kept:
            return outputs[-1] if outputs else Value()
        taint: frozenset[str] = frozenset()
        for output in kept:
            taint |= output.taint
        return Value(taint=taint, pieces=2)

    def _assign(self, word: Word, *, depth: int) -> bool:
        first = word.parts[0] if word.parts else None
        if first is None or first.kind != "lit" or first.quoted:
            return False
        match = _ASSIGNMENT.match(first.text)
        if match is None:
            return False
        rest = Word([Part("lit", first.text[match.end() :]), *word.parts[1:]], word.offset)
        value = self.word(rest, depth=depth)
        old = self.env.get(match.group(1))
        if match.group(2):
            value = join([old or Value(text=""), value])
        elif _home(old) and not _home(value) and value.text is not None:
            value = old  # if/else may pick either path (then d=$HOME; else d=.): home is judged
        if len(self.env) < 10_000:
            self.env[match.group(1)] = value
        return True

    def _stdin(self, command: Command, piped_in: Value | None, *, depth: int) -> Value | None:
        if command.here is not None:
            return self.word(command.here, depth=depth)
        if command.heredoc is not None and command.heredoc_expands:
            body = self.word(Splitter(command.heredoc[:MAX_BODY], command.heredoc_at).body(),
                             depth=depth)  # fmt: skip
            text = body.text if body.text is not None else command.heredoc[:MAX_TEXT]
            return Value(text=text, taint=body.taint - {BUILT})  # a template, not pieces
        if command.heredoc is not None:
            return Value(text=command.heredoc[:MAX_TEXT])
        if command.stdin_from is not None:
            return self.word(command.stdin_from, depth=depth)
        return piped_in

    # --- values ------------------------------------------------------------------------------

    def word(self, word: Word, *, depth: int) -> Value:
        values = [self.part(p, depth=depth) for p in word.parts[:200]]
        joined = join(values)
        dynamic = sum(1 for p in word.parts if p.kind != "lit" and p.op != "arith")
        if joined.text is not None and dynamic and joined.pieces >= 2:
            joined.taint |= {BUILT}
        return joined

    def part(self, part: Part, *, depth: int) -> Value:
        if part.kind == "lit":
            return Value(text=part.text, chunks=(part.text,))
        if part.kind == "ansi":
            decoded = unescape(part.text)
            escaped = decoded != part.text
            return Value(text=decoded, taint=frozenset({DECODED}) if escaped else frozenset())
        if part.kind in ("cmd", "proc"):
            return self.substitution(part, depth=depth)
        return self._variable(part)

    def _variable(self, part: Part) -> Value:
        name, op = part.text, part.op
        if name.startswith("!"):  # ${!ref}: the variable ref names
            target = self.env.get(name[1:])
            named = self.env.get(target.text or "") if target is not None and not op else None
            if named is None:
                return Value(taint=frozenset({BUILT}))
            return Value(text=named.text, taint=named.taint | {BUILT}, pieces=named.pieces,
                         chunks=named.chunks)  # fmt: skip
        element = self.names.element(name, op)
        if element is not None:
            return element
        value = self.env.get(name.lstrip("#"))
        if value is None:
            return Value()
        if name.startswith("#"):
            return Value(text=str(len(value.text)) if value.text is not None else None)
        text = value.text
        if not op or text is None:
            return value
        folded = expand(text, op)
        if folded is None:
            return Value(taint=value.taint | {BUILT})
        return Value(text=folded, taint=value.taint | {BUILT}, pieces=max(value.pieces, 2))

    def substitution(self, part: Part, *, depth: int) -> Value:
        """What a ``$(...)``, backquote or ``<(...)`` writes: the output of its pipeline."""
        if depth >= MAX_NESTING:
            return Value()
        commands = Splitter(part.text, part.offset).split()
        self.env_dumps.update(environment_dumps(commands[:200], captured=True))
        folder, self.folder = self.folder, self.folder.subshell()  # its cd stays there
        try:
            output = self.block(commands, depth=depth + 1)
        finally:
            self.folder = folder
        if part.kind == "cmd" and output.text and output.text.endswith("\n"):
            return replace(output, text=output.text.rstrip("\n"), chunks=None)  # as $(…) does
        return output


def _keyword(word: Word) -> bool:
    """``then``, ``do``, ``else``... (cheaper than folding every command's first word)."""
    parts = word.parts
    return len(parts) == 1 and parts[0].kind == "lit" and parts[0].text in _KEYWORDS


def _home(value: Value | None) -> bool:
    """A known path under the home folder."""
    return value is not None and (value.text or "").startswith("~")
