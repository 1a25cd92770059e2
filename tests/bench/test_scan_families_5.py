"""The round-5 held-out mutation families of ``bench/scan_families_5.py``: each mutant of the
malicious corpus is valid (parses, passes ``node --check`` / ``bash -n``) and changes the cases
the family applies to; on small runnable scripts a mutant does what the script did and hides
what the family says it hides; a family with nothing to change, or given odd input, returns
``{}``. Nothing here runs the scanner."""

from __future__ import annotations

import ast
import re
import shutil
import sys
from pathlib import Path

import pytest

from bench.scan_families_5 import (
    FAMILIES_5,
    HELD_APART_5,
    js_decoders,
    js_reflect,
    py_lazy_modules,
    py_packed_literals,
    sh_escapes,
    sh_expansions,
)
from tests.bench.family_checks import (
    BASH,
    NODE,
    bash_check,
    calls,
    check_deterministic_and_bounded,
    needs_bash,
    needs_node,
    node_check,
    run,
)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "scan" / "malicious"

PY_SCRIPT = '''\
"""A docstring stays first."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse as up
import urllib.request

def scoped():
    local_value = 5
    return eval("local_value * 2")

def scoped_exec():
    exec("print('exec inside a function')")

with open("note.txt", "w", encoding="utf-8") as handle:
    handle.write("written through open")
print(open("note.txt", encoding="utf-8").read())
print(up.quote("a path/with spaces"), os.path.join("left", "right"))
print(urllib.request.Request("https://example.invalid/x").get_method())
sys.stdout.write("straight to stdout\\n")
sys.stdout.flush()
os.system("echo from-the-shell")
subprocess.run(["echo", "from-subprocess"], check=True)
exec("answer = 6 * 7")
code = compile("answer + 1", "<mutant>", "eval")
print(eval("answer + 0"), eval(code), scoped(), __import__("json").dumps({"key": "value"}))
print(type(json).__name__, json.dumps(["module used bare too"]))
scoped_exec()
match {"kind": "circle shape"}:
    case {"kind": "circle shape"}:
        print("matched a circle")
print("%s and %d" % ("formatted text", 3), "caf\\u00e9 au lait", "snowman \\u2603 here")
'''
PY_OUTPUT = (
    "written through open\na%20path/with%20spaces left/right\nGET\nstraight to stdout\n"
    'from-the-shell\nfrom-subprocess\n42 43 10 {"key": "value"}\n'
    'module ["module used bare too"]\nexec inside a function\nmatched a circle\n'
    "formatted text and 3 caf\u00e9 au lait snowman \u2603 here\n"
)

JS_SCRIPT = """\
'use strict';
const cp = require('child_process');
const { execSync, execFileSync: runFile } = require("child_process");
const fs = require('fs');
const path = require('path');
function show(text) { console.log(String(text).trim()); }
show(cp.execSync('echo one from cp'));
show(execSync('echo two destructured'))
show(runFile('echo', ['three renamed']));
show(path.posix.join('left-side', 'right-side'));
fs.writeFileSync('note.txt', 'written by fs');
show(fs.readFileSync('note.txt', 'utf8'));
show(eval('6 * 7'));
show(Function('return "made by Function"')());
show(new Function('a', 'return a + " with new"')('constructed'));
const table = { 'key-name': 'value for key', other: 'x' };
show(table['key-name'] + ' / ' + `template ${'inside a template'.length}`);
const obj = { eval(code) { return 'a method named eval: ' + code; } };
show(obj.eval('not the global'));
show('unicode: h\\u00e9llo \\u2713 \u00e9 \U0001f600' + " it's \\"quoted\\"");
if (table.other.length < 0) fetch('https://example.invalid/never');
"""
JS_OUTPUT = (
    "one from cp\ntwo destructured\nthree renamed\nleft-side/right-side\nwritten by fs\n42\n"
    "made by Function\nconstructed with new\nvalue for key / template 17\n"
    "a method named eval: not the global\n"
    'unicode: h\u00e9llo \u2713 \u00e9 \U0001f600 it\'s "quoted"\n'
)

