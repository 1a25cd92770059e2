"""What the JavaScript flow rules know of a value (:class:`Value`), and what sources, sinks
and dangerous names are, said once for ``_parser`` and ``_calls``.

A value may fold to a known string (constant pieces joined, decoded, reversed...), carry
taints (where its data came from), name something (``eval``, ``mod:child_process``,
``child_process.exec``), hold an array's items or an object's properties, or be a function.
Folding is bounded: a folded string is cut at :data:`MAX_TEXT` characters.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field, replace
from typing import Final
from urllib.parse import unquote

MAX_TEXT: Final = 4_096
MAX_ITEMS: Final = 4_000
MAX_SHAPE: Final = 512

FETCHED: Final = "fetched"
DECODED: Final = "decoded"
BUILT: Final = "built"  # pieces joined or transformed at run time
ENV: Final = "env"
HOME: Final = "home"  # a path under the home folder
HOME_FILE: Final = "home-file"  # data read from a file under the home folder
PAYLOAD: Final = frozenset({FETCHED, DECODED})


@dataclass(slots=True)
class Function:
    """A function literal or declaration: its parameters and the tokens of its body."""

    name: str
    params: list[str]
    body: tuple[int, int]  # token range [start, end)
    expression: bool  # an arrow function whose body is an expression
    owner: object = None  # the token list the body indexes (a template's ``${}`` has its own)
    returns: Value | None = None
    defaults: dict[str, tuple[int, int]] | None = None  # a parameter's default: token range


@dataclass(slots=True)
class Value:
    """What is known of one value."""

    text: str | None = None
    taint: frozenset[str] = frozenset()
    ref: str | None = None
    number: float | None = None
    items: list[Value] | None = None
    props: dict[str, Value] | None = None
    function: Function | None = None
    name: str | None = None  # the variable it was read from
    regex: str | None = None
    pieces: int = 0  # how many string pieces built it (0: a literal or unknown)
    prefix: str = ""  # how it starts when only that is known ('data:' + payload)
    shape: str | None = None  # a path or string partly known: unknown pieces as ``*``

    def tainted(self, *kinds: str) -> Value:
        return replace(self, taint=self.taint | frozenset(kinds))

    def all_taint(self) -> frozenset[str]:
        """Its taints and those of its items and properties (one level)."""
        taint = self.taint
        for inner in (self.items or [])[:MAX_ITEMS]:
            taint |= inner.taint
        for inner in (self.props or {}).values():
            taint |= inner.taint
        return taint


UNKNOWN: Final = Value()


def join_taint(*values: Value) -> frozenset[str]:
    taint: frozenset[str] = frozenset()
    for value in values:
        taint |= value.taint
    return taint


def shape_of(value: Value) -> str:
    """A value as a path pattern: its text, its known shape, or ``*``."""
    text = text_of(value)
    return text if text is not None else value.shape or "*"


def joined_shape(values: list[Value], separator: str) -> str | None:
    """The shape of pieces joined, when one of them is known at all (cut at 512)."""
    shapes = [shape_of(v) for v in values[:64]]
    if all(s == "*" for s in shapes):
        return None
    return separator.join(shapes)[:MAX_SHAPE]


def text_of(value: Value) -> str | None:
    """The string a value folds to, numbers included."""
    if value.text is not None:
        return value.text
    if value.number is not None:
        number = value.number
        return str(int(number)) if number == int(number) else str(number)
    return None


def collapsed(path: str) -> str:
    """A path with its ``.`` and ``name/..`` steps resolved, leading climbs kept (``./../x``
    is ``../x``; the package's folder climbed out of, ``@pkg/scripts/../../.npmrc``, is
    ``../.npmrc``: outside); ``*`` (a piece not known) is never climbed over."""
    if "." not in path:
        return path
    kept: list[str] = []
    for step in path.split("/")[:256]:
        if step == "." and kept:
            continue
        if step == ".." and kept and kept[-1] not in ("..", "*", "", "."):
            popped = kept.pop()
            kept = [".."] if popped == "@pkg" else kept or ["."]
            continue
        if step == ".." and kept == ["."]:
            kept = []
        kept.append(step)
    return "/".join(kept)


def cut(text: str) -> str:
    return text[:MAX_TEXT]


def shown(text: str, limit: int = 80) -> str:
    """A folded string as a message shows it: one line, quoted, cut."""
    flat = " ".join(text.split())
    return repr(flat[:limit] + ("…" if len(flat) > limit else ""))


# --- decoders ---------------------------------------------------------------------------------


def decode_bytes(text: str, encoding: str) -> str | None:
    """`text` decoded from base64 or hex, read as UTF-8; None when it is not that."""
    try:
        if encoding in ("base64", "base64url"):
            padded = text.strip() + "=" * (-len(text.strip()) % 4)
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"))
        elif encoding == "hex":
            raw = bytes.fromhex(text.strip())
        else:
            return text
    except (binascii.Error, ValueError):
        return None
    return cut(raw.decode("utf-8", "replace"))


def percent_decoded(text: str) -> str:
    return cut(unquote(text.replace("%u", "\\u")))


def from_char_codes(values: list[Value]) -> str | None:
    codes: list[int] = []
    for value in values[:MAX_ITEMS]:
        if value.number is None or not 0 <= value.number <= 0x10FFFF:
            return None
        codes.append(int(value.number))
    return "".join(map(chr, codes))


_SAFE_REGEX: Final = re.compile(
    r"(?:[\w\s,.:;'\"!@#%&=~<>/-]|\\.|\[[^\]\\]{1,40}\]|\(\?[=!](?:\[[^\]\\]{1,40}\]|[\w.]{1,20})\))+"
    r"[+*]?"
)


def replace_text(text: str, pattern: Value, replacement: str) -> str | None:
    """``text.replace(pattern, replacement)`` when the pattern is a string or a regex too
    simple to backtrack (no groups but a lookahead of one class or word, no alternation, at most
    one trailing quantifier)."""
    if pattern.text is not None:
        return cut(text.replace(pattern.text, replacement, 1))
    if pattern.regex is None:
        return None
    body, _, flags = pattern.regex[1:].rpartition("/")
    if not body or len(body) > 200 or not _SAFE_REGEX.fullmatch(body):
        return None
    try:
        compiled = re.compile(body, re.IGNORECASE if "i" in flags else 0)
    except re.error:
        return None
    return cut(compiled.sub(replacement.replace("\\", "\\\\"), text, 0 if "g" in flags else 1))


# --- what the rules know ------------------------------------------------------------------------

GLOBALS: Final = frozenset({"global", "globalThis", "window", "self"})
NETWORK_MODULES: Final = frozenset(
    {"http", "https", "http2", "net", "tls", "dgram", "axios", "node-fetch", "got", "undici",
     "ws", "request", "superagent", "needle", "ky", "socket.io-client", "cross-fetch",
     "isomorphic-fetch", "phin", "bent", "make-fetch-happen"}
)  # fmt: skip
NETWORK_CALLABLES: Final = frozenset({"fetch", "XMLHttpRequest", "WebSocket", "EventSource"})
DECODERS: Final = frozenset(
    {"atob", "unescape", "decodeURIComponent", "decodeURI", "String.fromCharCode",
     "String.fromCodePoint"}
)  # fmt: skip
ZLIB: Final = re.compile(r"zlib\.(?:inflate|gunzip|unzip|brotliDecompress|inflateRaw)(?:Sync)?")
MODULE_COMPILE: Final = "Module._compile"
"""A module's private compile: runs a string as a module's code without naming eval."""
CODE_SINKS: Final = frozenset(
    {"eval", "Function", "AsyncFunction", "vm.runInThisContext", "vm.runInNewContext",
     "vm.runInContext", "vm.compileFunction", "vm.Script", "vm.SourceTextModule",
     "setTimeout", "setInterval", MODULE_COMPILE}
)  # fmt: skip
SHELL_FUNCTIONS: Final = frozenset({"child_process.exec", "child_process.execSync"})
SPAWN_FUNCTIONS: Final = frozenset(
    {"child_process.spawn", "child_process.spawnSync", "child_process.execFile",
     "child_process.execFileSync", "child_process.fork"}
)  # fmt: skip
LOADERS: Final = frozenset({"require", "import", "module.require", "process.dlopen"})
SHELLS: Final = re.compile(
    r"(?:.*[/\\])?(?:(?:ba|z|da|k|c|tc|fi|a)?sh|cmd(?:\.exe)?|powershell(?:\.exe)?|pwsh"
    r"|python[0-9.]*|node|perl|ruby|php)",
    re.IGNORECASE,
)
SHELL_FLAGS: Final = frozenset({"-c", "/c", "-e", "-command", "-Command", "--eval", "-p"})
DANGEROUS_NAMES: Final = frozenset(
    {"eval", "Function", "exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync",
     "fork", "binding", "_linkedBinding", "dlopen", "mainModule", "require", "constructor",
     "runInThisContext", "runInNewContext", "runInContext", "compileFunction", "Script",
     "_load", "_compile", "child_process", "setTimeout", "setInterval", "import"}
)  # fmt: skip
DANGEROUS_BASES: Final = frozenset(
    {*GLOBALS, "process", "module", "require", "mod:child_process", "mod:vm", "mod:module",
     "process.mainModule"}
)  # fmt: skip
POWERFUL_MODULES: Final = frozenset(
    {"child_process", "vm", "fs", "net", "http", "https", "http2", "tls", "dgram", "os",
     "module", "worker_threads", "v8", "process", "cluster", "inspector", "zlib"}
)  # fmt: skip
"""Modules whose name, built from pieces, hides what a script can do."""
DESERIALIZERS: Final = frozenset(
    {"node-serialize.unserialize", "serialize-to-js.deserialize", "funcster.deepDeserialize",
     "cryo.parse", "v8.deserialize"}
)  # fmt: skip
YAML_LOADS: Final = frozenset({"js-yaml.load", "js-yaml.loadAll", "yaml.load"})
DECRYPTERS: Final = frozenset(
    {"crypto.createDecipheriv", "crypto.createDecipher", "crypto.privateDecrypt",
     "crypto.publicDecrypt"}
)  # fmt: skip
"""Decrypted data is decoded data: what it becomes was hidden in the file."""
FILE_MODULES: Final = frozenset({"fs", "fs.promises", "fs/promises", "fs-extra"})
FILE_READS: Final = frozenset(
    {"readFileSync", "readFile", "readdirSync", "readdir", "createReadStream", "openSync",
     "open", "opendirSync", "opendir", "readJson", "readJsonSync"}
)  # fmt: skip
FILE_WRITES: Final = frozenset(
    {"writeFileSync", "writeFile", "appendFileSync", "appendFile", "createWriteStream",
     "outputFile", "outputFileSync", "writeJson", "writeJsonSync", "outputJson",
     "outputJsonSync"}
)  # fmt: skip
FILE_COPIES: Final = frozenset(
    {"copyFileSync", "copyFile", "renameSync", "rename", "symlinkSync", "symlink", "cpSync",
     "cp", "linkSync", "link", "copy", "copySync", "move", "moveSync"}
)  # fmt: skip
"""File calls whose second argument is the path written."""
_UNSAFE_YAML: Final = re.compile(r"FULL|js-types|JS_TYPES|unsafe", re.IGNORECASE)


def unsafe_yaml_options(options: Value) -> bool:
    schema = (options.props or {}).get("schema")
    if schema is None:
        return False
    return bool(_UNSAFE_YAML.search(schema.ref or "") or _UNSAFE_YAML.search(schema.text or ""))


def module_ref(name: str) -> str:
    """The ref of a module by its specifier: ``node:fs`` and ``fs`` alike."""
    parts = name.removeprefix("node:").split("/")
    return "mod:" + "/".join(parts[:2] if name.startswith("@") else parts[:1])


_OWN_MODULES: Final = frozenset({"mod:.", "mod:.."})  # require('./lib/x'), require('../x')
_VM_ONLY: Final = frozenset(
    {"runInThisContext", "runInNewContext", "runInContext", "compileFunction"}
)
"""Methods only ``vm`` has: called on one of the skill's own modules, that module hands out vm
(``module.exports = require('v' + 'm')``), since the scan reads one file at a time."""
_OBJECTS: Final = frozenset({"Buffer", "String", "process", "Reflect", "JSON", "Object", "Array"})
_MEMBER_REFS: Final = {
    ("process", "mainModule"): "process.mainModule",
    ("process.mainModule", "require"): "require",
    ("module", "require"): "require",
    ("module", "constructor"): "mod:module",
    ("mod:module", "_load"): "require",
    ("mod:module", "createRequire"): "module.createRequire",
    ("ctor", "constructor"): "Function",
    ("Function", "constructor"): "Function",
    ("Function.prototype", "constructor"): "Function",
    ("mod:module", "Module"): "mod:module",
    ("mod:module", "prototype"): "module.instance",
    ("mod:module", "_compile"): MODULE_COMPILE,
    ("module", "_compile"): MODULE_COMPILE,
    ("module.instance", "_compile"): MODULE_COMPILE,
    ("mod:crypto", "webcrypto"): "mod:crypto",
}


def member_ref(base: str | None, name: str) -> str | None:
    """The ref of ``base.name``: a module's member, a global's, ``process.binding``..."""
    if base is None:
        return "ctor" if name == "constructor" else None
    known = _MEMBER_REFS.get((base, name))
    if known is not None:
        return known
    if base in GLOBALS:
        return name
    if base in _OWN_MODULES and name in _VM_ONLY:  # a skill module that re-exports vm
        return f"vm.{name}"
    if base.startswith("mod:"):
        return f"{base[4:]}.{name}"
    if base in _OBJECTS or (base.count(".") == 1 and base.split(".")[0] == "fs"):
        return f"{base}.{name}"
    return "ctor" if name == "constructor" else None


def home_path(value: Value) -> bool:
    """A known path under the home folder."""
    return HOME in value.taint and value.text is not None


def riskier(first: Value, second: Value) -> Value:
    """Which of two values a path may be is judged by (either branch of ``c ? a : b``, of
    ``a || b``, of an if/else assignment may run): one under the home folder, else the first
    known."""
    if home_path(second) and not home_path(first):
        return second
    return first if first.text is not None else second


def with_text(text: str, *, taint: frozenset[str] = frozenset(), pieces: int = 1) -> Value:
    return Value(text=cut(text), taint=taint, pieces=pieces)


def field_value(items: list[Value] | None, index: Value) -> Value | None:
    if items is None or index.number is None:
        return None
    position = int(index.number)
    return items[position] if 0 <= position < len(items) else None


@dataclass(slots=True)
class Budget:
    """Work left for the flow over one file: re-walks of function bodies at call sites."""

    tokens_left: int
    depth: int = 0
    active: set[tuple[int, int]] = field(default_factory=set)  # bodies walked now (owner, start)
