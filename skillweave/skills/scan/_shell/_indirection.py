"""Indirection a shell script puts between a command and its name: :class:`Indirection`, kept
by ``_flow.ShellFlow`` for each script. Arrays (``cmd=(cu rl)``, read as ``${cmd[0]}`` or
``"${cmd[@]}"``, one word per element) and aliases (``alias py='command python3'``) are
remembered as they are defined; a command's words are then expanded through them, and a
command name taken from a variable is split at blanks as the shell splits it (``$get``
holding ``curl -s``, ``"$@"`` in a wrapper function), so that every rule judges the command
actually run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from skillweave.skills.scan._shell._values import Value, join
from skillweave.skills.scan._shell._words import MAX_ARRAY, Command, Part, Word

MAX_NAMES: Final = 1_000
"""Arrays, and aliases, kept per script."""
_ALIAS_DEPTH: Final = 5
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")

Evaluate = Callable[[Word], Value]


class Indirection:
    """The arrays and aliases of one script, and commands' words expanded through them."""

    def __init__(self) -> None:
        self.arrays: dict[str, list[Value]] = {}  # name=(a b): each element's value
        self.aliases: dict[str, list[str]] = {}  # alias name='words': the words it stands for

    def declares(self, command: Command, evaluate: Evaluate, env: dict[str, Value]) -> bool:
        """Whether the command is an array assignment or an alias, kept for later commands."""
        words = command.words
        if command.array is not None and len(words) == 1:
            self._assign_array(words[0], command.array, evaluate, env)
            return True
        if words and words[0].literal() == "alias":
            self._alias(words[1:], evaluate)
            return True
        return False

    def element(self, name: str, op: str) -> Value | None:
        """``${name[i]}``, ``${name[@]}`` of a known array; None for anything else."""
        elements = self.arrays.get(name)
        if elements is None or not op.startswith("["):
            return None
        index = op[1:-1] if op.endswith("]") else ""
        if index in ("@", "*"):
            return join(elements, " ")
        known = index.isdigit() and int(index) < len(elements)
        return elements[int(index)] if known else Value()

    def unalias(self, words: list[Word]) -> list[Word]:
        """The words with an alias at command position replaced by what it stands for
        (an alias of an alias followed a few levels deep)."""
        for _ in range(_ALIAS_DEPTH):
            expansion = self.aliases.get(words[0].literal() or "") if words else None
            if expansion is None:
                return words
            offset = words[0].offset
            words = [Word([Part("lit", t)], offset) for t in expansion] + words[1:]
        return words

    def expanded(
        self, words: list[Word], evaluate: Evaluate
    ) -> tuple[list[Word], list[Value], Value]:
        """A command's words and their values after expansion: an array's ``${a[@]}`` is
        one word per element, and a command name taken from a variable is split at blanks;
        and the first word's whole value."""
        out_words: list[Word] = []
        values: list[Value] = []
        whole: Value | None = None
        for index, word in enumerate(words[:500]):
            parts = word.parts
            single = len(parts) == 1 and parts[0].kind == "var"
            elements = self.arrays.get(parts[0].text) if single else None
            if elements is not None and parts[0].op in ("[@]", "[*]"):
                pieces = elements
            else:
                value = evaluate(word)
                whole = value if index == 0 else whole
                splits = index == 0 and single and value.text and len(value.text.split()) > 1
                if not splits or value.text is None:
                    out_words.append(word)
                    values.append(value)
                    continue
                pieces = [
                    Value(text=t, taint=value.taint, pieces=value.pieces, chunks=value.chunks)
                    for t in value.text.split()[:200]
                ]
            for piece in pieces:
                kind = "lit" if piece.text is not None else "var"
                out_words.append(Word([Part(kind, piece.text or "?")], word.offset))
                values.append(piece)
        if not values:
            return [words[0]], [Value()], Value()
        if whole is None:  # the name came from an array
            whole = join(values[:1])
            whole.chunks = values[0].chunks
        return out_words, values, whole

    def _assign_array(
        self, word: Word, elements: list[Word], evaluate: Evaluate, env: dict[str, Value]
    ) -> None:
        match = _ASSIGNMENT.fullmatch((word.literal() or "")[:200])
        if match is None or len(self.arrays) >= MAX_NAMES:
            return
        values = [evaluate(w) for w in elements]
        if match.group(2):
            values = self.arrays.get(match.group(1), []) + values
        self.arrays[match.group(1)] = values[:MAX_ARRAY]
        env[match.group(1)] = join(values[:MAX_ARRAY], " ")

    def _alias(self, words: list[Word], evaluate: Evaluate) -> None:
        for word in words[:50]:
            first = word.parts[0] if word.parts else None
            match = _ASSIGNMENT.match(first.text) if first and first.kind == "lit" else None
            if first is None or match is None or match.group(2):
                continue
            if len(self.aliases) >= MAX_NAMES:
                return
            rest = Word([Part("lit", first.text[match.end() :]), *word.parts[1:]], word.offset)
            text = evaluate(rest).text
            if text:
                self.aliases[match.group(1)] = text.split()[:50]
