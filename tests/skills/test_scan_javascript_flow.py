"""The JavaScript rules follow values, not patterns: fetched or decoded data reaching code
execution is critical however it travels (variables, properties, functions, callbacks,
promises), a dangerous callable named at run time is at least high whatever builds the name,
unsafe deserialisers of fetched data are high, and busy benign scripts stay below medium.
Hostile files stay fast."""

from __future__ import annotations

import random
import time

import pytest

from skillweave.config import Severity, bundled_skills_dir
from skillweave.skills.scan import ScanReport
from skillweave.skills.scan.report import severity_rank
from tests.skills.scan_probe import HOSTILE_SECONDS, scan_package, worst


def scan(code: str, name: str = "scripts/a.js") -> ScanReport:
    return scan_package({name: code})


def at_least(report: ScanReport, rule: str, severity: Severity) -> bool:
    found = worst(report, rule)
    return found is not None and severity_rank(found) >= severity_rank(severity)


# --- decoded or fetched code run: critical ---------------------------------------------------

RUNS_PAYLOAD = {
    "await-text": "const r = await fetch(u);\nconst body = await r.text();\neval(body);\n",
    "then-chain": "fetch(u).then((r) => r.text()).then((t) => new Function(t)());\n",
    "then-eval": "fetch(u).then(r => r.text()).then(eval);\n",
    "https-events": (
        "const https = require('https');\n"
        "https.get(u, (res) => {\n  let data = '';\n  res.on('data', (c) => { data += c; });\n"
        "  res.on('end', () => { require('vm').runInThisContext(data); });\n});\n"
    ),
    "promise-wrapper": (
        "const https = require('node:https');\n"
        "function download(url) {\n  return new Promise((resolve) => {\n"
        "    https.get(url, (res) => { let b = ''; res.on('data', (c) => (b += c));\n"
        "      res.on('end', () => resolve(b)); });\n  });\n}\n"
        "async function main() { const src = await download(U); eval(src); }\nmain();\n"
    ),
    "axios-destructured": (
        "import axios from 'axios';\nconst { data } = await axios.get(U);\n"
        "const { execSync } = require('child_process');\nexecSync(data);\n"
    ),
    "got-property": (
        "const got = require('got');\nconst cfg = {};\ncfg.hook = (await got(U)).body;\n"
        "setTimeout(cfg.hook, 10);\n"
    ),
    "base64-helper": (
        "function unpack(s) { return Buffer.from(s, 'base64').toString('utf8'); }\n"
        "const run = eval;\nrun(unpack(BLOB));\n"
    ),
    "atob-call": "const code = atob(P);\neval.call(null, code);\n",
    "hex-object": (
        "const parts = { body: Buffer.from(H, 'hex').toString() };\n"
        "new (require('vm').Script)(parts.body).runInThisContext();\n"
    ),
    "zlib": (
        "const zlib = require('zlib');\nconst src = zlib.inflateSync(Buffer.from(B, 'base64'));\n"
        "Function(src.toString())();\n"
    ),
    "char-codes-map": (
        "const codes = [99, 111, 110, 115, 111, 108, 101, 46, 108, 111, 103, 40, 49, 41];\n"
        "const s = codes.map((c) => String.fromCharCode(c)).join('');\nnew Function(s)();\n"
    ),
    "reversed": "const x = ')1(gol.elosnoc'.split('').reverse().join('');\neval(x);\n",
    "unescape": "eval(unescape('%63%6f%6e%73%6f%6c%65%2e%6c%6f%67%28%31%29'));\n",
    "spawn-shell": (
        "const cp = require('child_process');\n"
        "cp.spawn('/bin/sh', ['-c', Buffer.from(P, 'base64').toString()]);\n"
    ),
    "data-url-import": "await import('data:text/javascript;base64,' + PAYLOAD);\n",
    "constructor-chain": "[].constructor.constructor(atob(P))();\n",
    "indirect-eval": "(0, eval)(atob(P));\n",
    "iife": "(async () => {\n  const r = await fetch(U);\n  eval(await r.text());\n})();\n",
}


@pytest.mark.parametrize("code", RUNS_PAYLOAD.values(), ids=RUNS_PAYLOAD.keys())
def test_decoded_or_fetched_code_run_is_critical(code: str) -> None:
    report = scan(code)
    assert worst(report, "exec.decoded-payload") == "critical", report.findings


def test_the_finding_shows_the_decoded_code() -> None:
    report = scan("const c = atob('cmVxdWlyZSgiY2hpbGRfcHJvY2VzcyIp');\neval(c);\n")
    [finding] = [f for f in report.findings if f.rule == "exec.decoded-payload"]
    assert 'require("child_process")' in finding.message
    assert finding.line == 2
    assert "eval(c)" in finding.excerpt


