"""Six more obfuscation mutation families for the scanner's mutation benchmark, held out.

Written apart from the scanner's rules (without reading them, and without running the scanner)
so that the families measure whether the rules generalise. Each family is a small deterministic
source-to-source transform ``(text, file name) -> {file name: new text}`` with the behaviour of
the script kept, ``{}`` when nothing applies or the input cannot be read safely; no family raises
on odd input and each runs in time linear in its input (or close). ``bench/scan_mutations.py``
registers them; this module imports nothing of the scanner.

Python (``ast`` in, ``ast.unparse`` out, always parseable):

* ``py-attrgetter``: each call of an imported module's attribute or of a risky builtin made, in
  turn, through ``operator.attrgetter("name")(module)(...)``, ``operator.methodcaller("name",
  ...)(module)`` or ``importlib.import_module("module").name(...)``.
* ``py-default-args``: each such callable passed in through a default argument of a small helper
  defined at module top (``def _do(*a, _f=os.system, **k)``) or, in turn, made the value of a
  helper by a decorator that returns it.
* ``py-bytes-xor``: each string literal of 8+ characters decoded at run time from a bytes literal
  XORed with a constant key or, in turn, from two hex halves joined.

JavaScript (a small conservative tokenizer: comments, strings, template literals, regular
expression literals; a ``/`` after ``)``, ``]``, ``}``, a name or a literal is read as division):

* ``js-strings``: each string literal of 6+ characters rebuilt in turn from halves, from
  ``[...].join('')``, ``String.fromCharCode(...)`` or ``Buffer.from(b64, 'base64')``;
  import/export specifiers, relative ``require``/``import()`` paths, object keys and directives
  are left alone.
* ``js-lookup``: ``eval(``, ``Function(`` / ``new Function(``, ``fetch(`` and the
  ``child_process`` module and methods reached through computed property access. Note that
  ``globalThis['eval'](...)`` is an indirect eval (global scope): behaviour is kept for code that
  reads no local binding, which is what the corpus's payloads do.

Shell (bash; a small scanner of quotes, ``$(...)``, backticks, comments and here-documents):

* ``sh-pieces``: ``curl``, ``wget``, ``base64``, ``sh``, ``bash`` and ``eval`` at the start of a
  simple command built from two variables set at the top (``"$_c1$_c2"``), and each
  double-quoted string of 6+ characters split in two (``"ht""tps://..."`` or ``"htt"''"ps..."``).

Written by hand: no maintained library rewrites JavaScript or shell source while keeping it
byte-for-byte elsewhere, and a full parser would be more code than these conservative passes.
"""

from __future__ import annotations

import ast
import base64
import bisect
import functools
import re
from collections.abc import Callable
from typing import Final, TypeGuard

MAX_CHARS: Final = 2_000_000
"""Larger inputs are left alone (a bound on time)."""
BUILTIN_SINKS: Final = frozenset({"eval", "exec", "compile", "open", "__import__"})
XOR_KEY: Final = 0x5A
PY_LEAST: Final = 8
JS_LEAST: Final = 6
SH_LEAST: Final = 6
CHAR_CODES_MOST: Final = 2000
"""Longer JavaScript strings are not spread into ``String.fromCharCode`` (argument limits)."""

Transform = Callable[[str, str], dict[str, str]]
_UNREADABLE: Final = (
    SyntaxError,  # also IndentationError
    ValueError,  # also UnicodeError, and the tokenizers' "cannot read this safely"
    RecursionError,
    MemoryError,
    OverflowError,
    IndexError,
    KeyError,
)


def _safe(transform: Transform) -> Transform:
    """Any failure to read or rewrite the input means "nothing applies"."""

    @functools.wraps(transform)
    def wrapped(text: str, name: str) -> dict[str, str]:
        if not isinstance(text, str) or len(text) > MAX_CHARS:
            return {}
        try:
            return transform(text, name)
        except _UNREADABLE:
            return {}

    return wrapped


# === Python =====================================================================================
def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return None


