"""How far the skill scanner generalises: its malicious corpus, obfuscated by mutation families.

Each family is a small deterministic source-to-source transform (``ast``, ``ast.unparse``) of
the Python scripts of every case in ``tests/data/scan/malicious``, except ``unicode`` and
``hidden-text`` which hide words or whole flagged lines of the Markdown, and the families of
``bench/scan_families.py`` (Python, JavaScript and shell, written apart from the rules and held
out of round 2 of issue 44), ``bench/scan_families_3.py`` (held out of round 3) and
``bench/scan_families_5.py`` (held out of round 5). Every family and red-team set written so far
has been measured held out and is development data since; ``--held-out`` scores the next set,
``bench/data/scan_external_6``, once someone who has not read the scanner writes it (and says
so when it is not there). A JavaScript or shell mutant that
``node --check`` or ``bash -n`` refuses counts as "failed". A mutant counts
only when it changed a file in which the unmutated case has a finding of an expected rule
(otherwise the attack was not touched: "n/a"); a Python mutant that does not parse is counted
as "failed" and not scanned. A mutant is detected for a rule class when
some finding of that class fires at the worst severity the case expects of the class (which
rule of a class fires may change under obfuscation; how bad it is may not); the row "every
rule (strict)" counts mutants on which every expected rule fired as in ``bench/scan_bench.py``.

The families are split once, here, into DEVELOPMENT (rules may be written while looking at
them) and HELD_APART (measured only). False positives are the benign corpus, the bundled skills
and the other real libraries in the test data (``tests/data/compat``) with any finding at medium
or above / high or above; mutation does not touch them.

    python bench/scan_mutations.py [--quick] [--out DIR]

Prints tables only and exits 0.
"""

from __future__ import annotations

import argparse
import ast
import base64
import codecs
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
import unicodedata
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from shutil import copytree
from typing import Final

from rich.console import Console
from rich.table import Table

from bench.scan_families import FAMILIES_2, HELD_APART_2
from bench.scan_families_3 import FAMILIES_3, HELD_APART_3
from bench.scan_families_5 import FAMILIES_5, HELD_APART_5
from skillweave.config import bundled_skills_dir
from skillweave.skills.scan import SCANNER, ScanReport, scan_folder
from skillweave.skills.scan.report import severity_rank

CORPUS: Final = Path(__file__).resolve().parents[1] / "tests" / "data" / "scan"
COMPAT: Final = Path(__file__).resolve().parents[1] / "tests" / "data" / "compat"
"""Skill libraries in other agent clients' styles (issue 25): real skills, benign."""
EXTERNAL: Final = (
    Path(__file__).resolve().parent / "data" / "scan_external",
    Path(__file__).resolve().parent / "data" / "scan_external_2",
    Path(__file__).resolve().parent / "data" / "scan_external_3",
    Path(__file__).resolve().parent / "data" / "scan_external_4",
    Path(__file__).resolve().parent / "data" / "scan_external_5",
)
"""Red-team sets written without reading the scanner (each README says how and when), each
measured held out of one round of issue 44 and development data since."""
EXTERNAL_HELD_OUT: Final = Path(__file__).resolve().parent / "data" / "scan_external_6"
"""The next red-team set, scored with ``--held-out`` only; not written yet."""
QUICK_CASES: Final = 12
BUILTIN_SINKS: Final = frozenset({"eval", "exec", "compile", "open", "__import__"})

Mutation = Callable[..., dict[str, str]]
"""(source, file name[, flagged lines]) -> {sibling file name: new text}; empty when nothing
applies. A family in :data:`LINE_FAMILIES` is also given the lines of the file the unmutated
case was flagged on."""


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _literals(tree: ast.Module, least: int) -> list[ast.Constant]:
    """String literals worth hiding: not docstrings, not parts of f-strings."""
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        parent = parents.get(node)
        if len(node.value) < least or isinstance(parent, (ast.JoinedStr, ast.FormattedValue)):
            continue
        if isinstance(parent, ast.Expr):  # a docstring or a bare string statement
            continue
        found.append(node)
    return found


