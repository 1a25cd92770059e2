"""Expressions of the JavaScript flow walk, by precedence climbing: :class:`Expressions`,
the base of ``_parser.Parser``.

Values go through assignments (to names and ``obj.prop``), operators, member lookups, calls
(a call of a known function walks its body again with the arguments), ``new``, array and
object literals and template literals (their ``${}`` parts tokenized and walked). Nesting
deeper than :data:`MAX_DEPTH` is skipped over, and every step advances.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from skillweave.skills.scan._javascript._values import (
    CODE_SINKS,
    DECODED,
    MAX_ITEMS,
    MAX_TEXT,
    Value,
    home_path,
    join_taint,
    riskier,
    text_of,
)
from skillweave.skills.scan._javascript._walk import MAX_DEPTH, Walk
from skillweave.skills.scan._text import HIDDEN_RUN

_PRECEDENCE: Final = {
    "??": 1, "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "===": 6, "!==": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "instanceof": 7, "in": 7, "<<": 8, ">>": 8, ">>>": 8,
    "+": 9, "-": 9, "*": 10, "/": 10, "%": 10, "**": 11,
}  # fmt: skip
_ASSIGN: Final = frozenset({"=", "+=", "-=", "||=", "&&=", "??=", "|=", "^=", "&=", "*="})
_UNARY: Final = frozenset({"!", "-", "+", "~", "...", "++", "--"})
_UNARY_WORDS: Final = frozenset({"typeof", "void", "delete", "await", "yield"})
_AFTER_NON_NULL: Final = frozenset({".", ")", "]", ";", ","})
_APPENDS: Final = frozenset({"push", "unshift", "add", "set", "append"})
_OPENERS: Final = frozenset({"(", "[", "{"})
_CONSTANTS: Final = {"true": Value(ref="true"), "false": Value(), "null": Value(),
                     "undefined": Value(), "this": Value(ref="this")}  # fmt: skip


class Expressions(Walk):
    """The expressions of the walk over one file."""

    def expression(self, i: int, end: int, *, comma: bool = False) -> tuple[Value, int]:
        value, j = self._assignment(i, end)
        while comma and j < end and self.texts[j] == "," and j > i:
            start = j + 1
            value, j = self._assignment(start, end)
            if j == start:
                break
        return value, j

    def _assignment(self, i: int, end: int) -> tuple[Value, int]:
        if i >= end:
            return Value(), i
        if self.depth > MAX_DEPTH:
            return Value(), self._skip(i)
        self.depth += 1
        try:
            value, j = self._conditional(i, end)
            target_end, target = self.last_target
            if j < end and self.texts[j] in _ASSIGN and target_end == j and target:
                op = self.texts[j]
                right, j = self._assignment(j + 1, end)
                if op == "+=":
                    right = self.semantics.binary("+", self.env.get(target, Value()), right)
                elif op != "=":
                    old = self.env.get(target, Value())
                    right = Value(taint=old.taint | right.taint)
                elif "." not in target:  # if/else may pick either path: home is judged
                    old = self.env.get(target, Value())
                    right = old if home_path(old) and not home_path(right) and right.text else right
                self._store(target, right)
                return right, j
            return value, j
        finally:
            self.depth -= 1

    def _store(self, target: str, value: Value) -> None:
        self.env[target] = value
        base, _, field = target.rpartition(".")
        holder = self.env.get(base) if base else None
        if holder is not None and len(holder.props or {}) < MAX_ITEMS:
            self.env[base] = replace(holder, props={**(holder.props or {}), field: value})

    def _conditional(self, i: int, end: int) -> tuple[Value, int]:
        value, j = self._binary(i, end, 1)
        if j < end and self.texts[j] == "?" and self.kinds[j] == "punct":
            first, j = self._assignment(j + 1, end)
            if j < end and self.texts[j] == ":":
                second, j = self._assignment(j + 1, end)
                taint = join_taint(first, second)
                chosen = riskier(first, second)
                sinks = [v.ref for v in (first, second) if v.ref in CODE_SINKS]  # either may run
                ref = sinks[0] if sinks else first.ref or second.ref
                return Value(text=chosen.text, taint=taint, ref=ref), j
            return first, j
        return value, j

    def _binary(self, i: int, end: int, least: int) -> tuple[Value, int]:
        left, j = self._unary(i, end)
        while j < end and j > i:
            op = self.texts[j]
            precedence = _PRECEDENCE.get(op) if self.kinds[j] in ("punct", "name") else None
            if precedence is None or precedence < least:
                break
            right, after = self._binary(j + 1, end, precedence + 1)
            if after == j + 1:
                break
            left = self.semantics.binary(op, left, right)
            j = after
        return left, j

    def _unary(self, i: int, end: int) -> tuple[Value, int]:
        if i >= end:
            return Value(), i
        text = self.texts[i]
        if (self.kinds[i] == "punct" and text in _UNARY) or (
            self.kinds[i] == "name" and (text in _UNARY_WORDS or text == "new")
        ):
            if self.depth > MAX_DEPTH or i + 1 >= end:
                return Value(), i + 1
            self.depth += 1
            try:
                if text == "new":
                    made, j = self._new(i + 1, end)
                    return self._chain(made, j, end, None) if j > i + 1 else (made, j)
                value, j = self._unary(i + 1, end)
            finally:
                self.depth -= 1
            if text == "-" and value.number is not None:
                return Value(number=-value.number), j
            if text in ("await", "yield", "...", "+") or (text == "-" and value.taint):
                return value, j
            return Value(), j
        return self._postfix(i, end)

    def _postfix(self, i: int, end: int) -> tuple[Value, int]:
        value, j = self._primary(i, end)
        if j == i:
            return value, j
        return self._chain(value, j, end, self.texts[i] if self.kinds[i] == "name" else None)

    def _chain(self, value: Value, j: int, end: int, target: str | None) -> tuple[Value, int]:
        """Member lookups and calls after a value (``x.a[b](c)``, ``new X().run(y)``)."""
        receiver: Value | None = None
        method: str | None = None
        while j < end:
            text = self.texts[j]
            if text in (".", "?.") and j + 1 < end and self.kinds[j + 1] == "name":
                receiver, method = value, self.texts[j + 1]
                value = self.semantics.member(value, method, self.starts[j + 1])
                target = f"{target}.{method}" if target else None
                j += 2
            elif text == "?." and j + 1 < end and self.texts[j + 1] in ("(", "["):
                j += 1
            elif text == "[" and self.partner[j] > j:
                key, _ = self.expression(j + 1, self.partner[j], comma=True)
                name = text_of(key)
                receiver, method = value, name
                value = self.semantics.member(value, name, self.starts[j], key=key)
                target = f"{target}.{name}" if target and name else None
                j = self.partner[j] + 1
            elif text == "(" and self.partner[j] > j:
                value = self._call(value, receiver, method, j)
                receiver, method, target = None, None, None
                j = self.partner[j] + 1
            elif self.kinds[j] == "tpl":
                template, _ = self._primary(j, end)
                value = self.semantics.call(value, [template], self.starts[j])
                j += 1
            elif text in ("++", "--") or (
                text == "!" and j + 1 < end and self.texts[j + 1] in ".)];,"
            ):
                j += 1
            else:
                break
        self.last_target = (j, target)
        return value, j

    def _call(self, callee: Value, receiver: Value | None, method: str | None, j: int) -> Value:
        saved = self.binding
        self.binding = self.semantics.binding(callee, receiver)
        try:
            args, returned = self.arguments(j)
        finally:
            self.binding = saved
        offset = self.starts[j]
        if callee.function is not None:
            return self.invoke(callee.function, args)
        mapped = self._folded_array_call(callee, receiver, method, args)
        if mapped is not None:
            return mapped
        added = join_taint(*args)
        if method in _APPENDS and receiver is not None and receiver.name and added:
            old = self.env.get(receiver.name, Value())
            self.env[receiver.name] = Value(taint=old.taint | added, name=old.name)
        return self.semantics.call(callee, args, offset, receiver=receiver, method=method,
                                   callbacks=returned)  # fmt: skip

    def _folded_array_call(
        self, callee: Value, receiver: Value | None, method: str | None, args: list[Value]
    ) -> Value | None:
        """A callback run over known items: ``map``, ``Array.from(items, fn)``, ``reduce``
        and ``reduceRight`` (names and payloads are built this way from code lists)."""
        if callee.ref == "Array.from" and len(args) > 1 and args[0].items is not None:
            return self._map(args[0], args[1])
        if receiver is None or receiver.items is None or not args:
            return None
        if method == "map":
            return self._map(receiver, args[0])
        if method in ("reduce", "reduceRight"):
            start = args[1] if len(args) > 1 else None
            return self._reduce(receiver, args[0], start, backwards=method == "reduceRight")
        return None

    def arguments(self, open_at: int) -> tuple[list[Value], frozenset[str]]:
        """The values of a call's arguments, and the taint the callbacks among them return."""
        close = self.partner[open_at]
        values: list[Value] = []
        returned: frozenset[str] = frozenset()
        position = open_at + 1
        while position < close and len(values) < MAX_ITEMS:
            spread = self.texts[position] == "..."
            value, after = self._assignment(position + 1 if spread else position, close)
            if spread and value.items is not None:
                values.extend(value.items)
            else:
                values.append(value)
            if value.function is not None and value.function.returns is not None:
                returned |= value.function.returns.taint
            position = self._next_comma(max(after, position + 1), close) + 1
        return values, returned

    def _new(self, i: int, end: int) -> tuple[Value, int]:
        callee, j = self._primary(i, end)
        while j < end:
            if self.texts[j] == "." and j + 1 < end and self.kinds[j + 1] == "name":
                callee = self.semantics.member(callee, self.texts[j + 1], self.starts[j + 1])
                j += 2
            elif self.texts[j] == "[" and self.partner[j] > j:  # new globalThis['Func'+'tion']
                key, _ = self.expression(j + 1, self.partner[j], comma=True)
                callee = self.semantics.member(callee, text_of(key), self.starts[j], key=key)
                j = self.partner[j] + 1
            else:
                break
        args: list[Value] = []
        if j < end and self.texts[j] == "(" and self.partner[j] > j:
            saved = self.binding
            promise = callee.ref == "Promise"
            self.binding = None if promise else self.semantics.binding(callee, None)
            if promise:
                self.semantics.resolved.append(set())
            try:
                args, _ = self.arguments(j)
                value = self.semantics.construct(callee, args, self.starts[j])
            finally:
                self.binding = saved
                if promise:
                    self.semantics.resolved.pop()
            j = self.partner[j] + 1
        else:
            value = self.semantics.construct(callee, args, self.starts[i])
        self.last_target = (-1, None)
        return value, j

    def _primary(self, i: int, end: int) -> tuple[Value, int]:
        if i >= end:
            return Value(), i
        kind, text = self.kinds[i], self.texts[i]
        if kind == "str":
            hidden = frozenset({DECODED}) if HIDDEN_RUN.search(text[:MAX_TEXT]) else frozenset()
            return Value(text=text[:MAX_TEXT], taint=hidden), i + 1
        if kind == "num":
            return Value(number=_number(text)), i + 1
        if kind == "regex":
            return Value(regex=text), i + 1
        if kind == "tpl":
            return self._template(i), i + 1
        if kind == "name":
            return self._name(i, end)
        if text == "(" and self.partner[i] > i:
            close = self.partner[i]
            if close + 1 < end and self.texts[close + 1] == "=>":
                function = self._function_at(i, name="")
                if function is not None:
                    return self.define(function), function.body[1] + (
                        0 if function.expression else 1
                    )
            value, _ = self.expression(i + 1, close, comma=True)
            return value, close + 1
        if text == "[" and self.partner[i] > i:
            items, _ = self.arguments(i)
            taint = join_taint(*items)
            return Value(items=items, taint=taint), self.partner[i] + 1
        if text == "{" and self.partner[i] > i:
            return self._object(i), self.partner[i] + 1
        return Value(), i

    def _name(self, i: int, end: int) -> tuple[Value, int]:
        text = self.texts[i]
        if text in ("function", "async") or (i + 1 < end and self.texts[i + 1] == "=>"):
            arrow = i + 2 < end and self.texts[i + 2] == "=>"
            plain = text == "async" and i + 1 < end and self.texts[i + 1] not in ("(", "function")
            if plain and not arrow:
                return Value(), i + 1
            start = i + 1 if text == "async" else i
            function = self._function_at(start, name="")
            if function is not None:
                return self.define(function), function.body[1] + (0 if function.expression else 1)
            return Value(), i + 1
        if text == "this" and "this" in self.env:  # inside a class body
            return self.env["this"], i + 1
        if text in _CONSTANTS:
            return _CONSTANTS[text], i + 1
        if text == "import":
            return Value(ref="import"), i + 1
        value = self.env.get(text)
        if value is None:
            value = self.semantics.builtin(text)
        if value.name != text:
            value = replace(value, name=text)
        return value, i + 1


def _number(text: str) -> float | None:
    cleaned = text.replace("_", "").rstrip("n")
    try:
        if cleaned[:2].lower() in ("0x", "0o", "0b"):
            return float(int(cleaned, 0))
        return float(cleaned)
    except ValueError:
        return None