# --- dynamically named dangerous callables: at least high -------------------------------------

DYNAMIC_NAMES = {
    "concat": "global['ev' + 'al'](x);\n",
    "join": "const n = ['e', 'v', 'a', 'l'].join('');\nglobalThis[n](x);\n",
    "template": "const a = 'ev';\nwindow[`${a}al`](x);\n",
    "reverse": "const k = 'lave'.split('').reverse().join('');\nglobal[k](x);\n",
    "char-codes": "globalThis[String.fromCharCode(101, 118, 97, 108)](x);\n",
    "escapes": "const s = '\\x65\\x76\\x61\\x6c';\nglobal[s](x);\n",
    "require-built": "const cp = require('child' + '_process');\ncp.execSync('id');\n",
    "module-member": "require('child_process')['ex' + 'ec'](cmd);\n",
    "object-pieces": (
        "const p = { a: 'exec', b: 'Sync' };\nrequire('child_process')[p.a + p.b]('id');\n"
    ),
    "process-binding": "process['bin' + 'ding']('spawn_sync');\n",
    "reflect": "const f = Reflect.get(globalThis, 'ev'.concat('al'));\nf(x);\n",
    "slice": "const k = 'xxevalxx'.slice(2, 6);\nglobal[k](x);\n",
    "replace": "const k = 'e_v_a_l'.replace(/_/g, '');\nglobal[k](x);\n",
    "function-helper": (
        "function name(a, b) { return a + b; }\nglobal[name('ev', 'al')](payload);\n"
    ),
}


@pytest.mark.parametrize("code", DYNAMIC_NAMES.values(), ids=DYNAMIC_NAMES.keys())
def test_a_dangerous_callable_named_at_run_time_is_high(code: str) -> None:
    report = scan(code)
    assert at_least(report, "obfuscation.dynamic-lookup", "high"), report.findings


def test_a_lookup_that_resolves_to_a_sink_is_that_sink() -> None:
    report = scan("const cp = require('child' + '_process');\ncp['ex' + 'ec'](atob(P));\n")
    assert worst(report, "exec.decoded-payload") == "critical", report.findings
    built = scan("global['ev' + 'al']('con' + 'sole.log(1)');\n")
    assert worst(built, "exec.dynamic-code") == "high", built.findings


def test_code_read_from_the_home_folder_is_high() -> None:
    report = scan(
        "const fs = require('fs');\nconst os = require('os');\nconst path = require('path');\n"
        "const src = fs.readFileSync(path.join(os.homedir(), '.cache', 'h.js'), 'utf8');\n"
        "eval(src);\n"
    )
    assert worst(report, "exec.dynamic-code") == "high", report.findings


def test_code_built_from_constant_pieces_is_high() -> None:
    report = scan("const a = 'require(\"fs\")';\nconst b = '.rmSync(\"x\")';\neval(a + b);\n")
    assert worst(report, "exec.dynamic-code") == "high"
    assert any("rmSync" in f.message for f in report.findings), report.findings


# --- deserialisation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "const s = require('node-serialize');\nconst r = await fetch(U);\n"
        "s.unserialize(await r.text());\n",
        "const v8 = require('v8');\nconst r = await fetch(U);\n"
        "v8.deserialize(Buffer.from(await r.arrayBuffer()));\n",
        "const yaml = require('js-yaml');\nconst { data } = await require('axios').get(U);\n"
        "yaml.load(data, { schema: yaml.DEFAULT_FULL_SCHEMA });\n",
    ],
)
def test_fetched_data_deserialised_unsafely_is_high(code: str) -> None:
    report = scan(code)
    assert at_least(report, "exec.deserialization", "high"), report.findings


# --- shells ------------------------------------------------------------------------------------


def test_shell_commands_keep_their_severities() -> None:
    constant = scan("const { exec } = require('child_process');\nexec('ls -la');\n")
    assert worst(constant, "exec.shell") == "medium"
    built = scan("const { exec: run } = require('child_process');\nrun(`git clone ${url}`);\n")
    assert worst(built, "exec.shell") == "high"
    shell = scan("require('child_process').spawnSync('bash', ['-c', cmd]);\n")
    assert worst(shell, "exec.shell") == "high"


# --- benign scripts ----------------------------------------------------------------------------