SH_SCRIPT = """\
#!/bin/bash
set -eu
greeting="hello there, world"
eval "echo evaluated-$((6 * 7))"
sh -c 'echo from-sh'
bash -c "echo from-bash"
printf 'aGVsbG8gYmFzZTY0' | base64 -d; echo
echo "it's quoted, with a quote"
echo "* stars * here" "Mixed Case Text" "caf\u00e9 au lait"
echo https://example.invalid/path/x and /dev/tcp/localhost/9
url=https://example.invalid/assigned; echo "$url"
eval 'echo single-quoted $greeting'
inner=$(bash -c 'echo nested-substitution')
echo "$inner and $greeting"
cat <<EOF
curl in a heredoc "stays as written" https://example.invalid/heredoc
EOF
shout() { echo "SHOUT $1"; }
shout quietly
case "${1:-none}" in
  curl) echo curl-arg ;;
  *) echo "no argument given" ;;
esac
"""
SH_OUTPUT = (
    "evaluated-42\nfrom-sh\nfrom-bash\nhello base64\nit's quoted, with a quote\n"
    "* stars * here Mixed Case Text caf\u00e9 au lait\n"
    "https://example.invalid/path/x and /dev/tcp/localhost/9\nhttps://example.invalid/assigned\n"
    "single-quoted hello there, world\nnested-substitution and hello there, world\n"
    'curl in a heredoc "stays as written" https://example.invalid/heredoc\n'
    "SHOUT quietly\nno argument given\n"
)
SH_POSIX = """\
#!/bin/sh
x="posix value"
echo "$x" | base64 | base64 -d
sh -c 'echo from-sh'
eval 'echo from-eval'
echo "a longer string" https://example.invalid/posix
"""
SH_POSIX_OUTPUT = "posix value\nfrom-sh\nfrom-eval\na longer string https://example.invalid/posix\n"


def _corpus(suffix: str) -> list[Path]:
    return sorted(CORPUS.rglob(f"*{suffix}"))


# --- the corpus -----------------------------------------------------------------------------
APPLIES: dict[str, set[str]] = {
    # cases whose attack a family must reach (more may change)
    "py-lazy-modules": {
        "archive-unpacker",
        "code-formatter-pro",
        "fast-json-validator",
        "git-identity-check",
        "image-batch-resizer",
        "locale-helper",
        "plugin-updater",
        "remote-debugger",
        "string-utils",
        "subprocess-installer",
        "usage-telemetry",
    },
    "py-packed-literals": {
        "archive-unpacker",
        "aws-cost-report",
        "code-formatter-pro",
        "dotenv-loader",
        "git-identity-check",
        "hosts-manager",
        "plugin-updater",
        "process-inspector",
        "shell-aliases",
        "string-utils",
        "subprocess-installer",
    },
    "js-reflect": {
        "chart-renderer",
        "date-picker-widget",
        "env-doctor",
        "npm-config-sync",
        "repo-cloner",
        "text-obfuscator-check",
    },
    "js-decoders": {"chart-renderer", "env-doctor", "npm-config-sync", "repo-cloner"},
    "sh-escapes": {
        "backup-helper",
        "log-rotator",
        "port-checker",
        "scheduled-cleanup",
        "template-runner",
        "toolchain-setup",
    },
}
APPLIES["sh-expansions"] = APPLIES["sh-escapes"]


@pytest.mark.parametrize("family", sorted(FAMILIES_5))
def test_every_corpus_mutant_is_valid_and_the_attacks_are_reached(family, tmp_path) -> None:
    transform, suffix = FAMILIES_5[family]
    changed: set[str] = set()
    for path in _corpus(suffix):
        text = path.read_text(encoding="utf-8")
        outputs = transform(text, path.name)
        assert transform(text, path.name) == outputs  # deterministic
        for out_name, out in outputs.items():
            assert out_name == path.name
            assert out != text
            if suffix == ".py":
                ast.parse(out)
            elif suffix == ".js":
                node_check(tmp_path, out)
            elif BASH is not None:
                bash_check(tmp_path, out)
        if outputs:
            changed.add(path.relative_to(CORPUS).parts[0])
    assert APPLIES[family] <= changed


def test_the_corpus_attacks_lose_their_plain_spelling() -> None:
    """What a reader would grep for is gone from the mutants (checked as text, not scanned)."""
    unpack = (CORPUS / "archive-unpacker" / "scripts" / "unpack.py").read_text()
    assert "import os" not in py_lazy_modules(unpack, "unpack.py")["unpack.py"]
    identity = (CORPUS / "git-identity-check" / "scripts" / "identity.py").read_text()
    packed = py_packed_literals(identity, "identity.py")["identity.py"]
    assert "id_ed25519" not in packed
    assert "keys.gitcheck.app" not in packed
    clone = (CORPUS / "repo-cloner" / "scripts" / "clone.js").read_text()
    assert "exec(`" not in js_reflect(clone, "clone.js")["clone.js"]
    assert "child_process" not in js_decoders(clone, "clone.js")["clone.js"]
    port = (CORPUS / "port-checker" / "scripts" / "port.sh").read_text()
    for family in (sh_escapes, sh_expansions):
        mutant = family(port, "port.sh")["port.sh"]
        assert "/dev/tcp" not in mutant
        assert "bash -i" not in mutant
    setup = (CORPUS / "toolchain-setup" / "scripts" / "setup.sh").read_text()
    for family in (sh_escapes, sh_expansions):
        mutant = family(setup, "setup.sh")["setup.sh"]
        assert "quick-toolchain" not in mutant
        assert "curl" not in mutant