def _rewrite_literals(source: str, least: int, build: Callable[[str, int], str]) -> str:
    tree = ast.parse(source)
    literals = _literals(tree, least)
    parents = _parents(tree)
    for index, node in enumerate(literals):
        replacement = ast.parse(build(node.value, index), mode="eval").body
        parent = parents[node]
        for field, value in ast.iter_fields(parent):
            if value is node:
                setattr(parent, field, replacement)
            elif isinstance(value, list):
                setattr(parent, field, [replacement if v is node else v for v in value])
    return ast.unparse(tree) if literals else ""


# --- family: string building ---------------------------------------------------------------
def _built(text: str, index: int) -> str:
    half = len(text) // 2
    style = index % 4
    if style == 0:
        return f"{text[:half]!r} + {text[half:]!r}"
    if style == 1:
        return f"''.join({[text[i : i + 3] for i in range(0, len(text), 3)]!r})"
    if style == 2:
        return f"''.join(map(chr, {[ord(c) for c in text]!r}))"
    return f"{text[::-1]!r}[::-1]"


def string_building(source: str, name: str) -> dict[str, str]:
    """Every string literal of 4+ characters rebuilt from pieces (four styles in turn)."""
    out = _rewrite_literals(source, 4, _built)
    return {name: out} if out else {}


# --- family: codec layers ------------------------------------------------------------------
def _encoded(text: str, index: int) -> str:
    raw = text.encode("utf-8", "surrogatepass")
    style = index % 3
    if style == 0:
        return f"__import__('base64').b64decode({base64.b64encode(raw).decode()!r}).decode()"
    if style == 1:
        packed = base64.b64encode(zlib.compress(raw)).decode()
        return f"__import__('zlib').decompress(__import__('base64').b64decode({packed!r})).decode()"
    return f"__import__('codecs').decode({codecs.encode(text, 'rot13')!r}, 'rot13')"


def codec_layers(source: str, name: str) -> dict[str, str]:
    """Every string literal of 8+ characters wrapped in base64, zlib+base64 or rot13."""
    out = _rewrite_literals(source, 8, _encoded)
    return {name: out} if out else {}


# --- the calls the structural families move --------------------------------------------------
def _module_names(tree: ast.Module) -> set[str]:
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return None


def _sinks(tree: ast.Module) -> list[tuple[ast.Call, str]]:
    """Calls of a top-level imported module's attribute, or of a risky builtin."""
    modules = _module_names(tree)
    calls = []
    for node in ast.walk(tree):
        dotted = _dotted(node.func) if isinstance(node, ast.Call) else None
        if dotted and (dotted in BUILTIN_SINKS or dotted.split(".")[0] in modules - {dotted}):
            calls.append((node, dotted))
    return calls


def _import_end(tree: ast.Module) -> int:
    end = 0
    for index, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            end = index + 1
        elif not (index == 0 and isinstance(node, ast.Expr)):
            break
    return end


# --- family: dynamic lookup ----------------------------------------------------------------
def dynamic_lookup(source: str, name: str) -> dict[str, str]:
    """Each sink called through getattr on ``__import__(...)``/``globals()[...]``, the
    attribute's name built from two pieces."""
    tree = ast.parse(source)
    sinks = _sinks(tree)
    for index, (call, dotted) in enumerate(sinks):
        owner, _, attr = dotted.rpartition(".")
        if not owner:
            owner, attr = "builtins", dotted
        root, rest = owner.split(".")[0], owner[len(owner.split(".")[0]) :]
        half = len(attr) // 2
        if index % 2 and root != "builtins":
            target = f"globals()[{root[:1]!r} + {root[1:]!r}]{rest}"
        else:
            target = f"__import__({root!r}){rest}"
        lookup = f"getattr({target}, {attr[:half]!r} + {attr[half:]!r})"
        call.func = ast.parse(lookup, mode="eval").body
    return {name: ast.unparse(tree)} if sinks else {}


