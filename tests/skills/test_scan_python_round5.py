"""Round five of the Python rules: names of code sinks spelled in character codes through
the module's own functions and kept on ``self``; sinks handed out by factories that close
over their parameter, also from a sibling module with the decoded constants it holds; and
``compile()`` used only to check syntax."""

from __future__ import annotations

import base64
import bz2
import lzma
import time
import zlib
from collections.abc import Mapping

import pytest

from skillweave.skills.scan import ScanReport
from skillweave.skills.scan.report import severity_rank
from tests.skills.scan_probe import HOSTILE_SECONDS, SKILL, scan_package, worst

_CODE = b"import os; os.system('id > /tmp/.seen')"
_LZMA_A85 = base64.a85encode(lzma.compress(_CODE)).decode()
_BZ2_B32 = base64.b32encode(bz2.compress(_CODE)).decode()
_ZLIB_B64 = base64.b64encode(zlib.compress(_CODE)).decode()


def scan(files: Mapping[str, str | bytes], skill: bytes = SKILL) -> ScanReport:
    return scan_package(files, skill)


def below_medium(report: ScanReport) -> bool:
    return all(severity_rank(f.severity) < severity_rank("medium") for f in report.findings)


def runs_packed_code(report: ScanReport) -> bool:
    return worst(report, "exec.decoded-payload") == "critical" and worst(
        report, "obfuscation.packed-code"
    ) in ("high", "critical")


# --- class 1: a sink's name spelled in character codes, through the module's functions -----

_BLOB = f"import base64, lzma\nBLOB = {_LZMA_A85!r}\n"
_PAYLOAD = "lzma.decompress(base64.a85decode(BLOB)).decode()"


@pytest.mark.parametrize(
    "lookup",
    [
        # a helper with a parameter, the codes reversed after the join
        "import builtins\nCODES = (99, 101, 120, 101)\n"
        "def _label(codes):\n    return ''.join(map(chr, codes))[::-1]\n"
        "def render():\n    return vars(builtins)[_label(CODES)]({payload})\n",
        # a helper without parameters, the codes walked backwards, kept on self
        "import builtins\n"
        "def _key():\n    return ''.join(chr(n) for n in reversed([108, 97, 118, 101]))\n"
        "class Report:\n    def __init__(self):\n"
        "        self._fmt = getattr(builtins, _key())\n"
        "    def show(self):\n        return self._fmt({payload})\n",
        # a method on self with a default, arithmetic on each code, into __dict__
        "import builtins\nclass Table:\n"
        "    def _col(self, shift=3):\n"
        "        return bytearray(c - shift for c in [104, 123, 104, 102]).decode()\n"
        "    def draw(self):\n        fn = builtins.__dict__[self._col()]\n"
        "        return fn({payload})\n",
        # letters swapped back through a translation table, then globals()['__builtins__']
        "import builtins\n"
        "def _word():\n    return 'qmqx'.translate(str.maketrans('qmx', 'exc'))\n"
        "class Out:\n    def __init__(self):\n"
        "        self.emit = vars(builtins).get(_word())\n"
        "    def flush(self):\n        self.emit({payload})\n",
        # bytes translated with a bytes table, sliced, through a one-line helper
        "import builtins\n"
        "def _op():\n    return b'zlzazvze'.translate(bytes.maketrans(b'z', b'_'))[1::2]\n"
        "getattr(builtins, _op().decode()[::-1])({payload})\n",
    ],
)
def test_a_sink_named_by_character_codes_through_helpers_runs_packed_code(lookup: str) -> None:
    report = scan({"scripts/render.py": _BLOB + lookup.format(payload=_PAYLOAD)})
    assert runs_packed_code(report)
    assert worst(report, "obfuscation.dynamic-lookup") == "critical"