BENIGN = {
    "fetch-json": (
        "const res = await fetch('https://api.github.com/repos/a/b');\n"
        "const data = JSON.parse(await res.text());\nconsole.log(data.stargazers_count);\n"
    ),
    "https-json": (
        "const https = require('https');\nhttps.get(U, (res) => { let b = '';\n"
        "  res.on('data', (c) => (b += c));\n  res.on('end', () => console.log(JSON.parse(b)));\n"
        "});\n"
    ),
    "spawn-arrays": (
        "const { spawn, execFileSync } = require('child_process');\n"
        "const child = spawn('git', ['log', '--oneline', ref], { stdio: 'inherit' });\n"
        "execFileSync('npm', ['view', name, 'version'], { encoding: 'utf8' });\n"
    ),
    "image-base64": (
        "const fs = require('fs');\nconst img = Buffer.from(payload.image, 'base64');\n"
        "fs.writeFileSync('outputs/chart.png', img);\n"
    ),
    "timers": "setTimeout(() => process.exit(0), 1000);\nsetInterval(tick, 50);\n",
    "dynamic-require-local": (
        "const path = require('path');\n"
        "const plugin = require(path.join(__dirname, 'plugins', n));\n"
        "const locale = require('./locales/' + lang + '.json');\n"
        "const base = 'lodash';\nconst fp = require(base + '/fp');\n"
    ),
    "string-building": (
        "const label = 'total: ' + count;\nconst parts = ['a', 'b'].join('-');\n"
        "const key = `${prefix}_${name}`;\nconst cfg = {};\ncfg[key] = parts + label;\n"
        "console.log(obj['na' + 'me'], window[handler]);\n"
    ),
    "yaml-default": "const yaml = require('js-yaml');\nconst doc = yaml.load(text);\n",
    "regex-exec": "const m = /a(b)/.exec(text);\nconst r = re.exec(line);\n",
    "typescript": (
        "import { readFileSync } from 'node:fs';\n"
        "function load(p: string): Record<string, unknown> {\n"
        "  return JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;\n}\n"
        "const items: string[] = [];\nconst f = async (x: number): Promise<void> => {};\n"
    ),
}


@pytest.mark.parametrize(("kind", "code"), BENIGN.items(), ids=BENIGN.keys())
def test_busy_benign_scripts_stay_below_medium(kind: str, code: str) -> None:
    report = scan(code, "scripts/a.ts" if kind == "typescript" else "scripts/a.js")
    serious = [
        f for f in report.findings
        if severity_rank(f.severity) >= 2 and f.rule != "network.undeclared"
    ]  # fmt: skip
    assert not serious, serious


# --- hostile files ----------------------------------------------------------------------------

HOSTILE = {
    "nested-parens": "x=" + "(" * 200_000 + ")" * 200_000,
    "nested-arrows": "f=" + "a=>" * 100_000 + "1",
    "long-concat": "x=" + "'ab'+" * 150_000 + "'a';eval(x)",
    "mutual-calls": "function f(a){return g(a)+g(a)}function g(a){return f(a)+f(a)}\n"
    + "f(1);" * 100_000,
    "templates": "x=`" + "${a}" * 200_000 + "`",
    "unclosed-templates": "x=`${`" * 100_000,
    "char-code-map": "x=[" + "1," * 300_000 + "1].map(c=>String.fromCharCode(c)).join('');",
    "split-reverse": "x='" + "a" * 900_000 + "'.split('').reverse().join('');eval(x)",
    "unbalanced": "[(" * 200_000,
    "news": "new " * 200_000 + "X",
    "members": "a" + ".b" * 300_000,
}


@pytest.mark.parametrize("code", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_megabyte_stays_fast(code: str) -> None:
    started = time.perf_counter()
    report = scan(code[: 1024 * 1024])
    assert time.perf_counter() - started < HOSTILE_SECONDS
    assert "scan.error" not in {f.rule for f in report.findings}


VOCABULARY = [
    "const", "let", "x", "y", "f", "=", "=>", "(", ")", "{", "}", "[", "]", ",", ";", ".",
    "+", "`${", "}`", "`", "'a'", '"b"', "1", "function", "return", "new", "Promise", "eval",
    "global", "require", "'child_process'", "atob", "fetch", "await", "async", "...", "?",
    ":", "map", "join", "split", "reverse", "then", "resolve", "import", "from", "/r/g",
    "\n", "class", "this", "of", "for", "if", "Buffer", "from", "'base64'",
]  # fmt: skip


def test_token_soup_never_raises() -> None:
    rng = random.Random(44)
    for _ in range(300):
        code = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randrange(1, 120)))
        report = scan(code)
        assert "scan.error" not in {f.rule for f in report.findings}, code


def test_the_bundled_scripts_are_read_without_error() -> None:
    scripts = [p for p in bundled_skills_dir().rglob("*") if p.suffix in (".js", ".mjs", ".ts")]
    assert scripts
    for path in scripts:
        report = scan(path.read_text(encoding="utf-8"), f"scripts/{path.name}")
        assert "scan.error" not in {f.rule for f in report.findings}, path


def test_code_run_past_the_token_cap_is_still_found() -> None:
    padding = "a+" * 450_000
    report = scan(f"x={padding}1;\neval(payload);\n")
    assert worst(report, "exec.dynamic-code") == "medium", report.findings