# --- family: indirection -------------------------------------------------------------------
def indirection(source: str, name: str) -> dict[str, str]:
    """Each sink moved into a lambda or, in turn, a method of a small class."""
    tree = ast.parse(source)
    sinks = _sinks(tree)
    helpers: list[ast.stmt] = []
    for index, (call, dotted) in enumerate(sinks):
        if index % 2:
            helpers += ast.parse(
                f"class _Tool{index}:\n    def run(self, *a, **k):\n"
                f"        return {dotted}(*a, **k)"
            ).body
            call.func = ast.parse(f"_Tool{index}().run", mode="eval").body
        else:
            helpers += ast.parse(f"_step{index} = lambda *a, **k: {dotted}(*a, **k)").body
            call.func = ast.Name(f"_step{index}", ast.Load())
    at = _import_end(tree)
    tree.body[at:at] = helpers
    return {name: ast.unparse(tree)} if sinks else {}


# --- family: splitting across modules --------------------------------------------------------
def splitting(source: str, name: str) -> dict[str, str]:
    """Each sink moved into a function of a helper module beside the script, imported."""
    tree = ast.parse(source)
    sinks = _sinks(tree)
    if not sinks:
        return {}
    helper = f"{Path(name).stem}_support"
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    functions = []
    for index, (call, dotted) in enumerate(sinks):
        functions.append(f"def call_{index}(*a, **k):\n    return {dotted}(*a, **k)\n")
        call.func = ast.Name(f"call_{index}", ast.Load())
    names = ", ".join(f"call_{i}" for i in range(len(sinks)))
    at = _import_end(tree)
    tree.body[at:at] = ast.parse(f"from {helper} import {names}").body
    support = "\n".join([*(ast.unparse(node) for node in imports), "", *functions])
    return {name: ast.unparse(tree), f"{helper}.py": support}


# --- family: Unicode tricks ----------------------------------------------------------------
_FRONT_MATTER: Final = re.compile(r"\A---\n.*?\n---\n", re.S)


def unicode_tricks(text: str, name: str) -> dict[str, str]:
    """A zero-width space in the middle of every word of 4+ letters of a Markdown body."""
    head = m.group(0) if (m := _FRONT_MATTER.match(text)) else ""
    body = re.sub(r"\b([A-Za-z]{2})([A-Za-z]{2,})", "\\1\u200b\\2", text[len(head) :])
    return {name: head + body} if body != text[len(head) :] else {}


# --- family: aliasing ----------------------------------------------------------------------
def aliasing(source: str, name: str) -> dict[str, str]:
    """Each sink called through an alias, in turn: ``from module import attr as alias``, a
    name assigned the callable, or a dispatch table (a dict literal) subscripted."""
    tree = ast.parse(source)
    sinks = _sinks(tree)
    modules = _module_names(tree)
    helpers: list[ast.stmt] = []
    for index, (call, dotted) in enumerate(sinks):
        owner, _, attr = dotted.rpartition(".")
        style = index % 3
        if style == 0 and owner in modules:
            helpers += ast.parse(f"from {owner} import {attr} as _alias{index}").body
            call.func = ast.Name(f"_alias{index}", ast.Load())
        elif style == 2:
            helpers += ast.parse(f"_TABLE{index} = {{'go': {dotted}}}").body
            call.func = ast.parse(f"_TABLE{index}['go']", mode="eval").body
        else:
            helpers += ast.parse(f"_alias{index} = {dotted}").body
            call.func = ast.Name(f"_alias{index}", ast.Load())
    at = _import_end(tree)
    tree.body[at:at] = helpers
    return {name: ast.unparse(tree)} if sinks else {}


# --- family: hidden text -------------------------------------------------------------------
_TAG_BASE: Final = 0xE0000


