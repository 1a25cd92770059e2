"""Generate the hostile-input corpus of ``tests/data/hostile/`` (issue 9), deterministically.

Run ``python tests/data/hostile/make_corpus.py [OUT]`` (default: this folder) to write:

* ``skill_md/NN-short-name.md``: malformed SKILL.md files (bad YAML, wrong types, huge fields,
  NUL bytes, non-UTF-8, deep nesting, billion laughs...);
* ``zips/NN-short-name.zip``: hostile skill packages (traversal, absolute paths, symlinks,
  bombs, duplicate names, huge counts...), every one a few KB at most;
* ``scripts.json``: hostile script names and arguments for ``run_skill_script``;
* ``artifact_refs.json``: hostile artifact refs for a script's ``inputs`` and ``artifact://``;
* ``cases.json``: what every SKILL.md and ZIP case is and the error it must give;
* ``sandbox/NN-id.py`` and ``sandbox.json``: hostile scripts run in a sandbox, their cases in
  ``sandbox_cases.py`` beside this file;
* ``README.md``: all of it as tables.

The same code always writes the same bytes: ZIP entries carry a fixed timestamp, fixed modes
and a fixed compression level, and nothing random or time-dependent goes in (deflated bytes
come from the zlib Python is linked with: a zlib fork such as zlib-ng may deflate otherwise).
``tests/reliability/test_hostile_input.py`` runs each case through the CLI, the REST API and
the MCP front door, and checks that this script reproduces the checked-in files.

The ZIP cases are checked against these package limits (the tests set them, the README says
so): at most ``MAX_FILES`` entries, ``MAX_BYTES`` bytes uncompressed, and the default
compression ratio of 100:1 for entries over 64 KiB.
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
import struct
import sys
import unicodedata
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from sandbox_cases import SANDBOX  # beside this file, which runs as a script

__all__ = ["MAX_BYTES", "MAX_FILES", "SKILL_MD_CASES", "ZIP_CASES", "build", "main"]

MAX_FILES: Final = 100
MAX_BYTES: Final = 1_000_000

_DATE: Final = (1980, 1, 1, 0, 0, 0)
_TOP: Final = "hostile"
_GOOD_SKILL_MD: Final = (
    f"---\nname: {_TOP}\ndescription: A hostile package. Use never.\n---\n# Hostile\n"
).encode()

# --- SKILL.md cases ------------------------------------------------------------------------
#
# Each case: file, what it is, the error substring every front door must name, and whether
# only strict validation refuses it (`strict`: the runtime loads such a skill leniently with a
# warning, by design). `api_error` overrides `error` for the JSON upload when it differs; an
# empty one: the JSON upload stores the skill (its own name and description win).


def _front(name: str, *lines: str, body: str = "# Body\n\nSome instructions.\n") -> bytes:
    return ("---\n" + "\n".join([f"name: {name}", *lines]) + "\n---\n" + body).encode()


def _laughs(name: str, target: str) -> bytes:
    """The billion laughs: nine levels of nine aliases, 9**9 strings once expanded."""
    lines = [f"name: {name}", "description: Laughs.", 'l0: &l0 "lol"']
    for level in range(1, 10):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    lines.append(target)
    return ("---\n" + "\n".join(lines) + "\n---\n# Laughs\n").encode()


def _deep_block(name: str, depth: int) -> bytes:
    lines = [f"name: {name}", "description: Deep block mappings.", "metadata:"]
    lines += [" " * (level + 1) + f"k{level}:" for level in range(depth)]
    lines[-1] += " bottom"
    return ("---\n" + "\n".join(lines) + "\n---\n").encode()


def _garbage(size: int) -> bytes:
    """Deterministic bytes that are not UTF-8 (a sha256 chain after 0xff 0xfe 0x00)."""
    out = bytearray(b"\xff\xfe\x00")
    block = b"skillweave"
    while len(out) < size:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[:size])


Content = Callable[[str], bytes]
"""A case's bytes, given the name of the folder it is tested in (``case-NN``)."""

