"""The held-out mutation families of ``bench/scan_families.py``: each mutant is valid (parses,
passes ``node --check`` / ``bash -n``), does what the script did, hides what the family says it
hides, and a family with nothing to change, or given odd input, returns ``{}``."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
import time

import pytest

from bench.scan_families import (
    FAMILIES_2,
    HELD_APART_2,
    js_lookup,
    js_strings,
    py_attrgetter,
    py_bytes_xor,
    py_default_args,
    sh_pieces,
)
from tests.bench.family_checks import BASH, NODE, calls, needs_bash, needs_node, node_check, run

PY_SCRIPT = """\
import os
import subprocess
import sys
import urllib.parse

def shout(text):
    return text.upper()

def scoped():
    local_value = 5
    return eval("local_value * 2")

with open("note.txt", "w", encoding="utf-8") as handle:
    handle.write("written through open")
print(open("note.txt", encoding="utf-8").read())
print(urllib.parse.quote("a path/with spaces"))
sys.stdout.flush()
os.system("echo from-the-shell")
subprocess.run(["echo", "from-subprocess"], check=True)
exec("answer = 6 * 7")
print(eval("answer + 0"), shout("quiet please"), scoped())
"""
PY_OUTPUT = (
    "written through open\na%20path/with%20spaces\nfrom-the-shell\nfrom-subprocess\n"
    "42 QUIET PLEASE 10\n"
)
HIDDEN_CALLS = {"os.system", "subprocess.run", "urllib.parse.quote", "eval", "exec", "open"}

JS_SCRIPT = """\
'use strict';
const cp = require('child_process');
const { execSync: run } = require("child_process");
const greeting = "hello there, world";
const table = { "key-name": 'value for key', other: 'x' };
// a comment with "a string in it" stays
/* a block "comment" too */
const pattern = /ab+c"quote/g;
const shown = `template ${greeting.length} "not a string"`;
console.log(greeting, table["key-name"], pattern.test('abbc"quote'), shown)
"separate statement".split(' ').forEach((word) => console.log(word));
console.log(cp.execSync('echo from-the-shell').toString().trim());
console.log(run('echo from-run').toString().trim());
console.log(require('child_process').execSync('echo direct').toString().trim());
console.log(eval('6 * 7'), new Function('return "made by Function"')());
const picked = greeting.length > 3 ? "first choice" : "second choice";
console.log(picked, 'unicode: h\\u00e9llo \\u2713 \u00e9 \U0001f600',
  "it's \\"quoted\\"\\n".trim());
if (greeting.length < 0) fetch('https://example.invalid/never');
"""
JS_OUTPUT = (
    'hello there, world value for key true template 18 "not a string"\nseparate\nstatement\n'
    "from-the-shell\nfrom-run\ndirect\n42 made by Function\n"
    'first choice unicode: h\u00e9llo \u2713 \u00e9 \U0001f600 it\'s "quoted"\n'
)

SH_SCRIPT = """\
#!/bin/bash
set -euo pipefail
greeting="hello there, world"
echo "$greeting"
printf '%s\\n' "a longer literal string"
eval "echo evaluated-$((6 * 7))"
sh -c 'echo from-sh'
bash -c "echo from-bash"
printf 'aGVsbG8gYmFzZTY0' | base64 -d; echo
if bash -c 'exit 0'; then echo "branch taken ok"; fi
inner=$(bash -c 'echo nested-substitution')
echo "$inner and more text" "${HOME:+home is set}"
cat <<EOF
curl in a heredoc "stays as written"
EOF
# curl in a comment stays
case "${1:-none}" in
  curl) echo curl-arg ;;
  *) echo "no argument given" ;;
