"""Six more obfuscation mutation families for the scanner's mutation benchmark, held out of round 5.

Written apart from the scanner's rules (without reading them, and without running the scanner)
so that the families measure whether the rules generalise. Each family is a deterministic
source-to-source transform ``(text, file name) -> {file name: new text}`` that keeps what the
script does, ``{}`` when nothing applies or the input cannot be read safely; none raises on odd
input and each runs in time about linear in its input. The readers (Python ``ast``, the small
JavaScript tokenizer, the shell scanner) are ``bench/scan_families.py``'s; this module imports
nothing of the scanner. None of the tricks below is one of the earlier families'.

Python:

* ``py-lazy-modules``: each name a top-level ``import`` binds, when the script only ever reads
  attributes of it, becomes a lazy module proxy (a small class whose ``__getattr__`` calls
  ``importlib.import_module``), the module's name spelled in turn through a ``str.translate``
  letter shift or ``%c`` formatting; ``eval``, ``exec``, ``compile``, ``open`` and
  ``__import__`` are read from such a proxy of ``builtins``. The sink calls keep their text
  (``os.system(...)``) but no ``import os`` is left. Known change: a module is imported at the
  first attribute read rather than at the ``import`` line (so is an ``ImportError``). Names
  used bare, assigned through (``sys.stdout = ...``), or read for a dunder are left alone.
* ``py-packed-literals``: each string literal of 8+ characters decoded at run time, in turn,
  from ``base64.b32decode``, ``base64.a85decode``, ``bz2`` over ``b85decode`` and ``lzma`` over
  ``a85decode`` (the modules imported once at the top under fresh names).

JavaScript:

* ``js-reflect``: calls of a method of a name bound to ``require(...)`` (any module; chains
  such as ``fs.promises.readFile`` too), of a name destructured from one, and bare calls of
  ``eval``, ``Function``, ``fetch`` and ``require`` made through ``Reflect.apply`` (in turn
  with the method read by ``Reflect.get``); ``new Function(...)`` through
  ``Reflect.construct``. ``Reflect.apply(eval, ...)`` is an indirect eval (global scope):
  behaviour is kept for code that reads no local binding, as in ``js-lookup``.
* ``js-decoders``: each string literal of 6+ characters decoded at run time, in turn, from
  ``Buffer.from(hex, 'hex')``, ``String.fromCharCode(...codes.map((c) => c ^ key))`` or
  ``decodeURIComponent`` of every byte percent-encoded; the same literals as ``js-strings``
  are left alone (keys, directives, module specifiers, relative ``require`` paths).

Shell (a subclass of ``bench/scan_families.py``'s scanner that also records the plain runs of
unquoted words):

* ``sh-escapes``: the command words ``curl``, ``wget``, ``base64``, ``sh``, ``bash``,
  ``eval``, each double-quoted string of 6+ characters with no expansion or escape in it, and
  each URL or ``/dev/tcp/`` (``/dev/udp/``) prefix in an unquoted word, spelled in turn as
  ANSI-C hex escapes ``$'\\x63...'`` (bash scripts only), ``"$(printf '%b' '\\0143...')"``
  (octal) or ``"$(printf '%s' 'rot13' | tr 'A-Za-z' 'N-ZA-Mn-za-m')"``. Known change: the
  last two run ``printf``/``tr`` in a subshell.
* ``sh-expansions``: the same words read from variables set at the top through parameter
  expansion, in turn (bash): junk characters removed by ``${v//@/}``, a stand-in character put
  back by ``${v//@//}``, case restored by ``${v,,}``/``${v^^}``, or three-character chunks
  stored in reverse order read back by ``${v:6:3}${v:3:3}${v:0:3}`` (ASCII text only: bash
  counts characters by the locale); under ``#!/bin/sh`` only POSIX cuts, the text in two or
  three pieces each stored with a decoy prefix or suffix (``${a#zq_}${b%_qz}``). Known change:
  the script has these variables set (not exported).

Both shell families leave scripts with backticks alone (a backslash means another thing there).

Written by hand, for the reasons ``bench/scan_families.py`` gives.
"""

from __future__ import annotations

