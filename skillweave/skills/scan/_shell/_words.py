"""A shell script split into commands and words for the flow rules (``_flow``).

One pass over the text (comments already blanked), character by character, each step
advancing: a :class:`Command` is its words, whether its output is piped into the next, its
here-string or here-document, and its offset; a :class:`Word` is a list of parts: literal
text, a variable expansion (with its ``${...}`` operator), a command substitution
(``$(...)``, backquotes) or a process substitution (``<(...)``), each substitution kept as
text to be split again (at most :data:`MAX_NESTING` deep). At most :data:`MAX_COMMANDS`
commands are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Final, Literal

MAX_COMMANDS: Final = 50_000
MAX_NESTING: Final = 4
MAX_ARRAY: Final = 200

PartKind = Literal["lit", "var", "cmd", "proc", "ansi"]


@dataclass(slots=True)
class Part:
    kind: PartKind
    text: str  # literal text, a variable's name, or a substitution's inner text
    op: str = ""  # what follows the name inside ${...}
    offset: int = 0
    quoted: bool = False


@dataclass(slots=True)
class Word:
    parts: list[Part] = field(default_factory=list)
    offset: int = 0

    def literal(self) -> str | None:
        """The word's text when it is all literal."""
        if all(p.kind == "lit" for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None


@dataclass(slots=True)
class Command:
    words: list[Word] = field(default_factory=list)
    offset: int = 0
    piped: bool = False  # its output goes into the next command
    here: Word | None = None  # <<< word
    heredoc: str | None = None  # << body
    heredoc_at: int = 0  # where the body starts
    heredoc_expands: bool = False  # its delimiter is unquoted: $vars and $(...) expand
    stdin_from: Word | None = None  # < <(...) or < file
    stdout_to: Word | None = None  # > file, >> file
    written: list[Word] = field(default_factory=list)  # every > or >> target (2> err too)
    array: list[Word] | None = None  # name=(words): the elements assigned
    ended_by: str = ""  # the separator after it: "&&", "||", ";", "|", "\n", "(", ")"...
    or_exits: bool = False  # ``… || exit``: the script stops when it fails
    subshell: int = 0  # how many ( … ) it runs inside


_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_HEREDOC: Final = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w-]{0,40})\1")
_PLAIN: Final = re.compile(r"[^\s;&|()<>'\"`$\\]+")
_OR_EXIT: Final = re.compile(
    r"[ \t]*(?:\{[ \t]*(?:[^;\n{}()]{0,200}[;\n][ \t]*){0,3})?(?:exit|return)\b"
)
"""``|| exit 1``, ``|| { echo "no folder" >&2; exit 1; }``: what follows ``||`` stops."""


def _array_start(command: Command) -> bool:
    """Whether a ``(`` opens an array assignment: the command so far is one ``name=``."""
    if len(command.words) != 1 or command.array is not None:
        return False
    literal = command.words[0].literal()
    return literal is not None and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=", literal) is not None


