"""Shell values followed from downloads, decoders and pieces into what runs them:
:class:`ShellFlow`, run by ``_scan`` on each script.

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
The script's own functions are walked again with their arguments (bounded by
:data:`MAX_CALL_WORK`), a substitution's value is every output it keeps
(``$(curl ... || true)``), and a redirection's target is folded (``$HOME`` as ``~``, a
for-loop variable as each word it takes) and judged as a place written.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._shell._environment import environment_dumps
from skillweave.skills.scan._shell._index import config_command
from skillweave.skills.scan._shell._words import (
    MAX_NESTING,
    Command,
    Part,
    Splitter,
    Word,
    function_bodies,
)
from skillweave.skills.scan._text import package_config, write_target

FETCHED: Final = "fetched"
DECODED: Final = "decoded"
BUILT: Final = "built"
LAYERED: Final = "layered"  # decoded from data that was itself decoded
PAYLOAD: Final = frozenset({FETCHED, DECODED})
MAX_TEXT: Final = 4096
MAX_CALL_WORK: Final = 5_000
"""Commands walked again inside calls of the script's own functions, per script."""
_BODY_COMMANDS: Final = 200
_POSITIONAL: Final = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*")

_FETCHERS: Final = frozenset({"curl", "wget", "fetch", "aria2c", "nc", "ncat", "http", "lynx"})
_INTERPRETERS: Final = re.compile(
    r"(?:(?:ba|z|da|k|c|tc|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|lua|source|\.)"
)
_CODE_FLAGS: Final = frozenset({"-c", "-e", "-E", "--eval", "-r"})
_PREFIXES: Final = frozenset(
    {"sudo", "env", "exec", "command", "builtin", "nohup", "time", "nice", "then", "do", "else",
     "elif", "if", "while", "until", "!", "{", "}", "xargs"}
)  # fmt: skip
_DECLARERS: Final = frozenset({"export", "local", "declare", "readonly", "typeset"})
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_ESCAPES: Final = re.compile(r"\\(?:x([0-9a-fA-F]{1,2})|([0-7]{1,3})|u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "e": "\x1b", "a": "\a", "\\": "\\"}
_OUTPUT_FLAG: Final = re.compile(r"-[a-zA-Z]{0,6}[oO]|--output(?:-document)?")
_ROT13_SETS: Final = re.compile(r"[A-Za-z-]{3,}")


@dataclass(slots=True)
class Value:
    """What is known of a shell value: its text, where its data came from, how many pieces
    built it."""

    text: str | None = None
    taint: frozenset[str] = frozenset()
    pieces: int = 0
    chunks: tuple[str, ...] | None = None  # the literal pieces joined into it (None: transformed)


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        hexadecimal, octal, unicode, other = match.groups()
        if hexadecimal or unicode:
            return chr(int(hexadecimal or unicode, 16))
        if octal:
            return chr(int(octal, 8))
        return _SIMPLE.get(other, "\\" + other)

    return _ESCAPES.sub(one, text)


def _join(values: list[Value], separator: str = "") -> Value:
    taint: frozenset[str] = frozenset()
    for value in values:
        taint |= value.taint
    texts = [v.text for v in values]
    pieces = sum(max(v.pieces, 1) for v in values if v.text != "")
    if None in texts:
        return Value(taint=taint, pieces=pieces)
    text = separator.join(t for t in texts if t is not None)
    chunks: tuple[str, ...] | None = ()
    for value in values:
        chunks = None if chunks is None or value.chunks is None else (chunks + value.chunks)[:50]
    return Value(text=text[:MAX_TEXT], taint=taint, pieces=pieces, chunks=chunks)


class ShellFlow:
    """The flow over one script's commands; :attr:`found` holds (rule, offset, message,
    severity) for the caller to report."""

    def __init__(self) -> None:
        self.env: dict[str, Value] = {"HOME": Value(text="~", chunks=("~",))}
        self.loops: dict[str, list[str]] = {}  # for-loop variables: the words they take
        self.found: list[tuple[str, int, str, Severity]] = []
        self.fetchers: list[tuple[int, str]] = []  # commands named at run time that fetch
        self.files: dict[str, Value] = {}  # files written with fetched or decoded data
        self.functions: dict[str, list[Command]] = {}
        self.definitions: set[int] = set()  # offsets of the commands that define functions
        self.call_work = MAX_CALL_WORK
        self.env_dumps: set[int] = set()  # offsets of commands that write out the environment

    def run(self, text: str) -> None:
        commands = Splitter(text).split()
        self.functions, self.definitions = function_bodies(text, commands)
        self.env_dumps.update(environment_dumps(commands, captured=False))
        self.commands(commands, depth=0)

    def commands(self, commands: list[Command], *, depth: int) -> None:
        stage_input: Value | None = None
        for command in commands:
            output = self.command(command, stage_input, depth=depth)
            stage_input = output if command.piped else None

    # --- one command -------------------------------------------------------------------------

    def command(self, command: Command, piped_in: Value | None, *, depth: int) -> Value:
        """Run the sinks of one command and return what it writes to its output."""
        words = list(command.words)
        while words and self._assign(words[0], depth=depth):
            words.pop(0)
        if command.stdout_to is not None:
            self._redirected(command.stdout_to, depth=depth)
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
        while words and words[0].literal() in _PREFIXES:
            words.pop(0)
            while words and (words[0].literal() or "").startswith("-"):
                words.pop(0)
        if not words:
            return piped_in or Value()
        head = self.word(words[0], depth=depth)
        args = [self.word(w, depth=depth) for w in words[1:]]
        body = self.functions.get(words[0].literal() or "")
        if body is not None and command.offset not in self.definitions:
            return self._call(body, args, depth=depth)
        name = (head.text or "").rsplit("/", 1)[-1]
        self._named_at_run_time(words[0], head, command.offset)
        stdin = self._stdin(command, piped_in, depth=depth)
        self._run_file(head, command.offset)
        if len(args) >= 3 and args[0].text == "config":
            setting = config_command([name, *(a.text or "" for a in args[:11])])
            if setting is not None:
                self._index(f"runs {setting!r}", command.offset)
        disguised = _disguised(words[0], head, name)
        if name == "eval":
            self._code(_join(args, " "), command.offset, "eval runs")
        elif _INTERPRETERS.fullmatch(name):
            self._interpreter(name, words[1:], args, stdin, command.offset)
        if disguised and (
            name == "eval"
            or (_INTERPRETERS.fullmatch(name) and any(w.literal() in _CODE_FLAGS for w in words))
        ):
            message = f"{name}, named at run time, runs text as code"
            self._report("exec.shell", command.offset, message, "high")
        if name in _FETCHERS and (disguised or words[0].literal() != name):  # "$BIN"/curl
            self.fetchers.append((command.offset, name))
        output = _output(name, args, words[1:], stdin)
        self._written(command, name, words[1:], output)
        return output

    def _call(self, body: list[Command], args: list[Value], *, depth: int) -> Value:
        """What one of the script's functions writes, walked again with its arguments."""
        if depth >= MAX_NESTING or self.call_work <= 0:
            return Value()
        self.call_work -= min(len(body), _BODY_COMMANDS) + 1
        saved = {name: self.env.get(name) for name in _POSITIONAL}
        for name, value in zip(_POSITIONAL[:9], args, strict=False):
            self.env[name] = value
        self.env["@"] = self.env["*"] = _join(args, " ")
        try:
            return self.block(body, depth=depth + 1)
        finally:
            for name, value in saved.items():
                if value is None:
                    self.env.pop(name, None)
                else:
                    self.env[name] = value

    def block(self, commands: list[Command], *, depth: int) -> Value:
        """What a list of commands writes: every output not piped on, joined."""
        outputs: list[Value] = []
        stage: Value | None = None
        for command in commands[:_BODY_COMMANDS]:
            output = self.command(command, stage, depth=depth)
            stage = output if command.piped else None
            if not command.piped:
                outputs.append(output)
        kept = [o for o in outputs if o.text or o.taint]
        if len(kept) == 1:
            return kept[0]
        if not kept:
            return outputs[-1] if outputs else Value()
        taint: frozenset[str] = frozenset()
        for output in kept:
            taint |= output.taint
        return Value(taint=taint, pieces=2)

    def _written(self, command: Command, name: str, words: list[Word], output: Value) -> None:
        """Remember a file that a download or a decoder writes (``> f``, ``-o f``)."""
        targets = [command.stdout_to.literal()] if command.stdout_to is not None else []
        if name in _FETCHERS:
            for flag, word in pairwise(words):
                if _OUTPUT_FLAG.fullmatch(flag.literal() or ""):
                    targets.append(word.literal())
        for target in targets:
            if target and output.taint & PAYLOAD and len(self.files) < 1000:
                self.files[target.removeprefix("./")] = output

    def _redirected(self, target: Word, *, depth: int) -> None:
        """A redirection's target folded (a for-loop variable: each word it takes), judged
        as a place written: persistence (an rc file, cron, autostart) or outside the
        workspace."""
        parts = target.parts
        if len(parts) == 1 and parts[0].kind == "var" and not parts[0].op:
            paths = self.loops.get(parts[0].text) or [self.word(target, depth=depth).text]
        else:
            paths = [self.word(target, depth=depth).text]
        for path in paths[:50]:
            rule = write_target(path) if path else None
            manager = package_config(path) if rule is not None and path else None
            if manager is not None:
                self._index(f"writes {path}, {manager}'s configuration", target.offset)
            elif rule == "fs.persistence":
                self._report(rule, target.offset, f"writes {path}, which runs again later",
                             "critical")  # fmt: skip
            elif rule == "fs.write-outside":
                self._report(rule, target.offset, f"writes {path}, outside the workspace", "high")

    def _index(self, what: str, offset: int) -> None:
        """A package manager's configuration changed for every later install."""
        self._report("dependencies.index-config", offset, f"{what}: later installs use the "
                     "index or the checks it sets", "high")  # fmt: skip
        self._report("fs.persistence", offset, f"{what}, outside the workspace: it outlives "
                     "the run", "critical")  # fmt: skip

    def _run_file(self, head: Value, offset: int) -> None:
        path = (head.text or "").removeprefix("./")
        if path in self.files:
            self._code(self.files[path], offset, f"{path} runs")

    def _assign(self, word: Word, *, depth: int) -> bool:
        first = word.parts[0] if word.parts else None
        if first is None or first.kind != "lit" or first.quoted:
            return False
        match = _ASSIGNMENT.match(first.text)
        if match is None:
            return False
        rest = Word([Part("lit", first.text[match.end() :]), *word.parts[1:]], word.offset)
        value = self.word(rest, depth=depth)
        if match.group(2):
            value = _join([self.env.get(match.group(1), Value(text="")), value])
        if len(self.env) < 10_000:
            self.env[match.group(1)] = value
        return True

    def _stdin(self, command: Command, piped_in: Value | None, *, depth: int) -> Value | None:
        if command.here is not None:
            return self.word(command.here, depth=depth)
        if command.heredoc is not None:
            return Value(text=command.heredoc[:MAX_TEXT])
        if command.stdin_from is not None:
            return self.word(command.stdin_from, depth=depth)
        return piped_in

    def _named_at_run_time(self, word: Word, value: Value, offset: int) -> None:
        if all(p.kind == "lit" for p in word.parts):
            return
        if value.taint & PAYLOAD:
            self._report("exec.decoded-payload", offset,
                         f"runs a command taken from {_where(value)} data{_reveal(value)}",
                         "critical")  # fmt: skip
        elif value.text and _split_name(value):
            self._report("obfuscation.dynamic-lookup", offset,
                         f"runs a command whose name is built at run time{_reveal(value)}",
                         "high")  # fmt: skip
            if value.text.rsplit("/", 1)[-1] in _FETCHERS:
                self.fetchers.append((offset, value.text))

    def _interpreter(
        self,
        name: str,
        words: list[Word],
        args: list[Value],
        stdin: Value | None,
        offset: int,
    ) -> None:
        for index, word in enumerate(words):
            if word.literal() in _CODE_FLAGS and index + 1 < len(args):
                self._code(args[index + 1], offset, f"{name} {word.literal()} runs")
                return
        for word, value in zip(words, args, strict=True):
            if any(p.kind == "proc" for p in word.parts):
                self._code(value, offset, f"{name} runs")
                return
        files = [w.literal() for w in words if not (w.literal() or "").startswith("-")]
        script = (files[0] or "").removeprefix("./") if files else ""
        if script in self.files:
            self._code(self.files[script], offset, f"{name} {script} runs")
            return
        reads_stdin = not files or files[0] in ("-", "/dev/stdin")
        if stdin is not None and reads_stdin:
            self._code(stdin, offset, f"{name} runs what is piped into it:", piped=True)
            if FETCHED in stdin.taint:
                self._report("exec.remote-pipe", offset,
                             f"a download piped into {name}", "critical")  # fmt: skip

    def _code(self, value: Value, offset: int, what: str, *, piped: bool = False) -> None:
        if LAYERED in value.taint:
            self._report("obfuscation.packed-code", offset,
                         f"{what} code decoded through more than one layer{_reveal(value)}",
                         "high")  # fmt: skip
        elif DECODED in value.taint and FETCHED not in value.taint:
            self._report("obfuscation.packed-code", offset,
                         f"{what} code the script carries encoded{_reveal(value)}",
                         "high")  # fmt: skip
        if value.taint & PAYLOAD:
            self._report("exec.decoded-payload", offset,
                         f"{what} code from {_where(value)} data{_reveal(value)}",
                         "critical")  # fmt: skip
        elif value.text is not None and (value.pieces >= 2 or BUILT in value.taint):
            self._report("exec.shell", offset,
                         f"{what} code built from pieces{_reveal(value)}", "high")  # fmt: skip
        elif piped and value.text is None:
            self._report("exec.shell", offset, f"{what} text built at run time", "medium")

    # --- values ------------------------------------------------------------------------------

    def word(self, word: Word, *, depth: int) -> Value:
        values = [self.part(p, depth=depth) for p in word.parts[:200]]
        joined = _join(values)
        dynamic = sum(1 for p in word.parts if p.kind != "lit" and p.op != "arith")
        if joined.text is not None and dynamic and joined.pieces >= 2:
            joined.taint |= {BUILT}
        return joined

    def part(self, part: Part, *, depth: int) -> Value:
        if part.kind == "lit":
            return Value(text=part.text, chunks=(part.text,))
        if part.kind == "ansi":
            decoded = _unescape(part.text)
            escaped = decoded != part.text
            return Value(text=decoded, taint=frozenset({DECODED}) if escaped else frozenset())
        if part.kind in ("cmd", "proc"):
            return self.substitution(part, depth=depth)
        return self._variable(part)

    def _variable(self, part: Part) -> Value:
        name, op = part.text, part.op
        if name.startswith("!"):
            return Value(taint=frozenset({BUILT}))
        value = self.env.get(name.lstrip("#"))
        if value is None:
            return Value()
        if name.startswith("#"):
            return Value(text=str(len(value.text)) if value.text is not None else None)
        text = value.text
        if not op or text is None:
            return value
        folded = _expand(text, op)
        if folded is None:
            return Value(taint=value.taint | {BUILT})
        return Value(text=folded, taint=value.taint | {BUILT}, pieces=max(value.pieces, 2))

    def substitution(self, part: Part, *, depth: int) -> Value:
        """What a ``$(...)``, backquote or ``<(...)`` writes: the output of its pipeline."""
        if depth >= MAX_NESTING:
            return Value()
        commands = Splitter(part.text, part.offset).split()
        self.env_dumps.update(environment_dumps(commands[:200], captured=True))
        return self.block(commands, depth=depth + 1)

    def _report(self, rule: str, offset: int, message: str, severity: Severity) -> None:
        if len(self.found) < 200:
            self.found.append((rule, offset, message, severity))


# --- transforms ----------------------------------------------------------------------------------


def _output(name: str, args: list[Value], words: list[Word], stdin: Value | None) -> Value:
    """What a command writes to its output, from its name, arguments and input."""
    flags = {w.literal() for w in words if (w.literal() or "").startswith("-")}
    plain = [a for a, w in zip(args, words, strict=True) if not (w.literal() or "").startswith("-")]
    incoming = stdin or Value()
    if name in _FETCHERS:
        return Value(taint=frozenset({FETCHED}))
    if name == "echo":
        joined = _join(plain, " ")
        if "-e" in flags and joined.text is not None and "\\" in joined.text:
            return Value(text=_unescape(joined.text), taint=joined.taint | {DECODED}, pieces=2)
        return joined
    if name == "printf" and plain:
        return _printf(plain)
    if (name == "cat" and not plain) or name in ("tee", "sed", "awk", "head", "tail"):
        return Value(text=incoming.text if name in ("cat", "tee") else None, taint=incoming.taint)
    if name == "rev":
        text = incoming.text[::-1] if incoming.text is not None else None
        return Value(text=text, taint=_decoded(incoming), pieces=2)
    if name == "tr":
        return _tr(incoming, plain, flags)
    if name in ("base64", "base32", "xxd", "openssl", "gunzip", "zcat", "gzip", "bzip2",
                "xz", "uudecode", "brotli", "zstd", "basenc"):  # fmt: skip
        return _decoder(name, incoming, flags, plain)
    return Value(taint=incoming.taint & PAYLOAD)


def _expand(text: str, op: str) -> str | None:
    """``${var<op>}`` on a known value: substitutions, substrings, case changes."""
    if op.startswith(("//", "/")):
        every = op.startswith("//")
        pattern, _, replacement = op[2 if every else 1 :].partition("/")
        if any(c in pattern for c in "*?[") or not pattern:
            return None
        return (
            text.replace(pattern, replacement) if every else text.replace(pattern, replacement, 1)
        )
    match = re.fullmatch(r":(-?\d{1,6})(?::(-?\d{1,6}))?", op.replace(" ", ""))
    if match:
        start = int(match.group(1))
        start = max(0, len(text) + start) if start < 0 else start
        if match.group(2) is None:
            return text[start:]
        length = int(match.group(2))
        return text[start : start + length] if length >= 0 else text[start:length]
    cases = {"^^": str.upper, ",,": str.lower}
    if op in cases:
        return cases[op](text)
    if op.startswith((":-", "-", ":=", "=")):
        return text
    return None


def _printf(plain: list[Value]) -> Value:
    fmt = plain[0]
    if fmt.text is None:
        return Value(taint=fmt.taint)
    joins = fmt.text in ("%s", "%b") or re.fullmatch(r"(?:%s){2,8}", fmt.text) is not None
    if joins and len(plain) > 1:  # printf %s%s ev al
        rest = _join(plain[1:])
        if fmt.text == "%b" and rest.text is not None and "\\" in rest.text:
            return Value(text=_unescape(rest.text), taint=rest.taint | {DECODED}, pieces=2)
        return rest
    if "\\" in fmt.text:
        return Value(text=_unescape(fmt.text)[:MAX_TEXT], taint=fmt.taint | {DECODED}, pieces=2)
    return Value(text=fmt.text if "%" not in fmt.text else None, taint=fmt.taint)


def _tr(incoming: Value, plain: list[Value], flags: set[str | None]) -> Value:
    sets = [p.text for p in plain]
    if "-d" in flags:
        if incoming.text is not None and sets and sets[0] is not None and len(sets[0]) < 40:
            kept = "".join(c for c in incoming.text if c not in sets[0])
            return Value(text=kept, taint=incoming.taint | {BUILT}, pieces=2)
        return Value(taint=incoming.taint | {BUILT})
    if len(sets) < 2 or not sets[0] or not sets[1]:
        return Value(taint=incoming.taint)
    first, second = sets[0], sets[1]
    if not (_ROT13_SETS.fullmatch(first) and _ROT13_SETS.fullmatch(second)):
        return Value(taint=incoming.taint)  # classes, case changes, separators
    if first.lower() == second.lower():
        return Value(text=None, taint=incoming.taint)
    if second.startswith(("N", "n")) and incoming.text is not None:
        rotated = codecs.encode(incoming.text, "rot13")
        return Value(text=rotated, taint=_decoded(incoming), pieces=2)
    return Value(taint=_decoded(incoming))  # a substitution cipher


def _decoder(name: str, incoming: Value, flags: set[str | None], plain: list[Value]) -> Value:
    words = {p.text for p in plain}
    decoding = bool(flags & {"-d", "--decode", "-D", "-r", "-dc", "-cd"}) or name in (
        "gunzip", "zcat", "uudecode"
    )  # fmt: skip
    if name == "openssl":
        decoding = "-d" in flags and bool(words & {"enc", "base64"} or flags & {"-base64", "-a"})
    if not decoding:
        return Value(taint=incoming.taint & PAYLOAD)
    text: str | None = None
    if incoming.text is not None:
        try:
            if name in ("base64", "openssl", "basenc"):
                data = re.sub(r"\s", "", incoming.text)
                raw = base64.b64decode(data + "=" * (-len(data) % 4))
                text = raw.decode("utf-8", "replace")
            elif name == "xxd":
                text = bytes.fromhex(re.sub(r"\s", "", incoming.text)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            text = None
    return Value(text=text[:MAX_TEXT] if text else None, taint=_decoded(incoming), pieces=2)


def _decoded(incoming: Value) -> frozenset[str]:
    """The taint of data a decoder makes: layered when its input was decoded already."""
    layered = {LAYERED} if DECODED in incoming.taint else set()
    return incoming.taint | {DECODED} | layered


def _disguised(word: Word, value: Value, name: str) -> bool:
    """Whether a command's own name was cut into pieces, by variables (``"$a$b"``) or quotes
    (``c""url``), not merely placed in a folder (``"$HOME/bin/python"``)."""
    if not name:
        return False
    if word.literal() is not None:
        return len(word.parts) > 1 and not any(name in p.text for p in word.parts)
    return _split_name(value)


def _split_name(value: Value) -> bool:
    """Whether a command's name was cut into pieces (``$a$b``, ``${s//X/}``), not merely
    placed in a folder or given arguments by a variable (``"$ROOT/bin/tool"``)."""
    if value.pieces < 2 and BUILT not in value.taint:
        return False
    words = (value.text or "").split()
    name = words[0].rsplit("/", 1)[-1] if words else ""
    return bool(name) and (value.chunks is None or not any(name in c for c in value.chunks))


def _where(value: Value) -> str:
    return "fetched" if FETCHED in value.taint else "decoded"


def _reveal(value: Value) -> str:
    if not value.text:
        return ""
    flat = " ".join(value.text.split())
    return f": {flat[:80] + ('…' if len(flat) > 80 else '')!r}"