class _Module:
    """The top-level imports of a script and the calls worth hiding in it."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.bound: dict[str, str] = {}  # name bound by a top-level `import` -> module
        self.imported: set[str] = set()  # every module named by a top-level `import`
        self.at: dict[str, int] = {}  # name -> index of the statement binding it
        for index, node in enumerate(tree.body):
            if not isinstance(node, ast.Import):
                continue
            for alias in node.names:
                self.imported.add(alias.name)
                name = alias.asname or alias.name.split(".")[0]
                self.bound.setdefault(name, alias.name if alias.asname else name)
                self.at.setdefault(name, index)
        rebound = self._rebound()
        for name in rebound:
            self.bound.pop(name, None)
        self.builtins = BUILTIN_SINKS - rebound

    def _rebound(self) -> set[str]:
        """Names bound anywhere but by the top-level imports (shadowing makes a rewrite unsafe)."""
        top = {id(n) for n in self.tree.body if isinstance(n, ast.Import)}
        names: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
        for index, node in enumerate(self.tree.body):  # imported twice at the top: unclear
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    if self.at.get(name, -1) != index:
                        names.add(name)
        return names

    def sinks(self) -> list[tuple[ast.Call, str]]:
        """Calls of an imported module's attribute, or of a risky builtin, in walk order."""
        calls = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            dotted = _dotted(node.func)
            if dotted is None:
                continue
            if ("." in dotted and dotted.split(".")[0] in self.bound) or dotted in self.builtins:
                calls.append((node, dotted))
        return calls

    def preamble_end(self) -> int:
        """Index after the docstring and the ``from __future__`` imports."""
        end = 0
        for index, node in enumerate(self.tree.body):
            docstring = index == 0 and isinstance(node, ast.Expr)
            future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
            if not (docstring or future):
                break
            end = index + 1
        return end

    def insert(self, inserts: list[tuple[int, int, list[ast.stmt]]]) -> None:
        """Insert statements before body indices (stable: by index, then by order given)."""
        for at, _, stmts in sorted(inserts, key=lambda t: (t[0], t[1]), reverse=True):
            self.tree.body[at:at] = stmts