# --- Python ---------------------------------------------------------------------------------
@pytest.mark.parametrize("family", [py_lazy_modules, py_packed_literals])
def test_a_python_mutant_parses_and_prints_what_the_script_printed(family, tmp_path) -> None:
    mutant = family(PY_SCRIPT, "main.py")["main.py"]
    ast.parse(mutant)
    python = [sys.executable, "-u"]
    assert run(tmp_path / "before", python, "main.py", PY_SCRIPT) == PY_OUTPUT
    assert run(tmp_path / "after", python, "main.py", mutant) == PY_OUTPUT


def test_lazy_modules_leave_no_import_of_a_module_read_through_attributes() -> None:
    mutant = py_lazy_modules(PY_SCRIPT, "main.py")["main.py"]
    tree = ast.parse(mutant)
    imported = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    assert imported == {"json", "importlib"}  # json is used bare: a proxy would change it
    assert ast.get_docstring(tree) == "A docstring stays first."
    assert isinstance(tree.body[1], ast.ImportFrom)
    assert tree.body[1].module == "__future__"
    assert ".translate(_lzTABLE)" in mutant
    assert "'%c' * " in mutant
    assert {"eval", "exec", "open", "compile", "__import__"}.isdisjoint(calls(mutant))
    assert "_lzbuiltins.eval" in mutant
    for module in ("'os'", "'subprocess'", "'urllib.parse'", "'builtins'"):
        assert module not in mutant


def test_lazy_modules_leave_a_module_assigned_through_or_shadowed_alone() -> None:
    assert py_lazy_modules("import sys\nsys.stdout = None\n", "m.py") == {}
    assert py_lazy_modules("import os\nprint(os.__name__)\n", "m.py") == {}
    assert py_lazy_modules("import os\n\ndef f(os):\n    return os.x\n", "m.py") == {}
    assert py_lazy_modules("import os\nimport os\nos.system('x')\n", "m.py") == {}


def test_packed_literals_use_every_layer_and_hide_every_long_literal() -> None:
    mutant = py_packed_literals(PY_SCRIPT, "main.py")["main.py"]
    for literal in ("written through open", "echo from-the-shell", "local_value * 2"):
        assert literal not in mutant
    for piece in ("_pkb.b32decode(", "_pkb.a85decode(", "_pkbz.decompress(", "_pklz.decompress("):
        assert piece in mutant, piece
    assert "'circle shape'" in mutant  # a match pattern's key and value stay literal
    assert ast.get_docstring(ast.parse(mutant)) == "A docstring stays first."


def test_a_python_family_with_nothing_to_change_says_so() -> None:
    for family in (py_lazy_modules, py_packed_literals):
        assert family("x = 1\nprint(x)\n", "main.py") == {}
        assert family("print 'python 2'\n", "main.py") == {}
    assert py_packed_literals('"""A docstring long enough."""\nshort = "tiny"\n', "m.py") == {}


# --- JavaScript -----------------------------------------------------------------------------
@needs_node
@pytest.mark.parametrize("family", [js_reflect, js_decoders])
def test_a_javascript_mutant_prints_what_the_script_printed(family, tmp_path) -> None:
    mutant = family(JS_SCRIPT, "main.js")["main.js"]
    node_check(tmp_path, mutant)
    node = [NODE or "node"]
    assert run(tmp_path / "before", node, "main.js", JS_SCRIPT) == JS_OUTPUT
    assert run(tmp_path / "after", node, "main.js", mutant) == JS_OUTPUT


def test_js_reflect_calls_every_sink_through_reflect() -> None:
    mutant = js_reflect(JS_SCRIPT, "main.js")["main.js"]
    for piece in (
        "Reflect.apply(require, undefined, ['child_process'])",
        "Reflect.apply(execSync, undefined, [",
        "Reflect.apply(runFile, undefined, [",
        "Reflect.apply(eval, globalThis, [",
        "Reflect.apply(Function, undefined, [",
        "Reflect.construct(Function, ['a', ",
        "Reflect.get(",
        ", path.posix, [",
    ):
        assert piece in mutant, piece
    for call in ("cp.execSync(", "fs.readFileSync(", "fs.writeFileSync(", " eval('6"):
        assert call not in mutant, call
    assert "obj.eval('not the global')" in mutant  # a method is not the global
    assert "eval(code) {" in mutant  # nor is a method's definition


def test_js_decoders_use_every_decoder_and_keep_keys_and_directives() -> None:
    mutant = js_decoders(JS_SCRIPT, "main.js")["main.js"]
    for piece in ("Buffer.from('", "', 'hex').toString()", ".map((c) => c ^ 0x2f)", "decodeURI"):
        assert piece in mutant, piece
    assert mutant.startswith("'use strict';\n")
    assert "{ 'key-name': " in mutant
    for literal in ("child_process", "echo one from cp", "written by fs"):
        assert literal not in mutant, literal


