"""A tolerant walk over JavaScript tokens that follows values: :class:`Parser`, run by
``_scan`` on each file.

Not a JavaScript parser: statements are read loosely (declarations, assignments,
``return``, ``import``; every other token is walked past), expressions by precedence
climbing. Values go through ``const/let/var`` and plain assignments, object properties and
array items, destructuring, function parameters and returns (a function's body is walked
where it is defined, and again at a call site with the arguments' values, within a
:class:`~._values.Budget`), callbacks (a callback given to a network call receives fetched
data), ``new Promise`` resolution and classes (methods, getters and fields are what
``this`` holds inside the class and what ``new`` of it makes; a getter's value is what it
returns). Parameters take their default values when not passed. Names live in one flat scope.

Bounded: nesting deeper than :data:`MAX_DEPTH` is skipped, every loop advances by at least
one token, and bodies are re-walked only while the budget lasts.
"""

from __future__ import annotations

from typing import Final

from skillweave.skills.scan._javascript._expressions import Expressions
from skillweave.skills.scan._javascript._values import (
    MAX_ITEMS,
    Function,
    Value,
    member_ref,
    module_ref,
    text_of,
)

_SKIPPED_WORDS: Final = frozenset(
    {"else", "do", "try", "finally", "break", "continue", "throw", "export", "default", "case",
     "static", "public", "private", "protected", "declare", "readonly", "abstract", "extends",
     "class", "interface", "enum", "type", "namespace"}
)  # fmt: skip
_MODIFIERS: Final = frozenset({"static", "get", "set", "async", "*", "public", "private",
                               "protected", "readonly", "override"})  # fmt: skip
_SEPARATORS: Final = frozenset({"{", "}", ")", ";", ",", ":"})


