"""Six more obfuscation mutation families for the scanner's mutation benchmark, held out of round 3.

Written apart from the scanner's rules (without reading them, and without running the scanner)
so that the families measure whether the rules generalise. Each family is a deterministic
source-to-source transform ``(text, file name) -> {file name: new text}`` that keeps what the
script does, ``{}`` when nothing applies or the input cannot be read safely; none raises on odd
input and each runs in time about linear in its input. The readers (Python ``ast``, the small
JavaScript tokenizer, the shell scanner) are ``bench/scan_families.py``'s; this module imports
nothing of the scanner.

Python:

* ``py-closure-factory``: each sink (an imported module's attribute, or ``eval``, ``exec``,
  ``compile``, ``open``, ``__import__``) called through what a nested factory returns
  (``def _mk(): m = __import__('os'); return lambda *a, **k: m.system(*a, **k)``), in turn a
  closure ``def``, or a ``functools.partial`` kept in a module-level dict. ``eval``/``exec`` are
  returned bare (a builtin called from the caller keeps the caller's frame).
* ``py-dunder``: each sink reached through ``vars(module)['name']``, ``module.__dict__['name']``
  or ``type(obj).__getattribute__(obj, 'name')`` in turn (the dict forms only on a name an
  ``import`` bound, which is a module), builtins through ``__builtins__`` read as a dict or as a
  module, whichever it is at run time.
* ``py-format-strings``: each string literal of 6+ characters rebuilt in turn with
  ``'%s%s' % (a, b)``, ``'{}{}'.format(a, b)``, ``str.join`` over a tuple of characters built by
  a list comprehension, and ``bytes((...)).decode('latin-1')`` (latin-1 text only).

JavaScript:

* ``js-aliasing``: bare ``eval(``/``fetch(`` calls and ``child_process`` methods (on a name
  bound to ``require('child_process')``, on that call itself, or destructured from it) called
  through an alias in an object, a ``Map`` or an array (``Array.of(f)[0]``, or ``const [_x] =
  [cp.execSync]`` right after a ``const`` holding the module), or through ``call``, ``apply``
  and ``bind``. An alias call of ``eval`` is an indirect eval (global scope): behaviour is kept
  for code that reads no local binding, as in ``js-lookup``.

Shell:

* ``sh-indirection``: ``curl``, ``wget``, ``base64``, ``sh``, ``bash``, ``eval`` as command
  words run in turn through ``${!ref}``, an array (``${_a[0]}${_a[1]}``), a ``command`` /
  ``builtin`` / ``env`` prefix, or a ``_r() { "$@"; }`` wrapper defined at the top; the first
  two only in scripts whose ``#!`` names bash, ``eval`` never through the wrapper (its ``$1``
  would be the wrapper's).
* ``sh-heredoc``: each top-level one-line command (not in a function, loop, conditional or
  group; no assignment, no state-changing builtin, no background ``&``, no call of a function
  of the script) moved into ``bash -s <<'EOF'`` (``sh -s`` under ``#!/bin/sh``); the variables
  the line reads are passed in the environment and ``"$@"`` as arguments. Known change: the
  moved command's standard input is the (spent) here-document.

Written by hand, for the reasons ``bench/scan_families.py`` gives.
"""

from __future__ import annotations

import ast
import re
import zlib
from typing import Final

from bench.scan_families import (
    _HEREDOC,
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
    _parents,
    _safe,
    _ShScan,
    _sig,
    _split_owner,
    _stmts,
    _Tok,
)

PY_LEAST: Final = 6
"""Shortest string literal ``py-format-strings`` rebuilds."""
_FRAME_BOUND: Final = frozenset({"eval", "exec"})


def _turn(source: str) -> int:
    """Where a family's turn of styles starts: set by the text, so that scripts with one sink
    each still meet every style across a corpus (and the same text always gets the same)."""
    return zlib.crc32(source.encode("utf-8", "surrogatepass"))