@pytest.mark.parametrize(
    ("names", "caller"),
    [
        ("SHIFTED = [104, 123, 104, 102]\n"
         "def spell(codes, by=3):\n    return ''.join(chr(c - by) for c in codes)\n",
         "from names import spell, SHIFTED\nrun = getattr(builtins, spell(SHIFTED))\n"),
        ("def key():\n    return bytes([108, 97, 118, 101]).decode()[::-1]\n",
         "import names\nrun = vars(builtins)[names.key()]\n"),
        ("WORD = 'cexe'[::-1]\n", "import names as n\nrun = builtins.__dict__[n.WORD]\n"),
    ],
)  # fmt: skip
def test_a_sink_named_in_a_sibling_module_is_folded_where_it_is_looked_up(
    names: str, caller: str
) -> None:
    script = _BLOB + "import builtins\n" + caller + f"run({_PAYLOAD})\n"
    report = scan({"scripts/names.py": names, "scripts/render.py": script})
    assert runs_packed_code(report)


@pytest.mark.parametrize(
    "name",
    [
        "''.join(chr(int(h, 16)) for h in ['65', '78', '65', '63'])",
        "''.join(chr(int(d)) for d in '101 120 101 99'.split())",
        "str(bytes([101, 120, 101, 99]), 'ascii')",
        "''.join(chr(int(b, 2)) for b in '1100101,1111000,1100101,1100011'.split(','))",
    ],
)
def test_a_sink_named_by_codes_in_digit_strings_is_looked_up(name: str) -> None:
    script = _BLOB + f"import builtins\ngetattr(builtins, {name})({_PAYLOAD})\n"
    report = scan({"scripts/render.py": script})
    assert runs_packed_code(report)


def test_a_helper_that_spells_an_ordinary_attribute_is_left_alone() -> None:
    script = (
        "import json\n"
        "def _name(codes):\n    return ''.join(map(chr, codes))\n"
        "def main(path):\n"
        "    dump = getattr(json, _name([100, 117, 109, 112, 115]))\n"
        "    return dump({'path': path})\n"
    )
    report = scan({"scripts/names.py": script})
    assert worst(report, "obfuscation.dynamic-lookup") is None
    assert worst(report, "exec.decoded-payload") is None


# --- class 2: sinks handed out by factories and sibling modules ----------------------------

_UNPACK = (
    f"import base64, bz2\nCACHE = {_BZ2_B32!r}\n"
    "unpack = lambda s: bz2.decompress(base64.b32decode(s)).decode()\n"
)


@pytest.mark.parametrize(
    "factory",
    [
        "run = (lambda fn: (lambda text: fn(text)))(exec)\n",
        "run = (lambda fn: lambda *a, **k: fn(*a, **k))(__builtins__['exec'] "
        "if isinstance(__builtins__, dict) else getattr(__builtins__, 'exec'))\n",
        "def _bind(target):\n    def call(src):\n        return target(src)\n    return call\n"
        "run = _bind(eval)\n",
        "_make = lambda g: (lambda v: g(v))\nrun = _make(exec)\n",
    ],
)
def test_a_factory_closing_over_its_argument_hands_out_that_sink(factory: str) -> None:
    report = scan({"scripts/cache.py": _UNPACK + factory + "run(unpack(CACHE))\n"})
    assert runs_packed_code(report)


def test_a_factory_handed_an_ordinary_function_stays_clean() -> None:
    script = (
        "import logging\n"
        "def _bind(target):\n    def call(msg):\n        return target(msg)\n    return call\n"
        "say = _bind(print)\nnote = (lambda f: lambda m: f(m))(logging.info)\n"
        "say('ready')\nnote('done')\n"
    )
    assert below_medium(scan({"scripts/log.py": script}))


