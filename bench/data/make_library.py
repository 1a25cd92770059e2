"""The labelled skill-selection benchmark: a library of hand-written skills and user requests.

The sources are the YAML files in ``bench/data/skills/``, one per group of domains. Each holds
skills (name, description, optional ``children``: a tree) and, for each skill, requests a user
might type, labelled by where they sit: a request belongs to the skill it is listed under, and
``also`` names other skills that would do the job equally well. Requests are paraphrases: they
describe the goal or the situation in the user's words, not the skill's.

This script is what turns the sources into a library and a request set:

- :func:`load_benchmark` reads and checks every source (names valid and unique, parents and
  ``also`` labels known, no request that copies its skill's words) and gives the skills in a
  stable order plus the labelled requests, each assigned to the ``validation`` or ``heldout``
  split by a hash of its skill's name (so a skill's requests are all on one side);
- :func:`library_of` picks a nested sub-library of a given size, whole trees at a time, and
  the requests whose labels it holds;
- :func:`write_library` writes skill folders (``SKILL.md`` with frontmatter and a body with
  headings, a script, a reference file), children nested inside their parent's folder.

Run it to check the sources and print their statistics (``python bench/data/make_library.py``),
or to write the library somewhere (``... --write DIR``). Used by ``bench/selection_bench.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import yaml

SOURCES: Final = Path(__file__).resolve().parent / "skills"
_NAME: Final = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
NAME_LIMIT: Final = 64
DESCRIPTION_WORDS: Final = (8, 90)
REQUEST_WORDS: Final = (3, 60)
# A request may share at most this many content stems with its skill's name and description,
# or this fraction of its own, whichever allows more: anything above is a keyword copy.
MAX_SHARED_STEMS: Final = 3
MAX_SHARED_FRACTION: Final = 0.5
VALIDATION_PERCENT: Final = 40

Split = Literal["validation", "heldout"]


@dataclass(frozen=True, slots=True)
class BenchSkill:
    """One skill of the benchmark library."""

    name: str
    description: str
    group: str
    parent: str | None = None
    children: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BenchRequest:
    """One labelled user request.

    Attributes:
        text: what the user asks.
        skill: the skill it is listed under (the one the request was written for).
        labels: every skill that would do the job: `skill` first, then its ``also`` list.
        split: ``validation`` (choose thresholds here) or ``heldout`` (report here).
    """

    text: str
    skill: str
    labels: tuple[str, ...]
    split: Split


@dataclass(frozen=True, slots=True)
class Benchmark:
    skills: tuple[BenchSkill, ...]
    requests: tuple[BenchRequest, ...]

    def skill(self, name: str) -> BenchSkill:
        return self._by_name[name]

    @property
    def _by_name(self) -> dict[str, BenchSkill]:
        return {s.name: s for s in self.skills}


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")


def split_of(skill: str) -> Split:
    """A skill's split, stable across runs and machines (a hash of its name)."""
    bucket = int.from_bytes(hashlib.sha256(skill.encode()).digest()[:4], "big") % 100
    return "validation" if bucket < VALIDATION_PERCENT else "heldout"


def _words(text: str) -> int:
    return len(text.split())


class _Stems:
    """Content stems of a text, analysed the way the BM25 index analyses it."""

    def __init__(self) -> None:
        from skillweave.skills.relevance import _Analyzer  # the benchmark measures the product

        self._analyzer = _Analyzer()

    def __call__(self, text: str) -> set[str]:
        return set(self._analyzer.stems(text.replace("-", " ")))


def _read(path: Path, problems: _Problems) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        problems.add(path.name, f"not YAML: {error}")
        return []
    if not isinstance(data, dict) or not isinstance(data.get("skills"), list):
        problems.add(path.name, "expected a mapping with a 'skills' list")
        return []
    return data["skills"]