def _fresh(source: str, stem: str) -> str:
    """A name prefix that occurs nowhere in `source`."""
    while stem in source:
        stem += "x"
    return stem


def _module_path(module: _Module, dotted: str) -> tuple[str, str]:
    """For a module sink: (the module name ``__import__`` gets, the attribute path after it)."""
    owner, attr = _split_owner(dotted)
    root = owner.split(".")[0]
    full = module.bound[root]
    top, *below = full.split(".")
    rest = [*below, *owner.split(".")[1:], attr]
    return top, ".".join(rest)


# === Python: closure factories ==================================================================
@_safe
def py_closure_factory(source: str, name: str) -> dict[str, str]:
    """Each sink called through what a nested factory returns, or a ``functools.partial`` kept
    in a module dict (in turn); each factory right after the import it needs."""
    module = _Module(ast.parse(source))
    if "__import__" not in module.builtins:
        return {}  # the script binds __import__ itself
    sinks = module.sinks()
    if not sinks:
        return {}
    p = _fresh(source, "_cf")
    inserts: list[tuple[int, int, list[ast.stmt]]] = []
    partials = False
    turn = _turn(source)
    for index, (call, dotted) in enumerate(sinks):
        is_module = "." in dotted
        at = module.at[dotted.split(".")[0]] + 1 if is_module else module.preamble_end()
        top, path = _module_path(module, dotted) if is_module else ("builtins", dotted)
        style = (turn + index) % 3
        maker, held = f"{p}_mk{index}", f"{p}_f{index}"
        if style == 2:
            partials = True
            text = f"{p}_SINKS[{index}] = {p}_functools.partial({dotted})\n"
            call.func = _expr(f"{p}_SINKS[{index}]")
        elif dotted in _FRAME_BOUND:
            # bare: a builtin called from the caller runs in the caller's frame
            text = (
                f"def {maker}():\n    m = __import__({top!r})\n"
                f"    def pick():\n        return m.{path}\n    return pick()\n"
                f"{held} = {maker}()\n"
            )
            call.func = ast.Name(held, ast.Load())
        elif style == 0:
            text = (
                f"def {maker}():\n    m = __import__({top!r})\n"
                f"    return lambda *a, **k: m.{path}(*a, **k)\n{held} = {maker}()\n"
            )
            call.func = ast.Name(held, ast.Load())
        else:
            text = (
                f"def {maker}():\n    m = __import__({top!r})\n\n"
                f"    def inner(*a, **k):\n        return m.{path}(*a, **k)\n"
                f"    return inner\n{held} = {maker}()\n"
            )
            call.func = ast.Name(held, ast.Load())
        inserts.append((at, index + 1, _stmts(text)))
    if partials:
        head = f"import functools as {p}_functools\n{p}_SINKS = {{}}\n"
        inserts.append((module.preamble_end(), 0, _stmts(head)))
    module.insert(inserts)
    return _finish(module.tree, name, source)


# === Python: dunder lookups =====================================================================
_DUNDER_NEEDS: Final = frozenset({"vars", "type", "isinstance", "dict", "__builtins__"})


@_safe
def py_dunder(source: str, name: str) -> dict[str, str]:
    """Each sink reached through ``vars(m)[...]``, ``m.__dict__[...]`` or
    ``type(o).__getattribute__(o, ...)``; builtins through ``__builtins__`` (dict or module)."""
    module = _Module(ast.parse(source))
    if module._rebound() & _DUNDER_NEEDS:
        return {}
    sinks = module.sinks()
    if not sinks:
        return {}
    turns = {"builtin": _turn(source), "module": _turn(source)}
    for call, dotted in sinks:
        owner, attr = _split_owner(dotted)
        kind = "module" if owner else "builtin"
        style, turns[kind] = turns[kind] % 3, turns[kind] + 1
        if not owner:
            if style % 2:
                text = f"getattr(__builtins__, '__dict__', __builtins__)[{attr!r}]"
            else:
                text = (
                    "(__builtins__ if isinstance(__builtins__, dict) "
                    f"else vars(__builtins__))[{attr!r}]"
                )
        elif "." in owner or style == 2:
            # deeper owners may be any object: only the type's own lookup fits them all
            text = f"type({owner}).__getattribute__({owner}, {attr!r})"
        elif style == 0:
            text = f"vars({owner})[{attr!r}]"
        else:
            text = f"{owner}.__dict__[{attr!r}]"
        call.func = _expr(text)
    return _finish(module.tree, name, source)