import ast
import base64
import bz2
import codecs
import lzma
import re
from typing import Final

from bench.scan_families import (
    _DIRECTIVES,
    CHAR_CODES_MOST,
    Transform,
    _apply,
    _closers,
    _expr,
    _finish,
    _is,
    _js_text,
    _js_tokens,
    _js_units,
    _literals,
    _Module,
    _module_spans,
    _parents,
    _safe,
    _ShScan,
    _sig,
    _stmts,
    _Tok,
    _within,
)
from bench.scan_families_3 import _fresh, _is_bash, _sh_head, _turn

PY_LEAST: Final = 8
"""Shortest string literal ``py-packed-literals`` packs."""
JS_LEAST: Final = 6
SH_LEAST: Final = 6
JS_XOR_KEY: Final = 0x2F
_SHIFTED: Final = "abcdefghijklmnopqrstuvwxyz"
_LAZY_BUILTINS: Final = ("eval", "exec", "compile", "open", "__import__")


# === Python: lazy module proxies ================================================================
def _shift(text: str) -> str:
    """`text` with each lower-case letter moved one on (undone by the table the proxy gets)."""
    return text.translate(str.maketrans(_SHIFTED, _SHIFTED[1:] + _SHIFTED[0]))


def _spelled(text: str, style: int, table: str) -> str:
    if style == 0:
        return f"{_shift(text)!r}.translate({table})"
    codes = ", ".join(str(ord(c)) for c in text)
    return f"'%c' * {len(text)} % ({codes},)"


def _attribute_reads_only(tree: ast.Module, names: set[str]) -> set[str]:
    """Those of `names` that the script only ever reads attributes of (not dunders)."""
    parents = _parents(tree)
    bad: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in names):
            continue
        parent = parents.get(node)
        if not (
            isinstance(node.ctx, ast.Load)
            and isinstance(parent, ast.Attribute)
            and parent.value is node
            and isinstance(parent.ctx, ast.Load)
            and not parent.attr.startswith("__")
        ):
            bad.add(node.id)
    return names - bad


def _lazy_class(p: str) -> str:
    """The proxy class (its own attributes are named so that no module attribute meets them)."""
    return (
        f"import importlib as {p}importlib\n"
        f"{p}TABLE = str.maketrans({_SHIFTED[1:] + _SHIFTED[0]!r}, {_SHIFTED!r})\n\n"
        f"class {p}Lazy:\n\n"
        "    def __init__(self, spec, whole):\n"
        f"        self.{p}spec, self.{p}whole = spec, whole\n\n"
        "    def __getattr__(self, attr):\n"
        f"        loaded = {p}importlib.import_module(self.{p}spec)\n"
        f"        top = self.{p}spec.split('.')[0]\n"
        f"        owner = loaded if self.{p}whole else {p}importlib.import_module(top)\n"
        "        return getattr(owner, attr)\n"
    )


@_safe
def py_lazy_modules(source: str, name: str) -> dict[str, str]:
    """Top-level imports read only through attributes become lazy module proxies (the module's
    name spelled through ``str.translate`` or ``%c``); builtin sinks read from one."""
    tree = ast.parse(source)
    module = _Module(tree)
    rebound = module._rebound()
    binds: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                binds[bound] = binds.get(bound, 0) + 1
    once = {n for n, count in binds.items() if count == 1 and n not in rebound}
    lazy = _attribute_reads_only(tree, once)
    builtin_calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _LAZY_BUILTINS
        and node.func.id in module.builtins
    ]
    if not lazy and not builtin_calls:
        return {}
    p = _fresh(source, "_lz")
    turn = _turn(source)
    table = f"{p}TABLE"
    body: list[ast.stmt] = []
    made = 0
    for node in tree.body:
        if not isinstance(node, ast.Import):
            body.append(node)
            continue
        kept = [a for a in node.names if (a.asname or a.name.split(".")[0]) not in lazy]
        if kept:
            body.append(ast.Import(names=kept))
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if bound not in lazy:
                continue
            spec = _spelled(alias.name, (turn + made) % 2, table)
            body += _stmts(f"{bound} = {p}Lazy({spec}, {bool(alias.asname)})")
            made += 1
    head = _stmts(_lazy_class(p))
    if builtin_calls:
        spec = _spelled("builtins", (turn + made) % 2, table)
        head += _stmts(f"{p}builtins = {p}Lazy({spec}, True)")
        for call in builtin_calls:
            assert isinstance(call.func, ast.Name)
            call.func = _expr(f"{p}builtins.{call.func.id}")
    at = module.preamble_end()
    tree.body = body[:at] + head + body[at:]
    return _finish(tree, name, source)


