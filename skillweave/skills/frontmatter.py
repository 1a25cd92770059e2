"""Splitting a SKILL.md into its YAML frontmatter and Markdown body.

Owns the text-level rules: a UTF-8 BOM is dropped, CRLF/CR line ends become LF, the frontmatter
is the block between a first ``---`` line and the next ``---`` line (later ``---`` lines belong
to the body), the body may be empty. YAML is read with the safe loader (libyaml's when present,
which keeps a 10,000-skill scan fast). Skills written for other clients often carry unquoted
colons in values (``description: Use when: the user asks``), which is invalid YAML; one retry
quotes such values, and the result records that the repair was needed so strict validation can
still report it. Called by the loader (lenient) and the validator (strict).

Before composing, the YAML's events are walked once to refuse what would hurt a reader rather
than merely be wrong: nesting deeper than :data:`MAX_NESTING` (libyaml's composer recurses in C,
and some 30,000 ``[`` overflow its stack and kill the process), aliases that expand to more than
:data:`MAX_ALIAS_EXPANSION` nodes (the "billion laughs", which any code walking the data would
blow up on), and an alias inside the collection it names (a structure that contains itself).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import yaml

from skillweave.errors import SkillFormatError

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_NESTING",
    "Frontmatter",
    "parse_frontmatter",
    "with_frontmatter_fields",
]

MAX_NESTING: Final = 64
"""Deepest nesting of collections a frontmatter may have (real ones nest two or three)."""
MAX_ALIAS_EXPANSION: Final = 10_000
"""Most nodes all aliases of a frontmatter may stand for once expanded."""

_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOM: Final = "\ufeff"
_FENCE_LINE: Final = re.compile(r"---[ \t]*(?:\n|\Z)")
_CLOSING_FENCE: Final = re.compile(r"\n---[ \t]*(?:\n|\Z)")
_PLAIN_KEY_VALUE: Final = re.compile(
    r"^(?P<indent>[ \t]*)(?P<key>[A-Za-z0-9_][\w.-]*):[ \t]+(?P<value>\S.*)$"
)
_NON_PLAIN_STARTS: Final = ("'", '"', "|", ">", "[", "{", "&", "*", "!", "#")


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """A SKILL.md split in two.

    Attributes:
        data: the YAML mapping (empty when the frontmatter block is empty).
        body: the Markdown after the closing ``---`` line, line ends normalised to LF.
        colon_repaired: True when the YAML only parsed after quoting values with colons.
    """

    data: dict[Any, Any]
    body: str
    colon_repaired: bool = False


def _split(text: str, path: str) -> tuple[str, str, int]:
    """Return the YAML text, the body and the file line number of the first YAML line."""
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    stripped = text.lstrip(" \t\n")
    skipped_lines = text.count("\n", 0, len(text) - len(stripped))
    opening = _FENCE_LINE.match(stripped)
    if opening is None:
        raise SkillFormatError(path, "no YAML frontmatter: the file must start with a '---' line")
    # Search for the closing fence from the newline that ends the opening one, so that a
    # frontmatter with no keys (`---` right after `---`) is found too.
    closing = _CLOSING_FENCE.search(stripped, opening.end() - 1)
    if closing is None:
        raise SkillFormatError(path, "frontmatter is not closed: no second '---' line")
    yaml_text = stripped[opening.end() : closing.start() + 1]
    body = stripped[closing.end() :].strip("\n")
    return yaml_text, body + "\n" if body.strip() else "", skipped_lines + 2


def _quote_colon_values(yaml_text: str) -> str:
    """Quote plain scalar values that contain ': ' so that YAML reads them as strings."""
    out: list[str] = []
    for line in yaml_text.split("\n"):
        match = _PLAIN_KEY_VALUE.match(line)
        if match and ": " in match["value"] and not match["value"].startswith(_NON_PLAIN_STARTS):
            value = match["value"].rstrip().replace("'", "''")
            out.append(f"{match['indent']}{match['key']}: '{value}'")
        else:
            out.append(line)
    return "\n".join(out)


class _Unsafe(Exception):
    """YAML that parses but must not be composed or handed on (see the module docstring)."""


_OPENING: Final = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSING: Final = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_structure(yaml_text: str) -> None:
    """Walk the parser's events (libyaml keeps its own stack there, so any depth is safe) and
    refuse too deep a nesting, too large an alias expansion and an alias to an open collection.

    Raises:
        _Unsafe: with what is wrong.
        yaml.YAMLError: the text does not parse.
    """
    sizes: dict[str, int] = {}  # anchor -> nodes it stands for, once its node is complete
    open_frames: list[tuple[str | None, int]] = []  # (anchor, nodes so far) per open collection
    expanded = 0
    for event in yaml.parse(yaml_text, Loader=_LOADER):
        if isinstance(event, _OPENING):
            if len(open_frames) >= MAX_NESTING:
                raise _Unsafe(f"nested more than {MAX_NESTING} levels deep")
            open_frames.append((event.anchor, 1))
            continue
        if isinstance(event, _CLOSING):
            anchor, size = open_frames.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in open_frames):
                raise _Unsafe("an alias refers to a collection that contains it")
            # An undefined alias is left for the composer to report.
            anchor, size = None, sizes.get(event.anchor or "", 1)
            expanded += size
            if expanded > MAX_ALIAS_EXPANSION:
                raise _Unsafe(f"aliases expand to more than {MAX_ALIAS_EXPANSION} nodes")
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        if open_frames:
            parent_anchor, parent_size = open_frames[-1]
            open_frames[-1] = (parent_anchor, parent_size + size)


def _flow_depth(yaml_text: str) -> int:
    """The deepest nesting of flow brackets (``[``, ``{``) outside quoted scalars and comments.

    Only asked when the parser itself refused the text: libyaml's scanner reads a flow
    collection's brackets ahead of the events, and newer versions stop at their own depth
    limit before `_check_structure` sees the 65th level; this keeps the refusal ours, and the
    same whatever the library version.
    """
    deepest = depth = 0
    quote = ""
    previous = "\n"
    for char in yaml_text:
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and previous in " \t\n[{,:":
            quote = char
        elif char == "#" and previous in " \t\n":
            quote = "\n"  # a comment runs to the end of the line
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
        previous = char
    return deepest


def _load_yaml(yaml_text: str) -> Any:
    try:
        _check_structure(yaml_text)
    except yaml.YAMLError:
        if _flow_depth(yaml_text) > MAX_NESTING:
            raise _Unsafe(f"nested more than {MAX_NESTING} levels deep") from None
        raise
    return yaml.load(yaml_text, Loader=_LOADER)


def parse_frontmatter(text: str, *, path: str = "SKILL.md") -> Frontmatter:
    """Split `text` (a whole SKILL.md) into frontmatter data and body.

    Args:
        text: the file content, already decoded.
        path: shown in errors.

    Raises:
        SkillFormatError: no frontmatter, an unclosed one, YAML that does not parse even after
            the colon repair, YAML nested or aliased beyond the limits, or YAML that is not a
            mapping.
    """
    yaml_text, body, first_line = _split(text, path)
    repaired = False
    try:
        data = _load_yaml(yaml_text)
    except _Unsafe as exc:
        raise SkillFormatError(path, f"invalid YAML frontmatter: {exc}") from None
    except yaml.YAMLError as first_error:
        fixed = _quote_colon_values(yaml_text)
        try:
            data = _load_yaml(fixed) if fixed != yaml_text else None
        except (yaml.YAMLError, _Unsafe):
            data = None
        if data is None:
            mark = getattr(first_error, "problem_mark", None)
            line = mark.line if mark is not None else None
            position = getattr(first_error, "position", None)  # a ReaderError: a bad character
            if line is None and isinstance(position, int):
                line = yaml_text.count("\n", 0, position)
            where = f" (line {first_line + line})" if line is not None else ""
            # One line: a ReaderError's text goes on with where it read from.
            problem = getattr(first_error, "problem", None) or str(first_error).split("\n")[0]
            raise SkillFormatError(path, f"invalid YAML frontmatter{where}: {problem}") from None
        repaired = True
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillFormatError(path, f"frontmatter must be a mapping, not {type(data).__name__}")
    return Frontmatter(data=data, body=body, colon_repaired=repaired)


def with_frontmatter_fields(
    text: str, fields: dict[str, str], *, path: str = "SKILL.md"
) -> tuple[str, list[str]]:
    """`text` (a whole SKILL.md) with `fields` set in its frontmatter, and which of them
    changed; unchanged (the same text) when none did. A description is compared with its
    runs of white space as one space, as skills are read. Rewritten, the frontmatter is
    dumped again as YAML (its comments and layout are not kept); the body stays as it is.

    Raises:
        SkillFormatError: `text` has no frontmatter that parses (see `parse_frontmatter`).
    """
    front = parse_frontmatter(text, path=path)
    changed = [
        key
        for key, value in fields.items()
        if _compared(key, front.data.get(key)) != _compared(key, value)
    ]
    if not changed:
        return text, []
    data = {**front.data, **{key: fields[key] for key in changed}}
    dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1_000_000)
    body = f"\n{front.body}" if front.body else ""
    return f"---\n{dumped}---\n{body}", changed


def _compared(key: str, value: object) -> object:
    if key == "description" and isinstance(value, str):
        return " ".join(value.split())
    return value