# === Python: format strings =====================================================================
def _halves(text: str) -> tuple[str, str]:
    half = len(text) // 2
    return repr(text[:half]), repr(text[half:])


def _formatted(text: str, style: int, rebound: set[str]) -> str:
    a, b = _halves(text)
    if style == 2 and not rebound & {"str", "chr", "tuple"}:
        codes = ", ".join(str(ord(c)) for c in text)
        return f"str.join('', tuple([chr(c) for c in ({codes},)]))"
    if style == 3 and "bytes" not in rebound and all(ord(c) < 256 for c in text):
        codes = ", ".join(str(ord(c)) for c in text)
        return f"bytes(({codes},)).decode('latin-1')"
    if style % 2:
        return f"'{{}}{{}}'.format({a}, {b})"
    return f"'%s%s' % ({a}, {b})"


@_safe
def py_format_strings(source: str, name: str) -> dict[str, str]:
    """Each string literal of 6+ characters rebuilt with ``%``, ``str.format``, ``str.join`` over
    characters or ``bytes.decode('latin-1')``, in turn."""
    tree = ast.parse(source)
    parents = _parents(tree)
    literals = [
        node
        for node in _literals(tree, PY_LEAST)
        if not isinstance(parents.get(node), ast.pattern)  # mapping-pattern keys stay literal
    ]
    if not literals:
        return {}
    rebound = _Module(tree)._rebound()
    turn = _turn(source)
    for index, node in enumerate(literals):
        replacement = _expr(_formatted(node.value, (turn + index) % 4, rebound))
        parent = parents[node]
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, replacement)
            elif isinstance(value, list):
                setattr(parent, field, [replacement if v is node else v for v in value])
    return _finish(tree, name, source)


# === JavaScript: aliasing =======================================================================
_CHILD_PROCESS: Final = frozenset({"child_process", "node:child_process"})
_CP_METHODS: Final = frozenset(
    {"exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync", "fork"}
)
_JS_GLOBALS: Final = frozenset({"eval", "fetch"})
_NOT_A_CALL_AFTER: Final = frozenset(
    {"function", "class", "var", "let", "const", "get", "set", "static", "async", "new"}
)
_JS_DECLARES: Final = frozenset({"const", "let", "var", "function", "class"})


def _shadowed(toks: list[_Tok], names: set[str]) -> set[str]:
    """Which of `names` the script declares itself (then the styles using them are left out)."""
    return {
        t.text
        for k, t in enumerate(toks)
        if t.kind == "ident" and t.text in names and _is(_sig(toks, k - 1), "ident", *_JS_DECLARES)
    }


def _require_cp(toks: list[_Tok], k: int) -> int | None:
    """If ``require('child_process')`` starts at token `k`, the index of its ``)``."""
    if not _is(toks[k], "ident", "require") or _is(_sig(toks, k - 1), "punct", "."):
        return None
    paren, lit, close = _sig(toks, k + 1), _sig(toks, k + 2), _sig(toks, k + 3)
    if not (_is(paren, "punct", "(") and _is(lit, "str") and _is(close, "punct", ")")):
        return None
    units = _js_units(lit.text)
    return k + 3 if units is not None and _js_text(units) in _CHILD_PROCESS else None