def _hidden(line: str, style: int) -> str:
    """`line` kept for a model to read, hidden from a person reading the rendered page."""
    if style == 0:  # Unicode tag characters: invisible ASCII
        hidden = "".join(chr(_TAG_BASE + ord(c)) if 0x20 <= ord(c) < 0x7F else c for c in line)
        return f"See the examples below.{hidden}"
    if style == 1:  # an HTML comment
        return f"<!-- {line} -->"
    return "\u200b".join(line)  # a zero-width space between every character


def hidden_text(text: str, name: str, lines: frozenset[int] = frozenset()) -> dict[str, str]:
    """The body lines the unmutated case was flagged on, hidden in turn in Unicode tag
    characters, an HTML comment, or between zero-width spaces (one style per file, by its
    line count); the frontmatter is left alone."""
    rows = text.split("\n")
    head = m.group(0).count("\n") if (m := _FRONT_MATTER.match(text)) else 0
    targets = [n for n in sorted(lines) if head < n <= len(rows) and rows[n - 1].strip()]
    targets = [n for n in targets if not _invisible(rows[n - 1])]
    if not targets:
        return {}
    style = len(rows) % 3
    for n in targets:
        rows[n - 1] = _hidden(rows[n - 1], style)
    return {name: "\n".join(rows)}


FAMILIES: Final[dict[str, tuple[Mutation, str]]] = {
    "string-building": (string_building, ".py"),
    "dynamic-lookup": (dynamic_lookup, ".py"),
    "codec-layers": (codec_layers, ".py"),
    "indirection": (indirection, ".py"),
    "splitting": (splitting, ".py"),
    "unicode": (unicode_tricks, ".md"),
    "aliasing": (aliasing, ".py"),
    "hidden-text": (hidden_text, ".md"),
}
LINE_FAMILIES: Final = frozenset({"hidden-text"})
"""Families that hide the lines an attack was found on (given to them by the bench)."""
DEVELOPMENT: Final = ("string-building", "dynamic-lookup", "indirection")
"""Rules may be written while looking at these."""
HELD_APART: Final = ("codec-layers", "splitting", "unicode", "aliasing", "hidden-text")
"""Measured only: nobody tunes a rule on them."""


def mutate_case(
    case: Path, family: str, into: Path, flagged: dict[str, frozenset[int]] | None = None
) -> tuple[str, set[str]]:
    """Copy `case` into `into`, mutated by `family`: ("made", changed files), ("n/a", ∅) or
    ("failed", ∅) when a Python mutant does not parse or a transform raised. `flagged` (path
    -> lines the unmutated case's expected rules fired on) is what line families hide."""
    transform, suffix = {**FAMILIES, **FAMILIES_2, **FAMILIES_3, **FAMILIES_5}[family]
    copytree(case, into)
    changed: set[str] = set()
    for path in sorted(into.rglob(f"*{suffix}")):
        text = path.read_text(encoding="utf-8")
        if suffix == ".py" and (not _parses(text) or _invisible(text)):
            # a syntax-error case; or raw bidi/zero-width characters, the attack itself,
            # which ast.unparse would escape (hiding text is the unicode family's business)
            continue
        try:
            if family in LINE_FAMILIES:
                relative = path.relative_to(into).as_posix()
                outputs = transform(text, path.name, (flagged or {}).get(relative, frozenset()))
            else:
                outputs = transform(text, path.name)
        except (SyntaxError, ValueError, RecursionError):
            return "failed", set()
        if suffix == ".py" and not all(_parses(out) for out in outputs.values()):
            return "failed", set()
        if suffix in _CHECKERS and not all(_checks(out, suffix) for out in outputs.values()):
            return "failed", set()
        if suffix == ".py" and path.name in outputs:  # ast.unparse drops comments: keep them
            outputs[path.name] = _comments(text) + outputs[path.name]
        for out_name, out in outputs.items():
            (path.parent / out_name).write_text(out, encoding="utf-8")
            changed.add((path.parent / out_name).relative_to(into).as_posix())
    return ("made", changed) if changed else ("n/a", set())


