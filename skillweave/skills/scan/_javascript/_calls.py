"""What member lookups, calls and operators do to values, and the findings where a value
reaches a sink: :class:`Semantics`, driven by ``_parser`` over one file.

Sources (network reads, decoders, the environment, files under the home folder) make tainted
values; string building folds constant pieces; sinks (code execution, shells, module loading,
unsafe deserialisers) report what reaches them. A computed lookup that resolves to a
dangerous name is that name for every rule (``new``, ``Reflect.get``/``construct``,
destructuring alike; ``eval``/``Function`` built from pieces on an object not known are taken
for the global's), and is itself a finding; so is the Function constructor reached as the
``.constructor`` of any function (one of the file's, a built-in method such as
``[].filter``, a callable global or a global's method). Paths know where they start
(``__dirname`` as the file's folder in the package, ``process.cwd()`` as the workspace,
``os.homedir()`` as ``~``) and fold their ``..`` steps, so a climb out of the workspace is
seen; where a path may be either of two (``a || b``, a conditional), home is judged. A
relative ``require`` or ``import`` of the skill's own module hands out what it exports
(``_modules``). Findings are kept per rule and line at their worst severity and handed to
the collector at the end.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Final

from skillweave.config import Severity
from skillweave.skills.scan._javascript._sinks import Sinks
from skillweave.skills.scan._javascript._strings import string_method
from skillweave.skills.scan._javascript._values import (
    BUILT,
    CODE_SINKS,
    DANGEROUS_BASES,
    DANGEROUS_NAMES,
    DECODED,
    DECODERS,
    DECRYPTERS,
    DESERIALIZERS,
    FETCHED,
    FILE_MODULES,
    GLOBALS,
    HOME,
    HOME_FILE,
    LOADERS,
    MAX_ITEMS,
    MAX_TEXT,
    NETWORK_CALLABLES,
    NETWORK_MODULES,
    PAYLOAD,
    SHELL_FUNCTIONS,
    SPAWN_FUNCTIONS,
    UNKNOWN,
    YAML_LOADS,
    ZLIB,
    Function,
    Value,
    collapsed,
    decode_bytes,
    from_char_codes,
    join_taint,
    joined_shape,
    member_ref,
    percent_decoded,
    riskier,
    shown,
    text_of,
    with_text,
)

_NUMBER_OPERATORS: Final[dict[str, Callable[[int, int], int]]] = {
    "-": operator.sub, "*": operator.mul, "%": operator.mod, "^": operator.xor,
    "|": operator.or_, "&": operator.and_, "<<": operator.lshift, ">>": operator.rshift,
    ">>>": operator.rshift,
}  # fmt: skip
_CALLABLE_SUFFIXES: Final = ("#call", "#apply", "#bind")
_FORWARDED: Final = "#arg"  # a wrapper handing its n-th parameter to the sink: ``sink#arg1``
_PASS_METHODS: Final = frozenset(
    {"decode", "concat", "toString", "parse", "from", "trim", "toLowerCase", "toUpperCase",
     "normalize", "valueOf", "flat", "join", "slice", "substring", "substr", "reverse",
     "replace", "replaceAll", "split", "map", "filter", "reduce", "then"}
)  # fmt: skip
_APPENDS: Final = frozenset({"push", "unshift", "add", "set", "write", "append", "concat"})
_HOME_VARIABLES: Final = frozenset({"HOME", "USERPROFILE"})
_CODE_NAMES: Final = frozenset({"eval", "Function"})
"""Names that, built from pieces and looked up on any object, are taken for the global."""
_METHOD: Final = "builtin-method"
"""The ref of a built-in method read off a value (``[].filter``, ``"".trim``)."""
_BUILTIN_METHODS: Final = frozenset(
    {"filter", "map", "forEach", "reduce", "reduceRight", "some", "every", "find", "findIndex",
     "join", "push", "pop", "shift", "unshift", "slice", "splice", "concat", "indexOf",
     "includes", "sort", "flat", "flatMap", "fill", "keys", "values", "entries", "at",
     "trim", "trimStart", "trimEnd", "charAt", "charCodeAt", "codePointAt", "split", "replace",
     "replaceAll", "toString", "toLocaleString", "valueOf", "toUpperCase", "toLowerCase",
     "padStart", "padEnd", "repeat", "substring", "substr", "startsWith", "endsWith", "match",
     "matchAll", "search", "normalize", "hasOwnProperty", "isPrototypeOf",
     "propertyIsEnumerable", "call", "apply", "bind", "toFixed", "test", "exec"}
)  # fmt: skip
_CALLABLE_GLOBALS: Final = frozenset(
    {"Object", "Array", "String", "Buffer", "Promise", "Proxy", "Function", "eval", "require",
     "fetch", "atob", "unescape", "decodeURI", "decodeURIComponent", "setTimeout",
     "setInterval", "TextDecoder", "XMLHttpRequest", "WebSocket", "EventSource"}
)  # fmt: skip
_FUNCTION_HOLDERS: Final = frozenset({"JSON", "Object", "Array", "String", "Reflect", "Buffer"})
"""Globals whose members are functions."""
_CONSTRUCTED: Final = frozenset({"ctor", "Function.prototype", _METHOD, *_CALLABLE_GLOBALS})
"""Refs whose ``.constructor`` is the Function constructor: functions, built-in ones too."""
_PROMISE_TAIL: Final = frozenset({"then", "catch", "finally"})
_BUILTIN_REFS: Final = frozenset(
    {"eval", "Function", "require", "fetch", "atob", "unescape", "decodeURIComponent",
     "decodeURI", "setTimeout", "setInterval", "global", "globalThis", "window", "self",
     "process", "module", "Buffer", "String", "Reflect", "JSON", "Promise", "XMLHttpRequest",
     "WebSocket", "EventSource", "TextDecoder", "Object", "Proxy", "Array"}
)  # fmt: skip


class Semantics(Sinks):
    """The meaning of operations on :class:`Value`s for one file (its findings: :class:`Sinks`)."""

    def __init__(self) -> None:
        super().__init__()
        self.resolved: list[set[str]] = []  # taints passed to a Promise's resolve
        self.folder = "@pkg"  # the file's folder: what __dirname is
        self.modules: Callable[[str], Value | None] = lambda specifier: None
        """What a relative ``require``/``import`` of the skill's own module hands out."""
        self.foreign_call: Callable[[Function, list[Value]], Value | None] = lambda f, a: None
        """What a function of another of the skill's modules returns for these arguments."""

    # --- names, members, operators -------------------------------------------------------------

    def builtin(self, name: str) -> Value:
        if name == "__dirname":  # the package's folder, so a climb out of it is seen
            return with_text(self.folder)
        return Value(ref=name) if name in _BUILTIN_REFS else Value()

    def member(self, base: Value, name: str | None, offset: int, key: Value | None = None) -> Value:
        """``base.name``, or ``base[key]`` (`name` is the key's folded text, None if unknown)."""
        if key is not None:
            self._lookup(base, name, key, offset)
            built = key.pieces >= 2 or bool(key.taint & (PAYLOAD | {BUILT}))
            if built and base.ref is None and base.props is None and name in _CODE_NAMES:
                return Value(ref=name)  # scope['ev' + 'al'] of a scope not known: that sink
        if name is None:
            if base.ref in DANGEROUS_BASES:
                return Value(ref=f"dynamic:{base.ref}", taint=key.taint if key else frozenset())
            return Value(taint=base.all_taint() - {BUILT})
        if base.props is not None and name in base.props:
            return base.props[name]
        if base.items is not None and name.isdigit():
            index = int(name)
            if index < len(base.items):
                return base.items[index]
        if base.text is not None and name.isdigit():
            index = int(name)
            return with_text(base.text[index : index + 1], taint=base.taint)
        if name == "length" and (base.text is not None or base.items is not None):
            return Value(number=len(base.text if base.text is not None else base.items or []))
        if base.ref == "process" and name == "env":
            return Value(taint=frozenset({"env"}), ref="process.env")
        if base.ref == "process.env" and name in _HOME_VARIABLES:
            return with_text("~", taint=frozenset({HOME}))
        if name == "constructor" and _function_valued(base):
            self._unnamed_function(offset)
            return Value(ref="Function")
        called = base.ref.split("#")[0] if base.ref else None
        if called in SINK_REFS | DECODERS and name in ("call", "apply", "bind"):
            return Value(ref=f"{base.ref}#{name}")
        if base.ref and base.ref.startswith(_PROXY):
            return Value(ref=base.ref.removeprefix(_PROXY))
        if _builtin_method(base.ref, name):
            return Value(taint=base.taint - {BUILT}, ref=_METHOD)
        ref = member_ref(base.ref, name)
        return Value(taint=base.taint - {BUILT}, ref=ref)

    def _unnamed_function(self, offset: int) -> None:
        self.dynamic = True
        self.report("obfuscation.dynamic-lookup", offset,
                    "reaches the Function constructor through .constructor, without naming it",
                    "high")  # fmt: skip

    def _lookup(self, base: Value, name: str | None, key: Value, offset: int) -> None:
        where = (base.ref or base.name or "an object").removeprefix("mod:")
        if name is not None and name in DANGEROUS_NAMES:
            built = key.pieces >= 2 or bool(key.taint & (PAYLOAD | {BUILT}))
            if built or base.ref in DANGEROUS_BASES:
                how = f"a name built at run time ({shown(name)})" if built else repr(name)
                self.report("obfuscation.dynamic-lookup", offset,
                            f"{where}[…] looks up {how}", "high")  # fmt: skip
                self.dynamic = True
        elif name is None and key.taint & PAYLOAD and base.ref in DANGEROUS_BASES:
            self.report("obfuscation.dynamic-lookup", offset,
                        f"{where}[…] looks up a name taken from decoded or fetched data",
                        "high")  # fmt: skip

    def binary(self, op: str, left: Value, right: Value) -> Value:
        taint = join_taint(left, right)
        if op == "+":
            if left.number is not None and right.number is not None:
                return Value(number=left.number + right.number)
            first, second = text_of(left), text_of(right)
            short = len(first or "") + len(second or "") < MAX_TEXT
            string = left.text is not None or right.text is not None
            if first is not None and second is not None and short and string:
                pieces = max(left.pieces, 1) + max(right.pieces, 1)
                extra = {BUILT} if first and second else set()
                return Value(text=first + second, taint=taint | extra, pieces=pieces)
            return Value(taint=taint, prefix=(first or left.prefix)[:64],
                         shape=joined_shape([left, right], ""))  # fmt: skip
        if op in ("||", "??", "&&"):
            chosen = left if left.text is not None or left.ref else right
            chosen = riskier(chosen, right) if op != "&&" else chosen
            return Value(text=chosen.text, ref=chosen.ref, taint=taint, pieces=chosen.pieces)
        function = _NUMBER_OPERATORS.get(op)
        if function is not None and left.number is not None and right.number is not None:
            a, b = int(left.number), int(right.number)
            if (op in ("<<", ">>", ">>>") and not 0 <= b < 64) or (op == "%" and b == 0):
                return Value()
            if abs(a) < 1 << 40 and abs(b) < 1 << 40:
                return Value(number=float(function(a, b)))
        if op in ("-", "*", "/", "%", "^", "|", "&", "<<", ">>", ">>>", "**"):
            return Value(taint=taint & PAYLOAD)
        return Value()

    # --- calls -------------------------------------------------------------------------------

    def binding(self, callee: Value, receiver: Value | None) -> frozenset[str]:
        """The taint a callback passed to this call receives in its parameters."""
        ref = callee.ref or ""
        if _network(ref):
            return frozenset({FETCHED})
        if ZLIB.fullmatch(ref):
            return frozenset({DECODED})
        if receiver is not None:
            return receiver.taint & (PAYLOAD | {HOME_FILE})
        return frozenset()

    def call(
        self,
        callee: Value,
        args: list[Value],
        offset: int,
        *,
        receiver: Value | None = None,
        method: str | None = None,
        callbacks: frozenset[str] = frozenset(),
    ) -> Value:
        """The value of ``callee(args)``; `callbacks` is the taint the callbacks returned."""
        ref = callee.ref
        if ref is not None and _FORWARDED in ref:  # a sibling module's wrapper (``_modules``)
            ref, _, skipped = ref.partition(_FORWARDED)
            args = args[int(skipped) :] if skipped.isdigit() else args
        if ref is not None and ref.endswith(_CALLABLE_SUFFIXES):
            ref, _, how = ref.rpartition("#")
            if how == "bind":
                return Value(ref=ref)
            if how == "call":
                args = args[1:]
            else:
                args = list(args[1].items or [args[1]]) if len(args) > 1 else []
        if ref is not None:
            value = self._known_call(ref, args, offset, constructing=False)
            if value is not None:
                return value
        if receiver is not None and method is not None:
            return self._method(receiver, method, args, offset, callbacks)
        return Value(taint=callbacks & PAYLOAD)

    def construct(self, callee: Value, args: list[Value], offset: int) -> Value:
        ref = callee.ref or ""
        if ref == "Promise":
            return Value(taint=frozenset(self.resolved[-1]) if self.resolved else frozenset())
        if ref in ("vm.Script", "vm.SourceTextModule", "Function", "AsyncFunction"):
            self._code(ref, args, offset, new=True)
            return Value()
        if ref == "TextDecoder":
            return Value(ref="TextDecoder")
        if ref == "Proxy" and len(args) > 1:  # every member read goes through its get trap
            trap = (args[1].props or {}).get("get")
            returned = trap.function.returns if trap and trap.function else None
            if returned is not None and returned.ref in SINK_REFS:
                return Value(ref=_PROXY + returned.ref)
        if ref == "class":  # an instance of a class of the file: its methods and getters
            return Value(props=callee.props)
        if ref == "mod:module":
            return Value(ref="module.instance")
        value = self._known_call(ref, args, offset, constructing=True) if ref else None
        return value if value is not None else Value()

    def _known_call(
        self, ref: str, args: list[Value], offset: int, *, constructing: bool
    ) -> Value | None:
        first = args[0] if args else UNKNOWN
        if ref in CODE_SINKS:
            self._code(ref, args, offset, new=constructing)
            return Value()
        if ref == "resolve":
            if self.resolved:
                self.resolved[-1].update(first.all_taint())
            return Value()
        if ref.startswith("dynamic:"):
            base = ref.removeprefix("dynamic:")
            severity: Severity = "medium" if base in GLOBALS else "high"
            message = f"calls {base.removeprefix('mod:')}[…] by a computed name"
            self.report("obfuscation.dynamic-lookup", offset, message, severity)
            return Value()
        if ref in SHELL_FUNCTIONS:
            self._shell(ref, first, offset)
            return Value()
        if ref in SPAWN_FUNCTIONS:
            self._spawn(ref, args, offset)
            return Value()
        if ref in LOADERS:
            own = self.modules(first.text) if first.text and ref != "process.dlopen" else None
            return own if own is not None else self._load(ref, first, offset)
        if ref == "module.createRequire":
            return Value(ref="require")
        if ref in DESERIALIZERS or ref in YAML_LOADS:
            self._deserialize(ref, args, offset)
            return Value()
        if ref in ("process.binding", "process._linkedBinding"):
            self.report("obfuscation.dynamic-lookup", offset,
                        f"{ref} reaches Node's internal bindings", "high")  # fmt: skip
            return Value()
        if ref in ("Object.getPrototypeOf", "Reflect.getPrototypeOf") and first.function:
            return Value(ref="Function.prototype")
        module, _, method = ref.rpartition(".")
        if module.removeprefix("mod:") in FILE_MODULES:
            self.file_access(method, args, offset)
        if ref == "Reflect.get" and len(args) > 1:
            return self.member(first, text_of(args[1]), offset, key=args[1])
        if ref == "Reflect.construct" and len(args) > 1:
            return self.construct(first, list(args[1].items or [args[1]]), offset)
        if ref in ("Array.from", "Array.of"):  # Array.from(codes): the same items
            items = first.items if ref == "Array.from" else args
            return Value(items=list(items or [])[:MAX_ITEMS], taint=join_taint(*args))
        if ref in _KEY_LISTS and first.props is not None:  # Object.keys({eval: 0})[0]
            return Value(items=[Value(text=k, pieces=2) for k in list(first.props)[:MAX_ITEMS]])
        if ref == "Reflect.apply" and len(args) > 2:
            inner = list(args[2].items or [args[2]])
            return self.call(first, inner, offset)
        return self._source(ref, args, first)

    def _source(self, ref: str, args: list[Value], first: Value) -> Value | None:
        if _network(ref):
            return Value(taint=frozenset({FETCHED}))
        if ref == "Buffer.from":
            encoding = text_of(args[1]) if len(args) > 1 else None
            if encoding in ("base64", "base64url", "hex"):
                decoded = decode_bytes(first.text, encoding) if first.text is not None else None
                taint = first.taint | {DECODED}
                return Value(text=decoded, taint=taint, pieces=2) if decoded else Value(taint=taint)
            if first.items is not None:
                text = from_char_codes(first.items)
                return Value(text=text, taint=first.all_taint() | {DECODED}) if text else first
            return first
        if ref in DECODERS:
            return self._decode(ref, args, first)
        if ZLIB.fullmatch(ref) or ref in DECRYPTERS:
            return Value(taint=first.taint | {DECODED})
        if ref == "os.homedir":
            return with_text("~", taint=frozenset({HOME}))
        if ref == "process.cwd":  # the workspace, so a climb out of it is seen
            return with_text(".")
        if ref.startswith(("fs.read", "fs.promises.read")) or ref == "fs/promises.readFile":
            return Value(taint=frozenset({HOME_FILE})) if HOME in first.taint else Value()
        if ref.startswith("path."):
            texts = [text_of(a) for a in args]
            joined = collapsed("/".join(t for t in texts if t is not None))
            known = None not in texts and len(joined) < MAX_TEXT
            shape = None if known else joined_shape(args, "/")
            taint = join_taint(*args) - {BUILT}
            return Value(text=joined if known else None, taint=taint, shape=shape)
        if ref in ("JSON.parse", "String", "TextDecoder.decode"):
            return Value(text=first.text, taint=first.all_taint(), pieces=first.pieces)
        return None

    def _decode(self, ref: str, args: list[Value], first: Value) -> Value:
        taint = join_taint(*args) | {DECODED}
        if ref.startswith("String.from"):
            items: list[Value] = []
            for value in args[:MAX_ITEMS]:
                items.extend(value.items if value.items is not None else [value])
            text = from_char_codes(items)
            taint = taint | {BUILT} | join_taint(*items)
            return Value(text=text, taint=taint, pieces=len(items)) if text else Value(taint=taint)
        if first.text is None:
            return Value(taint=taint)
        base64 = ref == "atob"
        text = decode_bytes(first.text, "base64") if base64 else percent_decoded(first.text)
        return Value(text=text, taint=taint, pieces=2) if text is not None else Value(taint=taint)

    def _method(
        self,
        receiver: Value,
        method: str,
        args: list[Value],
        offset: int,
        callbacks: frozenset[str],
    ) -> Value:
        folded = string_method(receiver, method, args)
        if folded is not None:
            return folded
        if method in _PROMISE_TAIL:
            if args and args[0].ref in CODE_SINKS and receiver.taint & PAYLOAD:
                self.report("exec.decoded-payload", offset,
                            "a fetched response is evaluated as code", "critical")  # fmt: skip
            return Value(taint=receiver.taint | callbacks)
        taint = receiver.taint | callbacks
        if method in _PASS_METHODS:
            taint |= join_taint(*args)
        return Value(taint=taint)


_PROXY: Final = "proxy:"  # a Proxy whose get trap returns a sink: every member is that sink
_KEY_LISTS: Final = frozenset({"Object.keys", "Object.getOwnPropertyNames", "Reflect.ownKeys"})
SINK_REFS: Final = CODE_SINKS | SHELL_FUNCTIONS | SPAWN_FUNCTIONS | LOADERS


def _network(ref: str) -> bool:
    if ref in NETWORK_CALLABLES:
        return True
    module = ref.removeprefix("mod:").split(".")[0]
    return module in NETWORK_MODULES and (ref.startswith("mod:") or "." in ref)


def _builtin_method(base: str | None, name: str) -> bool:
    """``base.name`` is a built-in method of a literal or of a value not known: a function,
    whose ``.constructor`` is Function."""
    return base is None and name in _BUILTIN_METHODS


def _function_valued(base: Value) -> bool:
    """`base` is a function (its ``.constructor`` is Function): one of the file's, a built-in
    method, a callable global or a global's method (``JSON.parse``, ``Object.keys``)."""
    if base.function is not None or base.ref in _CONSTRUCTED:
        return True
    head, _, rest = (base.ref or "").partition(".")
    return head in _FUNCTION_HOLDERS and bool(rest) and "prototype" not in rest