class _JsCall:
    """A call to alias: callee tokens [first, last], its ``(`` at `paren`, `this` to keep."""

    __slots__ = ("first", "last", "paren", "this")

    def __init__(self, first: int, last: int, paren: int, this: str) -> None:
        self.first, self.last, self.paren, self.this = first, last, paren, this


def _js_calls(toks: list[_Tok], closers: dict[int, int]) -> tuple[list[_JsCall], dict[str, int]]:
    """The calls worth aliasing, and each ``const`` name holding the module -> its ``)``."""
    holders: dict[str, int] = {}  # const name -> index of the require's `)`
    loose: set[str] = set()  # bound by let/var, or declared twice: no hoisted alias
    plain: set[str] = set()  # names destructured from the module
    for k in range(len(toks)):
        close = _require_cp(toks, k)
        if close is None:
            continue
        eq, target, kw = _sig(toks, k - 1), _sig(toks, k - 2), _sig(toks, k - 3)
        if _is(eq, "punct", "=") and _is(target, "ident") and _is(kw, "ident", *_JS_DECLARES):
            if kw.text == "const" and target.text not in holders:
                holders[target.text] = close
            else:
                loose.add(target.text)
        elif _is(eq, "punct", "=") and _is(target, "punct", "}"):
            j = k - 3
            while j >= 0 and not _is(toks[j], "punct", "{"):
                tok = toks[j]
                after = _sig(toks, j + 1)
                if _is(tok, "ident") and _is(after, "punct", ",", "}"):
                    plain.add(tok.text)
                j -= 1
    for name in loose:
        holders.pop(name, None)
    calls: list[_JsCall] = []
    for k, tok in enumerate(toks):
        prev = _sig(toks, k - 1)
        if tok.kind != "ident" or _is(prev, "punct", ".") or _is(prev, "ident", *_NOT_A_CALL_AFTER):
            continue
        if tok.text in _JS_GLOBALS or tok.text in plain:
            paren, this = k + 1, "null"
        elif tok.text in holders or tok.text in loose:
            dot, method = _sig(toks, k + 1), _sig(toks, k + 2)
            if not (_is(dot, "punct", ".") and _is(method, "ident", *_CP_METHODS)):
                continue
            paren, this = k + 3, tok.text
        elif (close := _require_cp(toks, k)) is not None:
            dot, method = _sig(toks, close + 1), _sig(toks, close + 2)
            if not (_is(dot, "punct", ".") and _is(method, "ident", *_CP_METHODS)):
                continue
            paren, this = close + 3, "null"
        else:
            continue
        if not _is(_sig(toks, paren), "punct", "(") or paren not in closers:
            continue
        if _is(_sig(toks, closers[paren] + 1), "punct", "{"):
            continue  # a method definition `eval(x) {`, not a call
        calls.append(_JsCall(k, paren - 1, paren, this))
    return calls, holders