_CHECKERS: Final = {".js": ("node", "--check"), ".sh": ("bash", "-n")}
"""How a JavaScript or shell mutant is checked to still be valid (skipped without the tool)."""


def _checks(text: str, suffix: str) -> bool:
    command = _CHECKERS[suffix]
    if shutil.which(command[0]) is None:
        return True
    with tempfile.NamedTemporaryFile("w", suffix=suffix, encoding="utf-8") as file:
        file.write(text)
        file.flush()
        done = subprocess.run([*command, file.name], capture_output=True, check=False)
    return done.returncode == 0


def _invisible(text: str) -> bool:
    return any(unicodedata.category(c) == "Cf" for c in text)


def _comments(source: str) -> str:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return "".join(t.string + "\n" for t in tokens if t.type == tokenize.COMMENT)


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


def detected(report: ScanReport, expected: dict[str, str], rule_class: str) -> bool:
    """Some finding of `rule_class` at the worst of the severities expected of that class
    (which rule of the class says it may change under obfuscation; how bad it is may not)."""
    least = max(
        (severity_rank(s) for r, s in expected.items() if r.split(".", 1)[0] == rule_class),
        default=0,
    )
    return any(
        f.rule.split(".", 1)[0] == rule_class and severity_rank(f.severity) >= least
        for f in report.findings
    )


def detected_strictly(report: ScanReport, expected: dict[str, str]) -> bool:
    """Every expected rule fired at its least severity (the baseline's criterion)."""
    worst: dict[str, int] = {}
    for f in report.findings:
        worst[f.rule] = max(worst.get(f.rule, 0), severity_rank(f.severity))
    return all(worst.get(rule, 0) >= severity_rank(least) for rule, least in expected.items())


def _summed(counts: dict[str, dict[str, int]], families: Sequence[str]) -> dict[str, int]:
    return {o: sum(counts[f].get(o, 0) for f in families) for o in ("made", "n/a", "failed")}


def _blocks(report: ScanReport) -> bool:
    return any(severity_rank(f.severity) >= severity_rank("high") for f in report.findings)


def _pct(hits: int, total: int) -> str:
    return f"{hits}/{total} {hits / total:.0%}" if total else "-"