def _expr(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


def _stmts(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


def _finish(tree: ast.Module, name: str, source: str) -> dict[str, str]:
    out = ast.unparse(ast.fix_missing_locations(tree))
    ast.parse(out)  # a mutant that does not parse is a bug: SyntaxError -> {}
    return {name: out} if out != source else {}


def _split_owner(dotted: str) -> tuple[str, str]:
    owner, _, attr = dotted.rpartition(".")
    return owner, attr


@_safe
def py_attrgetter(source: str, name: str) -> dict[str, str]:
    """Each sink called through ``operator.attrgetter``, ``operator.methodcaller`` or
    ``importlib.import_module`` (in turn; ``import_module`` only where the owner is a module
    the script imports, ``attrgetter`` otherwise)."""
    module = _Module(ast.parse(source))
    sinks = module.sinks()
    if not sinks:
        return {}
    used: set[str] = set()
    for index, (call, dotted) in enumerate(sinks):
        owner, attr = _split_owner(dotted)
        root = owner.split(".")[0] if owner else "_builtins"
        path = f"{owner[len(root) + 1 :]}.{attr}".lstrip(".") if owner else attr
        full = f"{module.bound[root]}{owner[len(root) :]}" if owner else "builtins"
        style = index % 3
        if owner == "":
            used.add("_builtins")
        if style == 2 and (full in module.imported or full == "builtins"):
            used.add("_importlib")
            call.func = _expr(f"_importlib.import_module({full!r}).{attr}")
        elif style == 1:
            used.add("_operator")
            holder = _expr(f"{owner or '_builtins'}")
            caller = _expr(f"_operator.methodcaller({attr!r})")
            assert isinstance(caller, ast.Call)
            caller.args += call.args
            caller.keywords += call.keywords
            call.func, call.args, call.keywords = caller, [holder], []
        else:
            used.add("_operator")
            call.func = _expr(f"_operator.attrgetter({path!r})({root})")
    imports = [_stmts(f"import {n[1:]} as {n}")[0] for n in sorted(used)]
    module.insert([(module.preamble_end(), 0, imports)])
    return _finish(module.tree, name, source)


_VIA: Final = "def _via(_target):\n    return lambda _fn: _target\n"


@_safe
def py_default_args(source: str, name: str) -> dict[str, str]:
    """Each sink called through a helper that got it as a default argument or, in turn, a
    helper a decorator replaced by it; each helper right after the import it needs."""
    module = _Module(ast.parse(source))
    sinks = module.sinks()
    if not sinks:
        return {}
    inserts: list[tuple[int, int, list[ast.stmt]]] = []
    decorated = False
    for index, (call, dotted) in enumerate(sinks):
        root = dotted.split(".")[0]
        at = module.at[root] + 1 if "." in dotted else module.preamble_end()
        helper = f"_do{index}"
        frame_bound = dotted in {"eval", "exec"}
        plain = all(not isinstance(a, ast.Starred) for a in call.args) and not call.keywords
        if index % 2 or (frame_bound and not plain):
            # the decorated name *is* the callable: it runs in the caller's frame
            decorated = True
            text = f"@_via({dotted})\ndef {helper}(*a, **k):\n    pass\n"
        else:
            if frame_bound and len(call.args) == 1:
                # the helper's frame is not the caller's: hand eval/exec the caller's namespaces
                call.args += [_expr("globals()"), _expr("locals()")]
            text = f"def {helper}(*a, _f={dotted}, **k):\n    return _f(*a, **k)\n"
        inserts.append((at, index + 1, _stmts(text)))
        call.func = ast.Name(helper, ast.Load())
    if decorated:
        inserts.append((module.preamble_end(), 0, _stmts(_VIA)))
    module.insert(inserts)
    return _finish(module.tree, name, source)


def _literals(tree: ast.Module, least: int) -> list[ast.Constant]:
    """String literals that may become expressions: not docstrings, f-string parts or patterns."""
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        parent = parents.get(node)
        if len(node.value) < least or isinstance(
            parent, (ast.JoinedStr, ast.FormattedValue, ast.Expr, ast.MatchValue)
        ):
            continue
        try:
            node.value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: no bytes spell them
            continue
        found.append(node)
    return found


def _decoded(text: str, index: int) -> str:
    raw = text.encode("utf-8")
    if index % 2 == 0:
        hidden = bytes(b ^ XOR_KEY for b in raw)
        return f"bytes(b ^ {XOR_KEY:#x} for b in {hidden!r}).decode()"
    half = len(raw) // 2
    return (
        f"b''.join([bytes.fromhex({raw[:half].hex()!r}), "
        f"bytes.fromhex({raw[half:].hex()!r})]).decode()"
    )


@_safe
def py_bytes_xor(source: str, name: str) -> dict[str, str]:
    """Each string literal of 8+ characters decoded from XORed bytes or, in turn, two hex halves."""
    tree = ast.parse(source)
    literals = _literals(tree, PY_LEAST)
    if not literals:
        return {}
    parents = _parents(tree)
    for index, node in enumerate(literals):
        replacement = _expr(_decoded(node.value, index))
        parent = parents[node]
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, replacement)
            elif isinstance(value, list):
                setattr(parent, field, [replacement if v is node else v for v in value])
    return _finish(tree, name, source)


# === JavaScript =================================================================================
class _Tok:
    __slots__ = ("end", "kind", "line_start", "start", "text")

    def __init__(self, kind: str, start: int, end: int, text: str, *, line_start: bool) -> None:
        self.kind, self.start, self.end, self.text = kind, start, end, text
        self.line_start = line_start  # first significant token on its line


_JS_IDENT: Final = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
_JS_NUMBER: Final = re.compile(r"\.?\d[\w.]*")
_JS_REGEX_AFTER: Final = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case"}
    | {"do", "else", "yield", "await"}
)