# === Python: packed literals ====================================================================
def _packed(text: str, style: int, p: str) -> tuple[str, str]:
    """(expression giving `text` back, the module alias it needs besides base64)."""
    raw = text.encode("utf-8")
    if style == 0:
        return f"{p}b.b32decode({base64.b32encode(raw).decode()!r}).decode()", ""
    if style == 1:
        return f"{p}b.a85decode({base64.a85encode(raw).decode()!r}).decode()", ""
    if style == 2:
        packed = base64.b85encode(bz2.compress(raw)).decode()
        return f"{p}bz.decompress({p}b.b85decode({packed!r})).decode()", "bz2"
    packed = base64.a85encode(lzma.compress(raw)).decode()
    return f"{p}lz.decompress({p}b.a85decode({packed!r})).decode()", "lzma"


@_safe
def py_packed_literals(source: str, name: str) -> dict[str, str]:
    """Each string literal of 8+ characters decoded from base32, Ascii85, bz2 over base85 or lzma
    over Ascii85, in turn."""
    tree = ast.parse(source)
    parents = _parents(tree)
    literals = [
        node
        for node in _literals(tree, PY_LEAST)
        if not isinstance(parents.get(node), ast.pattern)  # mapping-pattern keys stay literal
    ]
    if not literals:
        return {}
    module = _Module(tree)
    p = _fresh(source, "_pk")
    turn = _turn(source)
    needs = {"base64"}
    for index, node in enumerate(literals):
        text, extra = _packed(node.value, (turn + index) % 4, p)
        needs.add(extra or "base64")
        replacement = _expr(text)
        parent = parents[node]
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, replacement)
            elif isinstance(value, list):
                setattr(parent, field, [replacement if v is node else v for v in value])
    aliases = {"base64": f"{p}b", "bz2": f"{p}bz", "lzma": f"{p}lz"}
    imports = _stmts("".join(f"import {m} as {aliases[m]}\n" for m in sorted(needs)))
    at = module.preamble_end()
    tree.body[at:at] = imports
    return _finish(tree, name, source)


# === JavaScript: Reflect ========================================================================
_JS_DECLARES: Final = frozenset({"const", "let", "var"})
_JS_BARE: Final = ("eval", "Function", "fetch", "require")
_JS_THIS: Final = {"eval": "globalThis", "fetch": "globalThis"}


def _required(toks: list[_Tok]) -> tuple[set[str], dict[str, int]]:
    """Names bound to ``require(...)``, and names destructured from one -> their token."""
    holders: set[str] = set()
    plain: dict[str, int] = {}
    for k, tok in enumerate(toks):
        if not _is(tok, "ident", "require") or _is(_sig(toks, k - 1), "punct", "."):
            continue
        if not (_is(_sig(toks, k + 1), "punct", "(") and _is(_sig(toks, k + 2), "str")):
            continue
        eq, target = _sig(toks, k - 1), _sig(toks, k - 2)
        if not _is(eq, "punct", "="):
            continue
        if _is(target, "ident") and _is(_sig(toks, k - 3), "ident", *_JS_DECLARES):
            holders.add(target.text)
        elif _is(target, "punct", "}"):
            names: dict[str, int] = {}
            j = k - 3
            while j >= 0 and not _is(toks[j], "punct", "{"):
                if _is(toks[j], "ident") and _is(_sig(toks, j + 1), "punct", ",", "}"):
                    names[toks[j].text] = j
                j -= 1
            if _is(_sig(toks, j - 1), "ident", *_JS_DECLARES):
                plain.update(names)
    return holders, plain


