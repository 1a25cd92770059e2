"""What a source and a sink are for the Python rules, in one place.

A **source** makes a value suspect: decoded data (base64/hex/zlib/marshal decoders, codecs
with rot13 and friends, a codec the script registers itself (a name ``codecs.lookup`` does
not know, in a module calling ``codecs.register``), a chr-join, a constant read backwards)
or fetched data (a network
read): :func:`call_source` and :func:`reversed_slice`; the taint (``_taint``) follows them
through names and function returns. A **sink** is where such a value, or the environment,
must not go: code execution (:func:`is_exec_sink`; :data:`CODE_RUNNERS`, which run a string
of code as ``exec`` does), processes (:func:`is_process_sink`),
file writes (:data:`OPEN_CALLS`, :data:`WRITE_METHODS`, :data:`COPY_CALLS`) and what
serialises, logs or sends (:data:`ENV_SINKS`). Network use (:data:`NETWORK_MODULES`,
:data:`NETWORK_CALLS`) is both: a read is a source, a send a sink.

Read by the taint and the rule families (``_execution``, ``_processes``, ``_files``,
``_network``, ``_environment``).
"""

from __future__ import annotations

import ast
import codecs
from typing import Final

from skillweave.skills.scan._python._values import Values

__all__ = [
    "CODE_RUNNERS",
    "COPY_CALLS",
    "ENV_SINKS",
    "NETWORK_CALLS",
    "NETWORK_MODULES",
    "OPEN_CALLS",
    "SENSITIVE_OWNERS",
    "WRITE_METHODS",
    "call_source",
    "credential_store",
    "dangerous",
    "deserialiser",
    "is_exec_sink",
    "is_process_sink",
    "last_name",
    "maps_chr",
    "reversed_slice",
    "runner_code",
    "write_mode",
]

# --- sources ---------------------------------------------------------------------------------

NETWORK_MODULES: Final = frozenset(
    {
        "requests", "httpx", "aiohttp", "urllib.request", "urllib3", "http.client", "socket",
        "ftplib", "smtplib", "telnetlib", "poplib", "imaplib", "nntplib", "xmlrpc.client",
        "websocket", "websockets", "paramiko", "pycurl", "grpc", "asyncssh", "httplib2",
        "treq", "tornado.httpclient", "boto3", "botocore", "openai", "anthropic", "slack_sdk",
        "google.cloud", "googleapiclient", "dns.resolver", "scapy", "ssl", "mechanize",
    }
)  # fmt: skip
NETWORK_CALLS: Final = frozenset(
    {"urlopen", "urlretrieve", "create_connection", "open_connection", "getaddrinfo"}
)
_DECODERS: Final = frozenset(
    {
        "b64decode", "b32decode", "b16decode", "a85decode", "b85decode", "decodebytes",
        "standard_b64decode", "urlsafe_b64decode", "unhexlify", "a2b_base64", "a2b_hex",
        "fromhex", "decompress", "decompressobj", "loads", "load",
    }
)  # fmt: skip
_DECODER_MODULES: Final = frozenset(
    {"base64", "binascii", "codecs", "zlib", "gzip", "bz2", "lzma", "marshal", "bytes", "str"}
)
_TEXT_CODECS: Final = frozenset(
    {
        "rot13", "rot_13", "rot-13", "hex", "hex_codec", "base64", "base64_codec", "zlib",
        "zlib_codec", "bz2", "bz2_codec", "uu", "uu_codec", "quopri", "quopri_codec",
        "unicode_escape", "raw_unicode_escape",
    }
)  # fmt: skip
_ROT13: Final = frozenset({"rot13", "rot_13", "rot-13"})
_FETCH_ATTRIBUTES: Final = frozenset({"text", "content", "read", "recv", "recv_into", "json"})

# --- sinks -----------------------------------------------------------------------------------