# (short name, what, error, strict, content)
_SKILL_MD: Final[list[tuple[str, str, str, bool, Content]]] = [
    ("no-frontmatter", "Markdown with no frontmatter at all", "no YAML frontmatter", False,
     lambda n: b"# Notes\n\nNo frontmatter here.\n"),
    ("empty-file", "an empty file (0 bytes)", "no YAML frontmatter", False, lambda n: b""),
    ("unclosed-frontmatter", "a '---' line that is never closed", "frontmatter is not closed",
     False, lambda n: f"---\nname: {n}\ndescription: Never closed.\n\n# Body\n".encode()),
    ("yaml-unclosed-bracket", "YAML with an unclosed flow sequence", "invalid YAML frontmatter",
     False, lambda n: _front(n, "description: [never closed")),
    ("yaml-tab-indent", "YAML indented with a tab", "invalid YAML frontmatter", False,
     lambda n: _front(n, "description: Tabs.", "metadata:", "\ttype: executable")),
    ("yaml-undefined-alias", "an alias to an anchor that does not exist",
     "invalid YAML frontmatter", False, lambda n: _front(n, "description: *nowhere")),
    ("yaml-python-tag", "a !!python/object/apply tag (code execution with an unsafe loader)",
     "invalid YAML frontmatter", False,
     lambda n: _front(n, "description: !!python/object/apply:os.system",
                      "  - touch /tmp/skillweave-hostile-pwned")),
    ("frontmatter-list", "frontmatter that is a YAML list",
     "frontmatter must be a mapping, not list", False,
     lambda n: f"---\n- name: {n}\n- description: A list.\n---\n".encode()),
    ("frontmatter-scalar", "frontmatter that is a plain string",
     "frontmatter must be a mapping, not str", False,
     lambda n: b"---\njust some words\n---\n# Body\n"),
    ("empty-frontmatter", "an empty frontmatter block", "description: is required", False,
     lambda n: b"---\n---\n# Body\n"),
    ("missing-description", "no description key", "description: is required", False,
     _front),
    ("blank-description", "a description of spaces", "description: is required", False,
     lambda n: _front(n, 'description: "   "')),
    ("description-list", "a description that is a list",
     "description: must be a string, not list", False,
     lambda n: _front(n, "description: [one, two]")),
    ("description-mapping", "a description that is a mapping",
     "description: must be a string, not dict", False,
     lambda n: _front(n, "description: {text: nested}")),
    ("nul-byte", "a NUL byte inside the frontmatter", "unacceptable character #x0000", False,
     lambda n: _front(n, "description: A NUL \x00 byte.")),
    ("escape-sequence", "a raw terminal escape sequence (ESC [2J) in the frontmatter",
     "unacceptable character #x001b", False,
     lambda n: _front(n, "description: Clears \x1b[2J your screen.")),
    ("non-utf8-latin1", "Latin-1 bytes, not UTF-8", "not UTF-8 text", False,
     lambda n: _front(n, "description: Café au lait.").replace("é".encode(), b"\xe9")),
    ("utf16", "the SKILL.md encoded as UTF-16", "not UTF-8 text", False,
     lambda n: _front(n, "description: Sixteen bits.").decode().encode("utf-16")),
    ("binary-garbage", "2 KB of bytes that are no text at all", "not UTF-8 text", False,
     lambda n: _garbage(2048)),
    ("deep-flow-nesting", "30,000 unclosed '[' (libyaml's composer recursed until a segfault)",
     "nested more than 64 levels deep", False,
     lambda n: _front(n, "description: Deep.", "metadata: " + "[" * 30_000)),
    ("deep-block-nesting", "mappings nested 120 levels by indentation",
     "nested more than 64 levels deep", False, lambda n: _deep_block(n, 120)),
    ("deep-compact-nesting", "'- - - ...': 5,000 block sequences nested on one line",
     "nested more than 64 levels deep", False,
     lambda n: _front(n, "description: Deep.", "metadata:", "  x:", "    " + "- " * 5_000 + "end")),
    ("billion-laughs-metadata", "the billion laughs (9**9 strings) under metadata",
     "aliases expand to more than 10000 nodes", False, lambda n: _laughs(n, "metadata: {x: *l9}")),
    ("billion-laughs-license", "the billion laughs as the license",
     "aliases expand to more than 10000 nodes", False, lambda n: _laughs(n, "license: *l9")),
    ("recursive-alias", "metadata that contains itself through an alias",
     "an alias refers to a collection that contains it", False,
     lambda n: _front(n, "description: Recursive.", "metadata: &self", "  me: *self")),
    ("name-traversal", "the name '../../etc/passwd'", "cannot be used as a skill name", False,
     lambda n: b"---\nname: ../../etc/passwd\ndescription: Traversal in the name.\n---\n"),
    ("name-nul", "a name with a NUL byte (the YAML escape \\0)", "cannot be used as a skill name",
     False, lambda n: b'---\nname: "evil\\0name"\ndescription: A NUL in the name.\n---\n'),
    ("name-huge", "a name of 5,000 characters", "(5000 characters) cannot be used as a skill name",
     False,
     lambda n: ("---\nname: " + "a" * 5_000 + "\ndescription: A huge name.\n---\n").encode()),
    ("name-space", "the name 'Hostile Skill': no store key can hold it",
     "name: may contain only a-z, 0-9 and '-'", True,
     lambda n: b"---\nname: Hostile Skill\ndescription: A space in the name.\n---\n"),
    ("name-list", "a name that is a list", "name: must be a string, not list", True,
     lambda n: b"---\nname: [not, a, name]\ndescription: The name is a list.\n---\n"),
    ("description-huge", "a description of 40,000 characters",
     "description: is 40000 characters; the limit is 1024", True,
     lambda n: _front(n, "description: " + ("Lorem ipsum dolor sit amet. " * 1429)[:40_000])),
    ("compatibility-huge", "a compatibility field of 5,000 characters",
     "compatibility: is 5000 characters; the limit is 500", True,
     lambda n: _front(n, "description: Huge compatibility.", "compatibility: " + "x" * 5_000)),
    ("metadata-list", "metadata that is a list, not a mapping", "metadata: must be a mapping",
     True, lambda n: _front(n, "description: Metadata list.", "metadata: [1, 2, 3]")),
    ("bad-extensions", "metadata.type and metadata.enabled out of range",
     "metadata.type: must be one of contextual, executable, composite", True,
     lambda n: _front(n, "description: Bad extensions.", "metadata:", "  type: rootkit",
                      "  enabled: maybe")),
]  # fmt: skip


