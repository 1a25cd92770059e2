"""The findings where a value reaches a sink in JavaScript: :class:`Sinks`, the base of
``_calls.Semantics``.

Code execution (``eval``, ``Function``, ``vm``, string timers), shells (``child_process.exec``,
a shell spawned with a command string or ``shell: true``), module loading of a computed name
or a ``data:`` URL, and deserialisers that run code. Decoded or fetched data reaching code
execution is critical, and decoded (not fetched) code run is packed code too (the hiding is
reported); code built from pieces is high; anything else dynamic is medium. A package
manager's configuration written outside the workspace or set for the user (``npm config set
registry``, ``_shell.config_command``) is ``dependencies.index-config`` and ``fs.persistence``.
A file written with decoded or fetched data and then loaded, forked or run by ``node`` is
that data run; a base64 ``data:`` URL loaded is packed code, and so is a lasting target or a
credential file whose name the file never spells out (medium). Findings are kept per rule
and line at their worst severity.
"""

from __future__ import annotations

from collections.abc import Callable

from skillweave.config import Severity
from skillweave.skills.scan._javascript._values import (
    BUILT,
    DECODED,
    FETCHED,
    FILE_COPIES,
    FILE_READS,
    FILE_WRITES,
    HOME_FILE,
    MODULE_COMPILE,
    PAYLOAD,
    POWERFUL_MODULES,
    SHELL_FLAGS,
    SHELLS,
    UNKNOWN,
    YAML_LOADS,
    Value,
    join_taint,
    module_ref,
    shape_of,
    shown,
    text_of,
    unsafe_yaml_options,
)
from skillweave.skills.scan._shell import config_command, unspelled_step
from skillweave.skills.scan._text import credential_path, package_config, write_target
from skillweave.skills.scan.report import severity_rank


