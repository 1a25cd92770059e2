"""The skill's own JavaScript modules as another file's flow sees them: what
``require('./x')`` and ``import … from './x'`` hand out. :class:`JavaScriptModules` is made
once per skill by ``scanner`` and read by ``_scan`` (through ``Semantics.modules``).

A module is named relatively or from the package's folder (``__dirname``, folded to
``@pkg/…``). It is walked once (its first :data:`MAX_MODULE` characters) and its exports
read from the walk's names: ``module.exports``, ``exports.x``, ``module.exports.x``,
``Object.assign(module.exports, {…})``, ``export const/function/class x``, ``export { a as
b }`` and ``export default``. Each exported function (or function of an exported object) is
walked again with one parameter at a time marked; a marked parameter that reaches a sink as
its first argument (code, shell, spawn, loader, a file call) makes the export that sink, the
parameters before it dropped (``#arg1``), so that a call in the importing file is judged as
the call it wraps: ``run(payload)`` with ``run = (s) => eval(s)`` in a sibling is
``eval(payload)`` where the payload is. Bounded: at most :data:`MAX_MODULES` modules a
skill, each walked once and :data:`MAX_CHAIN` deep, :data:`MAX_PARAMS` parameters and
:data:`MAX_EXPORTS` exports a module probed, within the walk's own budget. A call of another
module's function that forwards nothing is walked there with its arguments
(:meth:`JavaScriptModules.call`, at most :data:`MAX_CALLS` a skill): ``globalThis[decode(
codes)]`` with ``decode`` in a sibling folds.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from skillweave.skills.scan._javascript._calls import SINK_REFS, Semantics
from skillweave.skills.scan._javascript._parser import Parser
from skillweave.skills.scan._javascript._tokens import tokenize
from skillweave.skills.scan._javascript._values import FILE_MODULES, Budget, Function, Value

MAX_MODULE: Final = 262_144
MAX_MODULES: Final = 32
MAX_CHAIN: Final = 4
"""Modules walked inside one another's walk (a module importing a module importing...)."""
MAX_PARAMS: Final = 4
MAX_CALLS: Final = 200
"""Calls walked in another module, a skill (name-building helpers are called a few times)."""
MAX_EXPORTS: Final = 64
_MARK: Final = "probe:parameter"
_EXTENSIONS: Final = ("", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", "/index.js", "/index.mjs")
_DECLARED: Final = frozenset({"const", "let", "var", "function", "class", "async"})


class _Probe(Semantics):
    """Semantics that also note which sinks the marked parameter reaches (never reported)."""

    def __init__(self) -> None:
        super().__init__()
        self.reached: list[str] = []

    def _known_call(
        self, ref: str, args: list[Value], offset: int, *, constructing: bool
    ) -> Value | None:
        self._note(ref, args)
        return super()._known_call(ref, args, offset, constructing=constructing)

    def construct(self, callee: Value, args: list[Value], offset: int) -> Value:
        self._note(callee.ref or "", args)
        return super().construct(callee, args, offset)

    def _note(self, ref: str, args: list[Value]) -> None:
        """A sink whose first argument is the marked parameter (any argument of the
        Function constructor: each is code)."""
        module = ref.rpartition(".")[0].removeprefix("mod:")
        if not (ref in SINK_REFS or module in FILE_MODULES) or len(self.reached) >= 8:
            return
        every = ref in ("Function", "AsyncFunction")
        if any(_MARK in a.all_taint() for a in (args if every else args[:1])[:MAX_PARAMS]):
            self.reached.append(ref)


class JavaScriptModules:
    """The exports of a skill's own JavaScript modules, walked on first use."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = files
        self._exports: dict[str, Value | None] = {}
        self._active: set[str] = set()
        self._parsers: dict[int, Parser] = {}  # by the id of a module's token kinds
        self._calling = 0  # calls into modules under way, one inside another
        self._calls_left = MAX_CALLS

    def call(self, function: Function, args: list[Value]) -> Value | None:
        """What a function of one of the skill's modules returns for these arguments (a
        helper building a name from codes), walked in its own module, within that walk's
        budget; None when the function is not one of theirs."""
        parser = self._parsers.get(id(function.owner))
        if parser is None or self._calling >= MAX_CHAIN or self._calls_left <= 0:
            return None
        self._calls_left -= 1
        self._calling += 1
        try:
            return parser.invoke(function, args)
        finally:
            self._calling -= 1

    def exports(self, importer: str, specifier: str) -> Value | None:
        """What `importer`'s ``require(specifier)`` returns when it names one of the skill's
        modules; None when it names none (or past the bounds)."""
        path = self._resolve(importer, specifier)
        if path is None or path in self._active or len(self._active) >= MAX_CHAIN:
            return None
        if path not in self._exports:
            if len(self._exports) >= MAX_MODULES:
                return None
            self._active.add(path)
            try:
                self._exports[path] = self._walk(path)
            finally:
                self._active.discard(path)
        return self._exports[path]

    def _resolve(self, importer: str, specifier: str) -> str | None:
        """The skill's file a specifier names: relative to the importer, or from the
        package's folder (``path.join(__dirname, 'lib')`` folds to ``@pkg/scripts/lib``)."""
        if len(specifier) > 300:
            return None
        if specifier.startswith("@pkg/"):
            base = posixpath.normpath(specifier.removeprefix("@pkg/"))
        elif specifier.startswith(("./", "../")):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
        else:
            return None
        for extension in _EXTENSIONS:
            if base + extension in self._files:
                return base + extension
        return None

    def _walk(self, path: str) -> Value | None:
        text = self._files[path][:MAX_MODULE].decode("utf-8", "replace")
        tokens = tokenize(text)
        probe = _Probe()
        probe.folder = posixpath.join("@pkg", posixpath.dirname(path))
        probe.modules = lambda specifier: self.exports(path, specifier)
        probe.foreign_call = self.call
        parser = Parser(tokens, probe, Budget(tokens_left=len(tokens) + 20_000), {})
        parser.run()
        self._parsers[id(tokens.kinds)] = parser
        exports = _exports(parser, tokens.texts)
        if exports is None:
            return None
        return _wrapped(parser, probe, exports, depth=0)