class Splitter:
    """Commands of one script text (or a substitution's inner text)."""

    def __init__(self, text: str, base: int = 0) -> None:
        self.text = text
        self.base = base
        self.commands: list[Command] = []

    def split(self) -> list[Command]:
        text, end = self.text, len(self.text)
        current = Command(offset=self.base)
        i = 0
        while i < end and len(self.commands) < MAX_COMMANDS:
            char = text[i]
            if char in " \t\r":
                i += 1
            elif char == "(" and _array_start(current):
                i = self._array(i + 1, current)
            elif char in "\n;&|()":
                double = text[i : i + 2]
                piped = char == "|" and double != "||"
                ended_by = double if double in ("&&", "||", ";;") else char
                self._end(current, piped=piped, ended_by=ended_by, at=i)
                self.level = max(0, self.level + {"(": 1, ")": -1}.get(char, 0))
                current = Command(offset=self.base + i + 1, subshell=self.level)
                i += 2 if double in ("&&", "||", ";;") else 1
                if char == "\n" and self._pending_heredoc is not None:
                    i = self._skip_heredoc(i)
            elif text.startswith("<<<", i):
                word, i = self.word(self._spaces(i + 3))
                current.here = word
            elif text.startswith("<<", i) and (m := _HEREDOC.match(text, i)):
                self._pending_heredoc = (current, m.group(2))
                current.heredoc_expands = not m.group(1)
                i = m.end()
            elif char in "<>" and not text.startswith("<(", i):
                i += 1
                while i < end and text[i] in ">&|":
                    i += 1
                ampersand = text[i - 1] == "&"
                word, i = self.word(self._spaces(i))
                if char == "<":
                    current.stdin_from = word
                elif not ampersand:
                    current.stdout_to = word
                    current.written.append(word)
            elif char.isdigit() and text.startswith(">", i + 1):
                i += 1
            else:
                word, after = self.word(i)
                if after == i:
                    i += 1
                    continue
                if not current.words:
                    current.offset = self.base + i
                current.words.append(word)
                i = after
        self._end(current, piped=False)
        return self.commands

    _pending_heredoc: tuple[Command, str] | None = None
    level = 0  # ( … ) open at this point

    def _end(self, command: Command, *, piped: bool, ended_by: str = "", at: int = 0) -> None:
        command.piped = piped
        command.ended_by = ended_by
        command.or_exits = ended_by == "||" and _OR_EXIT.match(self.text, at + 2) is not None
        if command.words or command.here or command.heredoc is not None:
            self.commands.append(command)

    def _skip_heredoc(self, i: int) -> int:
        """The body of a pending here-document, kept on its command; returns its end."""
        assert self._pending_heredoc is not None
        command, delimiter = self._pending_heredoc
        self._pending_heredoc = None
        closing = re.compile(rf"^[ \t]*{re.escape(delimiter)}[ \t]*$", re.MULTILINE)
        match = closing.search(self.text, i)
        stop = match.start() if match else len(self.text)
        command.heredoc = self.text[i:stop]
        command.heredoc_at = self.base + i
        return match.end() if match else len(self.text)

    def _array(self, i: int, command: Command) -> int:
        """The elements of an array assignment (``name=(a b)``) up to its ``)``."""
        elements: list[Word] = []
        text, end = self.text, len(self.text)
        while i < end and len(elements) < MAX_ARRAY:
            while i < end and text[i] in " \t\r\n":
                i += 1
            if i >= end or text[i] == ")":
                break
            word, after = self.word(i)
            if after == i:
                break
            elements.append(word)
            i = after
        command.array = elements
        close = text.find(")", i)
        return end if close < 0 else close + 1

    def _spaces(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        return i

    def word(self, i: int) -> tuple[Word, int]:
        """The word starting at `i`, and where it ends."""
        text, end = self.text, len(self.text)
        word = Word(offset=self.base + i)
        while i < end:
            char = text[i]
            if char in " \t\r\n;&|()<>" and not text.startswith("<(", i):
                break
            if text.startswith("<(", i) or text.startswith(">(", i):
                close = self._closing(i + 2)
                word.parts.append(Part("proc", text[i + 2 : close], offset=self.base + i + 2))
                i = close + 1
            elif char == "'":
                close = text.find("'", i + 1)
                close = end if close < 0 else close
                word.parts.append(Part("lit", text[i + 1 : close], quoted=True))
                i = close + 1
            elif char == '"':
                i = self._double_quoted(i + 1, word)
            elif char == "`":
                close = text.find("`", i + 1)
                close = end if close < 0 else close
                word.parts.append(Part("cmd", text[i + 1 : close], offset=self.base + i + 1))
                i = close + 1
            elif char == "$":
                i = self._dollar(i, word)
            elif char == "\\":
                word.parts.append(Part("lit", text[i + 1 : i + 2]))
                i += 2
            else:
                match = _PLAIN.match(text, i)
                stop = match.end() if match else i + 1
                word.parts.append(Part("lit", text[i:stop]))
                i = stop
        return word, i

    def body(self) -> Word:
        """The whole text read as an unquoted here-document's body: one word whose
        ``$var`` and ``$(...)`` expand, quotes kept as they are."""
        word = Word(offset=self.base)
        self._double_quoted(0, word, closing="")
        return word

    def _double_quoted(self, i: int, word: Word, *, closing: str = '"') -> int:
        text, end = self.text, len(self.text)
        literal: list[str] = []
        escaped = '"\\$`\n' if closing else "\\$`\n"
        while i < end and text[i] != closing:
            char = text[i]
            if char == "\\" and i + 1 < end:
                literal.append(text[i + 1] if text[i + 1] in escaped else text[i : i + 2])
                i += 2
            elif char in "$`":
                if literal:
                    word.parts.append(Part("lit", "".join(literal), quoted=True))
                    literal = []
                if char == "`":
                    close = text.find("`", i + 1)
                    close = end if close < 0 else close
                    word.parts.append(Part("cmd", text[i + 1 : close], offset=self.base + i + 1))
                    i = close + 1
                else:
                    i = self._dollar(i, word, quoted=True)
            else:
                literal.append(char)
                i += 1
        if literal:
            word.parts.append(Part("lit", "".join(literal), quoted=True))
        return i + 1

    def _dollar(self, i: int, word: Word, *, quoted: bool = False) -> int:
        text = self.text
        nxt = text[i + 1 : i + 2]
        if text.startswith("$((", i):
            close = self._closing(i + 3)
            close = self._closing(close + 1) if close + 1 < len(text) else close
            word.parts.append(Part("var", "", op="arith"))
            return close + 1
        if nxt == "(":
            close = self._closing(i + 2)
            word.parts.append(Part("cmd", text[i + 2 : close], offset=self.base + i + 2))
            return close + 1
        if nxt == "{":
            close = text.find("}", i + 2)
            close = len(text) if close < 0 else close
            inner = text[i + 2 : close]
            match = re.match(r"[!#]?[A-Za-z_0-9@*]*", inner)
            name_end = match.end() if match else 0
            word.parts.append(Part("var", inner[:name_end], op=inner[name_end:], quoted=quoted))
            return close + 1
        if nxt == "'" and not quoted:
            close = i + 2
            while close < len(text) and text[close] != "'":
                close += 2 if text[close] == "\\" else 1
            word.parts.append(Part("ansi", text[i + 2 : close]))
            return close + 1
        match = _NAME.match(text, i + 1)
        if match is None:
            word.parts.append(Part("lit", "$"))
            return i + 1
        word.parts.append(Part("var", match.group(), quoted=quoted))
        return match.end()

    def _closing(self, i: int) -> int:
        """The index of the ``)`` that closes a ``(`` opened just before `i` (quotes and
        nested parentheses counted; the end of the text if none)."""
        text, end = self.text, len(self.text)
        depth = 1
        while i < end:
            char = text[i]
            if char == "'":
                close = text.find("'", i + 1)
                i = end if close < 0 else close + 1
                continue
            if char == "\\":
                i += 2
                continue
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        return end


# --- function definitions ----------------------------------------------------------------------

MAX_FUNCTIONS: Final = 300
MAX_BODY: Final = 1_000
_DEFINITION: Final = re.compile(
    r"(?:function[ \t]+([A-Za-z_][\w:.-]{0,80})[ \t]*(?:\([ \t]*\))?"
    r"|([A-Za-z_][\w:.-]{0,80})[ \t]*\([ \t]*\))\s*\{"
)


def function_bodies(
    text: str, commands: list[Command]
) -> tuple[dict[str, list[Command]], set[int]]:
    """The functions a script defines (``name() { ...; }``, ``function name { ...; }``), by
    name: the commands of each body, up to its closing brace (at most :data:`MAX_BODY`
    commands, :data:`MAX_FUNCTIONS` functions; a later definition replaces an earlier one);
    and the offsets of the definitions' own commands (a name is not a call there)."""
    bodies: dict[str, list[Command]] = {}
    definitions: set[int] = set()
    for index, command in enumerate(commands):
        if len(definitions) >= MAX_FUNCTIONS:
            break
        match = _DEFINITION.match(text, command.offset) if command.words else None
        if match is None:
            continue
        brace = match.end() - 1
        definitions.add(command.offset)
        body: list[Command] = []
        depth = 0
        for inner in commands[index : index + MAX_BODY]:
            words = inner.words
            if inner.offset <= brace:  # the definition's own command: ``function f { a``
                opened = [i for i, w in enumerate(words) if w.literal() == "{"]
                words = words[opened[0] + 1 :] if opened else []
                if not words:
                    continue
            elif not body and words and words[0].literal() == "{":
                words = words[1:]
            first = words[0].literal() if words else None
            if first == "}":
                depth -= 1
                if depth < 0:
                    break
            elif first == "{":
                depth += 1
            body.append(replace(inner, words=words) if words is not inner.words else inner)
        bodies[match.group(1) or match.group(2)] = body
    return bodies, definitions