# What differs from the defaults: the JSON upload's error, and over MCP the name a skill
# loads under and what activating it gives ("loads" for strict cases, else "not loaded").
_NOT_UNICODE: Final = {"api_error": "content: Input should be a valid string, unable to parse"}
# The JSON upload names the skill and describes it itself, and its values win over the
# frontmatter's: a name or description that is missing, not text or not allowed there is the
# request's instead.
_DESCRIBED_BY_THE_REQUEST: Final = {"api_error": ""}
_SKILL_MD_EXTRA: Final[dict[str, dict[str, str]]] = {
    "empty-file": {"api_error": "content: String should have at least 1 character"},
    "empty-frontmatter": _DESCRIBED_BY_THE_REQUEST,
    "missing-description": _DESCRIBED_BY_THE_REQUEST,
    "blank-description": _DESCRIBED_BY_THE_REQUEST,
    "description-list": _DESCRIBED_BY_THE_REQUEST,
    "description-mapping": _DESCRIBED_BY_THE_REQUEST,
    "name-traversal": _DESCRIBED_BY_THE_REQUEST,
    "name-nul": _DESCRIBED_BY_THE_REQUEST,
    "name-huge": _DESCRIBED_BY_THE_REQUEST,
    "name-list": _DESCRIBED_BY_THE_REQUEST,
    "description-huge": _DESCRIBED_BY_THE_REQUEST,
    # JSON cannot carry such bytes: a client sends them as lone surrogates, which are no text.
    "non-utf8-latin1": _NOT_UNICODE,
    "utf16": _NOT_UNICODE,
    "binary-garbage": _NOT_UNICODE,
    "name-space": {
        **_DESCRIBED_BY_THE_REQUEST,
        "mcp": "scripts refused at activation",
        "mcp_name": "Hostile Skill",
        "mcp_error": "its package is refused (invalid artifact key 'Hostile Skill'",
    },
}


def _skill_md_cases() -> list[dict[str, Any]]:
    cases = []
    for number, (short, what, error, strict, content) in enumerate(_SKILL_MD, start=1):
        folder = f"case-{number:02d}"
        case: dict[str, Any] = {
            "file": f"{number:02d}-{short}.md",
            "dir": folder,
            "what": what,
            "error": error,
            "strict": strict,
            "api_error": error,
            "mcp": "loads" if strict else "not loaded",
            "mcp_name": folder,
            "mcp_error": "" if strict else f"Skill {folder!r} cannot be activated now",
        }
        case.update(_SKILL_MD_EXTRA.get(short, {}))
        case["content"] = content(folder)
        cases.append(case)
    return cases


SKILL_MD_CASES: Final = _skill_md_cases()

# --- ZIP cases -----------------------------------------------------------------------------


def _info(
    name: str, *, mode: int = stat.S_IFREG | 0o644, method: int = zipfile.ZIP_DEFLATED
) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.compress_type = method
    info.create_system = 3
    info.external_attr = mode << 16
    return info