def _walk(
    entries: Iterable[Any],
    *,
    group: str,
    parent: str | None,
    skills: list[BenchSkill],
    raw_requests: list[tuple[str, str, tuple[str, ...]]],
    problems: _Problems,
) -> None:
    for entry in entries:
        where = f"{group}.yaml"
        if not isinstance(entry, dict):
            problems.add(where, f"a skill must be a mapping, got {entry!r}")
            continue
        name = str(entry.get("name", ""))
        where = f"{group}.yaml {name or '?'}"
        if not _NAME.fullmatch(name) or len(name) > NAME_LIMIT:
            problems.add(where, "name must be lowercase words joined by single hyphens, <= 64")
        description = " ".join(str(entry.get("description", "")).split())
        low, high = DESCRIPTION_WORDS
        if not low <= _words(description) <= high:
            problems.add(where, f"description must have {low}-{high} words")
        children = entry.get("children") or []
        child_names = tuple(str(c.get("name", "")) for c in children if isinstance(c, dict))
        skills.append(BenchSkill(name, description, group, parent, child_names))
        requests = entry.get("requests") or []
        if not requests:
            problems.add(where, "no requests")
        for request in requests:
            if isinstance(request, str):
                raw_requests.append((name, " ".join(request.split()), ()))
            elif isinstance(request, dict) and isinstance(request.get("text"), str):
                also = tuple(str(a) for a in request.get("also") or ())
                raw_requests.append((name, " ".join(request["text"].split()), also))
            else:
                problems.add(where, f"a request must be a string or {{text, also}}: {request!r}")
        _walk(
            children,
            group=group,
            parent=name,
            skills=skills,
            raw_requests=raw_requests,
            problems=problems,
        )


def _check_requests(
    skills: Sequence[BenchSkill],
    raw_requests: Sequence[tuple[str, str, tuple[str, ...]]],
    problems: _Problems,
) -> list[BenchRequest]:
    stems = _Stems()
    known = {s.name: s for s in skills}
    seen: set[str] = set()
    requests: list[BenchRequest] = []
    for skill, text, also in raw_requests:
        where = f"{known[skill].group}.yaml {skill}"
        low, high = REQUEST_WORDS
        if not low <= _words(text) <= high:
            problems.add(where, f"request must have {low}-{high} words: {text!r}")
        if text.lower() in seen:
            problems.add(where, f"request written twice: {text!r}")
        seen.add(text.lower())
        for label in also:
            if label not in known:
                problems.add(where, f"'also' names an unknown skill {label!r}")
            elif label == skill:
                problems.add(where, "'also' names the skill itself")
        own = stems(text)
        shared = own & stems(f"{skill} {known[skill].description}")
        if len(shared) > max(MAX_SHARED_STEMS, MAX_SHARED_FRACTION * len(own)):
            problems.add(where, f"request copies the skill's words {sorted(shared)}: {text!r}")
        requests.append(BenchRequest(text, skill, (skill, *also), split_of(skill)))
    return requests


def load_benchmark(sources: Path = SOURCES, *, strict: bool = True) -> Benchmark:
    """Read and check every source file.

    Args:
        sources: the folder of YAML sources.
        strict: raise on any problem; otherwise problems are printed and skipped over.

    Raises:
        ValueError: listing every problem found, when `strict`.
    """
    problems = _Problems()
    skills: list[BenchSkill] = []
    raw_requests: list[tuple[str, str, tuple[str, ...]]] = []
    for path in sorted(sources.glob("*.yaml")):
        _walk(
            _read(path, problems),
            group=path.stem,
            parent=None,
            skills=skills,
            raw_requests=raw_requests,
            problems=problems,
        )
    names = [s.name for s in skills]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    for name in duplicated:
        groups = sorted({s.group for s in skills if s.name == name})
        problems.add(", ".join(groups), f"skill name {name!r} used more than once")
    unique = list({s.name: s for s in skills}.values())
    requests = _check_requests(unique, raw_requests, problems)
    if problems.items:
        report = "\n".join(problems.items)
        if strict:
            count = len(problems.items)
            raise ValueError(f"{count} problem(s) in the benchmark sources:\n{report}")
        print(report, file=sys.stderr)
    return Benchmark(tuple(unique), tuple(requests))


def _root_of(benchmark: Benchmark, name: str) -> str:
    by_name = {s.name: s for s in benchmark.skills}
    while by_name[name].parent is not None:
        name = by_name[name].parent  # type: ignore[assignment]
    return name


def library_of(benchmark: Benchmark, size: int) -> Benchmark:
    """A sub-library of about `size` skills and the requests it can answer.

    Whole trees are taken, roots in a fixed pseudo-random order (a hash of their names), until
    the library holds `size` skills; the last tree is cut to fit (its root and first children),
    so the result has exactly `size` skills when the benchmark has that many. Smaller libraries
    are subsets of larger ones. A request is kept when its primary skill is in the library; its
    other labels are kept when they are too.
    """
    by_name = {s.name: s for s in benchmark.skills}
    roots = sorted(
        (s for s in benchmark.skills if s.parent is None),
        key=lambda s: hashlib.sha256(s.name.encode()).hexdigest(),
    )
    chosen: list[str] = []

    def tree(name: str) -> list[str]:
        out = [name]
        for child in by_name[name].children:
            out.extend(tree(child))
        return out

    for root in roots:
        if len(chosen) >= size:
            break
        chosen.extend(tree(root.name)[: size - len(chosen)])
    kept = set(chosen)
    skills = tuple(
        BenchSkill(
            s.name,
            s.description,
            s.group,
            s.parent,
            tuple(c for c in s.children if c in kept),
        )
        for s in benchmark.skills
        if s.name in kept
    )
    requests = tuple(
        BenchRequest(r.text, r.skill, tuple(x for x in r.labels if x in kept), r.split)
        for r in benchmark.requests
        if r.skill in kept
    )
    return Benchmark(skills, requests)


