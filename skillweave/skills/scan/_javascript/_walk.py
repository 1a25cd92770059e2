"""The part of the JavaScript flow walk that handles functions and literals (objects,
templates): :class:`Walk`, the base of ``_expressions.Expressions`` and ``_parser.Parser``.

A function's body is walked where it is defined (a callback's parameters get the taint its
caller passes, a ``new Promise`` executor's first parameter resolves the promise) and again
at a call site with the arguments' values, while the :class:`~._values.Budget` lasts: three
calls deep at most, never into a body already being walked, and never more tokens in all
than the file holds plus a constant.
"""

from __future__ import annotations

from typing import Final

from skillweave.skills.scan._javascript._calls import Semantics
from skillweave.skills.scan._javascript._tokens import Tokens, template_parts, tokenize
from skillweave.skills.scan._javascript._values import (
    BUILT,
    MAX_ITEMS,
    MAX_SHAPE,
    MAX_TEXT,
    Budget,
    Function,
    Value,
    join_taint,
    shape_of,
    text_of,
)

MAX_DEPTH: Final = 60
"""Nesting deeper than this is skipped over."""

_OPENERS: Final = frozenset({"(", "[", "{"})


class Walk:
    """State shared by the walk over one file's tokens, and functions."""

    def __init__(
        self, tokens: Tokens, semantics: Semantics, budget: Budget, env: dict[str, Value]
    ) -> None:
        self.kinds, self.texts = tokens.kinds, tokens.texts
        self.starts, self.partner = tokens.starts, tokens.partner
        self.size = len(tokens)
        self.semantics = semantics
        self.budget = budget
        self.env = env
        self.depth = 0
        self.frames: list[list[Value]] = []  # return values of the functions being walked
        self.binding: frozenset[str] | None = frozenset()  # None: a Promise executor
        self.last_target: tuple[int, str | None] = (-1, None)

    def _skip(self, i: int) -> int:
        return self.partner[i] + 1 if self.texts[i] in _OPENERS and self.partner[i] > i else i + 1

    def _next_comma(self, i: int, end: int) -> int:
        while i < end and self.texts[i] != ",":
            i = self.partner[i] + 1 if self.texts[i] in _OPENERS and self.partner[i] > i else i + 1
        return i

    def _skip_annotation(self, i: int, end: int) -> int:
        for _ in range(40):
            if i >= end or self.texts[i] in ("=", ",", ";", ")", "=>"):
                break
            i = self.partner[i] + 1 if self.texts[i] in _OPENERS and self.partner[i] > i else i + 1
        return i

    def _function_at(self, i: int, *, name: str) -> Function | None:
        """The function whose parameters start at token `i` (``function``, a name, ``(``)."""
        if i < self.size and self.texts[i] == "function":
            i += 1
            if i < self.size and self.texts[i] == "*":
                i += 1
            if i < self.size and self.kinds[i] == "name":
                name, i = self.texts[i], i + 1
        if i >= self.size:
            return None
        defaults: dict[str, tuple[int, int]] | None = None
        if self.kinds[i] == "name":
            params, after = [self.texts[i]], i + 1
        elif self.texts[i] == "(" and self.partner[i] > i:
            close = self.partner[i]
            params = [
                self.texts[k]
                for k in range(i + 1, close)
                if self.kinds[k] == "name" and self.texts[k - 1] in ("(", ",", "...", "{", "[")
            ]
            defaults = self._defaults(i, close)
            after = close + 1
        else:
            return None
        if after < self.size and self.texts[after] == ":":  # a TypeScript return type
            limit = min(self.size, after + 40)
            while after < limit and self.texts[after] not in ("{", "=>", ";"):
                after = self._skip(after)
        if after < self.size and self.texts[after] == "=>":
            after += 1
            if after < self.size and self.texts[after] == "{" and self.partner[after] > after:
                body = (after + 1, self.partner[after])
                return Function(name, params, body, False, self.kinds, defaults=defaults)
            # The body's end is found by its first walk (``walk``), which stops where the
            # expression does.
            return Function(name, params, (after, self.size), True, self.kinds, defaults=defaults)
        if after < self.size and self.texts[after] == "{" and self.partner[after] > after:
            body = (after + 1, self.partner[after])
            return Function(name, params, body, False, self.kinds, defaults=defaults)
        return None

    def _defaults(self, open_at: int, close: int) -> dict[str, tuple[int, int]] | None:
        """The default values of a parameter list's plain parameters (``scope = globalThis``)."""
        found: dict[str, tuple[int, int]] = {}
        k = open_at + 1
        while k + 2 < close and len(found) < 64:
            if (
                self.kinds[k] == "name"
                and self.texts[k - 1] in ("(", ",")
                and self.texts[k + 1] == "="
            ):
                stop = self._next_comma(k + 2, close)
                found[self.texts[k]] = (k + 2, stop)
                k = stop
            else:
                k = self._skip(k)
        return found or None

    def define(self, function: Function) -> Value:
        """Walk a function where it is defined; a callback's parameters get the binding."""
        binding = self.binding
        if binding is None:  # a Promise executor: its first parameter resolves it
            args = [Value(ref="resolve")] + [Value()] * (len(function.params) - 1)
        else:
            args = [Value(taint=binding)] * len(function.params)
        self.binding = frozenset()
        try:
            function.returns = self.walk(function, args)
        finally:
            self.binding = binding
        return Value(function=function)

    def invoke(self, function: Function, args: list[Value]) -> Value:
        """A call of a known function: its body walked again with the arguments' values."""
        start, stop = function.body
        budget = self.budget
        key = (id(function.owner), start)
        foreign = function.owner is not self.kinds  # defined in another token list
        if foreign and function.owner is not None:  # in another module: walked there
            walked = self.semantics.foreign_call(function, args)
            if walked is not None:
                return walked
        if (
            foreign
            or budget.depth >= 3
            or key in budget.active
            or budget.tokens_left < stop - start
        ):
            return function.returns or Value()
        budget.tokens_left -= stop - start
        budget.depth += 1
        budget.active.add(key)
        try:
            return self.walk(function, args)
        finally:
            budget.depth -= 1
            budget.active.discard(key)

    def walk(self, function: Function, args: list[Value]) -> Value:
        saved = {name: self.env.get(name) for name in function.params}
        defaults = function.defaults or {}
        for index, name in enumerate(function.params):
            value = args[index] if index < len(args) else Value()
            default = defaults.get(name)
            cost = default[1] - default[0] if default is not None else 0
            if (
                default is not None
                and value == Value()
                and function.owner is self.kinds
                and self.budget.tokens_left >= cost
            ):
                self.budget.tokens_left -= cost
                value, _ = self.expression(*default)  # not passed: the default's value
            self.env[name] = value
        self.frames.append([])
        start, stop = function.body
        try:
            if function.expression:
                value, after = self.expression(start, stop)
                function.body = (start, max(after, start + 1))
                self.frames[-1].append(value)
            else:
                self.statements(start, stop)
        finally:
            returns = self.frames.pop()
            for name, old in saved.items():
                if old is None:
                    self.env.pop(name, None)
                else:
                    self.env[name] = old
        if len(returns) == 1:
            return returns[0]
        return Value(taint=join_taint(*returns))

    def _map(self, receiver: Value, callback: Value) -> Value | None:
        function = callback.function
        items = receiver.items or []
        if function is None or self.budget.tokens_left < (
            function.body[1] - function.body[0]
        ) * len(items):
            return None
        mapped = [
            self.invoke(function, [item, Value(number=float(n))]) for n, item in enumerate(items)
        ]
        return Value(items=mapped, taint=receiver.taint | join_taint(*mapped))

    def _reduce(
        self, receiver: Value, callback: Value, start: Value | None, *, backwards: bool
    ) -> Value | None:
        """``items.reduce(fn, start)`` (or ``reduceRight``) folded, the callback walked on
        each item while the budget lasts."""
        function = callback.function
        items = (receiver.items or [])[::-1] if backwards else receiver.items or []
        if function is None or self.budget.tokens_left < (
            function.body[1] - function.body[0]
        ) * len(items):
            return None
        if start is None:
            if not items:
                return None
            start, items = items[0], items[1:]
        total = start
        for n, item in enumerate(items):
            total = self.invoke(function, [total, item, Value(number=float(n))])
        return total

    def _object(self, i: int) -> Value:
        close = self.partner[i]
        props: dict[str, Value] = {}
        position = i + 1
        while position < close and len(props) < MAX_ITEMS:
            text, kind = self.texts[position], self.kinds[position]
            if text == "...":
                value, after = self.expression(position + 1, close)
                props.update(value.props or {})
                position = self._next_comma(max(after, position + 1), close) + 1
                continue
            modifier = text in ("get", "set", "async", "static") and position + 1 < close
            getter = False
            if modifier and self.texts[position + 1] not in (",", ":", "("):
                getter = text == "get"
                position += 1
                text, kind = self.texts[position], self.kinds[position]
            key: str | None = text if kind in ("name", "str", "num") else None
            after = position + 1
            if text == "[" and self.partner[position] > position:
                computed, _ = self.expression(position + 1, self.partner[position], comma=True)
                key = text_of(computed)
                after = self.partner[position] + 1
            if after < close and self.texts[after] == ":":
                value, after = self.expression(after + 1, close)
            elif after < close and self.texts[after] == "(":
                function = self._function_at(after, name=key or "")
                value = self.define(function) if function is not None else Value()
                if getter and function is not None and function.returns is not None:
                    value = function.returns  # { get run() { return eval } }: what it returns
                after = function.body[1] + 1 if function is not None else after + 1
            else:
                value = self.env.get(text, Value()) if kind == "name" else Value()
            if key is not None:
                props[key] = value
            position = self._next_comma(max(after, position + 1), close) + 1
        taint = join_taint(*props.values())
        return Value(props=props, taint=taint - {BUILT})

    def _template(self, i: int) -> Value:
        parts = template_parts(self.texts[i])
        texts: list[str | None] = []
        shapes: list[str] = []
        taint: frozenset[str] = frozenset()
        pieces = 0
        for expression, text, offset in parts[:MAX_ITEMS]:
            if not expression:
                texts.append(text)
                shapes.append(text)
                pieces += 1 if text else 0
                continue
            if self.depth > MAX_DEPTH // 4:
                texts.append(None)
                shapes.append("*")
                continue
            tokens = tokenize(text, base=self.starts[i] + offset)
            inner = type(self)(tokens, self.semantics, self.budget, self.env)
            inner.depth = self.depth + MAX_DEPTH // 8
            inner.frames = self.frames
            value, _ = inner.expression(0, len(tokens), comma=True)
            taint |= value.all_taint()
            texts.append(text_of(value))
            shapes.append(shape_of(value))
            pieces += max(value.pieces, 1)
        if None in texts:
            known = texts[: texts.index(None)]
            shape = "".join(shapes)[:MAX_SHAPE]
            return Value(taint=taint, prefix="".join(t for t in known if t)[:64], shape=shape)
        joined = "".join(t for t in texts if t is not None)
        built = {BUILT} if pieces >= 2 else set()
        return Value(text=joined[:MAX_TEXT], taint=taint | built, pieces=pieces)

    # Provided by the subclasses.
    def statements(self, start: int, end: int) -> None:
        raise NotImplementedError

    def expression(self, i: int, end: int, *, comma: bool = False) -> tuple[Value, int]:
        raise NotImplementedError
