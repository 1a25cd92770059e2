#!/usr/bin/env python3
"""Lint a git commit message: subject length and mood, blank second line, body wrapping.

Usage:
    python3 lint_commit.py [FILE] [--subject-limit 72] [--body-limit 72]

Run with the workspace as the current directory. The message is read from FILE, or from
``./inputs/COMMIT_MSG`` when no FILE is given. Git comment lines (``#``) and everything below a
``# ------------------------ >8 ------------------------`` scissors line are ignored.

Prints one finding per line, writes ``./outputs/commit-lint.json`` and exits 1 when there is
at least one error (warnings alone exit 0). Bad input (missing file) exits 2.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

DEFAULT_INPUT = Path("inputs") / "COMMIT_MSG"
OUTPUT = Path("outputs") / "commit-lint.json"
SOFT_SUBJECT = 50
SCISSORS = "# ------------------------ >8 ------------------------"
CONVENTIONAL_RE = re.compile(
    r"^(?P<type>[a-z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?: (?P<rest>.*)$"
)
TRAILER_RE = re.compile(r"^[A-Za-z][A-Za-z-]*: \S")
URLISH_RE = re.compile(r"^\s*(?:\[\d+\]:?\s*)?\S+$")

# Verbs commonly used in subjects: lets "Adds"/"Fixes" map back to "Add"/"Fix".
IMPERATIVE_VERBS = frozenset(
    [
        "add",
        "allow",
        "avoid",
        "bump",
        "change",
        "check",
        "clarify",
        "clean",
        "configure",
        "convert",
        "correct",
        "create",
        "default",
        "delete",
        "deprecate",
        "disable",
        "document",
        "drop",
        "enable",
        "ensure",
        "expose",
        "extract",
        "fix",
        "forbid",
        "format",
        "handle",
        "hide",
        "ignore",
        "implement",
        "improve",
        "include",
        "increase",
        "inline",
        "introduce",
        "keep",
        "limit",
        "log",
        "make",
        "merge",
        "migrate",
        "move",
        "normalize",
        "optimize",
        "pass",
        "pin",
        "prefer",
        "prevent",
        "refactor",
        "reject",
        "release",
        "remove",
        "rename",
        "reorder",
        "replace",
        "require",
        "reset",
        "restore",
        "restrict",
        "return",
        "revert",
        "rework",
        "rewrite",
        "run",
        "set",
        "show",
        "simplify",
        "skip",
        "sort",
        "speed",
        "split",
        "start",
        "stop",
        "support",
        "switch",
        "test",
        "tidy",
        "track",
        "trim",
        "tweak",
        "unify",
        "update",
        "upgrade",
        "use",
        "validate",
        "wrap",
    ]
)
# Words ending in -ed / -ing / -s that are fine as the first word of an imperative subject.
NOT_PAST = frozenset(
    {
        "embed",
        "feed",
        "need",
        "proceed",
        "exceed",
        "succeed",
        "seed",
        "shed",
        "speed",
        "red",
        "bed",
        "shred",
        "breed",
        "bleed",
    }
)
NOT_GERUND = frozenset({"bring", "string", "ping", "ring", "sing", "swing", "spring", "wing"})
NOT_THIRD_PERSON = frozenset(
    {
        "bias",
        "focus",
        "process",
        "access",
        "pass",
        "press",
        "address",
        "discuss",
        "bless",
        "guess",
        "miss",
        "toss",
        "dismiss",
        "canvas",
        "alias",
        "gas",
        "redress",
        "express",
        "harness",
        "stress",
    }
)
NON_VERB_STARTS = {
    "bugfix": "Fix",
    "fixes": "Fix",
    "changes": "Change",
    "updates": "Update",
    "misc": None,
    "wip": None,
    "minor": None,
    "various": None,
}


def imperative_of(word: str) -> str | None:
    """The imperative the first word should be, or None when it already looks imperative."""
    w = word.lower()
    if w in NON_VERB_STARTS:
        return NON_VERB_STARTS[w] or ""
    if w in IMPERATIVE_VERBS:
        return None
    if w.endswith("ed") and w not in NOT_PAST and len(w) > 3:
        for stem in (w[:-1], w[:-2], w[:-3] if len(w) > 5 and w[-3] == w[-4] else "", w[:-3] + "y"):
            if stem in IMPERATIVE_VERBS:
                return stem
        return ""
    if w.endswith("ing") and w not in NOT_GERUND and len(w) > 5:
        for stem in (w[:-3], w[:-3] + "e", w[:-4]):
            if stem in IMPERATIVE_VERBS:
                return stem
        return ""
    if w.endswith("s") and w not in NOT_THIRD_PERSON and not w.endswith("ss"):
        for stem in (w[:-1], w[:-2], w[:-3] + "y"):
            if stem in IMPERATIVE_VERBS:
                return stem
    return None


class Linter:
    def __init__(self, subject_limit: int, body_limit: int) -> None:
        self.subject_limit = subject_limit
        self.body_limit = body_limit
        self.findings: list[dict[str, object]] = []

    def add(self, line: int, rule: str, severity: str, message: str) -> None:
        self.findings.append({"line": line, "rule": rule, "severity": severity, "message": message})

    def lint(self, lines: list[str]) -> None:
        if not lines or not lines[0].strip():
            self.add(1, "subject-empty", "error", "The message has no subject line")
            return
        self.lint_subject(lines[0])
        if len(lines) > 1 and lines[1].strip():
            self.add(
                2,
                "blank-second-line",
                "error",
                "Line 2 must be blank: separate the subject from the body with an empty line",
            )
        self.lint_body(lines[1:])

    def lint_subject(self, subject: str) -> None:
        length = len(subject)
        if length > self.subject_limit:
            self.add(
                1,
                "subject-length",
                "error",
                f"Subject is {length} characters; keep it at most {self.subject_limit}",
            )
        elif length > SOFT_SUBJECT:
            self.add(
                1,
                "subject-length-soft",
                "warning",
                f"Subject is {length} characters; {SOFT_SUBJECT} or fewer reads best",
            )
        if subject != subject.strip():
            self.add(1, "subject-whitespace", "error", "Subject has leading or trailing whitespace")
        text = subject.strip()
        if text.endswith(".") and not text.endswith("..."):
            self.add(1, "subject-period", "error", "Do not end the subject with a period")
        conventional = CONVENTIONAL_RE.match(text)
        if conventional:
            text = conventional.group("rest")
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", text)
        if not words:
            self.add(1, "subject-no-words", "error", "Subject does not say what the change does")
            return
        suggestion = imperative_of(words[0])
        if suggestion is not None:
            if suggestion and words[0][:1].isupper():
                suggestion = suggestion.capitalize()
            elif suggestion:
                suggestion = suggestion.lower()
            hint = f" (e.g. '{suggestion}' instead of '{words[0]}')" if suggestion else ""
            self.add(
                1,
                "subject-imperative",
                "error",
                f"Write the subject in the imperative mood, as a command{hint}",
            )
        if len(words) < 2 or text.lower().strip(" .!") in {"fix", "update", "changes", "wip"}:
            self.add(
                1, "subject-vague", "warning", "Subject is too vague; say what changed and where"
            )
        if not conventional and text[:1].islower():
            self.add(1, "subject-capital", "warning", "Start the subject with a capital letter")

    def lint_body(self, rest: list[str]) -> None:
        in_fence = False
        for offset, line in enumerate(rest, start=2):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if len(line) <= self.body_limit or in_fence:
                continue
            if line.startswith(("    ", "\t")) or URLISH_RE.match(line) or TRAILER_RE.match(line):
                continue  # code, a lone URL or path, or a trailer: cannot be wrapped
            self.add(
                offset,
                "body-line-length",
                "error",
                f"Body line is {len(line)} characters; wrap at {self.body_limit}",
            )


def read_message(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(SCISSORS[:10]) and ">8" in line:
            break
        if line.startswith("#"):
            continue
        lines.append(line.rstrip("\r"))
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip() and len(lines) > 1:
        lines.pop(0)
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lint_commit.py", description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help=f"message file (default: {DEFAULT_INPUT})")
    parser.add_argument("--subject-limit", type=int, default=72)
    parser.add_argument("--body-limit", type=int, default=72)
    ns = parser.parse_args(argv)
    path = Path(ns.file) if ns.file else DEFAULT_INPUT
    if not path.is_file():
        print(f"lint_commit: error: message file not found: {path}", file=sys.stderr)
        return 2

    lines = read_message(path)
    linter = Linter(ns.subject_limit, ns.body_limit)
    linter.lint(lines)
    findings = sorted(linter.findings, key=lambda f: (f["line"], f["rule"]))
    errors = sum(f["severity"] == "error" for f in findings)
    warnings = len(findings) - errors
    result = {
        "source": path.as_posix(),
        "subject": lines[0] if lines else "",
        "ok": errors == 0,
        "errors": errors,
        "warnings": warnings,
        "findings": findings,
        "limits": {"subject": ns.subject_limit, "body": ns.body_limit},
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    for f in findings:
        print(f"{path.as_posix()}:{f['line']}: {f['severity']} [{f['rule']}] {f['message']}")
    verdict = "OK" if errors == 0 else "FAILED"
    print(f"{verdict}: {errors} error(s), {warnings} warning(s) -> {OUTPUT.as_posix()}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