def _exports(parser: Parser, texts: list[str]) -> Value | None:
    """What the walked module exports: ``module.exports`` with ``exports.x`` and ESM
    exports added as properties."""
    env = parser.env
    props: dict[str, Value] = {}
    for name, value in list(env.items()):
        for prefix in ("exports.", "module.exports."):
            if name.startswith(prefix) and "." not in name[len(prefix) :]:
                props[name[len(prefix) :]] = value
    for index, text in enumerate(texts[:-2]):
        if len(props) >= MAX_EXPORTS:
            break
        if text == "Object" and texts[index + 1 : index + 4] == [".", "assign", "("]:
            _assigned_exports(parser, index + 3, props)
        if text != "export":
            continue
        following = texts[index + 1]
        if following == "default":
            props["default"], _ = parser.expression(index + 2, len(texts))
            continue
        if following in _DECLARED:
            after = index + 2 + (texts[index + 2] == "function" if following == "async" else 0)
            name = texts[after] if after < len(texts) else ""
            if name == "*" and after + 1 < len(texts):  # export function* gen
                name = texts[after + 1]
            if name in env:
                props[name] = env[name]
        elif following == "{":
            _named_exports(texts, index + 2, env, props)
    whole = env.get("module.exports")
    if whole is None:
        return Value(props=props) if props else None
    return replace(whole, props={**(whole.props or {}), **props}) if props else whole


def _assigned_exports(parser: Parser, open_at: int, props: dict[str, Value]) -> None:
    """``Object.assign(module.exports, {…})`` (or ``exports``): the object's properties."""
    texts, close = parser.texts, parser.partner[open_at]
    if texts[open_at + 1 : open_at + 5] == ["module", ".", "exports", ","]:
        comma = open_at + 4
    elif texts[open_at + 1 : open_at + 3] == ["exports", ","]:
        comma = open_at + 2
    else:
        return
    if comma < close:
        value, _ = parser.expression(comma + 1, close)
        props.update(list((value.props or {}).items())[:MAX_EXPORTS])


def _named_exports(
    texts: list[str], i: int, env: dict[str, Value], props: dict[str, Value]
) -> None:
    stop = min(len(texts), i + 4 * MAX_EXPORTS)
    while i < stop and texts[i] != "}":
        local = exported = texts[i]
        if i + 2 < stop and texts[i + 1] == "as":
            exported, i = texts[i + 2], i + 2
        if local in env:
            props[exported] = env[local]
        i += 2 if i + 1 < stop and texts[i + 1] == "," else 1


def _wrapped(parser: Parser, probe: _Probe, value: Value, *, depth: int) -> Value:
    """An export as the importing file should read it: a function forwarding a parameter
    into a sink is that sink; an object's functions likewise (one level, the default
    export's two)."""
    if value.function is not None:
        sink = _forwarded(parser, probe, value)
        if sink is not None:
            return sink
    if value.props and depth < 2:
        props = {  # ``export default {…}`` is read as the module itself
            key: _wrapped(parser, probe, inner, depth=depth + 1 if key == "default" else 2)
            for key, inner in list(value.props.items())[:MAX_EXPORTS]
        }
        return replace(value, props=props)
    return value


def _forwarded(parser: Parser, probe: _Probe, value: Value) -> Value | None:
    function = value.function
    assert function is not None
    for index in range(min(len(function.params), MAX_PARAMS)):
        probe.reached.clear()
        args = [Value(taint=frozenset({_MARK})) if n == index else Value()
                for n in range(len(function.params))]  # fmt: skip
        parser.invoke(function, args)
        if probe.reached:
            ref = probe.reached[0]
            return Value(ref=ref if index == 0 else f"{ref}#arg{index}")
    return None