def main(argv: Sequence[str] | None = None) -> int:
    """Mutate, scan and print the recall table; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CASES} cases, few FPs")
    parser.add_argument("--out", type=Path, help="keep the mutants in this (new) folder")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="also score the red-team set still held out (the lead's measurement only, once "
        "the round's rules are written)",
    )
    parser.add_argument(
        "--development",
        action="store_true",
        help="mutate with the development families only (what a rule author may look at)",
    )
    args = parser.parse_args(argv)
    families = DEVELOPMENT if args.development else tuple(FAMILIES)
    if not args.development:
        families += HELD_APART_2
    if not args.development:
        families += HELD_APART_3
    if not args.development:
        families += HELD_APART_5
    console = Console(highlight=False, width=220)
    started = time.perf_counter()
    expected: dict[str, dict[str, str]] = json.loads((CORPUS / "expected.json").read_text())
    cases = sorted(expected)[:QUICK_CASES] if args.quick else sorted(expected)
    classes = sorted({r.split(".", 1)[0] for rules in expected.values() for r in rules})
    # hits[column][class] = [detected, mutants]
    hits: dict[str, dict[str, list[int]]] = {}
    counts: dict[str, dict[str, int]] = {}
    blocked: dict[str, list[int]] = {}  # mutants with any finding at high+, whatever its rule
    strict: dict[str, list[int]] = {}  # mutants on which every expected rule fired
    with tempfile.TemporaryDirectory(prefix="scan-mutations-") as scratch:
        tmp = args.out or scratch
        for case in cases:
            rules = expected[case]
            original = scan_folder(CORPUS / "malicious" / case)
            attacked = {f.path for f in original.findings if f.rule in rules}
            flagged: dict[str, set[int]] = {}
            for f in original.findings:
                if f.rule in rules and f.line is not None:
                    flagged.setdefault(f.path, set()).add(f.line)
            lines = {path: frozenset(found) for path, found in flagged.items()}
            blocked.setdefault("original", [0, 0])[0] += _blocks(original)
            blocked["original"][1] += 1
            strict.setdefault("original", [0, 0])[0] += detected_strictly(original, rules)
            strict["original"][1] += 1
            for rule_class in {r.split(".", 1)[0] for r in rules}:
                cell = hits.setdefault("original", {}).setdefault(rule_class, [0, 0])
                cell[0] += detected(original, rules, rule_class)
                cell[1] += 1
            for family in families:
                into = Path(tmp) / family / case
                outcome, changed = mutate_case(CORPUS / "malicious" / case, family, into, lines)
                if outcome == "made" and not changed & attacked:
                    outcome = "n/a"
                counts.setdefault(family, {}).setdefault(outcome, 0)
                counts[family][outcome] += 1
                if outcome != "made":
                    continue
                report = scan_folder(into)
                side = (
                    "held-apart"
                    if family in HELD_APART
                    else "held-apart-2"
                    if family in HELD_APART_2
                    else "held-apart-3"
                    if family in HELD_APART_3
                    else "held-apart-5"
                    if family in HELD_APART_5
                    else "development"
                )
                for column in (family, side):
                    blocked.setdefault(column, [0, 0])[0] += _blocks(report)
                    blocked[column][1] += 1
                    strict.setdefault(column, [0, 0])[0] += detected_strictly(report, rules)
                    strict[column][1] += 1
                for rule_class in {r.split(".", 1)[0] for r in rules}:
                    for column in (family, side):
                        cell = hits.setdefault(column, {}).setdefault(rule_class, [0, 0])
                        cell[0] += detected(report, rules, rule_class)
                        cell[1] += 1
    clean = sorted(p for p in (CORPUS / "benign").iterdir() if p.is_dir())
    clean += sorted(p.parent for p in bundled_skills_dir().rglob("SKILL.md"))
    # The other real libraries in the test data: skills as other agent clients ship them.
    clean += sorted(p.parent for p in COMPAT.rglob("SKILL.md"))
    if args.quick:
        clean = clean[:QUICK_CASES]
    medium = high = 0
    for folder in clean:
        ranks = [severity_rank(f.severity) for f in scan_folder(folder).findings] or [0]
        medium += max(ranks) >= severity_rank("medium")
        high += max(ranks) >= severity_rank("high")

    columns = ["original", *DEVELOPMENT, "development"]
    if not args.development:
        columns += [*HELD_APART, "held-apart"]
    if not args.development:
        columns += [*HELD_APART_2, "held-apart-2"]
    if not args.development:
        columns += [*HELD_APART_3, "held-apart-3"]
    if not args.development:
        columns += [*HELD_APART_5, "held-apart-5"]
    counts["development"] = _summed(counts, DEVELOPMENT)
    counts["held-apart"] = _summed(counts, HELD_APART if not args.development else ())
    counts["held-apart-2"] = _summed(counts, HELD_APART_2 if not args.development else ())
    counts["held-apart-3"] = _summed(counts, HELD_APART_3 if not args.development else ())
    counts["held-apart-5"] = _summed(counts, HELD_APART_5 if not args.development else ())
    counts["original"] = {"made": len(cases)}
    # one row per family (and per set of families), one column per rule class
    table = Table(title=f"Recall per rule class under mutation ({SCANNER})")
    table.add_column("family")
    for rule_class in classes:
        table.add_column(rule_class, justify="right")
    for heading in ("all", "strict", "≥ high", "made", "n/a", "failed"):
        table.add_column(heading, justify="right")
    sums = {"original", "development", "held-apart", "held-apart-2", "held-apart-3", "held-apart-5"}
    for column in columns:
        held = column in (*HELD_APART, *HELD_APART_2, *HELD_APART_3, *HELD_APART_5)
        cells = hits.get(column, {})
        total = [sum(h for h, _ in cells.values()), sum(n for _, n in cells.values())]
        table.add_row(
            column + (" *" if held else ""),
            *(_pct(*cells.get(rule_class, [0, 0])) for rule_class in classes),
            _pct(*total),
            _pct(*strict.get(column, [0, 0])),
            _pct(*blocked.get(column, [0, 0])),
            *(str(counts[column].get(o, 0)) for o in ("made", "n/a", "failed")),
            style="bold" if column in sums else None,
            end_section=column in sums,
        )
    table.caption = (
        f"* held out of a round of rules (its sum says which); bold: sums. all: case × class "
        f"detected; strict: every expected rule fired; ≥ high: some finding at high or above. "
        f"{len(cases)} malicious cases; false positives over {len(clean)} benign, bundled "
        f"and compat skills (unchanged by mutation): {medium} at medium+, {high} at high+. "
        f"{time.perf_counter() - started:.1f} s. "
        f"run: bench/scan_mutations.py {' '.join(sys.argv[1:] if argv is None else argv)}"
    )
    console.print(table)
    sets = (*EXTERNAL, EXTERNAL_HELD_OUT) if args.held_out else EXTERNAL
    if args.held_out and not (EXTERNAL_HELD_OUT / "expected.json").is_file():
        console.print(f"no held-out red-team set: {EXTERNAL_HELD_OUT} is not written yet.")
    for folder in sets if not (args.development or args.quick) else ():
        if (folder / "expected.json").is_file():
            table, missed = red_team_table(folder)
            console.print(table)
            console.print(f"{folder.name} misses (case, class): {', '.join(missed) or 'none'}.")
    return 0


def red_team_table(folder: Path) -> tuple[Table, list[str]]:
    """Recall per class over the red-team set's malicious skills (as :func:`detected`), and
    its benign skills with a finding at medium+ / high+; and the (case, class) pairs missed."""
    expected: dict[str, dict] = json.loads((folder / "expected.json").read_text())
    hits: dict[str, list[int]] = {}
    blocked = [0, 0]
    benign = [0, 0, 0]  # skills, at medium+, at high+
    missed: list[str] = []
    for case in sorted(expected):
        report = scan_folder(folder / case)
        worst = max((severity_rank(f.severity) for f in report.findings), default=0)
        if expected[case].get("benign"):
            benign[0] += 1
            benign[1] += worst >= severity_rank("medium")
            benign[2] += worst >= severity_rank("high")
            continue
        wanted = {f"{c}.*": least for c, least in expected[case]["classes"].items()}
        blocked[0] += worst >= severity_rank("high")
        blocked[1] += 1
        for rule_class in expected[case]["classes"]:
            found = detected(report, wanted, rule_class)
            cell = hits.setdefault(rule_class, [0, 0])
            cell[0] += found
            cell[1] += 1
            if not found:
                missed.append(f"{case} ({rule_class})")
    table = Table(title=f"Red-team set {folder.name}, written without reading the scanner")
    table.add_column("class")
    table.add_column("recall", justify="right")
    for rule_class in sorted(hits):
        table.add_row(rule_class, _pct(*hits[rule_class]))
    total = [sum(h for h, _ in hits.values()), sum(n for _, n in hits.values())]
    table.add_row("all (case × class)", _pct(*total))
    table.add_row("any finding ≥ high", _pct(*blocked))
    table.caption = (
        f"{blocked[1]} malicious and {benign[0]} benign skills; benign with a finding at "
        f"medium+: {benign[1]}, at high+: {benign[2]}."
    )
    return table, missed


if __name__ == "__main__":
    sys.exit(main())