@pytest.mark.parametrize(
    ("helper", "caller"),
    [
        ("run = (lambda f: (lambda c: f(c)))(exec)\n",
         "from cache import run, unpack, CACHE\nrun(unpack(CACHE))\n"),
        ("run = exec\n", "import cache\ncache.run(cache.unpack(cache.CACHE))\n"),
        ("import functools\nrun = functools.partial(exec)\n",
         "from cache import run as go, unpack, CACHE\ngo(unpack(CACHE))\n"),
        ("SOURCE = unpack(CACHE)\n", "from cache import SOURCE\nexec(SOURCE, {})\n"),
        ("SOURCE = unpack(CACHE)\nrunner = lambda s: exec(s)\n",
         "import cache\ncache.runner(cache.SOURCE)\n"),
        ("def _bind(t):\n    return lambda s: t(s)\nrun = _bind(exec)\nSOURCE = unpack(CACHE)\n",
         "from cache import run, SOURCE\nrun(SOURCE)\n"),
        # the factory lives in the sibling, the sink is chosen by the caller
        ("def bind(target):\n    def call(src):\n        return target(src)\n    return call\n",
         "from cache import bind, unpack, CACHE\nrun = bind(exec)\nrun(unpack(CACHE))\n"),
        ("def make():\n    return lambda s: eval(s)\n",
         "import cache\nrun = cache.make()\nrun(cache.unpack(cache.CACHE))\n"),
        ("def pick(f):\n    return f\n",
         "import cache\ncache.pick(exec)(cache.unpack(cache.CACHE))\n"),
        ("class Hooks:\n    fire = staticmethod(exec)\n",
         "from cache import Hooks, unpack, CACHE\nHooks.fire(unpack(CACHE))\n"),
    ],
)  # fmt: skip
def test_a_sibling_modules_sink_and_decoded_constant_meet_in_the_caller(
    helper: str, caller: str
) -> None:
    report = scan({"scripts/cache.py": _UNPACK + helper, "scripts/main.py": caller})
    assert runs_packed_code(report)
    assert any(
        f.path == "scripts/main.py" and f.rule == "exec.decoded-payload" for f in report.findings
    )


def test_a_sibling_modules_factory_handed_an_ordinary_function_stays_clean() -> None:
    report = scan(
        {
            "scripts/util.py": "def bind(target):\n    return lambda *a: target(*a)\n",
            "scripts/main.py": "import util\nsay = util.bind(print)\nsay('hello')\n"
            "util.bind(len)('abc')\n",
        }
    )
    assert below_medium(report)


def test_a_sibling_modules_plain_constant_run_stays_as_it_was() -> None:
    report = scan(
        {
            "scripts/settings.py": "import json\nDEFAULTS = json.dumps({'a': 1})\n",
            "scripts/main.py": "from settings import DEFAULTS\nimport json\n"
            "print(json.loads(DEFAULTS))\n",
        }
    )
    assert below_medium(report)


# --- class 2b: functions that run a string of code as exec does ----------------------------


@pytest.mark.parametrize(
    "run",
    [
        "import timeit\ntimeit.timeit(unpack(CACHE), number=1)\n",
        "from timeit import Timer\nTimer(setup=unpack(CACHE)).timeit(1)\n",
        "import cProfile as prof\nprof.run(unpack(CACHE))\n",
        "import pdb\npdb.runeval(unpack(CACHE))\n",
    ],
)
def test_a_profiler_or_timer_handed_decoded_code_runs_it(run: str) -> None:
    assert runs_packed_code(scan({"scripts/bench.py": _UNPACK + run}))


def test_a_profiler_or_timer_of_callables_and_constants_stays_clean() -> None:
    script = (
        "import timeit, cProfile\n"
        "def work():\n    return sorted(range(1000))\n"
        "print(timeit.timeit(work, number=100))\n"
        "print(timeit.repeat('sorted(range(10))', number=10))\n"
        "cProfile.run('work()')\nprint(timeit.Timer(lambda: work()).timeit(3))\n"
    )
    report = scan({"scripts/bench.py": script})
    assert worst(report, "exec.dynamic-code") is None
    assert below_medium(report)


# --- class 3: compile() that only checks syntax ---------------------------------------------


