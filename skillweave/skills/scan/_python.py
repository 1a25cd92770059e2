"""The scanner's own rules for Python scripts, on the :mod:`ast` of each file.

One walk over the tree (``ast.walk`` is iterative, so a deep tree cannot exhaust the stack)
collects imports and their aliases, simple ``name = value`` assignments and every node's
parent; the rules then read calls against that:

- names resolve through import aliases, ``getattr(module, "name")`` and ``__import__("os")``;
- path arguments are approximated as strings (constants, f-strings, ``+``, ``%``,
  ``os.path.join``, ``Path(...) / ...``, ``expanduser``, ``Path.home()``, ``$HOME``, names
  assigned once), ``*`` standing for what is not known and ``@pkg`` for the package's own
  folder (``__file__``);
- a value is *decoded* or *fetched* when a base64/hex/zlib/marshal decoder, a chr-join, a
  reversed constant or a network read is found in its expression, or in what a name it uses
  was assigned (followed to a fixed point, three rounds).

Shell spawning (``shell=True``, ``os.system``), deserialisation and TLS checks are bandit's
(``_bandit``); calls bandit cannot resolve (through ``getattr`` or ``__import__``) are flagged
here. A file that does not parse is a finding and goes to the text rules alone.
"""

from __future__ import annotations

import ast
import warnings
from typing import Final

from skillweave.skills.imports import PARSE_LOCK
from skillweave.skills.scan._text import (
    Collector,
    FileFacts,
    Source,
    collect_urls,
    credential_path,
    write_target,
)

NETWORK_MODULES: Final = frozenset(
    {
        "requests", "httpx", "aiohttp", "urllib.request", "urllib3", "http.client", "socket",
        "ftplib", "smtplib", "telnetlib", "poplib", "imaplib", "nntplib", "xmlrpc.client",
        "websocket", "websockets", "paramiko", "pycurl", "grpc", "asyncssh", "httplib2",
        "treq", "tornado.httpclient", "boto3", "botocore", "openai", "anthropic", "slack_sdk",
        "google.cloud", "googleapiclient", "dns.resolver", "scapy", "ssl", "mechanize",
    }
)  # fmt: skip
_NETWORK_CALLS: Final = frozenset(
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
_FETCH_ATTRIBUTES: Final = frozenset({"text", "content", "read", "recv", "recv_into", "json"})
_EXEC_NAMES: Final = frozenset({"exec", "eval", "compile", "execfile"})
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "cmd", "cmd.exe",
                            "powershell", "pwsh", "powershell.exe"})  # fmt: skip
_SHELL_FLAGS: Final = frozenset({"-c", "/c", "-command", "-encodedcommand", "-enc", "-ec"})
_SUBPROCESS: Final = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
)
_ENV_SINKS: Final = frozenset(
    {
        "dumps", "dump", "str", "repr", "print", "write", "writelines", "b64encode",
        "urlencode", "post", "put", "patch", "request", "urlopen", "Request", "send",
        "sendall", "sendto", "format", "encode", "info", "warning", "debug", "error",
    }
)  # fmt: skip
_WRITE_METHODS: Final = frozenset({"write_text", "write_bytes", "touch", "symlink_to",
                                   "hardlink_to"})  # fmt: skip
_COPY_CALLS: Final = frozenset(
    {
        "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree", "shutil.move",
        "os.rename", "os.replace", "os.symlink", "os.link", "os.renames",
    }
)  # fmt: skip
_OPEN_CALLS: Final = frozenset({"open", "io.open", "codecs.open", "builtins.open"})
_APPROX_DEPTH: Final = 12


def parse(data: bytes, path: str) -> ast.Module | str:
    """The module's tree, or why it does not parse (one line)."""
    try:
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in scanned code warn
            return ast.parse(data, filename=path)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}" if exc.lineno else str(exc.msg)
    except (ValueError, RecursionError, MemoryError, SystemError, OverflowError) as exc:
        return f"{type(exc).__name__}: {exc}"[:160] or type(exc).__name__