def _bare_calls(toks: list[_Tok], closers: dict[int, int], name: str, bound_at: int) -> list[int]:
    """The plain calls ``name(...)`` (not methods, not method definitions) to rewrite; none
    when the script uses `name` otherwise (declares it, passes it, assigns it), but where it
    is bound at `bound_at`."""
    found = []
    for k, tok in enumerate(toks):
        if k == bound_at or not _is(tok, "ident", name) or _is(_sig(toks, k - 1), "punct", "."):
            continue
        prev = _sig(toks, k - 1)
        if not _is(_sig(toks, k + 1), "punct", "(") or k + 1 not in closers:
            return []
        if _is(prev, "ident", "function", "class", "var", "let", "const"):
            return []
        if _is(_sig(toks, closers[k + 1] + 1), "punct", "{"):
            continue  # a method definition `eval(x) {`, not a call
        if _is(prev, "ident", "get", "set", "static", "async"):
            return []
        found.append(k)
    return found


def _chain_end(toks: list[_Tok], k: int) -> int:
    """From a name at `k`, the index of the last name of ``name.a.b`` (k when no dot follows)."""
    while _is(_sig(toks, k + 1), "punct", ".") and _is(_sig(toks, k + 2), "ident"):
        k += 2
    return k


@_safe
def js_reflect(source: str, name: str) -> dict[str, str]:
    """Calls of ``require``d modules' methods, of names destructured from them and of ``eval``,
    ``Function``, ``fetch``, ``require`` made through ``Reflect.apply``/``Reflect.construct``."""
    toks = _js_tokens(source)
    closers = _closers(toks)
    holders, plain = _required(toks)
    bare = {k for g in _JS_BARE for k in _bare_calls(toks, closers, g, -1)}
    bare |= {k for n, at in plain.items() for k in _bare_calls(toks, closers, n, at)}
    edits: list[tuple[int, int, str]] = []
    turn, members = _turn(source), 0
    for k, tok in enumerate(toks):
        prev = _sig(toks, k - 1)
        if tok.kind != "ident" or _is(prev, "punct", "."):
            continue
        if k in bare:
            paren = k + 1
            close = toks[closers[paren]]
            if tok.text == "Function" and _is(prev, "ident", "new"):
                edits.append((prev.start, toks[paren].end, "Reflect.construct(Function, ["))
            elif _is(prev, "ident", "new"):
                continue
            else:
                this = _JS_THIS.get(tok.text, "undefined")
                edits.append((tok.start, toks[paren].end, f"Reflect.apply({tok.text}, {this}, ["))
            edits.append((close.start, close.end, "])"))
        elif tok.text in holders and not _is(prev, "ident", "new"):
            last = _chain_end(toks, k)
            paren = last + 1
            if last == k or not _is(_sig(toks, paren), "punct", "(") or paren not in closers:
                continue
            owner = source[tok.start : toks[last - 2].end]
            method = toks[last].text
            members += 1
            if (turn + members) % 2:
                target = f"Reflect.get({owner}, '{method}')"
            else:
                target = f"{owner}.{method}"
            close = toks[closers[paren]]
            edits.append((tok.start, toks[paren].end, f"Reflect.apply({target}, {owner}, ["))
            edits.append((close.start, close.end, "])"))
    return {name: _apply(source, edits)} if edits else {}


# === JavaScript: decoders =======================================================================
def _js_literal_ok(toks: list[_Tok], k: int, text: str, modules: list[tuple[int, int]]) -> bool:
    """Whether the string token at `k` may become an expression (the cases ``js-strings`` keeps
    literal are kept here too)."""
    prev, after, before = _sig(toks, k - 1), _sig(toks, k + 1), _sig(toks, k - 2)
    if _is(after, "punct", ":") and not _is(prev, "punct", "?"):
        return False  # an object key or a `case`
    if _is(after, "punct", "(") or _is(prev, "ident", "from", "import"):
        return False  # a method's name, a module specifier
    if _is(after, "punct", "=") and not _is(_sig(toks, k + 2), "punct", "=", ">"):
        return False  # a class field's name
    if _is(after, "tmpl") or text in _DIRECTIVES:
        return False
    if _within(modules, toks[k].start):
        return False
    relative = text.startswith((".", "/"))
    return not (relative and _is(prev, "punct", "(") and _is(before, "ident", "require", "import"))