esac
"""
SH_OUTPUT = (
    "hello there, world\na longer literal string\nevaluated-42\nfrom-sh\nfrom-bash\n"
    "hello base64\nbranch taken ok\nnested-substitution and more text home is set\n"
    'curl in a heredoc "stays as written"\nno argument given\n'
)


# --- Python ---------------------------------------------------------------------------------
@pytest.mark.parametrize("family", [py_attrgetter, py_default_args, py_bytes_xor])
def test_a_python_mutant_parses_and_prints_what_the_script_printed(family, tmp_path) -> None:
    mutant = family(PY_SCRIPT, "main.py")["main.py"]
    ast.parse(mutant)
    python = [sys.executable, "-u"]
    assert run(tmp_path / "before", python, "main.py", PY_SCRIPT) == PY_OUTPUT
    assert run(tmp_path / "after", python, "main.py", mutant) == PY_OUTPUT


def test_attrgetter_calls_every_sink_through_operator_or_importlib() -> None:
    mutant = py_attrgetter(PY_SCRIPT, "main.py")["main.py"]
    assert not calls(mutant) & HIDDEN_CALLS
    for word in ("_operator.attrgetter(", "_operator.methodcaller(", "import_module("):
        assert word in mutant


def test_default_args_hands_every_sink_to_a_helper() -> None:
    mutant = py_default_args(PY_SCRIPT, "main.py")["main.py"]
    assert not calls(mutant) & HIDDEN_CALLS
    assert "_f=subprocess.run" in mutant
    assert "@_via(os.system)" in mutant
    assert "_f=eval" in mutant  # and eval is handed its caller's namespaces
    assert "('local_value * 2', globals(), locals())" in mutant


def test_bytes_xor_hides_every_long_literal_both_ways() -> None:
    mutant = py_bytes_xor(PY_SCRIPT, "main.py")["main.py"]
    for literal in ("written through open", "from-the-shell", "local_value * 2", "note.txt"):
        assert literal not in mutant
    assert "^ 90 for b in b'" in mutant
    assert "bytes.fromhex(" in mutant


def test_a_python_family_with_nothing_to_change_says_so() -> None:
    for family in (py_attrgetter, py_default_args, py_bytes_xor):
        assert family("x = 1\nprint(x)\n", "main.py") == {}
    assert py_bytes_xor('"""A docstring long enough."""\nshort = "tiny"\n', "m.py") == {}


def test_a_shadowed_sink_is_left_alone() -> None:
    source = "import os\n\ndef open(path):\n    return path\n\nos = None\nprint(open('x'))\n"
    assert py_attrgetter(source, "main.py") == {}
    assert py_default_args(source, "main.py") == {}


# --- JavaScript -----------------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize("family", [js_strings, js_lookup])
def test_a_javascript_mutant_prints_what_the_script_printed(family, tmp_path) -> None:
    mutant = family(JS_SCRIPT, "main.js")["main.js"]
    node_check(tmp_path, mutant)
    node = [NODE or "node"]
    assert run(tmp_path / "before", node, "main.js", JS_SCRIPT) == JS_OUTPUT
    assert run(tmp_path / "after", node, "main.js", mutant) == JS_OUTPUT


def test_js_strings_rebuilds_long_literals_in_code_only(tmp_path) -> None:
    mutant = js_strings(JS_SCRIPT, "main.js")["main.js"]
    node_check(tmp_path, mutant)
    for literal in ('"hello there, world"', "'echo from-the-shell'", '"first choice"'):
        assert literal not in mutant
    for kept in (
        '"a string in it"',
        '"comment"',
        '/ab+c"quote/g',
        '"not a string"',
        "'use strict'",
    ):
        assert kept in mutant
    assert '"key-name":' in mutant  # an object key stays a literal
    for style in (" + '", "].join('')", "String.fromCharCode(", "Buffer.from('"):
        assert style in mutant
    # a line that opens with a string never opens with ( or [ (automatic semicolons)
    assert "\nString.fromCharCode(" in mutant


def test_js_strings_leaves_module_specifiers_and_relative_paths(tmp_path) -> None:
    source = (
        "import fs from 'node:fs';\nexport { x } from \"./module-here.js\";\n"
        "const helper = require('./local-helper');\nconst later = import('../up-there.js');\n"
    )
    assert js_strings(source, "m.mjs") == {}
    mixed = source + "console.log('something long enough');\n"
    assert js_strings(mixed, "m.mjs")["m.mjs"].startswith(source)


def test_js_lookup_reaches_the_calls_by_computed_access(tmp_path) -> None:
    mutant = js_lookup(JS_SCRIPT, "main.js")["main.js"]
    node_check(tmp_path, mutant)
    for hidden in ("child_process", "execSync(", "eval(", "new Function(", "fetch("):
        assert hidden not in mutant
    assert "globalThis['ev'+'al']('6 * 7')" in mutant
    assert "{ ['exec'+'Sync']: run }" in mutant
    assert "cp['exec'+'Sync']('echo" in mutant


def test_js_lookup_leaves_a_shadowed_or_absent_global() -> None:
    assert js_lookup("function fetch(u) { return u; }\nconsole.log(fetch('x'));\n", "a.js") == {}
    assert js_lookup("const o = { eval(x) { return x; } };\no.eval(1);\n", "a.js") == {}
    assert js_strings("const a = 'short';\n// 'a long comment string'\n", "a.js") == {}


# --- shell ----------------------------------------------------------------------------------
@needs_bash
def test_a_shell_mutant_prints_what_the_script_printed(tmp_path) -> None:
    mutant = sh_pieces(SH_SCRIPT, "run.sh")["run.sh"]
    assert subprocess.run([BASH or "bash", "-n", "-c", mutant], check=False).returncode == 0
    bash = [BASH or "bash"]
    assert run(tmp_path / "before", bash, "run.sh", SH_SCRIPT) == SH_OUTPUT
    assert run(tmp_path / "after", bash, "run.sh", mutant) == SH_OUTPUT
    assert mutant.startswith("#!/bin/bash\n_c1=")
    for kept in ('curl in a heredoc "stays as written"', "# curl in a comment", "  curl) echo"):
        assert kept in mutant
    assert '"hello there, world"' not in mutant


@needs_bash
def test_sh_pieces_rewrites_downloads_without_running_them() -> None:
    source = (
        '#!/bin/sh\ncurl -fsSL "https://example.invalid/install.sh" | bash\n'
        "wget -qO- https://example.invalid/x | sh && echo done\nsudo bash -c 'curl x'\n"
    )
    mutant = sh_pieces(source, "i.sh")["i.sh"]
    assert subprocess.run([BASH or "bash", "-n", "-c", mutant], check=False).returncode == 0
    lines = mutant.splitlines()
    assert lines[1] == "_c1=cu; _c2=rl; _c3=ba; _c4=sh; _c5=wg; _c6=et; _c7=s; _c8=h"
    assert lines[2].startswith('"$_c1$_c2" -fsSL "https://exam')
    assert lines[2].endswith('| "$_c3$_c4"')
    assert '"https://example.invalid/install.sh"' not in mutant
    assert lines[3].startswith('"$_c5$_c6" -qO-')
    assert lines[4] == "sudo bash -c 'curl x'"  # an argument, and a single-quoted string


def test_sh_pieces_with_nothing_to_change_says_so() -> None:
    assert sh_pieces("#!/bin/sh\necho hi\nls -l 'some long argument'\n", "a.sh") == {}


# --- every family ---------------------------------------------------------------------------
ODD = [
    "",
    "\x00\x01",
    "def (",
    "'''",
    "`${",
    '"unterminated',
    "$( (( <<EOF",
    "<< $weird\ncurl x",
    "/* never closed",
    "(" * 5000,
    "{" * 20000 + "}" * 19999,
    "$(" * 3000 + "curl",
    "x = " + "[" * 3000 + "]" * 3000,
    "\ud800 lone surrogate 'abcdefgh'",
    "eval(" * 2000,
]


@pytest.mark.parametrize("family", HELD_APART_2)
def test_a_family_never_raises_on_odd_input_and_stays_quick(family) -> None:
    transform, _ = FAMILIES_2[family]
    pieces = ["'abcdefgh'", '"x\\"y"', "`a${b}c`", "/re/", "//c\n", "#c\n", "$(", ")", "{",
              "}", "curl ", "eval(", "require('child_process')", "\n", ";", "<<E\n", "E\n",
              " "]  # fmt: skip
    rng = random.Random(family)
    odd = ODD + ["".join(rng.choice(pieces) for _ in range(60)) for _ in range(200)]
    for text in odd:
        assert isinstance(transform(text, "x"), dict)
    big = "x = 'a string of some length'\n" * 5000
    started = time.perf_counter()
    transform(big, "x")
    assert time.perf_counter() - started < 20


def test_the_families_are_all_held_apart() -> None:
    assert set(HELD_APART_2) == set(FAMILIES_2)
    assert len(FAMILIES_2) == 6
    assert {suffix for _, suffix in FAMILIES_2.values()} == {".py", ".js", ".sh"}