def _js_tokens(src: str) -> list[_Tok]:
    """Significant tokens (comments and white space dropped); ValueError on what it cannot read."""
    toks: list[_Tok] = []
    stack: list[str] = []  # "{" for a brace, "${" for a template expression
    i, n = 0, len(src)
    new_line = True
    if src.startswith("#!"):
        i = src.find("\n") if "\n" in src else n

    def add(kind: str, start: int, end: int) -> None:
        nonlocal new_line
        toks.append(_Tok(kind, start, end, src[start:end], line_start=new_line))
        new_line = False

    def template(j: int) -> int:
        """From inside a template (after ` or }), to just after its closing ` or its ${."""
        while j < n:
            c = src[j]
            if c == "\\":
                j += 2
            elif c == "`":
                return j + 1
            elif c == "$" and src.startswith("${", j):
                stack.append("${")
                return j + 2
            else:
                j += 1
        raise ValueError("unterminated template")

    while i < n:
        c = src[i]
        if c in "\n\r\u2028\u2029":
            new_line = True
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            end = src.find("\n", i)
            i = n if end < 0 else end
        elif src.startswith("/*", i):
            end = src.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated comment")
            new_line = new_line or "\n" in src[i:end]
            i = end + 2
        elif c in "'\"":
            j = i + 1
            while j < n and src[j] != c:
                if src[j] in "\n\r":
                    raise ValueError("newline in a string")
                j += 2 if src[j] == "\\" else 1
            if j >= n:
                raise ValueError("unterminated string")
            add("str", i, j + 1)
            i = j + 1
        elif c == "`":
            j = template(i + 1)
            add("tmpl", i, j)
            i = j
        elif c == "}" and stack and stack[-1] == "${":
            stack.pop()
            j = template(i + 1)
            add("tmpl", i, j)
            i = j
        elif c == "/":
            prev = toks[-1] if toks else None
            regex = (
                prev is None
                or (prev.kind == "punct" and prev.text not in ")]}")
                or (prev.kind == "ident" and prev.text in _JS_REGEX_AFTER)
            )
            if prev is not None and prev.kind == "tmpl" and prev.text.endswith("${"):
                regex = True
            if not regex:
                add("punct", i, i + 1)
                i += 1
                continue
            j, klass = i + 1, False
            while j < n:
                d = src[j]
                if d in "\n\r":
                    raise ValueError("newline in a regular expression")
                if d == "\\":
                    j += 2
                    continue
                if d == "[":
                    klass = True
                elif d == "]":
                    klass = False
                elif d == "/" and not klass:
                    break
                j += 1
            if j >= n:
                raise ValueError("unterminated regular expression")
            j += 1
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            add("regex", i, j)
            i = j
        elif m := _JS_IDENT.match(src, i):
            add("ident", i, m.end())
            i = m.end()
        elif m := _JS_NUMBER.match(src, i):
            add("num", i, m.end())
            i = m.end()
        else:
            if c == "{":
                stack.append("{")
            elif c == "}":
                if not stack:
                    raise ValueError("unbalanced braces")
                stack.pop()
            add("punct", i, i + 1)
            i += 1
    if stack:
        raise ValueError("unbalanced braces")
    return toks


_JS_SIMPLE_ESCAPES: Final = {"n": 10, "t": 9, "r": 13, "b": 8, "f": 12, "v": 11}


def _utf16(text: str) -> list[int]:
    units = []
    for ch in text:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
        else:
            units.append(code)
    return units