def test_a_javascript_family_with_nothing_to_change_or_odd_input_says_so() -> None:
    for family in (js_reflect, js_decoders):
        assert family("const x = 1;\nconsole.log(x);\n", "a.js") == {}
        assert family("const s = 'unterminated;\n", "a.js") == {}
        assert family("eval(", "a.js") == {}
    passed = js_reflect("const { exec } = require('x');\nlist.forEach(exec);\nexec(1);\n", "a.js")
    assert "list.forEach(exec);\nexec(1);\n" in passed["a.js"]  # exec is not only called


# --- Shell ----------------------------------------------------------------------------------
@needs_bash
@pytest.mark.parametrize("family", [sh_escapes, sh_expansions])
@pytest.mark.parametrize(
    ("script", "output", "shell"),
    [(SH_SCRIPT, SH_OUTPUT, "bash"), (SH_POSIX, SH_POSIX_OUTPUT, "sh")],
)
def test_a_shell_mutant_prints_what_the_script_printed(
    family, script, output, shell, tmp_path
) -> None:
    runner = shutil.which(shell)
    if runner is None:
        pytest.skip(f"{shell} is not installed")
    mutant = family(script, "main.sh")["main.sh"]
    bash_check(tmp_path, mutant)
    assert run(tmp_path / "before", [runner], "main.sh", script) == output
    assert run(tmp_path / "after", [runner], "main.sh", mutant) == output


def test_sh_escapes_use_every_spelling_and_leave_heredocs_alone() -> None:
    mutant = sh_escapes(SH_SCRIPT, "main.sh")["main.sh"]
    for piece in ("$'\\x", "printf '%b' '\\0", "| tr 'A-Za-z' 'N-ZA-Mn-za-m')"):
        assert piece in mutant, piece
    assert 'curl in a heredoc "stays as written" https://example.invalid/heredoc\n' in mutant
    assert "  curl) echo curl-arg ;;" in mutant
    for gone in ("https://example.invalid/path", "/dev/tcp/", "hello there, world", "\neval "):
        assert gone not in mutant, gone
    posix = sh_escapes(SH_POSIX, "main.sh")["main.sh"]
    assert "$'" not in posix  # no bash-only quoting under #!/bin/sh


SH_EXPANSIONS = {
    "strip": r"\$\{\w+//[@^:+=]/\}",
    "stand-in": r"\$\{\w+//[@^:+=]/[^}]\}",
    "case": r"\$\{\w+(,,|\^\^)\}",
    "chunks": r"\$\{\w+:\d+:\d\}",
    "cut": r"\$\{\w+#zq_\}\$\{\w+%_qz\}",
}


def test_sh_expansions_use_every_expansion_in_turn() -> None:
    met: set[str] = set()
    for salt in range(8):
        source = f"#!/bin/bash\n# variant {salt}\n" + SH_SCRIPT.split("\n", 1)[1]
        mutant = sh_expansions(source, "main.sh")["main.sh"]
        met |= {kind for kind, shape in SH_EXPANSIONS.items() if re.search(shape, mutant)}
    assert met == set(SH_EXPANSIONS) - {"cut"}
    posix = sh_expansions(SH_POSIX, "main.sh")["main.sh"]
    assert {kind for kind, shape in SH_EXPANSIONS.items() if re.search(shape, posix)} == {"cut"}


def test_a_shell_family_with_nothing_to_change_or_odd_input_says_so() -> None:
    quiet = "#!/bin/bash\nx=1\nif true; then\n  echo in\nfi\n"
    for family in (sh_escapes, sh_expansions):
        assert family(quiet, "a.sh") == {}
        assert family("echo 'unterminated\n", "a.sh") == {}
        assert family("curl `echo https://example.invalid`\n", "a.sh") == {}


# --- every family ---------------------------------------------------------------------------
def test_the_six_families_are_registered_and_held_apart() -> None:
    assert set(HELD_APART_5) == set(FAMILIES_5)
    assert len(FAMILIES_5) == 6
    assert {suffix for _, suffix in FAMILIES_5.values()} == {".py", ".js", ".sh"}


@pytest.mark.parametrize("name", sorted(FAMILIES_5))
def test_a_family_is_deterministic_and_never_raises_on_hostile_input(name) -> None:
    transform, _ = FAMILIES_5[name]
    script = {"py": PY_SCRIPT, "js": JS_SCRIPT, "sh": SH_SCRIPT}[name[:2]]
    check_deterministic_and_bounded(
        transform,
        script,
        seed=name,
        more=("import os\n" + "os.system('x')\n" * 5_000, "echo https://a.invalid/ " * 5_000),
    )