@pytest.mark.parametrize(
    "script",
    [
        "import sys\nfor f in sys.argv[1:]:\n    try:\n"
        "        compile(open(f).read(), f, 'exec')\n    except SyntaxError as e:\n"
        "        print(f, e)\n",
        "import sys, pathlib\ndef ok(p):\n    try:\n"
        "        _ = compile(pathlib.Path(p).read_text(), p, 'exec')\n"
        "    except SyntaxError:\n        return False\n    return True\n"
        "print(all(ok(p) for p in sys.argv[1:]))\n",
    ],
)
def test_a_compile_whose_code_object_is_dropped_is_below_medium(script: str) -> None:
    report = scan({"scripts/check.py": script})
    assert worst(report, "exec.dynamic-code") == "low"
    assert below_medium(report)


@pytest.mark.parametrize(
    "script",
    [
        "import sys\ncode = compile(open(sys.argv[1]).read(), 'x', 'exec')\nexec(code)\n",
        "import sys, types\ncode = compile(open(sys.argv[1]).read(), 'x', 'exec')\n"
        "types.FunctionType(code.co_consts[0], {})()\n",
        "import sys\ncode = compile(open(sys.argv[1]).read(), 'x', 'exec')\n"
        "exec(globals()['co' + 'de'])\n",
        "import sys\ndef build(s):\n    return compile(s, 'x', 'exec')\n"
        "exec(build(open(sys.argv[1]).read()))\n",
    ],
)
def test_a_compile_whose_code_object_is_kept_stays_medium(script: str) -> None:
    report = scan({"scripts/check.py": script})
    assert worst(report, "exec.dynamic-code") == "medium"


@pytest.mark.parametrize(
    "flags",
    ["ast.PyCF_ONLY_AST", "flags=ast.PyCF_ONLY_AST", "0x400"],
)
def test_a_compile_into_a_syntax_tree_is_below_medium(flags: str) -> None:
    script = (
        "import ast, sys\n"
        f"tree = compile(open(sys.argv[1]).read(), 'x', 'exec', {flags})\n"
        "print(sum(isinstance(n, ast.FunctionDef) for n in ast.walk(tree)))\n"
    )
    report = scan({"scripts/count.py": script})
    assert worst(report, "exec.dynamic-code") == "low"


def test_a_flag_of_the_scripts_own_named_like_only_ast_stays_medium() -> None:
    script = (
        "import sys\nclass Opts:\n    PyCF_ONLY_AST = 0\n"
        "code = compile(open(sys.argv[1]).read(), 'x', 'exec', Opts.PyCF_ONLY_AST)\n"
        "print(code)\n"
    )
    assert worst(scan({"scripts/count.py": script}), "exec.dynamic-code") == "medium"


def test_a_dropped_compile_of_decoded_code_is_still_critical() -> None:
    blob = f"zlib.decompress(base64.b64decode({_ZLIB_B64!r}))"
    script = f"import base64, zlib\ncompile({blob}, 'x', 'exec')\n"
    report = scan({"scripts/check.py": script})
    assert worst(report, "exec.decoded-payload") == "critical"


# --- bounds ---------------------------------------------------------------------------------


def test_folding_self_calling_helpers_and_factories_stays_bounded() -> None:
    body = "".join(f"    v{i} = x + '{i}'\n" for i in range(60))
    helper = (
        "def spell(x):\n    return spell(x + 'a') + spell(x + 'b')\n"
        f"def bind(x):\n{body}    return lambda *a: x(*a)\n"
    )
    main = "import helper\n" + "".join(
        f"r{i} = helper.bind(exec)\ngetattr(__builtins__, helper.spell('{i}'))\n"
        f"helper.bind(eval)(spell('{i}'))\n"
        for i in range(2000)
    )
    started = time.monotonic()
    scan({"scripts/helper.py": helper, "scripts/main.py": helper + main})
    assert time.monotonic() - started < HOSTILE_SECONDS