class Sinks:
    """The sinks of one file and the findings they make."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, int], tuple[Severity, int, str]] = {}
        self.line_of: Callable[[int], int] = lambda offset: offset
        self.dynamic = False  # code is built or run at run time somewhere (long lines)
        self.credentials: list[tuple[int, str]] = []  # (offset, what) of credential files read
        self.code_files: dict[str, frozenset[str]] = {}  # paths written with decoded data
        self.text = ""  # the file's text: what it spells out

    # --- findings -----------------------------------------------------------------------------

    def report(self, rule: str, offset: int, message: str, severity: Severity) -> None:
        key = (rule, self.line_of(offset))
        kept = self.found.get(key)
        if kept is None or severity_rank(severity) > severity_rank(kept[0]):
            self.found[key] = (severity, offset, message)

    # --- sinks -----------------------------------------------------------------------------

    def _code(self, ref: str, args: list[Value], offset: int, *, new: bool) -> None:
        what = ("new " if new else "") + ref
        if ref in ("setTimeout", "setInterval"):
            code = args[:1]
            if not code or code[0].function is not None or code[0].ref is not None:
                return
            if code[0].text is None and not code[0].taint & (PAYLOAD | {BUILT, HOME_FILE}):
                return
        else:
            code = args if ref in ("Function", "AsyncFunction") else args[:1]
        self.dynamic = True
        if ref == MODULE_COMPILE:
            self.report("obfuscation.dynamic-lookup", offset,
                        f"{ref} runs a string as a module's code without naming eval",
                        "high")  # fmt: skip
        if not code:
            return
        taint = join_taint(*code)
        for value in code:
            taint |= value.all_taint()
        texts = [value.text for value in code]
        revealed = "".join(t for t in texts if t)
        reveal = f": {shown(revealed)}" if revealed else ""
        if taint & PAYLOAD:
            where = "fetched" if FETCHED in taint else "decoded"
            self.report("exec.decoded-payload", offset,
                        f"{what} runs code from {where} data{reveal}", "critical")  # fmt: skip
            self._packed(what, taint, offset, reveal)
        elif HOME_FILE in taint:
            message = f"{what} runs code read from a file under the home folder"
            self.report("exec.dynamic-code", offset, message, "high")
        elif None not in texts and (BUILT in taint or any(v.pieces >= 2 for v in code)):
            self.report("exec.dynamic-code", offset,
                        f"{what} runs code built from string pieces{reveal}", "high")  # fmt: skip
        elif None not in texts:
            if ref in ("setTimeout", "setInterval"):
                self.report("exec.dynamic-code", offset, f"{what} runs a string as code",
                            "medium")  # fmt: skip
        else:
            self.report("exec.dynamic-code", offset, f"{what} of a value built at run time",
                        "medium")  # fmt: skip

    def _packed(self, what: str, taint: frozenset[str], offset: int, reveal: str) -> None:
        """Code the file carries encoded and runs: the hiding is a finding of its own."""
        if FETCHED not in taint:
            self.report("obfuscation.packed-code", offset,
                        f"{what} runs code the file carries encoded{reveal}", "high")  # fmt: skip

    def file_access(self, method: str, args: list[Value], offset: int) -> None:
        """A file read or written through a path built at run time (``path.join``, ``+``,
        templates; unknown pieces as ``*``): credential files read, persistence and places
        outside the workspace written."""
        index = 1 if method in FILE_COPIES else 0
        if len(args) <= index:
            return
        path = shape_of(args[index])
        if method in FILE_READS or (method in FILE_COPIES and index == 1):
            found = credential_path(shape_of(args[0]))
            if found is not None and len(self.credentials) < 100:
                what, severity = found
                self.credentials.append((offset, what))
                self.report("secrets.credential-path", offset,
                            f"reads {what} ({shown(shape_of(args[0]))})", severity)  # fmt: skip
                self._unspelled(shape_of(args[0]), offset)
        if method not in FILE_WRITES and method not in FILE_COPIES:
            return
        if method in FILE_WRITES and len(args) > 1:
            self._keep_code_file(path, args[1])
        rule = write_target(path)
        manager = package_config(path) if rule is not None else None
        if manager is not None:
            self.report("fs.persistence", offset, f"writes {shown(path)}, {manager}'s "
                        "configuration: every later install reads it", "critical")  # fmt: skip
            self.report("dependencies.index-config", offset, f"writes {manager}'s package "
                        f"configuration {shown(path)} outside the workspace: later installs "
                        "use the index it names", "high")  # fmt: skip
        elif rule == "fs.persistence":
            self.report(rule, offset, f"writes {shown(path)}, which runs again later",
                        "critical")  # fmt: skip
        if rule == "fs.persistence" or manager is not None:
            self._unspelled(path, offset)
        if rule == "fs.write-outside":
            self.report(rule, offset, f"writes {shown(path)}, outside the workspace", "high")

    def _unspelled(self, path: str, offset: int) -> None:
        """A credential or persistence path whose name the file never writes out: hidden."""
        step = unspelled_step(path, self.text)
        if step is not None:
            self.report("obfuscation.packed-code", offset, f"{shown(path)} is assembled from "
                        f"pieces: the file never spells {step!r}", "medium")  # fmt: skip

    def _keep_code_file(self, path: str, data: Value) -> None:
        """A file written with decoded or fetched data: loading or running it runs that."""
        taint = data.all_taint() & PAYLOAD
        if taint and path != "*" and len(self.code_files) < 100:
            self.code_files[path] = taint

    def _written_code(self, what: str, value: Value, offset: int) -> bool:
        """`value` names a file the script wrote with decoded or fetched data: reported."""
        taint = self.code_files.get(shape_of(value))
        if taint is None:
            return False
        where = "fetched" if FETCHED in taint else "decoded"
        reveal = f" ({shown(shape_of(value))})"
        self.report("exec.decoded-payload", offset,
                    f"{what} runs a file the script wrote with {where} data{reveal}",
                    "critical")  # fmt: skip
        self._packed(what, taint, offset, reveal)
        return True

    def _index_command(self, words: list[str], offset: int) -> None:
        """A package manager told to use another index for every later install."""
        setting = config_command(words)
        if setting is None:
            return
        self.report("dependencies.index-config", offset, f"runs {shown(setting)}: later "
                    "installs use the index or the checks it sets", "high")  # fmt: skip
        self.report("fs.persistence", offset, f"runs {shown(setting)}, which changes the "
                    "user's package configuration for every later install", "critical")  # fmt: skip

    def _shell(self, ref: str, command: Value, offset: int) -> None:
        what = ref
        taint = command.all_taint()
        line = shape_of(command)
        for path, written in list(self.code_files.items())[:100]:
            if len(path) > 3 and path in line:  # `node ${file}`: the file written is run
                taint |= written
        for part in (command.text or "").split("&&")[:20]:
            self._index_command(part.split()[:12], offset)
        if taint & PAYLOAD:
            where = "fetched" if FETCHED in taint else "decoded"
            reveal = f": {shown(command.text)}" if command.text else ""
            self.report("exec.decoded-payload", offset,
                        f"{what} runs a {where} command through the shell{reveal}",
                        "critical")  # fmt: skip
            self._packed(what, taint, offset, reveal)
        elif command.text is not None and command.pieces <= 1 and BUILT not in taint:
            self.report("exec.shell", offset, f"{what} runs a command through the shell",
                        "medium")  # fmt: skip
        else:
            reveal = f": {shown(command.text)}" if command.text else ""
            self.report("exec.shell", offset,
                        f"{what} runs a command built at run time through the shell{reveal}",
                        "high")  # fmt: skip

    def _spawn(self, ref: str, args: list[Value], offset: int) -> None:
        program = args[0] if args else UNKNOWN
        argv = next((a.items for a in args[1:2] if a.items is not None), [])
        options = next((a for a in reversed(args[1:]) if a.props is not None), UNKNOWN)
        taint = program.all_taint() | join_taint(*argv)
        if any(self._written_code(ref, v, offset) for v in [program, *argv[:8]]):
            return
        if taint & PAYLOAD:
            where = "fetched" if FETCHED in taint else "decoded"
            self.report("exec.decoded-payload", offset,
                        f"{ref} runs a {where} program or argument", "critical")  # fmt: skip
            self._packed(ref, taint, offset, "")
            return
        if program.text:
            self._index_command([program.text, *(a.text or "" for a in argv[:11])], offset)
        shell = (options.props or {}).get("shell")
        if program.text and SHELLS.fullmatch(program.text):
            flags = [i for i, a in enumerate(argv) if a.text in SHELL_FLAGS]
            if flags:
                script = argv[flags[0] + 1] if flags[0] + 1 < len(argv) else UNKNOWN
                constant = script.text is not None and script.pieces <= 1
                self.report("exec.shell", offset,
                            f"{ref} runs {program.text} {argv[flags[0]].text} with a command "
                            "string", "medium" if constant else "high")  # fmt: skip
                return
        if shell is not None and (shell.ref == "true" or shell.text):
            self.report("exec.shell", offset, f"{ref} with shell: true", "high")

    def _load(self, ref: str, name_value: Value, offset: int) -> Value:
        name = text_of(name_value)
        taint = name_value.all_taint()
        if self._written_code(ref, name_value, offset):
            return Value()
        url = name or name_value.prefix
        if url.startswith("data:"):
            self.report("exec.decoded-payload", offset,
                        f"{ref} of a data: URL runs the code it carries", "critical")  # fmt: skip
            if ";base64," in url[:80]:  # the code is carried encoded
                self._packed(f"{ref} of a base64 data: URL", taint | {DECODED}, offset, "")
        elif taint & PAYLOAD:
            self.report("obfuscation.dynamic-lookup", offset,
                        f"{ref} of a module named by decoded or fetched data", "high")  # fmt: skip
        elif (
            name is not None
            and (name_value.pieces >= 2 or BUILT in taint)
            and module_ref(name).removeprefix("mod:") in POWERFUL_MODULES
        ):
            self.report("obfuscation.dynamic-lookup", offset,
                        f"{ref} of a module name built at run time: {shown(name)}",
                        "high")  # fmt: skip
        return Value(ref=module_ref(name)) if name else Value()

    def _deserialize(self, ref: str, args: list[Value], offset: int) -> None:
        first = args[0] if args else UNKNOWN
        fetched = bool(first.all_taint() & PAYLOAD)
        if ref in YAML_LOADS:
            if not any(unsafe_yaml_options(a) for a in args[1:]):
                return
            what = f"{ref} with a schema that builds JavaScript functions"
        elif ref == "v8.deserialize":
            if not fetched:
                return
            what = ref
        else:
            what = f"{ref} runs the functions serialised in its input"
        where = " (fetched data)" if fetched else ""
        self.report("exec.deserialization", offset, f"{what}{where}",
                    "high" if fetched else "medium")  # fmt: skip