def _js_decoded(units: list[int], text: str, style: int) -> str:
    if style == 1 and len(units) <= CHAR_CODES_MOST:
        codes = ", ".join(str(u ^ JS_XOR_KEY) for u in units)
        return f"String.fromCharCode(...[{codes}].map((c) => c ^ {JS_XOR_KEY:#x}))"
    raw = text.encode("utf-8")
    if style == 2:
        return f"decodeURIComponent('{''.join(f'%{b:02X}' for b in raw)}')"
    return f"Buffer.from('{raw.hex()}', 'hex').toString()"


@_safe
def js_decoders(source: str, name: str) -> dict[str, str]:
    """Each string literal of 6+ characters decoded from hex, XORed char codes or
    percent-encoding, in turn."""
    toks = _js_tokens(source)
    modules = _module_spans(source)
    edits: list[tuple[int, int, str]] = []
    turn = _turn(source)
    for k, tok in enumerate(toks):
        if tok.kind != "str":
            continue
        units = _js_units(tok.text)
        text = _js_text(units) if units is not None else None
        if units is None or text is None or len(units) < JS_LEAST:
            continue
        if not _js_literal_ok(toks, k, text, modules):
            continue
        edits.append((tok.start, tok.end, _js_decoded(units, text, (turn + len(edits)) % 3)))
    return {name: _apply(source, edits)} if edits else {}


# === Shell: what both families hide =============================================================
class _ShWords(_ShScan):
    """The shell scanner of ``bench/scan_families.py``, also recording the runs of plain
    characters (no quote, escape or expansion) of every unquoted word."""

    def __init__(self, src: str) -> None:
        self.plain: list[tuple[int, int]] = []
        super().__init__(src)

    def plain_run(self, start: int, end: int) -> None:
        self.plain.append((start, end))


_SH_HIDDEN: Final = re.compile(r"(?:https?|ftp)://[A-Za-z0-9._:/@%+=,-]+|/dev/(?:tcp|udp)/")
"""URLs (no glob or brace character, which quoting would change) and bash's network paths."""