class PythonScan:
    """The rules over one parsed module; :meth:`run` adds findings and facts."""

    def __init__(self, source: Source, tree: ast.Module, out: Collector) -> None:
        self.source = source
        self.tree = tree
        self.out = out
        self.facts: FileFacts = out.facts_of(source.path)
        self.parents: dict[int, ast.AST] = {}
        self.aliases: dict[str, str] = {}
        self.assigned: dict[str, list[ast.expr]] = {}
        self.calls: list[ast.Call] = []
        self.constants: list[ast.Constant] = []
        self.docstrings: set[int] = set()
        self.tainted: set[str] = set()
        self.returns: dict[str, list[ast.expr]] = {}
        self.tainted_functions: set[str] = set()
        self.assigned_aliases: set[str] = set()

    # --- the walk ---------------------------------------------------------------------------

    def run(self) -> None:
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            self._index(node)
        self._taint_names()
        for call in self.calls:
            self._call(call)
        self._strings()
        self._environment()

    def _index(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.aliases[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
                self._network_import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                self.aliases[alias.asname or alias.name] = full
                self._network_import(full, node.lineno)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                self.assigned.setdefault(target.id, []).append(node.value)
                # e = exec; run = os.system; run = getattr(__import__("os"), "system")
                if isinstance(node.value, ast.Name | ast.Attribute | ast.Call):
                    name = self.qualname(node.value)
                    if name:
                        self.aliases.setdefault(target.id, name)
                        self.assigned_aliases.add(target.id)
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and isinstance(node.target, ast.Name):
            if node.value is not None:
                self.assigned.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.Call):
            self.calls.append(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.constants.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.returns.setdefault(node.name, []).extend(
                    r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value
                )
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                self.docstrings.add(id(body[0].value))

    def _network_import(self, name: str, line: int) -> None:
        for module in NETWORK_MODULES:
            if name == module or name.startswith(module + "."):
                self.facts.network.append((line, f"imports {module}"))
                return
        if name.startswith("urllib") and name.rsplit(".", 1)[-1] in _NETWORK_CALLS:
            self.facts.network.append((line, f"imports {name}"))

    # --- names and values --------------------------------------------------------------------

    def qualname(self, node: ast.AST, depth: int = 0) -> str | None:
        """``subprocess.run`` for ``sp.run`` after ``import subprocess as sp``; None when the
        callee is not a name chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.aliases.get(node.id, node.id))
        elif isinstance(node, ast.Call) and depth < 4:
            inner = self.qualname(node.func, depth + 1)
            first = self.approx(node.args[0]) if node.args else None
            if inner in ("__import__", "importlib.import_module") and first and "*" not in first:
                parts.append(first)
            elif inner == "getattr" and len(node.args) >= 2:
                owner = self.qualname(node.args[0], depth + 1)
                attribute = self.approx(node.args[1])
                if not owner or not attribute or "*" in attribute:
                    return None
                parts.append(f"{owner}.{attribute}")
            else:
                return None
        else:
            return None
        return ".".join(reversed(parts))

    def indirect(self, node: ast.AST) -> bool:
        """Whether a callee goes through ``getattr``/``__import__`` (bandit cannot see it)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Call)

    def approx(self, node: ast.AST | None, depth: int = 0) -> str | None:
        """The string `node` evaluates to, approximately; None when nothing is known."""
        if node is None or depth > _APPROX_DEPTH:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("latin-1")
            return None
        if isinstance(node, ast.JoinedStr):
            return "".join(
                part.value
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
                else (self.approx(getattr(part, "value", None), depth + 1) or "*")
                for part in node.values
            )
        if isinstance(node, ast.BinOp):
            left = self.approx(node.left, depth + 1)
            right = self.approx(node.right, depth + 1)
            if isinstance(node.op, ast.Add) and (left or right):
                return (left or "*") + (right or "*")
            if isinstance(node.op, ast.Div) and (left or right):
                return f"{left or '*'}/{right or '*'}"
            if isinstance(node.op, ast.Mod) and left:
                return left.replace("%s", "*").replace("%r", "*")
            return None
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return "@pkg/file"
            values = self.assigned.get(node.id)
            return self.approx(values[-1], depth + 1) if values and len(values) == 1 else None
        if isinstance(node, ast.Subscript) and self._is_environ(node.value):
            key = self.approx(node.slice, depth + 1)
            return "~" if key in ("HOME", "USERPROFILE") else None
        if isinstance(node, ast.Attribute):
            if node.attr == "parent":
                inner = self.approx(node.value, depth + 1)
                if inner is None:
                    return None
                return "@pkg" if inner.startswith("@pkg") else f"{inner}/.."
            return None
        if isinstance(node, ast.Call):
            return self._approx_call(node, depth)
        return None

    def _approx_call(self, node: ast.Call, depth: int) -> str | None:
        name = self.qualname(node.func) or ""
        args = node.args
        last = name.rsplit(".", 1)[-1]
        if name in ("os.path.join", "posixpath.join", "ntpath.join") or last == "joinpath":
            pieces = [self.approx(a, depth + 1) or "*" for a in args]
            if last == "joinpath" and isinstance(node.func, ast.Attribute):
                pieces.insert(0, self.approx(node.func.value, depth + 1) or "*")
            joined = ""
            for piece in pieces:
                joined = (
                    piece if piece.startswith(("/", "~")) or not joined else f"{joined}/{piece}"
                )
            return joined or None
        if name in ("pathlib.Path.home", "Path.home") or (last == "home" and not args):
            return "~"
        if name in ("os.getcwd", "pathlib.Path.cwd", "Path.cwd"):
            return "."
        if name in ("os.getenv", "os.environ.get") and args:
            return "~" if self.approx(args[0], depth + 1) in ("HOME", "USERPROFILE") else None
        if name in ("os.path.dirname", "os.path.abspath", "os.path.realpath") and args:
            inner = self.approx(args[0], depth + 1)
            if inner and inner.startswith("@pkg"):
                return "@pkg"
            return inner if name != "os.path.dirname" else (inner and f"{inner}/..")
        if (
            last in ("Path", "PurePath", "PosixPath", "str", "fspath", "normpath")
            or name in ("os.path.expanduser", "os.path.expandvars")
        ) and args:
            pieces = [self.approx(a, depth + 1) or "*" for a in args]
            return "/".join(pieces)
        if isinstance(node.func, ast.Attribute) and last in (
            "expanduser", "resolve", "absolute", "as_posix", "format", "strip", "lower",
        ):  # fmt: skip
            inner = self.approx(node.func.value, depth + 1)
            return inner.replace("{}", "*") if inner else None
        return None

    def _is_environ(self, node: ast.AST) -> bool:
        return self.qualname(node) in ("os.environ", "environ", "os.environb")

    # --- taint: decoded or fetched values ----------------------------------------------------

    def _taint_names(self) -> None:
        for _ in range(3):
            before = len(self.tainted) + len(self.tainted_functions)
            for name, values in self.assigned.items():
                if name not in self.tainted and any(self.taint(v) for v in values):
                    self.tainted.add(name)
            for name, values in self.returns.items():
                if name not in self.tainted_functions and any(self.taint(v) for v in values):
                    self.tainted_functions.add(name)
            if len(self.tainted) + len(self.tainted_functions) == before:
                break

    def taint(self, node: ast.AST) -> str | None:
        """What makes `node` decoded or fetched data (``base64.b64decode``, ``a network
        read``...); None when nothing does."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in self.tainted:
                return f"{inner.id}, which holds decoded or fetched data"
            if isinstance(inner, ast.Subscript) and _reversed_slice(inner):
                return "a reversed string"
            if not isinstance(inner, ast.Call):
                continue
            if isinstance(inner.func, ast.Name) and inner.func.id in self.tainted_functions:
                return f"{inner.func.id}(), which returns decoded or fetched data"
            name = self.qualname(inner.func) or ""
            last = _last(inner, name)
            module = name.split(".", 1)[0]
            if last in ("loads", "load"):
                if module in ("marshal", "pickle"):
                    return name
            elif last in _DECODERS and module in _DECODER_MODULES:
                return name
            if last == "decode" and any(
                self.approx(a) in ("rot13", "rot_13", "hex", "base64", "zlib", "bz2")
                for a in inner.args
            ):
                return "codecs decode"
            if last == "join" and inner.args and _maps_chr(inner.args[0], self):
                return "a chr-join"
            if self._fetches(inner, name):
                return "a network read"
        return None

    def _fetches(self, call: ast.Call, name: str) -> bool:
        last = name.rsplit(".", 1)[-1]
        module = name.split(".", 1)[0]
        if last in _NETWORK_CALLS or module in ("requests", "httpx", "aiohttp", "urllib3"):
            return True
        if isinstance(call.func, ast.Attribute) and call.func.attr in _FETCH_ATTRIBUTES:
            receiver = call.func.value
            return isinstance(receiver, ast.Call) and self._fetches(
                receiver, self.qualname(receiver.func) or ""
            )
        return False

    # --- calls -------------------------------------------------------------------------------

    def _call(self, call: ast.Call) -> None:
        name = self.qualname(call.func) or ""
        last = _last(call, name)
        line = call.lineno
        if name in _EXEC_NAMES or name in {f"builtins.{n}" for n in _EXEC_NAMES}:
            self._exec(call, name, line)
        elif name in ("__import__", "importlib.import_module") and call.args:
            if self.approx(call.args[0]) is None:
                self._add("exec.dynamic-code", line, "imports a module named at run time")
        elif name in ("types.FunctionType", "types.CodeType") and any(
            self.taint(a) for a in call.args
        ):
            self._add("exec.decoded-payload", line, "builds a function from decoded code")
        if name in {"marshal.loads", "marshal.load"}:
            self._add("obfuscation.packed-code", line, "loads marshalled code objects")
        if last == "join" and call.args and _maps_chr(call.args[0], self):
            self._add("obfuscation.packed-code", line, "builds a string from character codes")
        if (name.startswith("subprocess.") and last in _SUBPROCESS) or name in (
            "os.system", "os.popen", "pty.spawn", "os.execv", "os.execvp", "os.spawnv",
            "os.spawnvp", "os.execl", "os.execlp", "asyncio.create_subprocess_exec",
            "asyncio.create_subprocess_shell",
        ):  # fmt: skip
            self._process(call, name, line)
        if name in _OPEN_CALLS or name == "os.open":
            self._open(call, name, line)
        elif isinstance(call.func, ast.Attribute) and call.func.attr in _WRITE_METHODS:
            self._write(call.func.value, line, call.func.attr)
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "open" and call.args:
            if _write_mode(self.approx(call.args[0])):
                self._write(call.func.value, line, "open")
        elif name in _COPY_CALLS and len(call.args) >= 2:
            self._write(call.args[1], line, name)
        if last in _NETWORK_CALLS or name.startswith(("requests.", "httpx.", "aiohttp.")):
            self.facts.network.append((line, f"calls {name}"))
        if name == "os.dup2" and call.args and _calls_attribute(call.args[0], "fileno"):
            self._add("exec.reverse-shell", line, "wires a socket to the standard streams")
        self._credential_call(call, name, line)

    def _exec(self, call: ast.Call, name: str, line: int) -> None:
        if not call.args:
            return
        argument = call.args[0]
        source = self.taint(argument)
        if source is not None:
            self._add("exec.decoded-payload", line, f"{name}() runs code from {source}")
        elif not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
            self._add("exec.dynamic-code", line, f"{name}() of a value built at run time")

    def _process(self, call: ast.Call, name: str, line: int) -> None:
        words = self._command_words(call)
        if words and any(w.rsplit("/", 1)[-1] in ("curl", "wget", "nc", "ncat") for w in words):
            self.facts.network.append((line, f"runs {words[0].rsplit('/', 1)[-1]}"))
        if words and words[0].rsplit("/", 1)[-1] == "crontab" and "-l" not in words:
            self._add("fs.persistence", line, "installs a crontab")
        shell_words = [w.lower() for w in words[:3]]
        via_shell = (
            bool(shell_words)
            and shell_words[0].rsplit("/", 1)[-1] in _SHELLS
            and any(w in _SHELL_FLAGS for w in shell_words[1:])
        )
        if via_shell:
            command = call.args[0]
            constant = isinstance(command, ast.List | ast.Tuple) and all(
                isinstance(e, ast.Constant) for e in command.elts
            )
            self._add("exec.shell", line, f"runs a command through {shell_words[0]} -c",
                      severity="medium" if constant else "high")  # fmt: skip
            if any(w in ("-encodedcommand", "-enc", "-ec") for w in shell_words):
                self._add("obfuscation.packed-code", line, "passes an encoded PowerShell command")
        elif name in ("os.system", "os.popen") and (
            self.indirect(call.func)
            or (isinstance(call.func, ast.Name) and call.func.id in self.assigned_aliases)
        ):  # bandit only knows the names imports give
            constant = bool(call.args) and isinstance(call.args[0], ast.Constant)
            self._add("exec.shell", line, f"{name} reached through an alias or getattr",
                      severity="medium" if constant else "high")  # fmt: skip
        elif name == "asyncio.create_subprocess_shell":
            constant = isinstance(call.args[0], ast.Constant) if call.args else False
            self._add("exec.shell", line, "runs a command through the shell",
                      severity="medium" if constant else "high")  # fmt: skip
        elif (
            name == "pty.spawn"
            and words
            and words[0].rsplit("/", 1)[-1] in _SHELLS
            and any(i == "socket" or i.startswith("socket.") for i in self.aliases.values())
        ):
            self._add("exec.reverse-shell", line, "spawns a shell beside a socket")

    def _command_words(self, call: ast.Call) -> list[str]:
        if not call.args:
            return []
        command = call.args[0]
        if isinstance(command, ast.List | ast.Tuple):
            return [self.approx(e) or "*" for e in command.elts]
        text = self.approx(command)
        return text.split() if text else []

    def _open(self, call: ast.Call, name: str, line: int) -> None:
        target = call.args[0] if call.args else _keyword(call, "file")
        if name == "os.open":
            flags = {
                n.attr if isinstance(n, ast.Attribute) else getattr(n, "id", "")
                for n in (ast.walk(call.args[1]) if len(call.args) > 1 else ())
            }
            writing = bool(flags & {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND"})
        else:
            mode = call.args[1] if len(call.args) > 1 else _keyword(call, "mode")
            writing = _write_mode(self.approx(mode) if mode is not None else "r")
        if writing and target is not None:
            self._write(target, line, name)

    def _write(self, target: ast.AST, line: int, how: str) -> None:
        path = self.approx(target)
        if path is None:
            return
        rule = write_target(path)
        if rule == "fs.persistence":
            self._add(rule, line, f"writes {path} ({how}), which runs again later")
        elif rule == "fs.write-outside":
            self._add(rule, line, f"writes {path} ({how}), outside the workspace")

    def _credential_call(self, call: ast.Call, name: str, line: int) -> None:
        """Paths built from pieces (``Path.home() / ".aws" / "credentials"``) are read as a
        whole where they are used."""
        for argument in call.args[:2]:
            path = self.approx(argument)
            if path and "/" in path:
                self._credential(path, line)
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("read_text", "read_bytes",
                                                                        "open"):  # fmt: skip
            path = self.approx(call.func.value)
            if path:
                self._credential(path, line)

    def _credential(self, path: str, line: int) -> None:
        found = credential_path(path)
        if found is None:
            return
        what, severity = found
        text = self.source.lines.excerpt(line)
        self.out.add("secrets.credential-path", self.source.path, line,
                     f"names {what} ({path})", text, severity=severity)  # fmt: skip
        self.facts.credentials.append((line, what, text))

    # --- strings -----------------------------------------------------------------------------

    def _strings(self) -> None:
        for constant in self.constants:
            if id(constant) in self.docstrings:
                continue
            value = constant.value
            line = constant.lineno
            if "://" in value:
                collect_urls(value, lambda _offset, line=line: line, self.facts)
            if len(value) < 512 and not any(c.isspace() for c in value):
                self._credential(value, line)

    # --- the environment, wholesale ----------------------------------------------------------

    def _environment(self) -> None:
        dumps: list[ast.AST] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute | ast.Name) and self._is_environ(node):
                parent = self.parents.get(id(node))
                if isinstance(parent, ast.Attribute) and parent is not node:
                    if parent.attr in ("copy", "items", "keys", "values"):
                        dumps.append(self.parents.get(id(parent), parent))
                    continue  # os.environ.get / setdefault / pop: one variable
                if isinstance(parent, ast.Subscript | ast.Compare):
                    continue
                dumps.append(node)
        if not dumps:
            return
        dump_ids = {id(d) for d in dumps}
        names: set[str] = set()
        for name, values in self.assigned.items():
            if any(
                id(v) in dump_ids or any(id(n) in dump_ids for n in ast.walk(v)) for v in values
            ):
                names.add(name)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.For | ast.comprehension) and any(
                id(n) in dump_ids for n in ast.walk(node.iter)
            ):
                if _filtered(node):
                    dump_ids -= {id(n) for n in ast.walk(node.iter)}
                    continue  # picks some variables (if k.startswith("APP_")): not the whole
                names.update(t.id for t in ast.walk(node.target) if isinstance(t, ast.Name))
        names = {
            name
            for name, values in self.assigned.items()
            if any(id(n) in dump_ids for v in values for n in ast.walk(v))
        } | {n for n in names if n not in self.assigned}
        for call in self.calls:
            name = self.qualname(call.func) or ""
            sink = name.rsplit(".", 1)[-1]
            if sink not in _ENV_SINKS and not name.startswith(("requests.", "httpx.")):
                continue
            values = [*call.args, *(k.value for k in call.keywords if k.arg != "env")]
            for value in values:
                if any(
                    id(n) in dump_ids or (isinstance(n, ast.Name) and n.id in names)
                    for n in ast.walk(value)
                ):
                    text = self.source.lines.excerpt(call.lineno)
                    self.facts.env_dumps.append((call.lineno, text))
                    break

    def _add(self, rule: str, line: int, message: str, *, severity: str | None = None) -> None:
        self.out.add(rule, self.source.path, line, message, self.source.lines.excerpt(line),
                     severity=severity)  # type: ignore[arg-type]  # fmt: skip


def _last(call: ast.Call, name: str) -> str:
    """The called name's last part, also for a call on a value (``"".join``)."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return name.rsplit(".", 1)[-1]


def _filtered(node: ast.For | ast.comprehension) -> bool:
    """A loop or comprehension that keeps only some items: an ``if`` filters them."""
    if isinstance(node, ast.comprehension):
        return bool(node.ifs)
    return any(isinstance(statement, ast.If) for statement in node.body)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _write_mode(mode: str | None) -> bool:
    return mode is not None and any(c in mode for c in "wax+")


def _calls_attribute(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (node.func.attr == attribute)
    )


def _reversed_slice(node: ast.Subscript) -> bool:
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


def _maps_chr(node: ast.AST, scan: PythonScan) -> bool:
    """``map(chr, ...)`` or ``(chr(c) for c in ...)``: a string spelled in character codes."""
    if isinstance(node, ast.Call) and scan.qualname(node.func) == "map" and node.args:
        return isinstance(node.args[0], ast.Name) and node.args[0].id == "chr"
    if isinstance(node, ast.GeneratorExp | ast.ListComp):
        element = node.elt
        return isinstance(element, ast.Call) and scan.qualname(element.func) == "chr"
    return False
