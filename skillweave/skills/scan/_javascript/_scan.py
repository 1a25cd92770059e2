"""The scanner's rules for JavaScript and TypeScript: :class:`JavaScriptScan`, called by
``scanner`` for each script.

Code running from fetched or decoded data, shells, dynamic lookups and unsafe deserialisers
are found by following values (``_parser``, ``_calls``); the rest reads the text. No
JavaScript parser is a Python library worth its weight here (``skills.imports`` made the
same choice), so one linear tokenising pass splits a file into comments (dropped), string and
template literals (kept with their offsets) and code; two views come out of it: the code with
comments blanked (module names and commands in strings still readable) and the code with
literals blanked too (calls in strings or comments never count). Regex literals are not
told apart from division: a quote inside one may hide a little code from the rules, never
make them slow. Network use includes DNS when the script resolves names it builds at run
time or picks its own resolver (``dns.setServers``): data leaves in the names, so the
environment read in such a script is exfiltration like any other.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from skillweave.skills.scan._javascript._calls import Semantics
from skillweave.skills.scan._javascript._modules import JavaScriptModules
from skillweave.skills.scan._javascript._parser import Parser
from skillweave.skills.scan._javascript._tokens import MAX_TOKENS, tokenize
from skillweave.skills.scan._javascript._values import Budget
from skillweave.skills.scan._text import (
    Collector,
    Source,
    collect_urls,
    credential_path,
    long_lines,
    write_target,
)

_TOKENS: Final = re.compile(
    r"//[^\n]*"
    r"|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)"
    r"|'(?:[^'\\\n]|\\.)*(?:'|$)"
    r'|"(?:[^"\\\n]|\\.)*(?:"|$)'
    r"|`(?:[^`\\]|\\.)*(?:`|\Z)",
    re.MULTILINE | re.DOTALL,
)
_NETWORK_MODULES: Final = (
    "http", "https", "http2", "net", "tls", "dgram", "axios", "node-fetch", "got", "undici",
    "ws", "request", "superagent", "socket.io-client", "needle", "ky",
)  # fmt: skip
_REQUIRE: Final = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s*|\bimport\s+"""
    r"""|\brequire\s*\.\s*(?:call|apply)\s*\(\s*[\w$.]{1,40}\s*,\s*\[?\s*"""
    r"""|\bReflect\s*\.\s*apply\s*\(\s*require\s*,\s*[\w$.]{1,40}\s*,\s*\[\s*)"""
    r"""(['"])(?:node:)?([^'"\n]{1,214})\1"""
)
"""A module loaded: ``require``, ``import``, also ``require`` called through
``Reflect.apply``, ``.call`` or ``.apply``."""
_DNS_MODULE: Final = re.compile(
    r"""(?:\brequire\s*\(\s*|\bfrom\s*|\bimport\s*\(\s*)(['"])(?:node:)?dns(?:/promises)?\1"""
)
_DNS_OUT: Final = re.compile(
    r"(?<![\w$])(?:resolve\w{0,6}|lookup|reverse)\s*\([^\n;]{0,200}?(?:\$\{|\+\s*['\"`]|['\"`]\s*\+)"
    r"|\.\s*setServers\s*\("
)
"""A name built at run time and resolved (data leaves in the name: DNS tunnelling), or a
resolver of the script's own choosing."""
_CHILD_PROCESS: Final = r"""['"](?:node:)?child_process['"]"""
_FETCH_CALL: Final = re.compile(
    r"(?:(?<![.\w$])|\b(?:globalThis|window|self)\s*\.\s*)fetch\s*"
    r"(?:\(|\.\s*(?:call|apply|bind)\s*\()"
    r"|\bReflect\s*\.\s*apply\s*\(\s*(?:globalThis\s*\.\s*)?fetch\b"
    r"|\bnew\s+(?:XMLHttpRequest|WebSocket)\b"
)
"""``fetch(...)``, also called through ``Reflect.apply``, ``.call``/``.apply``/``.bind``
or a global object."""
_CODE_CALLS: Final = re.compile(
    r"(?<![.\w$])(?:eval|Function)\s*\(|\bvm\s*\.\s*runIn\w+\s*\(|\[\s*['\"`][^\]]{0,40}\]\s*\("
)
_SHELL_TRUE: Final = re.compile(r"\bshell\s*:\s*true\b")
_WRITES: Final = re.compile(
    r"\b(writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|copyFileSync"
    r"|copyFile|renameSync|rename|symlinkSync|symlink|cpSync|outputFile|outputFileSync)\s*\("
)
_SECOND_ARGUMENT: Final = frozenset(
    {"copyFileSync", "copyFile", "renameSync", "rename", "symlinkSync", "symlink", "cpSync"}
)
_FROM_CHAR_CODE: Final = re.compile(r"\bfromCharCode\s*\(\s*(?:[\w.]{1,12}\s*,\s*){7,}")
_FROM_CHAR_CODE_CHAIN: Final = re.compile(r"(?:\bfromCharCode\s*\([^()]{0,40}\)[^;\n]{0,20}){4,}")
_ENV_WHOLE: Final = re.compile(r"\bprocess\s*\.\s*env\b(?!\s*(?:\.|\[|\?\.))")
_ENV_PASSED: Final = re.compile(r"\benv\s*:\s*(?:\{\s*\.\.\.\s*)?$")
_HOME: Final = re.compile(
    r"(?:require\(\s*['\"](?:node:)?os['\"]\s*\)|\bos)\s*\.\s*homedir\s*\(\s*\)|\bhomedir\s*\(\s*\)"
    r"|\bprocess\s*\.\s*env\s*"
    r"(?:\.\s*(?:HOME|USERPROFILE)|\[\s*['\"](?:HOME|USERPROFILE)['\"]\s*\])"
)
_CURL: Final = re.compile(r"(?:^|[\s'\"`;|&(])(?:curl|wget|nc|ncat)\s")


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