def _title(name: str) -> str:
    return " ".join(word.capitalize() for word in name.split("-"))


def _skill_md(skill: BenchSkill) -> str:
    description = yaml.safe_dump({"description": skill.description}, width=1_000).strip()
    lines = [
        "---",
        f"name: {skill.name}",
        description,
        "license: Apache-2.0",
        "---",
        f"# {_title(skill.name)}",
        "",
        skill.description,
        "",
        "## Steps",
        "",
        "1. Check the inputs the user gave and ask for anything missing.",
        f"2. Run `scripts/run.py` with them; it prints what {skill.name} found.",
        "3. Report the result in a few sentences, with any files it wrote.",
        "",
        "## Reference",
        "",
        "Details and edge cases are in `references/notes.md`.",
    ]
    if skill.children:
        lines += ["", "## Sub-skills", ""]
        lines += [f"- `{child}`" for child in skill.children]
    return "\n".join(lines) + "\n"


def write_library(benchmark: Benchmark, root: Path) -> int:
    """Write every skill of `benchmark` as a folder under `root`; returns the count.

    Children are written inside their parent's folder, which is how a tree is laid out.
    """
    by_name = {s.name: s for s in benchmark.skills}

    def folder(skill: BenchSkill) -> Path:
        parts = [skill.name]
        while skill.parent is not None and skill.parent in by_name:
            skill = by_name[skill.parent]
            parts.append(skill.name)
        return root.joinpath(*reversed(parts))

    for skill in benchmark.skills:
        place = folder(skill)
        (place / "scripts").mkdir(parents=True, exist_ok=True)
        (place / "references").mkdir(exist_ok=True)
        (place / "SKILL.md").write_text(_skill_md(skill), encoding="utf-8")
        (place / "scripts" / "run.py").write_text(
            f'"""{skill.name}: a placeholder script."""\nprint("{skill.name} ran")\n',
            encoding="utf-8",
        )
        (place / "references" / "notes.md").write_text(
            f"# Notes on {_title(skill.name)}\n\n{skill.description}\n", encoding="utf-8"
        )
    return len(benchmark.skills)


def statistics_of(benchmark: Benchmark) -> list[tuple[str, str]]:
    """Figures describing the benchmark, as (label, value) rows."""
    stems = _Stems()
    by_name = {s.name: s for s in benchmark.skills}
    overlaps = []
    for request in benchmark.requests:
        own = stems(request.text)
        skill = by_name[request.skill]
        if own:
            overlaps.append(len(own & stems(f"{skill.name} {skill.description}")) / len(own))
    groups = sorted({s.group for s in benchmark.skills})
    roots = [s for s in benchmark.skills if s.parent is None]
    parents = [s for s in benchmark.skills if s.children]
    splits = [r.split for r in benchmark.requests]
    return [
        ("groups", f"{len(groups)} ({', '.join(groups)})"),
        ("skills", f"{len(benchmark.skills):,}"),
        ("roots / parents", f"{len(roots):,} / {len(parents):,}"),
        ("requests", f"{len(benchmark.requests):,}"),
        ("with more than one label", f"{sum(len(r.labels) > 1 for r in benchmark.requests):,}"),
        ("validation / held-out", f"{splits.count('validation'):,} / {splits.count('heldout'):,}"),
        (
            "request words shared with the skill",
            f"mean {statistics.fmean(overlaps):.0%}, median {statistics.median(overlaps):.0%}"
            if overlaps
            else "-",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=Path, default=SOURCES)
    parser.add_argument("--write", type=Path, metavar="DIR", help="write the library here")
    parser.add_argument("--size", type=int, help="only a sub-library of this many skills")
    args = parser.parse_args(argv)
    try:
        benchmark = load_benchmark(args.sources)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if args.size:
        benchmark = library_of(benchmark, args.size)
    for label, value in statistics_of(benchmark):
        print(f"{label:>40}: {value}")
    if args.write:
        count = write_library(benchmark, args.write)
        print(f"wrote {count} skills under {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
