"""Bounded fuzzing of the two parsers that take untrusted bytes: the SKILL.md reader and the
package extractor. Whatever they are fed, they answer with a skill, diagnostics, or one of our
typed errors: never another exception, never a file outside the destination. CI runs a few
hundred examples of each (``FUZZ_EXAMPLES`` raises it for a longer run)."""

from __future__ import annotations

import io
import os
import tempfile
import warnings
import zipfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillweave.errors import PackageError, SkillFormatError
from skillweave.skills.frontmatter import parse_frontmatter
from skillweave.skills.loader import load_skill_file
from skillweave.skills.package import PackageLimits, extract_package

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same examples on every CI run; FUZZ_EXAMPLES explores further
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
LIMITS = PackageLimits(max_files=50, max_bytes=256 * 1024, max_ratio=50)

# YAML-ish building blocks, so that examples reach the YAML parser and the field checks
# rather than dying at the first "---".
_KEYS = st.sampled_from(
    ["name", "description", "license", "metadata", "allowed-tools", "compatibility", "x", ""]
)
_VALUES = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "&a [1, 2]",
            "*a",
            "[*a, *a, *a]",
            "{",
            "]",
            "!!python/object:os.system",
            "|",
            ">-",
            "'",
            '"',
            "\x00",
            "null",
            "~",
            "- a\n  - b",
            "{a: {b: {c: {d: {}}}}}",
            "0x1F",
            "1e999",
        ]
    ),
)
_LINES = st.tuples(_KEYS, _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}")
_FRONTMATTER = st.lists(_LINES, max_size=8).map("\n".join)
_SKILL_TEXT = st.one_of(
    st.tuples(_FRONTMATTER, st.text(max_size=200)).map(lambda p: f"---\n{p[0]}\n---\n{p[1]}"),
    st.text(max_size=400),
)


@FUZZ
@given(_SKILL_TEXT)
def test_the_frontmatter_parser_answers_or_refuses(text: str) -> None:
    try:
        front = parse_frontmatter(text, path="fuzz/SKILL.md")
    except SkillFormatError as exc:
        assert exc.reason  # noqa: PT017 - either outcome is valid; a refusal has a reason
    else:
        assert isinstance(front.data, dict)


@FUZZ
@given(
    st.one_of(
        _SKILL_TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=400)
    )
)
def test_loading_any_skill_file_gives_a_skill_or_diagnostics(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        skill_file = Path(folder) / "fuzzed" / "SKILL.md"
        skill_file.parent.mkdir()
        skill_file.write_bytes(raw)
        loaded = load_skill_file(skill_file)
        assert loaded.skill is not None or loaded.diagnostics


_NAMES = st.one_of(
    st.sampled_from(
        [
            "SKILL.md",
            "x/SKILL.md",
            "../evil",
            "/abs",
            "a/../../b",
            "a\\..\\b",
            "C:/x",
            "a//b",
            "./SKILL.md",
            "scripts/",
            "a\x00b",
            "skill.md",
            "SKILL.MD",
            "É/SKILL.md",
            "a" * 300,
        ]
    ),
    st.text(min_size=1, max_size=30),
)
_ENTRIES = st.lists(
    st.tuples(_NAMES, st.binary(max_size=300), st.integers(min_value=0, max_value=0o177777)),
    min_size=1,
    max_size=8,
)


def _archive(entries: list[tuple[str, bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # duplicate names are one of the hostile shapes
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def _files_under(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@FUZZ
@given(st.one_of(_ENTRIES.map(_archive), st.binary(max_size=600)))
def test_the_extractor_extracts_or_refuses_and_writes_only_inside(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        outside = root / "outside"
        outside.mkdir()
        (outside / "keep.txt").write_text("keep")
        dest = root / "dest"
        try:
            found = extract_package(data, dest, limits=LIMITS)
        except PackageError as exc:
            assert str(exc)  # noqa: PT017 - either outcome is valid; a refusal says why
            leftovers = _files_under(dest) if dest.exists() else set()
            assert not [p for p in leftovers if p.is_file()]  # nothing half-written
        else:
            assert found
            assert all(p.resolve().is_relative_to(dest.resolve()) for p in _files_under(dest))
        assert _files_under(root) - _files_under(dest) - {dest} == {outside, outside / "keep.txt"}