def _js_units(literal: str) -> list[int] | None:
    """The UTF-16 code units a JavaScript string literal spells; None for legacy octal."""
    body, units, i = literal[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            units += _utf16(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _JS_SIMPLE_ESCAPES:
            units.append(_JS_SIMPLE_ESCAPES[e])
        elif e == "0" and not (i < len(body) and body[i].isdigit()):
            units.append(0)
        elif e.isdigit():
            return None
        elif e == "x":
            units.append(int(body[i : i + 2], 16))
            i += 2
        elif e == "u" and body[i : i + 1] == "{":
            close = body.index("}", i)
            units += _utf16(chr(int(body[i + 1 : close], 16)))
            i = close + 1
        elif e == "u":
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", body[i : i + 4]):
                return None
            units.append(int(body[i : i + 4], 16))
            i += 4
        elif e == "\r":
            i += body[i : i + 1] == "\n"
        elif e in "\n\u2028\u2029":
            pass
        else:
            units += _utf16(e)
    return units


def _js_quote(units: list[int]) -> str:
    out = []
    for unit in units:
        ch = chr(unit)
        if ch in "'\\":
            out.append("\\" + ch)
        elif 0x20 <= unit < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\u{unit:04x}")
    return "'" + "".join(out) + "'"


def _js_halves(units: list[int]) -> str:
    half = len(units) // 2
    return f"{_js_quote(units[:half])} + {_js_quote(units[half:])}"


def _js_text(units: list[int]) -> str | None:
    try:
        return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le")
    except UnicodeDecodeError:  # a lone surrogate
        return None


def _js_built(units: list[int], style: int, *, line_start: bool) -> str:
    """`units` rebuilt from pieces; never starting with ( or [ at a line start (ASI)."""
    text = _js_text(units)
    if style == 3 and text is not None:
        packed = base64.b64encode(text.encode("utf-8")).decode()
        return f"Buffer.from('{packed}', 'base64').toString()"
    if line_start or style == 2 or (style == 3 and len(units) <= CHAR_CODES_MOST):
        if len(units) <= CHAR_CODES_MOST:
            return f"String.fromCharCode({', '.join(map(str, units))})"
        half = len(units) // 2
        return f"''.concat({_js_quote(units[:half])}, {_js_quote(units[half:])})"
    if style == 1:
        pieces = ", ".join(_js_quote(units[i : i + 3]) for i in range(0, len(units), 3))
        return f"[{pieces}].join('')"
    return f"({_js_halves(units)})"


_DIRECTIVES: Final = frozenset({"use strict", "use asm", "use client", "use server"})
_MODULE_LINE: Final = re.compile(r"^[ \t]*(?:import|export)\b[^\n]*\bfrom\b[^\n]*", re.M)


def _module_spans(src: str) -> list[tuple[int, int]]:
    """The lines of static ``import``/``export ... from`` statements (their strings stay)."""
    return [m.span() for m in _MODULE_LINE.finditer(src)]


def _within(spans: list[tuple[int, int]], at: int) -> bool:
    index = bisect.bisect_right(spans, (at, float("inf"))) - 1
    return index >= 0 and spans[index][0] <= at < spans[index][1]


def _sig(toks: list[_Tok], index: int) -> _Tok | None:
    return toks[index] if 0 <= index < len(toks) else None


def _is(tok: _Tok | None, kind: str, *texts: str) -> TypeGuard[_Tok]:
    return tok is not None and tok.kind == kind and (not texts or tok.text in texts)


def _apply(src: str, edits: list[tuple[int, int, str]]) -> str:
    """`src` with each (start, end, text) edit made; ValueError when two of them overlap."""
    pieces, at = [], 0
    for start, end, text in sorted(edits):
        if start < at:
            raise ValueError("overlapping edits")
        pieces += [src[at:start], text]
        at = end
    return "".join([*pieces, src[at:]])


@_safe
def js_strings(source: str, name: str) -> dict[str, str]:
    """Each string literal of 6+ characters rebuilt in turn from halves, ``[...].join('')``,
    ``String.fromCharCode`` or ``Buffer.from(base64)``."""
    toks = _js_tokens(source)
    modules = _module_spans(source)
    edits: list[tuple[int, int, str]] = []
    for k, tok in enumerate(toks):
        if tok.kind != "str":
            continue
        units = _js_units(tok.text)
        if units is None or len(units) < JS_LEAST:
            continue
        prev, after, before = _sig(toks, k - 1), _sig(toks, k + 1), _sig(toks, k - 2)
        if _is(after, "punct", ":") and not _is(prev, "punct", "?"):
            continue  # an object key or a `case` (a ternary's first branch is rewritten)
        if _is(after, "punct", "(") or _is(prev, "ident", "from", "import"):
            continue  # a method's name, a module specifier
        if _is(after, "punct", "=") and not _is(_sig(toks, k + 2), "punct", "=", ">"):
            continue  # a class field's name
        if _is(after, "tmpl") or _js_text(units) in _DIRECTIVES:
            continue
        if _within(modules, tok.start):
            continue
        relative = (_js_text(units) or "").startswith((".", "/"))
        if relative and _is(prev, "punct", "(") and _is(before, "ident", "require", "import"):
            continue
        if relative and _is(prev, "punct", "(") and _is(before, "ident", "resolve"):
            continue
        built = _js_built(units, len(edits) % 4, line_start=tok.line_start)
        edits.append((tok.start, tok.end, built))
    return {name: _apply(source, edits)} if edits else {}


_CHILD_PROCESS: Final = frozenset({"child_process", "node:child_process"})
_CP_METHODS: Final = frozenset(
    {"exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync", "fork"}
)
_GLOBALS: Final = ("eval", "Function", "fetch")


def _js_split(word: str) -> str:
    half = len(word) // 2
    return f"'{word[:half]}'+'{word[half:]}'"


def _closers(toks: list[_Tok]) -> dict[int, int]:
    """Index of each opening bracket token -> index of the one closing it."""
    pairs, stack = {}, []
    for j, tok in enumerate(toks):
        if _is(tok, "punct", "(", "[", "{"):
            stack.append(j)
        elif _is(tok, "punct", ")", "]", "}") and stack:
            pairs[stack.pop()] = j
    return pairs


def _bare_calls_only(toks: list[_Tok], closers: dict[int, int], name: str) -> bool:
    """Every use of `name` not after a dot is a plain call: nothing declares, shadows or
    defines a method of that name (so ``globalThis[name]`` is the same thing)."""
    for k, tok in enumerate(toks):
        if not _is(tok, "ident", name) or _is(_sig(toks, k - 1), "punct", "."):
            continue
        if not _is(_sig(toks, k + 1), "punct", "("):
            return False
        if _is(
            _sig(toks, k - 1),
            "ident",
            "function",
            "class",
            "var",
            "let",
            "const",
            "get",
            "set",
            "static",
            "async",
        ):
            return False
        if _is(_sig(toks, closers.get(k + 1, len(toks)) + 1), "punct", "{"):
            return False  # a method definition `eval(x) {`
    return True


def _destructured(toks: list[_Tok], close: int) -> list[tuple[int, int, str]] | None:
    """Edits for ``{ a, b: c } = require(...)`` (the `}` at `close`), or None if not simple."""
    j = close - 1
    keys: list[tuple[_Tok, bool]] = []  # (key token, shorthand)
    while j >= 0 and not _is(toks[j], "punct", "{"):
        tok = toks[j]
        if _is(tok, "punct", ","):
            j -= 1
            continue
        if not _is(tok, "ident"):
            return None
        if _is(_sig(toks, j - 1), "punct", ":") and _is(_sig(toks, j - 2), "ident"):
            keys.append((toks[j - 2], False))
            j -= 3
        else:
            keys.append((tok, True))
            j -= 1
    if j < 0 or not _is(_sig(toks, j - 1), "ident", "const", "let", "var") or not keys:
        return None
    edits = []
    for key, shorthand in keys:
        alias = f": {key.text}" if shorthand else ""
        edits.append((key.start, key.end, f"[{_js_split(key.text)}]{alias}"))
    return edits


@_safe
def js_lookup(source: str, name: str) -> dict[str, str]:
    """``eval(``, ``Function(``, ``fetch(`` and ``child_process`` reached by computed access."""
    toks = _js_tokens(source)
    closers = _closers(toks)
    edits: list[tuple[int, int, str]] = []
    calls_only = {g: _bare_calls_only(toks, closers, g) for g in _GLOBALS}
    holders: set[str] = set()  # names bound to require('child_process')
    for k, tok in enumerate(toks):
        prev = _sig(toks, k - 1)
        if tok.kind == "ident" and tok.text in _GLOBALS and calls_only[tok.text]:
            if _is(prev, "punct", "."):
                continue
            edits.append((tok.start, tok.end, f"globalThis[{_js_split(tok.text)}]"))
        elif tok.kind == "str" and _is(prev, "punct", "("):
            units = _js_units(tok.text)
            req = _sig(toks, k - 2)
            if units is None or _js_text(units) not in _CHILD_PROCESS:
                continue
            if not _is(req, "ident", "require") or _is(_sig(toks, k - 3), "punct", "."):
                continue
            if not _is(_sig(toks, k + 1), "punct", ")"):
                continue
            edits.append((tok.start, tok.end, _js_split(_js_text(units) or "")))
            dot, method = _sig(toks, k + 2), _sig(toks, k + 3)
            if _is(dot, "punct", ".") and _is(method, "ident", *_CP_METHODS):
                edits.append((dot.start, method.end, f"[{_js_split(method.text)}]"))
            eq, target = _sig(toks, k - 3), _sig(toks, k - 4)
            if (
                _is(eq, "punct", "=")
                and _is(target, "ident")
                and _is(_sig(toks, k - 5), "ident", "const", "let", "var")
            ):
                holders.add(target.text)
            elif _is(eq, "punct", "=") and _is(target, "punct", "}"):
                edits += _destructured(toks, k - 4) or []
    for k, tok in enumerate(toks):
        if not (_is(tok, "ident", *holders) and not _is(_sig(toks, k - 1), "punct", ".")):
            continue
        dot, method, paren = _sig(toks, k + 1), _sig(toks, k + 2), _sig(toks, k + 3)
        if (
            _is(dot, "punct", ".")
            and _is(method, "ident", *_CP_METHODS)
            and _is(paren, "punct", "(")
        ):
            edits.append((dot.start, method.end, f"[{_js_split(method.text)}]"))
    return {name: _apply(source, edits)} if edits else {}


# === Shell ======================================================================================
_SH_TARGETS: Final = ("curl", "wget", "base64", "sh", "bash", "eval")
_SH_KEEP_START: Final = frozenset(
    {"if", "then", "do", "else", "elif", "while", "until", "!", "{", "time"}
)
"""Words after which a command starts again (reserved words, and ``time``)."""
_SH_META: Final = frozenset(" \t\n;&|()<>")
_HEREDOC: Final = re.compile(r"<<(-?)[ \t]*\\?(['\"]?)([A-Za-z_][\w.-]*)\2")


class _ShScan:
    """Where the command words and the double-quoted strings of a shell script are."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.commands: list[tuple[int, int]] = []
        self.quoted: list[tuple[int, int]] = []  # spans of "..." including the quotes
        self.pending: list[tuple[str, bool]] = []  # here-documents to skip at the next newline
        end = self.code(0, None)
        if end < len(src):
            raise ValueError("stopped early")

    def code(self, i: int, stop: str | None) -> int:
        s, n, at_start = self.src, len(self.src), True
        while i < n:
            c = s[i]
            if stop is not None and c == stop:
                return i + 1
            if c == "\n":
                at_start, i = True, self.heredocs(i + 1)
            elif c in " \t\r":
                i += 1
            elif c == "\\":
                at_start = at_start and s[i + 1 : i + 2] == "\n"
                i += 2
            elif c == "#":
                end = s.find("\n", i)
                i = n if end < 0 else end
            elif c in ";&|":
                at_start, i = True, i + 1
            elif c == "(":
                i, at_start = self.code(i + 1, ")"), False
            elif c == ")":
                at_start, i = True, i + 1  # a `case` pattern's end
            elif c in "<>":
                if s.startswith("<<", i) and not s.startswith("<<<", i):
                    m = _HEREDOC.match(s, i)
                    if m is None:
                        raise ValueError("a here-document this scanner cannot read")
                    self.pending.append((m.group(3), m.group(1) == "-"))
                    i = m.end()
                    continue
                i += 1
                while i < n and s[i] in "<>&|":
                    i += 1
                while i < n and s[i] in " \t":
                    i += 1
                i, _ = self.word(i, stop)  # the redirection's target: not a command
            else:
                start = i
                i, plain = self.word(i, stop)
                if i == start:
                    i += 1  # a character no branch knows: step over it
                    continue
                word = s[start:i]
                follows = s[i] if i < n else "\n"
                if at_start and plain and word in _SH_TARGETS and follows in " \t\n;&|":
                    self.commands.append((start, i))
                keep = plain and word in _SH_KEEP_START
                at_start = at_start and keep
        if stop is not None:
            raise ValueError(f"unclosed {stop}")
        return i

    def heredocs(self, i: int) -> int:
        s = self.src
        for word, dash in self.pending:
            while i < len(s):
                end = s.find("\n", i)
                end = len(s) if end < 0 else end
                line = s[i:end]
                i = end + 1
                if (line.lstrip("\t") if dash else line) == word:
                    break
        self.pending = []
        return min(i, len(s))

    def word(self, i: int, stop: str | None) -> tuple[int, bool]:
        s, n, plain = self.src, len(self.src), True
        run: int | None = None
        while i < n and s[i] not in _SH_META and s[i] != stop:
            c = s[i]
            if c not in "\\'\"$`":
                run = i if run is None else run
                i += 1
                continue
            if run is not None:
                self.plain_run(run, i)
                run = None
            if c == "\\":
                plain, i = False, i + 2
            elif c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    raise ValueError("unterminated quote")
                plain, i = False, end + 1
            elif c == '"':
                plain, i = False, self.double(i)
            elif c == "$":
                plain, i = False, self.dollar(i)
            else:
                plain, i = False, self.code(i + 1, "`")
        if run is not None:
            self.plain_run(run, i)
        return i, plain

    def plain_run(self, start: int, end: int) -> None:
        """A run of plain characters (no quote, escape or expansion) of an unquoted word,
        for a subclass that records them; nothing here."""

    def dollar(self, i: int) -> int:
        s = self.src
        if s.startswith("$((", i):
            return self.code(i + 3, ")") + 1  # arithmetic: read as code, closed by ))
        if s.startswith("$(", i):
            return self.code(i + 2, ")")
        if s.startswith("${", i):
            depth, j = 0, i + 1
            while j < len(s):
                if s[j] == "{":
                    depth += 1
                elif s[j] == "}":
                    depth -= 1
                    if depth == 0:
                        return j + 1
                elif s[j] == "\\":
                    j += 1
                elif s[j] == '"':
                    j = self.double(j) - 1
                elif s[j] == "'":
                    j = s.index("'", j + 1)
                j += 1
            raise ValueError("unterminated ${")
        if s.startswith("$'", i):
            j = i + 2
            while j < len(s) and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            return j + 1
        return i + 1

    def double(self, i: int) -> int:
        s, j = self.src, i + 1
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
            elif c == '"':
                k = i - 1
                while k >= 0 and s[k] in " \t":
                    k -= 1
                if not s[max(0, k - 2) : k + 1].endswith(("<<", "<<-")):  # not a delimiter
                    self.quoted.append((i, j + 1))
                return j + 1
            elif c == "$" and s.startswith(("$(", "${"), j):
                j = self.dollar(j)
            elif c == "`":
                j = self.code(j + 1, "`")
            else:
                j += 1
        raise ValueError("unterminated double quote")


def _sh_split_at(body: str) -> int | None:
    """Where `body` (a double-quoted string's inside) may be cut in two without touching an
    expansion or an escape: before any, or after all of them and not right after a name's
    character; the point nearest the middle."""
    n, middle = len(body), len(body) // 2
    first = next((i for i, c in enumerate(body) if c in "$`\\"), n)
    last = max((i for i, c in enumerate(body) if c in "$`\\{}()"), default=-1)
    points = []
    if min(first, n - 1) >= 1:
        points.append(min(max(middle, 1), first, n - 1))
    tail = [
        p
        for p in range(max(last + 1, 1), n)
        if not (body[p - 1].isalnum() or body[p - 1] in "_$\\")
    ]
    if tail:
        points.append(min(tail, key=lambda p: abs(p - middle)))
    return min(points, key=lambda p: (abs(p - middle), p)) if points else None


@_safe
def sh_pieces(source: str, name: str) -> dict[str, str]:
    """``curl``/``wget``/``base64``/``sh``/``bash``/``eval`` as command words built from two
    variables set at the top, and each double-quoted string of 6+ characters cut in two."""
    scan = _ShScan(source)
    edits: list[tuple[int, int, str]] = []
    prefix = "_c"
    while re.search(rf"\b{prefix}\d", source):
        prefix += "c"
    names: dict[str, tuple[str, str]] = {}
    for start, end in scan.commands:
        word = source[start:end]
        if word not in names:
            k = 2 * len(names) + 1
            names[word] = (f"{prefix}{k}", f"{prefix}{k + 1}")
        a, b = names[word]
        edits.append((start, end, f'"${a}${b}"'))
    cuts = 0
    for start, end in scan.quoted:
        body = source[start + 1 : end - 1]
        if len(body) < SH_LEAST or "\n" in body:
            continue
        at = _sh_split_at(body)
        if at is None:
            continue
        glue = '""' if cuts % 2 == 0 else "\"''\""
        # an insertion, outside every expansion: edits inside $(...) stay apart from it
        edits.append((start + 1 + at, start + 1 + at, glue))
        cuts += 1
    if not edits:
        return {}
    out = _apply(source, edits)
    if names:
        setup = "; ".join(
            f"{a}={w[: len(w) // 2]}; {b}={w[len(w) // 2 :]}" for w, (a, b) in names.items()
        )
        head = out.find("\n") + 1 if out.startswith("#!") else 0
        if out.startswith("#!") and head == 0:
            out += "\n"
            head = len(out)
        out = out[:head] + setup + "\n" + out[head:]
    return {name: out}


FAMILIES_2: Final[dict[str, tuple[Transform, str]]] = {
    "py-attrgetter": (py_attrgetter, ".py"),
    "py-default-args": (py_default_args, ".py"),
    "py-bytes-xor": (py_bytes_xor, ".py"),
    "js-strings": (js_strings, ".js"),
    "js-lookup": (js_lookup, ".js"),
    "sh-pieces": (sh_pieces, ".sh"),
}
HELD_APART_2: Final = tuple(FAMILIES_2)
"""All six are measured only: nobody tunes a rule on them."""