class Parser(Expressions):
    """The walk over one file's tokens (or a template expression's, sharing the names)."""

    def run(self) -> None:
        self._hoist()
        self.statements(0, self.size)

    def statements(self, start: int, end: int) -> None:
        index = start
        while index < end:
            after = self.statement(index, end)
            index = after if after > index else index + 1

    def statement(self, i: int, end: int) -> int:
        kind, text = self.kinds[i], self.texts[i]
        if kind == "name":
            if text in ("const", "let", "var"):
                return self.declaration(i + 1, end)
            if text == "return":
                if i + 1 < end and self.texts[i + 1] not in (";", "}"):
                    value, after = self.expression(i + 1, end, comma=True)
                    if self.frames:
                        self.frames[-1].append(value)
                    return after
                return i + 1
            if text == "import" and i + 1 < end and self.texts[i + 1] not in ("(", "."):
                return self._import(i + 1, end)
            if text == "class":
                return self._class(i + 1, end)
            if text in _SKIPPED_WORDS or text in ("if", "while", "for", "switch", "catch"):
                return i + 1
        elif kind == "punct" and (
            text in _SEPARATORS or (text == "(" and i > 0 and self.texts[i - 1] == "for")
        ):  # a for header's clauses are walked one by one
            return i + 1
        _, after = self.expression(i, end, comma=True)
        return after

    def declaration(self, i: int, end: int) -> int:
        while i < end:
            target = i
            i = self._pattern_end(i, end)
            if i < end and self.texts[i] == ":":  # a TypeScript annotation
                i = self._skip_annotation(i + 1, end)
            value = Value()
            if i < end and self.texts[i] == "=":
                value, i = self.expression(i + 1, end)
            elif i < end and self.texts[i] == "of":  # for (const ch of text): an item's taint
                walked, i = self.expression(i + 1, end)
                value = Value(taint=walked.all_taint())
            self.bind(target, value)
            if i < end and self.texts[i] == ",":
                i += 1
                continue
            return i
        return i

    def _pattern_end(self, i: int, end: int) -> int:
        if self.texts[i] in ("{", "[") and self.partner[i] > i:
            return min(self.partner[i] + 1, end)
        return i + 1

    def bind(self, target: int, value: Value) -> None:
        """Assign `value` to the name or destructuring pattern at token `target`."""
        text = self.texts[target]
        if self.kinds[target] == "name":
            self.env[text] = value
            return
        close = self.partner[target]
        if text not in ("{", "[") or close < target:
            return
        position, index = target + 1, 0
        while position < close:
            key = self.texts[position]
            if key == "...":
                position += 1
                continue
            name_at = position
            field: str | None = key if text == "{" else str(index)
            computed: Value | None = None
            if text == "{" and key == "[" and self.partner[position] > position:
                # { ['ex' + 'ec']: run } = ...: the key folded, the lookup judged
                computed, _ = self.expression(position + 1, self.partner[position], comma=True)
                field, position = text_of(computed), self.partner[position]
                name_at = position
            if text == "{" and position + 1 < close and self.texts[position + 1] == ":":
                name_at = position + 2
            if name_at < close and self.kinds[name_at] == "name":
                offset = self.starts[target]
                self.env[self.texts[name_at]] = self.semantics.member(
                    value, field, offset, key=computed
                )
            position = self._next_comma(name_at, close) + 1
            index += 1

    def _class(self, i: int, end: int) -> int:
        """A class body: its methods and getters are the properties of ``this`` inside it (a
        getter's value is what it returns), and of what ``new`` of the class makes."""
        name = self.texts[i] if i < end and self.kinds[i] == "name" else None
        limit = min(end, i + 40)
        while i < limit and self.texts[i] != "{":  # the name, extends ...
            i = self._skip(i)
        if i >= limit or self.partner[i] <= i:
            return i + 1
        close = self.partner[i]
        methods: list[tuple[str, str, Function]] = []  # (name, get/set/'', function)
        fields: dict[str, Value] = {}
        position = i + 1
        while position < close and len(methods) < MAX_ITEMS:
            modifier = ""
            while (
                position + 1 < close
                and self.texts[position] in _MODIFIERS
                and (self.texts[position + 1] not in ("(", "=", ";"))
            ):
                modifier = self.texts[position] if self.texts[position] in ("get", "set") else ""
                position += 1
            key = self.texts[position]
            after = position + 1
            if key == "[" and self.partner[position] > position:
                computed, _ = self.expression(position + 1, self.partner[position], comma=True)
                key, after = text_of(computed) or "", self.partner[position] + 1
            function = None
            if after < close and self.texts[after] == "(":
                function = self._function_at(after, name=key)
            if function is not None:
                methods.append((key, modifier, function))
                position = function.body[1] + 1
            elif after < close and self.texts[after] == "=":  # a field: `factory = ...;`
                fields[key], position = self.expression(after + 1, close)
            else:
                position = max(self.statement(position, close), position + 1)
        self.statements(position, close)  # past MAX_ITEMS members: walked all the same
        saved = self.env.get("this")
        props = {**fields, **{key: Value(function=f) for key, _, f in methods}}
        self.env["this"] = Value(ref="this", props=props)
        try:
            for key, modifier, function in sorted(methods, key=lambda m: m[1] != "get"):
                self.define(function)
                this = self.env.get("this")
                if modifier == "get" and function.returns is not None and this is not None:
                    if this.props is None:
                        this.props = {}
                    this.props[key] = function.returns  # in place: `this` may be held elsewhere
            made = self.env.get("this") or Value()
        finally:
            if saved is None:
                self.env.pop("this", None)
            else:
                self.env["this"] = saved
        if name is not None:
            self.env[name] = Value(ref="class", props=made.props)
        return close + 1

    def _import(self, i: int, end: int) -> int:
        names: list[tuple[str, str | None]] = []  # (local name, imported member or None)
        stop = min(end, i + 200)
        position = i
        while position < stop and not (
            self.kinds[position] == "str" or self.texts[position] in (";", "from")
        ):
            text = self.texts[position]
            if text == "*" and position + 2 < stop and self.texts[position + 1] == "as":
                names.append((self.texts[position + 2], None))
                position += 3
            elif text == "{":
                close = self.partner[position] if self.partner[position] > position else stop
                position = self._named_imports(position + 1, close, names)
            elif self.kinds[position] == "name" and text != "type":
                names.append((text, None))
                position += 1
            else:
                position += 1
        if position < stop and self.texts[position] == "from":
            position += 1
        if position < end and self.kinds[position] == "str":
            own = self.semantics.modules(self.texts[position])
            module = module_ref(self.texts[position])
            for local, member in names:
                if own is not None:  # one of the skill's modules: what it exports
                    self.env[local] = _exported(own, member)
                    continue
                ref = member_ref(module, member) if member else module
                self.env[local] = Value(ref=ref)
            return position + 1
        return position

    def _named_imports(self, i: int, close: int, names: list[tuple[str, str | None]]) -> int:
        while i < close:
            if self.kinds[i] == "name" and self.texts[i] != "type":
                member = self.texts[i]
                local = member
                if i + 2 < close and self.texts[i + 1] == "as":
                    local = self.texts[i + 2]
                    i += 2
                names.append((local, member))
            i += 1
        return close + 1

    def _hoist(self) -> None:
        for i in range(self.size - 2):
            if self.texts[i] == "function" and self.kinds[i + 1] == "name":
                function = self._function_at(i + 1 + 1, name=self.texts[i + 1])
                if function is not None:
                    self.env.setdefault(self.texts[i + 1], Value(function=function))


def _exported(module: Value, member: str | None) -> Value:
    """What ``import { member } from`` (or ``import name from``, member None) a module of
    the skill gets: its export, or its default export, or the whole module (CommonJS)."""
    props = module.props or {}
    if member is not None:
        return props.get(member, Value())
    return props.get("default", module)