@_safe
def js_aliasing(source: str, name: str) -> dict[str, str]:
    """``eval``, ``fetch`` and ``child_process`` methods called through aliases in objects,
    ``Map``s and arrays, or through ``call``, ``apply`` and ``bind``, in turn."""
    toks = _js_tokens(source)
    closers = _closers(toks)
    calls, holders = _js_calls(toks, closers)
    if not calls:
        return {}
    shadowed = _shadowed(toks, {"Object", "Map", "Array"})
    prefix = _fresh(source, "_al")
    edits: list[tuple[int, int, str]] = []
    hoisted: dict[tuple[str, str], str] = {}  # (holder, method) -> alias name
    styles = [
        s
        for s, needs in enumerate(["Object", "Map", "", "", "", "Array", ""])
        if not (needs and needs in shadowed)
    ]
    turn = _turn(source)
    for index, call in enumerate(calls):
        callee = source[toks[call.first].start : toks[call.last].end]
        open_, close = toks[call.paren], toks[closers[call.paren]]
        empty = closers[call.paren] == call.paren + 1
        style = styles[(turn + index) % len(styles)]
        holder = toks[call.first].text
        if style == 6 and holder not in holders:
            style = 2
        if style == 0:
            edits.append((toks[call.first].start, open_.end, f"Object({{ run: {callee} }}).run("))
        elif style == 1:
            text = f"new Map([['run', {callee}]]).get('run')("
            edits.append((toks[call.first].start, open_.end, text))
        elif style == 2:
            glue = "" if empty else ", "
            edits.append((open_.start, open_.end, f".call({call.this}{glue}"))
        elif style == 3:
            edits.append((open_.start, open_.end, f".bind({call.this})("))
        elif style == 4:
            edits.append((open_.start, open_.end, f".apply({call.this}, ["))
            edits.append((close.start, close.end, "])"))
        elif style == 5:
            edits.append((toks[call.first].start, open_.end, f"Array.of({callee})[0]("))
        else:
            method = toks[call.last].text
            alias = hoisted.setdefault((holder, method), f"{prefix}{len(hoisted)}")
            edits.append((toks[call.first].start, toks[call.last].end, alias))
    for (holder, method), alias in hoisted.items():
        close = holders[holder]
        after = _sig(toks, close + 1)
        if _is(after, "punct", ";"):
            edits.append((after.end, after.end, f" const [{alias}] = [{holder}.{method}];"))
        elif after is None or (after.line_start and after.kind == "ident"):
            at = toks[close].end
            edits.append((at, at, f"; const [{alias}] = [{holder}.{method}];"))
        else:
            raise ValueError("no statement end after the require: cannot hoist an alias")
    return {name: _apply(source, edits)}


# === Shell: indirection =========================================================================
_SH_FUNCTION: Final = re.compile(
    r"^[ \t]*(?:function[ \t]+([\w.:-]+)|([\w.:-]+)[ \t]*\(\s*\))", re.M
)


def _sh_functions(src: str) -> set[str]:
    return {a or b for a, b in _SH_FUNCTION.findall(src)}


def _is_bash(src: str) -> bool:
    first = src.split("\n", 1)[0]
    return first.startswith("#!") and "bash" in first


def _sh_head(out: str, setup: str) -> str:
    """`setup` lines put right after the ``#!`` line (or first)."""
    if not out.startswith("#!"):
        return setup + out
    head = out.find("\n") + 1
    if head == 0:
        return out + "\n" + setup
    return out[:head] + setup + out[head:]


@_safe
def sh_indirection(source: str, name: str) -> dict[str, str]:
    """``curl``/``wget``/``base64``/``sh``/``bash``/``eval`` run through ``${!ref}``, an array,
    a ``command``/``builtin``/``env`` prefix or a wrapper function, in turn."""
    scan = _ShScan(source)
    own = _sh_functions(source)
    commands = [(s, e) for s, e in scan.commands if source[s:e] not in own]
    if not commands:
        return {}
    bash = _is_bash(source)
    styles = [0, 1, 2, 3] if bash else [2, 3]
    p = _fresh(source, "_ix")
    setup: list[str] = []
    wrapper = False
    prefixed = 0
    edits: list[tuple[int, int, str]] = []
    turn = _turn(source)
    for index, (start, end) in enumerate(commands):
        word = source[start:end]
        style = styles[(turn + index) % len(styles)]
        if style == 3 and word == "eval":
            style = 2
        if style == 0:
            setup.append(f"{p}v{index}={word}; {p}r{index}={p}v{index}")
            text = f"${{!{p}r{index}}}"
        elif style == 1:
            half = len(word) // 2
            setup.append(f"{p}a{index}=({word[:half]} {word[half:]})")
            text = f"${{{p}a{index}[0]}}${{{p}a{index}[1]}}"
        elif style == 2:
            if word == "eval":
                text = f"{'builtin' if bash and prefixed % 2 else 'command'} eval"
            else:
                text = f"{'env' if prefixed % 2 else 'command'} {word}"
            prefixed += 1
        else:
            wrapper = True
            text = f"{p}run {word}"
        edits.append((start, end, text))
    out = _apply(source, edits)
    lines = ([f'{p}run() {{ "$@"; }}'] if wrapper else []) + setup
    return {name: _sh_head(out, "".join(f"{line}\n" for line in lines))}