def _zip(*entries: tuple[zipfile.ZipInfo | str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" is the point of some cases
        for entry, data in entries:
            info = _info(entry) if isinstance(entry, str) else entry
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def _skill(*entries: tuple[zipfile.ZipInfo | str, bytes]) -> bytes:
    """A package whose first entry is a valid ``hostile/SKILL.md``, then `entries`."""
    return _zip((f"{_TOP}/SKILL.md", _GOOD_SKILL_MD), *entries)


_EOCD: Final = b"PK\x05\x06"
_CENTRAL: Final = b"PK\x01\x02"
_LOCAL: Final = b"PK\x03\x04"


def _records(data: bytes) -> list[tuple[int, int]]:
    """(central directory offset, local header offset) of every entry."""
    eocd = data.rindex(_EOCD)
    count, _, cd_offset = struct.unpack_from("<HII", data, eocd + 10)
    out, at = [], cd_offset
    for _ in range(count):
        assert data[at : at + 4] == _CENTRAL
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, at + 28)
        (local,) = struct.unpack_from("<I", data, at + 42)
        out.append((at, local))
        at += 46 + name_len + extra_len + comment_len
    return out


def _patch(
    data: bytes,
    index: int,
    *,
    flags: int = 0,
    file_size: int | None = None,
    name: bytes | None = None,
) -> bytes:
    """Edit entry `index` in both its local header and the central directory."""
    out = bytearray(data)
    central, local = _records(data)[index]
    # Field offsets: flags, uncompressed size, name length, name (APPNOTE 4.3.7 and 4.3.12).
    for at, flag_at, size_at, length_at, name_at in (
        (local, 6, 22, 26, 30),
        (central, 8, 24, 28, 46),
    ):
        assert bytes(out[at : at + 4]) in {_LOCAL, _CENTRAL}
        (old,) = struct.unpack_from("<H", out, at + flag_at)
        struct.pack_into("<H", out, at + flag_at, old | flags)
        if file_size is not None:
            struct.pack_into("<I", out, at + size_at, file_size)
        if name is not None:
            (length,) = struct.unpack_from("<H", out, at + length_at)
            assert len(name) == length
            out[at + name_at : at + name_at + length] = name
    return bytes(out)


def _nul_name() -> bytes:
    data = _skill((f"{_TOP}/evil#.txt", b"gotcha\n"))
    return _patch(data, 1, name=f"{_TOP}/evil\x00.txt".encode())


def _encrypted() -> bytes:
    return _patch(_skill((f"{_TOP}/secret.txt", b"not really encrypted\n")), 1, flags=0x1)


def _lying_size() -> bytes:
    """An entry that decompresses to 300 KB while its headers say 100 bytes."""
    data = _skill((f"{_TOP}/notes.txt", b"A" * 300_000))
    return _patch(data, 1, file_size=100)


def _corrupt() -> bytes:
    """Valid headers, but the deflate stream of the second entry is garbage."""
    notes = "".join(hashlib.sha256(str(i).encode()).hexdigest() + "\n" for i in range(64))
    data = bytearray(_skill((f"{_TOP}/references/notes.md", notes.encode())))
    _, local = _records(bytes(data))[1]
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    start = local + 30 + name_len + extra_len
    for offset in range(8, 40):
        data[start + offset] ^= 0x5A
    return bytes(data)


def _overlapping() -> bytes:
    """Twenty directory entries that all point at one local file (a non-recursive bomb).

    40,000 bytes each keeps the declared total under the limit: the entries pass the checks
    that read headers, and extraction must then notice the shared data and roll back.
    """
    base = _skill((f"{_TOP}/a00.txt", b"\x00" * 40_000))
    eocd = base.rindex(_EOCD)
    count, cd_size, cd_offset = struct.unpack_from("<HII", base, eocd + 10)
    central, _ = _records(base)[1]
    record = base[central : cd_offset + cd_size]
    name = f"{_TOP}/a00.txt".encode()
    extra = b"".join(record.replace(name, f"{_TOP}/a{i:02d}.txt".encode()) for i in range(1, 20))
    directory = base[cd_offset : cd_offset + cd_size] + extra
    end = bytearray(base[eocd:])
    struct.pack_into("<HHI", end, 8, count + 19, count + 19, len(directory))
    return base[:cd_offset] + directory + bytes(end)


def _truncated() -> bytes:
    data = _skill((f"{_TOP}/scripts/run.py", b"print('hi')\n" * 50))
    return data[: len(data) // 2]


def _many_entries() -> bytes:
    files = [(_info(f"{_TOP}/f{i:03d}.txt", method=zipfile.ZIP_STORED), b"") for i in range(150)]
    return _skill(*files)


def _total_bomb() -> bytes:
    """Twenty 64 KiB entries of zeros: each under the ratio floor, 1.3 MB in all."""
    return _skill(*((f"{_TOP}/zeros/z{i:02d}.bin", b"\x00" * 65_536) for i in range(20)))


_SYMLINK: Final = stat.S_IFLNK | 0o777

# (short name, what, error, builder)
_ZIPS: Final[list[tuple[str, str, str, Callable[[], bytes]]]] = [
    ("traversal-dotdot", "an entry '../escape.txt' beside the skill",
     "path traversal ('..')", lambda: _skill(("../escape.txt", b"gotcha\n"))),
    ("traversal-inner", "'hostile/../../escape.txt': '..' inside the path",
     "path traversal ('..')", lambda: _skill((f"{_TOP}/../../escape.txt", b"gotcha\n"))),
    ("traversal-backslash", "'hostile\\..\\..\\escape.txt': Windows separators",
     "path traversal ('..')", lambda: _skill((f"{_TOP}\\..\\..\\escape.txt", b"gotcha\n"))),
    ("traversal-escape-sequence", "'../' and a terminal escape sequence in the name",
     "path traversal ('..')", lambda: _skill(("../\x1b[2Jescape.txt", b"gotcha\n"))),
    ("absolute-path", "an absolute entry '/tmp/skillweave-hostile-absolute.txt'",
     "absolute path", lambda: _skill(("/tmp/skillweave-hostile-absolute.txt", b"gotcha\n"))),
    ("windows-drive", "an entry on a drive, 'C:/skillweave-hostile.txt'", "absolute path",
     lambda: _skill(("C:/skillweave-hostile.txt", b"gotcha\n"))),
    ("symlink-file", "a symlink 'hostile/passwd' to /etc/passwd", "symbolic link",
     lambda: _skill((_info(f"{_TOP}/passwd", mode=_SYMLINK), b"/etc/passwd"))),
    ("symlink-dir-write-through", "a symlink folder to '../..', then a file written through it",
     "symbolic link",
     lambda: _skill((_info(f"{_TOP}/out", mode=_SYMLINK), b"../.."),
                    (f"{_TOP}/out/escape.txt", b"gotcha\n"))),
    ("fifo", "a named pipe (FIFO) entry", "not a regular file or folder",
     lambda: _skill((_info(f"{_TOP}/pipe", mode=stat.S_IFIFO | 0o644), b""))),
    ("nul-in-name", "an entry named 'hostile/evil\\0.txt'", "NUL byte in name", _nul_name),
    ("empty-name", "an entry named './' (no name once '.' is dropped)", "empty name",
     lambda: _skill(("./", b""))),
    ("duplicate-names", "'hostile/SKILL.md' twice", "duplicate entry",
     lambda: _skill((f"{_TOP}/SKILL.md", b"---\nname: other\ndescription: Second.\n---\n"))),
    ("duplicate-casefold", "'hostile/skill.md' beside 'hostile/SKILL.md'", "duplicate entry",
     lambda: _skill((f"{_TOP}/skill.md", b"shadow\n"))),
    ("duplicate-unicode", "'café.txt' in NFC and NFD", "duplicate entry",
     lambda: _skill((f"{_TOP}/" + unicodedata.normalize("NFC", "café.txt"), b"nfc\n"),
                    (f"{_TOP}/" + unicodedata.normalize("NFD", "café.txt"), b"nfd\n"))),
    ("file-folder-clash", "'hostile/scripts' as a file and as a folder",
     "a file and a folder share this name",
     lambda: _skill((f"{_TOP}/scripts", b"file\n"), (f"{_TOP}/scripts/run.py", b"print()\n"))),
    ("too-many-entries", f"151 entries (the limit is {MAX_FILES})",
     f"more than {MAX_FILES} entries in the package", _many_entries),
    ("bomb-ratio", "1 MiB of zeros in one entry (about 1 KB compressed)",
     "is over the 100:1 limit", lambda: _skill((f"{_TOP}/zeros.bin", b"\x00" * 1_048_576))),
    ("bomb-total", f"20 entries of 64 KiB of zeros: 1.3 MB, over {MAX_BYTES:,} bytes",
     f"package holds more than {MAX_BYTES} bytes uncompressed", _total_bomb),
    ("bomb-overlapping", "20 directory entries sharing one local file (a non-recursive bomb)",
     "does not match its header", _overlapping),
    ("lying-size", "an entry whose headers say 100 bytes but which inflates to 300 KB",
     "does not match its header", _lying_size),
    ("encrypted", "an entry flagged as encrypted", "encrypted entry", _encrypted),
    ("bzip2", "an entry compressed with bzip2 (inflated without an output bound)",
     "unsupported compression method",
     lambda: _skill((_info(f"{_TOP}/data.txt", method=zipfile.ZIP_BZIP2), b"bz\n" * 100))),
    ("corrupt-data", "a valid directory over a garbled deflate stream",
     "data is corrupt or does not match its header", _corrupt),
    ("truncated", "the first half of a ZIP (no end of central directory)",
     "not a ZIP archive", _truncated),
    ("not-a-zip", "a text file named .zip", "not a ZIP archive",
     lambda: b"This is not a ZIP archive.\n"),
    ("no-skill-md", "a ZIP with no SKILL.md anywhere", "no SKILL.md in package",
     lambda: _zip((f"{_TOP}/README.md", b"# Hello\n"))),
    ("long-name", "an entry with a 300-character file name", "File name too long",
     lambda: _skill((f"{_TOP}/" + "n" * 300 + ".txt", b"long\n"))),
    ("deep-path", "an entry 2,000 folders deep, its path under PATH_MAX (issue 38)",
     "nested more than 64 folders deep",
     lambda: _skill((f"{_TOP}/" + "a/" * 2000 + "x.txt", b"deep\n"))),
]  # fmt: skip


def _zip_cases() -> list[dict[str, Any]]:
    cases = []
    for number, (short, what, error, make) in enumerate(_ZIPS, start=1):
        cases.append(
            {
                "file": f"{number:02d}-{short}.zip",
                "what": what,
                "error": error,
                "content": make(),
            }
        )
    return cases


ZIP_CASES: Final = _zip_cases()

# --- script and artifact-ref cases ---------------------------------------------------------
#
# `{marker}` in an argument is replaced by a path the test watches: a shell would create it.
# `{run}` in a ref is replaced by the session's own run prefix (``runs/mcp-…``), `{other}` by
# another session's.

SCRIPTS: Final[list[dict[str, Any]]] = [
    {"id": "dotdot-etc-passwd", "script": "../../etc/passwd", "args": [],
     "expect": "refused", "error": "'..' would escape its folder"},
    {"id": "absolute-bin-sh", "script": "/bin/sh", "args": ["-c", "touch {marker}"],
     "expect": "refused", "error": "absolute path"},
    {"id": "inner-dotdot", "script": "scripts/../../x", "args": [],
     "expect": "refused", "error": "'..' would escape its folder"},
    {"id": "dot", "script": ".", "args": [], "expect": "refused",
     "error": "empty or '.' path component"},
    {"id": "backslash", "script": "scripts\\..\\..\\x", "args": [],
     "expect": "refused", "error": "a backslash in the path"},
    {"id": "nul-byte", "script": "scripts/echo.py\u0000.txt", "args": [],
     "expect": "refused", "error": "holds a NUL character"},
    {"id": "very-long-name", "script": "scripts/" + "a" * 1000 + ".py", "args": [],
     "expect": "refused", "error": "at most 512 characters"},
    {"id": "a-directory", "script": "scripts", "args": [],
     "expect": "refused", "error": "is not in skill"},
    {"id": "home-ssh-key", "script": "~/.ssh/id_rsa", "args": [],
     "expect": "refused", "error": "is not in skill"},
    {"id": "empty-name", "script": "", "args": [],
     "expect": "refused", "error": "needs 'script', a non-empty string"},
    {"id": "arg-semicolon", "script": "scripts/echo.py", "args": ["; touch {marker}"],
     "expect": "literal"},
    {"id": "arg-command-substitution", "script": "scripts/echo.py",
     "args": ["$(touch {marker})"], "expect": "literal"},
    {"id": "arg-backticks", "script": "scripts/echo.py", "args": ["`touch {marker}`"],
     "expect": "literal"},
    {"id": "arg-pipe-and-redirect", "script": "scripts/echo.py",
     "args": ["| tee {marker}", "> {marker}", "&& touch {marker}"], "expect": "literal"},
    {"id": "arg-glob-and-newline", "script": "scripts/echo.py",
     "args": ["/*", "line one\nline two", "--help"], "expect": "literal"},
    {"id": "arg-10k-chars", "script": "scripts/echo.py", "args": ["A" * 10_000],
     "expect": "literal"},
    {"id": "arg-nul-byte", "script": "scripts/echo.py", "args": ["before\u0000after"],
     "expect": "refused", "error": "NUL"},
    {"id": "too-many-args", "script": "scripts/echo.py", "args": ["x"] * 300,
     "expect": "refused", "error": "at most 256 items"},
    {"id": "args-not-strings", "script": "scripts/echo.py", "args": [1, None],
     "expect": "refused", "error": "'args' must be a list of strings"},
]  # fmt: skip

ARTIFACT_REFS: Final[list[dict[str, Any]]] = [
    {"id": "other-run", "ref": "runs/other-run/executions/0123/outputs/report.txt",
     "error": "not an artifact of this session"},
    {"id": "other-session", "ref": "{other}executions/0123/outputs/report.txt",
     "error": "not an artifact of this session"},
    {"id": "other-run-uri", "ref": "artifact://runs/other-run/inputs/data.csv",
     "error": "not an artifact of this session"},
    {"id": "dotdot-traversal", "ref": "{run}../other-run/inputs/data.csv",
     "error": "not a valid artifact key"},
    {"id": "dotdot-to-etc", "ref": "{run}../../../etc/passwd",
     "error": "not a valid artifact key"},
    {"id": "absolute-path", "ref": "/etc/passwd", "error": "not an artifact of this session"},
    {"id": "url-encoded-traversal", "ref": "{run}%2e%2e/%2e%2e/etc/passwd",
     "error": "No artifact"},
    {"id": "backslash-traversal", "ref": "{run}..\\..\\etc\\passwd",
     "error": "not a valid artifact key"},
    {"id": "double-slash", "ref": "{run}/outputs//x.txt", "error": "not a valid artifact key"},
    {"id": "empty", "ref": "", "error": "not an artifact of this session"},
    {"id": "nul-byte", "ref": "{run}outputs/x\u0000.txt", "error": "not a valid artifact key"},
    {"id": "very-long", "ref": "{run}" + "a/" * 600 + "x.txt",
     "error": "not a valid artifact key"},
]  # fmt: skip

# --- owned names (issue 20) ----------------------------------------------------------------
#
# ZIP uploads that bring a skill named like one another source owns; the API under test has a
# directory skill ``dir-skill``. Each must be refused with 409, nothing stored.

_OWNED_SKILL_MD: Final = "---\nname: {name}\ndescription: {what}. Use when testing names.\n---\n"


def _tree_zip(*paths: str) -> bytes:
    return _zip(
        *(
            (
                f"{path}/SKILL.md",
                _OWNED_SKILL_MD.format(name=path.rsplit("/", 1)[-1], what="Hostile").encode(),
            )
            for path in paths
        )
    )


OWNED_NAMES: Final[list[dict[str, Any]]] = [
    {"file": "01-child-takes-a-directory-name.zip",
     "what": "a new top skill whose child is named like the directory skill 'dir-skill'",
     "content": _tree_zip("brand-new", "brand-new/dir-skill")},
    {"file": "02-grandchild-takes-a-directory-name.zip",
     "what": "the directory skill's name two levels down a new tree",
     "content": _tree_zip("brand-new", "brand-new/middle", "brand-new/middle/dir-skill")},
    {"file": "03-top-takes-a-directory-name.zip",
     "what": "a package whose top skill is named 'dir-skill'",
     "content": _tree_zip("dir-skill")},
]  # fmt: skip

# --- writing -------------------------------------------------------------------------------

_README_HEAD: Final = """\
# The hostile-input corpus (issues 9 and 20)

Generated by `make_corpus.py` (run `python tests/data/hostile/make_corpus.py` to regenerate;
it writes the same bytes every time) and run by `tests/reliability/test_hostile_input.py`
through every front door each case applies to:

* **CLI**: `skillweave skills validate case-NN/` for SKILL.md files (with `--strict` for the
  cases marked *strict*) and `skillweave skills unpack FILE.zip -o DEST` for ZIPs: exit code
  1, one line naming the problem, no traceback, nothing written outside DEST and no partial
  files in it.
* **REST API**: `POST /v1/skills/` (JSON `{name, description, content}`) and
  `POST /v1/skills/upload` (a ZIP holding `case-NN/SKILL.md`) for SKILL.md files,
  `POST /v1/skills/upload` for ZIPs: a 4xx `application/problem+json` whose `detail` names the
  problem, nothing stored under `skills/` or `catalog/`, no file left anywhere.
* **MCP** (the manager's front door over streamable HTTP, real sandboxes): a library holding
  every SKILL.md case beside a good skill (and one whose package is over the limits, made by
  the test); the manager starts, `list_skills` lists the good skill, and no refused case can
  be activated. Script names, arguments and artifact refs go to `run_skill_script` (and refs
  to `read_resource`) on the activated good skill; nothing appears in the store outside the
  session's `runs/mcp-…/`, the manager's `executions/` records and `skills/` packages.

The error column is the substring each front door's message must contain. ZIP cases are
checked with `SKILLS__PACKAGE_MAX_FILES={max_files}` and `SKILLS__PACKAGE_MAX_BYTES={max_bytes}`
(and the default 100:1 ratio), so that every archive here stays a few KB.
"""


def _cell(text: str) -> str:
    """`text` for a Markdown table cell: control characters escaped, long text cut short."""
    shown = text if len(text) <= 80 else f"{text[:40]}… ({len(text):,} chars)"
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in shown)
    shown = shown.replace("|", "\\|")
    if "`" in shown:
        return f"`` {shown} ``"
    return f"`{shown}`" if shown else "`''`"


def _readme() -> str:
    head = _README_HEAD.replace("{max_files}", str(MAX_FILES))
    lines = [head.replace("{max_bytes}", str(MAX_BYTES))]
    lines += [
        f"## Malformed SKILL.md files ({len(SKILL_MD_CASES)}, `skill_md/`)",
        "",
        "*strict*: the runtime loads such a skill leniently, with a warning (libraries written",
        "for other clients must load); `validate --strict` and uploads refuse it, and over MCP",
        "it can be activated, unless its name cannot be a store key (activation then says so).",
        "Every other case is refused everywhere, MCP included, but for the JSON upload of a",
        "file whose only fault is its name or description: the request names and describes the",
        "skill itself, its values replace the frontmatter's, and it is stored (marked below).",
        "",
        "| file | what it is | error it must give | MCP |",
        "|---|---|---|---|",
    ]
    for case in SKILL_MD_CASES:
        mcp = {
            "loads": "loads with a warning (*strict*)",
            "not loaded": "not loaded, not activatable",
            "scripts refused at activation": (
                f"listed; activates with a note, its scripts refused: {_cell(case['mcp_error'])}"
            ),
        }[case["mcp"]]
        error = _cell(case["error"])
        if not case["api_error"]:
            error += " (JSON upload: stored, with the request's name and description)"
        elif case["api_error"] != case["error"]:
            error += f" (JSON upload: {_cell(case['api_error'])})"
        lines.append(f"| `{case['file']}` | {case['what']} | {error} | {mcp} |")
    lines += [
        "",
        f"## Hostile ZIP packages ({len(ZIP_CASES)}, `zips/`)",
        "",
        "MCP: not applicable (the front door takes no uploads; packages reach it only through",
        "the store, built by `build_package`).",
        "",
        "| file | what it is | error it must give |",
        "|---|---|---|",
    ]
    for case in ZIP_CASES:
        lines.append(f"| `{case['file']}` | {case['what']} | {_cell(case['error'])} |")
    lines += [
        "",
        f"## Hostile script names and arguments ({len(SCRIPTS)}, `scripts.json`)",
        "",
        "MCP `run_skill_script` on an activated skill whose `scripts/echo.py` prints each",
        "argument's length and hash. CLI and REST API: not applicable (neither runs scripts by",
        "name from a client). *literal*: the script runs and receives the argument unchanged",
        "(no shell: `{marker}` is a file a shell would create, and it must not appear).",
        "",
        "| id | script | args | expected |",
        "|---|---|---|---|",
    ]
    for case in SCRIPTS:
        args = ", ".join(_cell(str(arg)) for arg in case["args"][:3])
        if len(case["args"]) > 3:
            args += f" … ({len(case['args'])} args)"
        expected = "literal" if case["expect"] == "literal" else f"error {_cell(case['error'])}"
        lines.append(f"| {case['id']} | {_cell(case['script'])} | {args} | {expected} |")
    lines += [
        "",
        f"## Hostile artifact refs ({len(ARTIFACT_REFS)}, `artifact_refs.json`)",
        "",
        "MCP: `run_skill_script` with `inputs: [ref]` gives an error result with this text, and",
        "`read_resource('artifact://' + ref)` an MCP error. `{run}` is the session's own run",
        "prefix, `{other}` another session's. CLI and REST API: not applicable (neither takes",
        "an artifact ref from a client; the API serves a run's artifacts by path under",
        "`/v1/runs/{id}/artifacts/`, whose traversal refusal `tests/api/test_runs.py` checks).",
        "",
        "| id | ref | error it must give |",
        "|---|---|---|",
    ]
    for case in ARTIFACT_REFS:
        lines.append(f"| {case['id']} | {_cell(case['ref'])} | {_cell(case['error'])} |")
    lines += [
        "",
        f"## Names another source owns ({len(OWNED_NAMES)}, `owned_names/`, issue 20)",
        "",
        "REST API `POST /v1/skills/upload` beside a directory skill `dir-skill`: 409",
        "problem+json whose detail says the name `is taken`, names where and who owns it;",
        "nothing stored; `dir-skill` still resolves to the directory.",
        "",
        "| file | what it is |",
        "|---|---|",
    ]
    for case in OWNED_NAMES:
        lines.append(f"| `{case['file']}` | {case['what']} |")
    lines += [
        "",
        f"## Hostile scripts in a sandbox ({len(SANDBOX)}, `sandbox/`, issues 20 and 38)",
        "",
        "Run by `tests/reliability/test_hostile_sandbox.py` through a real manager and its",
        "executors in each contained mode (bubblewrap, namespaces), as scripts of a skill with a",
        "configured secret. Each prints `ESCAPED …` for an attack that worked: none may. No",
        "process of a run may outlive it, the secret may appear in no result, stored log or",
        "store file, and where an error is given the run fails with it and keeps no outputs.",
        "The skill may reach one destination, a storing upstream on loopback, through the",
        "manager's egress proxy, which adds a bound credential. *egress* cases: no DNS query",
        "but for that destination, the credential never stored upstream outside the head of the",
        "one request the proxy wrote nor seen by the script, one egress record per request.",
        "",
        "| file | class | what it does | error |",
        "|---|---|---|---|",
    ]
    for case in SANDBOX:
        error = _cell(case["error"]) if case["error"] else "none (runs, contained)"
        lines.append(f"| `{case['file']}` | {case['class']} | {case['what']} | {error} |")
    total = len(SKILL_MD_CASES) + len(ZIP_CASES) + len(SCRIPTS) + len(ARTIFACT_REFS)
    total += len(OWNED_NAMES) + len(SANDBOX)
    lines += ["", f"{total} cases in all.", ""]
    lines += [
        "## Hostile layouts kept beside the corpus (issue 38)",
        "",
        "Some attacks are a layout, not a file, and are built by their tests at run time:",
        "install sources whose `.git` file, commondir, alternates, symlinks, config or",
        "submodules lead outside an allowed source (`tests/skills/test_install_confinement.py`,",
        "real git repositories, the CLI as a subprocess; `tests/api/test_install.py`); a",
        "library whose `PROBE-A` or `ｐｒｏｂｅ-ａ` would take `probe-a`'s secrets",
        "(`tests/integration/manager/test_secret_identity.py`, both isolation modes); and",
        "26 malformed request lines and 19 hostile request heads sent to the egress proxy",
        "(`tests/mcp_manager/test_egress_strict.py`).",
        "",
    ]
    return "\n".join(lines)


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=True) + "\n").encode()