_EXEC_NAMES: Final = frozenset({"exec", "eval", "compile", "execfile"})
_EXEC_SINKS: Final = _EXEC_NAMES | {f"builtins.{name}" for name in _EXEC_NAMES}
CODE_RUNNERS: Final = frozenset(
    {
        "timeit.timeit", "timeit.repeat", "timeit.Timer", "cProfile.run", "cProfile.runctx",
        "profile.run", "profile.runctx", "pdb.run", "pdb.runeval", "pdb.runctx",
    }
)  # fmt: skip
"""Functions that run a string of code they are handed (``timeit.timeit(stmt)``) as
``exec`` does, though they are mostly given callables or constants."""
_RUNNER_CODE: Final = frozenset({"stmt", "setup", "statement", "expression", "cmd"})
_SUBPROCESS: Final = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
)
_PROCESS_CALLS: Final = (
    "os.system", "os.popen", "pty.spawn", "os.execv", "os.execvp", "os.spawnv",
    "os.spawnvp", "os.execl", "os.execlp", "asyncio.create_subprocess_exec",
    "asyncio.create_subprocess_shell",
)  # fmt: skip
_DESERIALISERS: Final = frozenset(
    {
        "pickle.loads", "pickle.load", "pickle.Unpickler", "_pickle.loads", "_pickle.load",
        "cPickle.loads", "cPickle.load", "dill.loads", "dill.load", "cloudpickle.loads",
        "cloudpickle.load", "marshal.loads", "marshal.load", "shelve.open", "yaml.unsafe_load",
        "yaml.unsafe_load_all", "yaml.full_load", "jsonpickle.decode", "torch.load",
        "joblib.load", "pandas.read_pickle", "numpy.load", "_pickle.Unpickler",
        "cPickle.Unpickler", "dill.Unpickler", "jsonpickle.loads", "jsonpickle.unpickler.decode",
        "cloudpickle.Unpickler",
    }
)  # fmt: skip
_SAFE_YAML_LOADERS: Final = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader"})
_IMPORTERS: Final = frozenset(
    {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
)
_KEYCHAIN_ACTIONS: Final = frozenset(
    {"find-generic-password", "find-internet-password", "dump-keychain", "export"}
)
SENSITIVE_OWNERS: Final = frozenset(
    {
        "builtins", "os", "posix", "nt", "subprocess", "importlib", "pickle", "_pickle",
        "marshal", "ctypes", "pty", "dill", "shutil", "commands", "sys.modules",
    }
)  # fmt: skip
"""Modules whose callables, looked up by a name not known, may be any dangerous one."""
ENV_SINKS: Final = frozenset(
    {
        "dumps", "dump", "str", "repr", "print", "write", "writelines", "b64encode",
        "urlencode", "post", "put", "patch", "request", "urlopen", "Request", "send",
        "sendall", "sendto", "format", "encode", "info", "warning", "debug", "error",
    }
)  # fmt: skip
"""Calls that serialise, log or send their arguments: the environment must not reach them."""
WRITE_METHODS: Final = frozenset({"write_text", "write_bytes", "touch", "symlink_to",
                                  "hardlink_to"})  # fmt: skip
COPY_CALLS: Final = frozenset(
    {
        "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move",
        "os.rename", "os.replace", "os.symlink", "os.link", "os.renames",
    }
)  # fmt: skip
OPEN_CALLS: Final = frozenset({"open", "io.open", "codecs.open", "builtins.open"})


def last_name(call: ast.Call, name: str) -> str:
    """The called name's last part, also for a call on a value (``"".join``)."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return name.rsplit(".", 1)[-1]


def is_exec_sink(name: str) -> bool:
    """Whether the callee `name` runs code it is given (``exec``, ``eval``...)."""
    return name in _EXEC_SINKS


def runner_code(call: ast.Call) -> list[ast.expr]:
    """The strings of code a call of a :data:`CODE_RUNNERS` function runs: its first
    arguments (``stmt`` and ``setup`` of ``timeit``) and those keywords."""
    return [*call.args[:2], *(k.value for k in call.keywords if k.arg in _RUNNER_CODE)]


def is_process_sink(name: str, last: str) -> bool:
    """Whether the callee `name` (last part `last`) starts a process."""
    return (name.startswith("subprocess.") and last in _SUBPROCESS) or name in _PROCESS_CALLS


def deserialiser(call: ast.Call, name: str) -> bool:
    """Whether `call` of `name` builds objects from bytes in a way that can run code
    (``pickle.loads``, ``yaml.load`` without a safe loader...)."""
    if name in _DESERIALISERS:
        if name == "torch.load":  # weights_only=True refuses anything but tensors
            return not _keyword_true(call, "weights_only")
        return not (name == "numpy.load" and not _keyword_true(call, "allow_pickle"))
    if name in ("yaml.load", "yaml.load_all"):
        loader = next((k.value for k in call.keywords if k.arg == "Loader"), None)
        if loader is None and len(call.args) > 1:
            loader = call.args[1]
        last = loader.attr if isinstance(loader, ast.Attribute) else getattr(loader, "id", None)
        return last not in _SAFE_YAML_LOADERS
    return False


def dangerous(name: str) -> str | None:
    """What a callee named `name` does that makes looking it up dynamically an attack:
    "runs code", "starts processes", "deserialises", "imports modules", "calls native code";
    None for anything else."""
    last = name.rsplit(".", 1)[-1]
    if is_exec_sink(name) or name in CODE_RUNNERS or name in ("types.FunctionType",
                                                               "types.CodeType"):  # fmt: skip
        return "runs code"
    if name in _IMPORTERS:
        return "imports modules"
    if is_process_sink(name, last) or name.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
        return "starts processes"
    if name in _DESERIALISERS or name in ("yaml.load", "yaml.load_all"):
        return "deserialises"
    if name.startswith("ctypes.") or name == "ctypes":
        return "calls native code"
    return None


def _keyword_true(call: ast.Call, keyword: str) -> bool:
    value = next((k.value for k in call.keywords if k.arg == keyword), None)
    return not (value is None or (isinstance(value, ast.Constant) and not value.value))


def call_source(call: ast.Call, values: Values) -> str | None:
    """What source of decoded or fetched data `call` is (``base64.b64decode``, ``a network
    read``...); None when it is none."""
    name = values.qualname(call.func) or ""
    last = last_name(call, name)
    module = name.split(".", 1)[0]
    if last in ("loads", "load"):
        if module in ("marshal", "pickle"):
            return name
    elif last in _DECODERS and module in _DECODER_MODULES:
        return name
    if last in ("decode", "encode"):
        codecs = {values.approx(a) for a in call.args[:2]}
        codecs.update(values.approx(k.value) for k in call.keywords if k.arg == "encoding")
        found = codecs & (_TEXT_CODECS if last == "decode" else _ROT13)
        if found:
            return f"a {min(found)} decode"
    if values.index.registers_codecs and (codec := _custom_codec(call, name, last, values)):
        return f"a decode with the codec {codec!r} registered at run time"
    if name in ("bytes.fromhex", "bytearray.fromhex") or (
        last == "fromhex" and isinstance(call.func, ast.Attribute)
    ):
        return "bytes.fromhex"
    if last == "join" and call.args and maps_chr(call.args[0], values):
        return "a chr-join"
    if name in ("bytes", "bytearray") and len(call.args) == 1 and _codes(call.args[0], values):
        if _xors(call.args[0]):
            return f"an XOR with a constant key ({name} of a comprehension)"
        return f"{name} from character codes"
    if _fetches(call, name, values):
        return "a network read"
    return None


def _custom_codec(call: ast.Call, name: str, last: str, values: Values) -> str | None:
    """The codec `call` decodes with (``codecs.decode(x, "name")``, ``x.decode("name")``,
    ``str(x, "name")``) when Python does not know it: one the script registers itself."""
    keyword = next((k.value for k in call.keywords if k.arg == "encoding"), None)
    if name in ("codecs.decode", "str") or (last == "decode" and name.startswith("codecs.")):
        node = call.args[1] if len(call.args) > 1 else keyword
    elif last == "decode" and isinstance(call.func, ast.Attribute):
        node = call.args[0] if call.args else keyword
    else:
        return None
    codec = values.folder.text(node) if node is not None else None
    if not codec or len(codec) > 64:
        return None
    try:
        codecs.lookup(codec)
    except LookupError:
        return codec
    return None


def _fetches(call: ast.Call, name: str, values: Values) -> bool:
    last = name.rsplit(".", 1)[-1]
    module = name.split(".", 1)[0]
    if last in NETWORK_CALLS or module in ("requests", "httpx", "aiohttp", "urllib3"):
        return True
    if isinstance(call.func, ast.Attribute) and call.func.attr in _FETCH_ATTRIBUTES:
        receiver = call.func.value
        return isinstance(receiver, ast.Call) and _fetches(
            receiver, values.qualname(receiver.func) or "", values
        )
    return False


def reversed_slice(node: ast.Subscript) -> bool:
    """``"metsys"[::-1]``: a constant read backwards."""
    s = node.slice
    return (
        isinstance(s, ast.Slice)
        and s.lower is None
        and s.upper is None
        and isinstance(s.step, ast.UnaryOp)
        and isinstance(s.step.op, ast.USub)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str | bytes)
    )


def maps_chr(node: ast.AST, values: Values) -> bool:
    """``map(chr, ...)`` or ``(chr(c) for c in ...)``: a string spelled in character codes."""
    if isinstance(node, ast.Call) and values.qualname(node.func) == "map" and node.args:
        return isinstance(node.args[0], ast.Name) and node.args[0].id == "chr"
    if isinstance(node, ast.GeneratorExp | ast.ListComp):
        element = node.elt
        return isinstance(element, ast.Call) and values.qualname(element.func) == "chr"
    return False


def _codes(node: ast.AST, values: Values) -> bool:
    """A list of numbers, or numbers computed in a comprehension or ``map``: text spelled as
    character codes (four or more)."""
    if isinstance(node, ast.List | ast.Tuple):
        return len(node.elts) >= 4 and all(
            isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts
        )
    if isinstance(node, ast.ListComp | ast.GeneratorExp):
        return True
    return isinstance(node, ast.Call) and values.qualname(node.func) == "map"


def credential_store(call: ast.Call, values: Values) -> str | None:
    """The password store a command reads secrets from (``security find-generic-password``,
    ``secret-tool lookup``, ``kwallet-query``): what its output holds; None for any other."""
    if not call.args:
        return None
    command = call.args[0]
    if isinstance(command, ast.List | ast.Tuple):
        words = [values.approx(e) or "*" for e in command.elts[:4]]
    else:
        words = (values.approx(command) or "").split()[:4]
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1].lower()
    action = words[1].lower() if len(words) > 1 else ""
    if program == "security" and action in _KEYCHAIN_ACTIONS:
        return f"the macOS keychain (security {action})"
    if program == "secret-tool" and action in ("lookup", "search"):
        return f"the desktop keyring (secret-tool {action})"
    if program == "kwallet-query":
        return "KDE's wallet (kwallet-query)"
    return None


def _xors(node: ast.AST) -> bool:
    """``(b ^ KEY[i % n] for i, b in ...)``: each byte XORed with a key, a decoder."""
    element = node.elt if isinstance(node, ast.ListComp | ast.GeneratorExp) else None
    return isinstance(element, ast.BinOp) and isinstance(element.op, ast.BitXor)


def write_mode(mode: str | None) -> bool:
    """Whether an ``open`` mode writes."""
    return mode is not None and any(c in mode for c in "wax+")