class JavaScriptScan:
    """The rules over one JavaScript or TypeScript file; :meth:`run` adds findings and facts."""

    def __init__(
        self, source: Source, out: Collector, modules: JavaScriptModules | None = None
    ) -> None:
        self.source = source
        self.out = out
        self.modules = modules
        self.facts = out.facts_of(source.path)
        code: list[str] = []
        bare: list[str] = []
        self.literals: list[tuple[int, str]] = []  # (offset of the content, content)
        position = 0
        text = source.text
        for match in _TOKENS.finditer(text):
            start, end = match.span()
            code.append(text[position:start])
            bare.append(text[position:start])
            token = match.group()
            if token.startswith("/"):
                code.append(_blank(token))
                bare.append(_blank(token))
            else:
                code.append(token)
                bare.append(token[0] + _blank(token[1:-1]) + token[-1] if len(token) > 1 else " ")
                self.literals.append((start + 1, token[1:-1] if len(token) > 1 else ""))
            position = end
        code.append(text[position:])
        bare.append(text[position:])
        self.code = "".join(code)
        self.bare = "".join(bare)
        self.written: set[int] = set()  # lines whose writes the flow judged

    def run(self) -> None:
        self._network()
        dynamic = self._flow()
        self._writes()
        self._literals()
        self._environment()
        self._packed()
        long_lines(self.source, self.out, dynamic=dynamic)

    def _network(self) -> None:
        for match in _REQUIRE.finditer(self.code):
            module = match.group(2)
            if module in _NETWORK_MODULES or module.split("/")[0] in _NETWORK_MODULES:
                self.facts.network.append((self._line(match.start()), f"imports {module}"))
        if _DNS_MODULE.search(self.code):
            for match in _DNS_OUT.finditer(self.code):
                what = (
                    "sets its own DNS servers"
                    if "setServers" in match.group()
                    else ("resolves DNS names built at run time (data can leave in the names)")
                )
                self.facts.network.append((self._line(match.start()), what))
                break
        for match in _FETCH_CALL.finditer(self.bare):
            what = "fetch" if "fetch" in match.group() else match.group().strip("( ")
            self.facts.network.append((self._line(match.start()), what))
        if self._spawns() and _CURL.search(self.code):
            match = _CURL.search(self.code)
            assert match is not None
            self.facts.network.append((self._line(match.start()), "runs curl or wget"))

    def _flow(self) -> bool:
        """Values followed from sources to sinks (``_parser``); True when code is built or
        run at run time somewhere."""
        semantics = Semantics()
        semantics.line_of = self.source.lines.line_of
        semantics.folder = posixpath.join("@pkg", posixpath.dirname(self.source.path))
        semantics.text = self.source.text
        if self.modules is not None:
            modules, path = self.modules, self.source.path
            semantics.modules = lambda specifier: modules.exports(path, specifier)
            semantics.foreign_call = modules.call
        tokens = tokenize(self.source.text)
        budget = Budget(tokens_left=len(tokens) + 20_000)
        Parser(tokens, semantics, budget, {}).run()
        for (rule, _), (severity, offset, message) in sorted(
            semantics.found.items(), key=lambda item: item[1][1]
        ):
            self.out.at(self.source, rule, offset, message, severity=severity)
        self.written = {
            semantics.line_of(offset)
            for (rule, _), (_, offset, _) in semantics.found.items()
            if rule in ("fs.persistence", "fs.write-outside")
        }
        for offset, what in semantics.credentials:
            line = self._line(offset)
            self.facts.credentials.append((line, what, self.source.lines.excerpt(line)))
        if tokens.rest >= 0:  # past the token cap: calls that run code, read on the text
            for match in _CODE_CALLS.finditer(self.bare, tokens.rest):
                semantics.dynamic = True
                what = match.group().rstrip("( ")
                message = f"{what} call past the first {MAX_TOKENS:,} tokens (not followed)"
                self.out.at(self.source, "exec.dynamic-code", match.start(), message,
                            severity="medium")  # fmt: skip
        for match in _SHELL_TRUE.finditer(self.bare):
            if self._spawns():
                self.out.at(self.source, "exec.shell", match.start(),
                            "a process spawned with shell: true")  # fmt: skip
        return semantics.dynamic

    def _spawns(self) -> bool:
        return bool(re.search(_CHILD_PROCESS, self.code))

    def _writes(self) -> None:
        for match in _WRITES.finditer(self.bare):
            arguments = self._arguments(match.end())
            index = 1 if match.group(1) in _SECOND_ARGUMENT else 0
            if len(arguments) <= index:
                continue
            if self._line(match.start()) in self.written:
                continue  # the flow read this write's path better
            path = self._path(arguments[index])
            rule = write_target(path) if path else None
            if rule == "fs.persistence":
                self.out.at(self.source, rule, match.start(),
                            f"writes {path}, which runs again later")  # fmt: skip
            elif rule == "fs.write-outside":
                self.out.at(self.source, rule, match.start(),
                            f"writes {path}, outside the workspace")  # fmt: skip

    def _literals(self) -> None:
        lines = self.source.lines
        for offset, content in self.literals:
            if "://" in content:
                collect_urls(content, lambda o, base=offset: lines.line_of(base + o), self.facts)
            found = credential_path(content)
            if found is not None:
                what, severity = found
                line = self._line(offset)
                self.out.at(self.source, "secrets.credential-path", offset,
                            f"names {what} ({content[:80]})", severity=severity)  # fmt: skip
                self.facts.credentials.append((line, what, lines.excerpt(line)))

    def _environment(self) -> None:
        for match in _ENV_WHOLE.finditer(self.bare):
            before = self.bare[max(0, match.start() - 40) : match.start()]
            if _ENV_PASSED.search(before) and self._spawns():
                continue  # env: process.env / env: { ...process.env } for a child process
            line = self._line(match.start())
            self.facts.env_dumps.append((line, self.source.lines.excerpt(line)))

    def _packed(self) -> None:
        for pattern in (_FROM_CHAR_CODE, _FROM_CHAR_CODE_CHAIN):
            for match in pattern.finditer(self.bare):
                self.out.at(self.source, "obfuscation.packed-code", match.start(),
                            "builds a string from character codes")  # fmt: skip

    # --- helpers -----------------------------------------------------------------------------

    def _line(self, offset: int) -> int:
        return self.source.lines.line_of(offset)

    def _argument_text(self, start: int) -> str:
        """The code from `start` to the call's closing parenthesis (at most 600 characters)."""
        depth = 1
        end = start
        limit = min(len(self.code), start + 600)
        while end < limit and depth:
            char = self.code[end]
            depth += 1 if char in "([{" else -1 if char in ")]}" else 0
            end += 1
        return self.code[start:end]

    def _arguments(self, start: int) -> list[str]:
        """The call's arguments, split on top-level commas."""
        text = self._argument_text(start)
        bare = self.bare[start : start + len(text)]
        arguments: list[str] = []
        depth = 0
        begin = 0
        for index, char in enumerate(bare):
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            if (char == "," and depth == 0) or depth < 0:
                arguments.append(text[begin:index])
                begin = index + 1
            if depth < 0:
                break
        return [a.strip() for a in arguments]

    def _path(self, argument: str) -> str | None:
        """The path an argument builds, approximately: literals joined (by ``/`` inside
        ``path.join``/``resolve``), the home folder as ``~``, ``__dirname`` as ``@pkg``,
        anything else ``*``."""
        text = _HOME.sub("'~'", argument)
        text = re.sub(r"\$\{\s*'~'\s*\}", "~", text)
        text = re.sub(r"\b__dirname\b|\bimport\.meta\.dirname\b", "'@pkg'", text)
        joined = re.match(r"\s*path\s*\.\s*(?:join|resolve)\s*\(", text) is not None
        pieces = [
            re.sub(r"\$\{[^}]{0,200}\}", "*", token[1:-1]) if token[0] in "'\"`" else "*"
            for token in re.findall(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`]*`|[A-Za-z_$][\w$.]*", text)
            if token not in ("path.join", "path.resolve", "path", "join", "resolve")
        ]
        if not pieces:
            return None
        return "/".join(pieces) if joined else "".join(pieces)