def build() -> dict[str, bytes]:
    """Every corpus file, relative path to bytes."""
    files: dict[str, bytes] = {}
    for case in SKILL_MD_CASES:
        files[f"skill_md/{case['file']}"] = case["content"]
    for case in ZIP_CASES:
        files[f"zips/{case['file']}"] = case["content"]
    manifest = {
        "limits": {"package_max_files": MAX_FILES, "package_max_bytes": MAX_BYTES},
        "skill_md": [{k: v for k, v in case.items() if k != "content"} for case in SKILL_MD_CASES],
        "zips": [{k: v for k, v in case.items() if k != "content"} for case in ZIP_CASES],
    }
    files["cases.json"] = _json(manifest)
    files["scripts.json"] = _json(SCRIPTS)
    files["artifact_refs.json"] = _json(ARTIFACT_REFS)
    for case in OWNED_NAMES:
        files[f"owned_names/{case['file']}"] = case["content"]
    files["owned_names.json"] = _json(
        [{k: v for k, v in case.items() if k != "content"} for case in OWNED_NAMES]
    )
    for case in SANDBOX:
        files[f"sandbox/{case['file']}"] = case["source"].encode()
    files["sandbox.json"] = _json(
        [{k: v for k, v in case.items() if k != "source"} for case in SANDBOX]
    )
    files["README.md"] = _readme().encode()
    return files


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    for relative, data in build().items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