def _sh_targets(source: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each piece to hide: command words, plain double-quoted strings
    (the span includes the quotes, the text does not) and URLs in unquoted words."""
    scan = _ShWords(source)
    found = [(s, e, source[s:e]) for s, e in scan.commands]
    for start, end in scan.quoted:
        body = source[start + 1 : end - 1]
        if len(body) >= SH_LEAST and not any(c in body for c in "$`\\\n\x00"):
            found.append((start, end, body))
    for start, end in scan.plain:
        for m in _SH_HIDDEN.finditer(source, start, end):
            found.append((m.start(), m.end(), m.group(0)))
    return sorted(found)


def _single(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# === Shell: escapes =============================================================================
def _escaped(text: str, style: int) -> str:
    raw = text.encode("utf-8")
    if style == 0:
        return "$'" + "".join(f"\\x{b:02x}" for b in raw) + "'"
    if style == 1:
        return "\"$(printf '%b' '" + "".join(f"\\0{b:03o}" for b in raw) + "')\""
    rot = _single(codecs.encode(text, "rot13"))
    return f"\"$(printf '%s' {rot} | tr 'A-Za-z' 'N-ZA-Mn-za-m')\""


@_safe
def sh_escapes(source: str, name: str) -> dict[str, str]:
    """Command words, plain double-quoted strings and URLs spelled as ANSI-C hex escapes (bash),
    octal ``printf '%b'`` or rot13 through ``tr``, in turn."""
    if "`" in source:
        return {}
    targets = _sh_targets(source)
    if not targets:
        return {}
    styles = [0, 1, 2] if _is_bash(source) else [1, 2]
    turn = _turn(source)
    edits = [
        (start, end, _escaped(text, styles[(turn + index) % len(styles)]))
        for index, (start, end, text) in enumerate(targets)
    ]
    return {name: _apply(source, edits)}


# === Shell: parameter expansions ================================================================
_JUNK: Final = "@^:+="
"""Characters that mark junk or stand in for another (one the text lacks is used)."""
_CUT: Final = "zq_"
_KEPT: Final = frozenset("/.:-_ ")
"""Characters a replacement string may hold as they are (bash 5.2 gives ``&`` a meaning)."""
_CHUNK: Final = 3


def _chunks(text: str, var: str) -> tuple[list[str], str]:
    """`text` in chunks stored in reverse order, read back by ``${v:offset:length}``."""
    chunks = [text[i : i + _CHUNK] for i in range(0, len(text), _CHUNK)]
    offsets, at = [], 0
    for chunk in reversed(chunks):
        offsets.append(at)
        at += len(chunk)
    offsets.reverse()
    pieces = "".join(f"${{{var}0:{o}:{len(c)}}}" for o, c in zip(offsets, chunks, strict=True))
    return ["".join(reversed(chunks))], f'"{pieces}"'


def _expansion(text: str, style: int, var: str) -> tuple[list[str], str]:
    """(the values of ``{var}0``, ``{var}1``..., the quoted expansion giving `text` back)."""
    junk = next((j for j in _JUNK if j not in text), None)
    if style == 1 and text.isascii() and text.lower() != text.upper():
        if text == text.lower():
            return [text.upper()], f'"${{{var}0,,}}"'
        if text == text.upper():
            return [text.lower()], f'"${{{var}0^^}}"'
    if style == 2 and text.isascii() and len(text) > _CHUNK:
        return _chunks(text, var)  # ASCII: bash counts characters by the locale
    common = max(_KEPT & set(text) or set(text), key=lambda c: (text.count(c), c))
    if style == 3 and junk is not None and (common in _KEPT or common.isalnum()):
        return [text.replace(common, junk)], f'"${{{var}0//{junk}/{common}}}"'
    if style in (0, 1, 2, 3) and junk is not None:
        return [junk.join(text)], f'"${{{var}0//{junk}/}}"'
    # POSIX: the text cut in pieces, each trimmed of a decoy prefix or suffix
    parts = 3 if style == 5 and len(text) >= 3 else 2
    size = -(-len(text) // parts)
    pieces = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    values, expansion = [], []
    for j, piece in enumerate(pieces):
        if j % 2:
            values.append(f"{piece}{_CUT[::-1]}")
            expansion.append(f"${{{var}{j}%{_CUT[::-1]}}}")
        else:
            values.append(f"{_CUT}{piece}")
            expansion.append(f"${{{var}{j}#{_CUT}}}")
    return values, '"' + "".join(expansion) + '"'


@_safe
def sh_expansions(source: str, name: str) -> dict[str, str]:
    """Command words, plain double-quoted strings and URLs read from variables set at the top
    through ``${v//x/}``, ``${v,,}``, ``${v:i:n}`` chunks, ``${v//x/y}`` (bash), or pieces cut
    by ``${v#p}``/``${v%s}`` (POSIX)."""
    if "`" in source:
        return {}
    targets = _sh_targets(source)
    if not targets:
        return {}
    styles = [0, 1, 2, 3] if _is_bash(source) else [4, 5]
    p = _fresh(source, "_pv")
    turn = _turn(source)
    setup: list[str] = []
    edits = []
    for index, (start, end, text) in enumerate(targets):
        var = f"{p}{index}_"
        values, expansion = _expansion(text, styles[(turn + index) % len(styles)], var)
        setup += [f"{var}{j}={_single(value)}\n" for j, value in enumerate(values)]
        edits.append((start, end, expansion))
    return {name: _sh_head(_apply(source, edits), "".join(setup))}


FAMILIES_5: Final[dict[str, tuple[Transform, str]]] = {
    "py-lazy-modules": (py_lazy_modules, ".py"),
    "py-packed-literals": (py_packed_literals, ".py"),
    "js-reflect": (js_reflect, ".js"),
    "js-decoders": (js_decoders, ".js"),
    "sh-escapes": (sh_escapes, ".sh"),
    "sh-expansions": (sh_expansions, ".sh"),
}
HELD_APART_5: Final = tuple(FAMILIES_5)
"""All six are measured only: nobody tunes a rule on them."""