# === Shell: here-documents ======================================================================
_SH_OPENERS: Final = {"if": "fi", "for": "done", "while": "done", "until": "done"}
_SH_OPENERS_MORE: Final = {"select": "done", "case": "esac", "{": "}", "(": ")"}
_SH_RESERVED: Final = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac"}
    | {"select", "function", "in", "{", "}", "(", ")", "[[", "]]", "!", "time", "coproc"}
)
_SH_STATEFUL: Final = frozenset(
    {"cd", "pushd", "popd", "export", "unset", "set", "shopt", "exit", "return", "source", "."}
    | {"read", "readarray", "mapfile", "shift", "trap", "alias", "unalias", "declare"}
    | {"typeset", "local", "readonly", "eval", "exec", "wait", "let", "ulimit", "umask", "hash"}
    | {"enable", "getopts", "jobs", "fg", "bg", "disown", "builtin", "command", "printf"}
    | {"break", "continue"}
)
"""Builtins whose effect lives in the shell that runs them (``printf -v``, ``command cd``)."""
_SH_DYNAMIC: Final = frozenset(
    {"RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "BASH_SOURCE", "FUNCNAME", "SRANDOM"}
    | {"BASH_LINENO", "EPOCHSECONDS", "EPOCHREALTIME", "BASH_COMMAND", "PIPESTATUS", "SHLVL"}
    | {"BASH_SUBSHELL", "OPTIND", "OPTARG", "HISTCMD"}
)
_SH_VAR: Final = re.compile(r"\$\{?#?([A-Za-z_]\w*)")
_SH_POSITIONAL: Final = re.compile(r"\$(?:[1-9@*#]|\{[1-9@*#])")
_SH_SPECIAL: Final = re.compile(r"\$(?:[0$!?_-]|\{[0$!?_-]|\{!)|\$\{\w+\[")
_SH_BACKGROUND: Final = re.compile(r"(?<![&>|])&(?![&>])")


def _unquoted(line: str) -> str | None:
    """`line` with quoted text blanked to ``_`` (same length, so positions match) and any comment
    cut off; None if a quote stays open."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            out.append("\\_")
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                return None
            out.append("'" + "_" * (end - i - 1) + "'")
            i = end + 1
        elif c == '"':
            j = i + 1
            while j < n and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            if j >= n:
                return None
            out.append('"' + "_" * (j - i - 1) + '"')
            i = j + 1
        elif c == "#" and (i == 0 or line[i - 1] in " \t;|&"):
            break
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _words(bare: str) -> list[str]:
    return re.findall(r"[^\s;|&<>()]+|[()]", bare)


def _movable(line: str, bare: str, own: set[str]) -> bool:
    """A one-line top-level command that runs the same in a child shell."""
    if not bare.strip() or "<<" in bare or ";" in bare or "`" in line or "\\" in line:
        return False
    if _SH_BACKGROUND.search(bare) or bare.rstrip().endswith(("|", "&&", "||")):
        return False
    if _SH_SPECIAL.search(line) or "$(" in line:
        return False
    words = _words(bare)
    if any(w in own for w in words) or any(w in _SH_RESERVED for w in words):
        return False
    for segment in re.split(r"\|\|?|&&", bare):
        first = _words(segment)
        if not first or "=" in first[0] or first[0] in _SH_STATEFUL or first[0].startswith("$"):
            return False
    names = set(_SH_VAR.findall(line))
    return not names & _SH_DYNAMIC


_SH_STARTS_AGAIN: Final = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!"})
_SH_SEPARATORS: Final = frozenset({";", ";;", "|", "||", "&", "&&", "(", ")"})
_SH_CLOSERS: Final = frozenset({"fi", "done", "esac", "}"})


def _depth_change(bare: str, stack: list[str]) -> None:
    """Push or pop the compound commands that `bare` (quotes blanked) opens or closes; reserved
    words count at a command's start only (``echo done`` closes nothing)."""
    start = True
    for token in re.findall(r";;|&&|\|\||[;|&()]|[^\s;|&()]+", bare):
        top = stack[-1] if stack else ""
        if token == "(":
            if top != "esac":
                stack.append(")")
        elif token == ")":
            if top == ")":
                stack.pop()
        elif start and token in {**_SH_OPENERS, **_SH_OPENERS_MORE}:
            stack.append({**_SH_OPENERS, **_SH_OPENERS_MORE}[token])
        elif start and token in _SH_CLOSERS and token == top:
            stack.pop()
        start = token in _SH_SEPARATORS or token in _SH_STARTS_AGAIN or token in ("{", "}")


@_safe
def sh_heredoc(source: str, name: str) -> dict[str, str]:
    """Each top-level one-line simple command moved into a here-document fed to ``bash -s``
    (``sh -s`` under a ``#!`` naming sh), its variables passed in the environment."""
    _ShScan(source)  # a script this scanner cannot read is left alone
    if "expand_aliases" in source:
        return {}
    own = _sh_functions(source)
    first = source.split("\n", 1)[0]
    shell = "bash" if not first.startswith("#!") or "bash" in first else "sh"
    if shell == "bash" and "pipefail" in source:
        shell = "bash -o pipefail"
    lines = source.split("\n")
    delimiter = "EOF"
    while any(line.strip() == delimiter for line in lines):
        delimiter += "_"
    stack: list[str] = []
    pending: list[tuple[str, bool]] = []
    carry = ""  # an unfinished line's text, joined to the next
    out: list[str] = []
    moved = 0
    for index, line in enumerate(lines):
        if pending:
            out.append(line)
            word, dash = pending[0]
            if (line.lstrip("\t") if dash else line) == word:
                pending.pop(0)
            continue
        if index == 0 and line.startswith("#!"):
            out.append(line)
            continue
        whole = carry + line
        bare = _unquoted(whole)
        if bare is None or whole.endswith("\\") or bare.rstrip().endswith(("|", "&&", "||")):
            carry = whole + "\n"
            out.append(line)
            continue
        carry = ""
        pending = [
            (m.group(3), m.group(1) == "-")
            for m in _HEREDOC.finditer(whole)
            if bare.startswith("<<", m.start())  # not inside quotes or a comment
        ]
        top_level = not stack and whole == line
        depth = len(stack)
        _depth_change(bare, stack)
        if top_level and len(stack) == depth and _movable(line, bare, own):
            names = sorted(set(_SH_VAR.findall(line)))
            env = "".join(f'{v}="${{{v}-}}" ' for v in names)
            args = ' -- "$@"' if _SH_POSITIONAL.search(line) else ""
            indent = line[: len(line) - len(line.lstrip())]
            s = "-s" if args or moved % 2 == 0 or shell == "sh" else ""
            command = " ".join(part for part in (shell, s) if part)
            out += [f"{indent}{env}{command}{args} <<'{delimiter}'", line.strip(), delimiter]
            moved += 1
        else:
            out.append(line)
    if not moved or pending or carry or stack:
        return {}
    return {name: "\n".join(out)}


FAMILIES_3: Final[dict[str, tuple[Transform, str]]] = {
    "py-closure-factory": (py_closure_factory, ".py"),
    "py-dunder": (py_dunder, ".py"),
    "py-format-strings": (py_format_strings, ".py"),
    "js-aliasing": (js_aliasing, ".js"),
    "sh-indirection": (sh_indirection, ".sh"),
    "sh-heredoc": (sh_heredoc, ".sh"),
}
HELD_APART_3: Final = tuple(FAMILIES_3)
"""All six are measured only: nobody tunes a rule on them."""
