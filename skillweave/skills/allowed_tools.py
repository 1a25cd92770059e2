"""``allowed-tools``: what a skill lets the model do while it is active, read onto skillweave.

The field is the spec's (experimental): a space-separated string. Other clients write it their
own way, and :func:`parse_allowed_tools` reads them all onto skillweave's tools:

- Claude Code: ``Bash(python:*) Read`` or ``Bash(git diff:*), Read, Grep`` (a tool, optionally
  with a command specifier in parentheses, which may hold spaces);
- DeerFlow: a YAML list, ``[bash, read_file]``;
- skillweave's own names: ``run_skill_script``, ``read_skill_resource``, an executable tool's.

The mapping (:data:`MAPPING`, also in the README's *Compatibility* section): the tools that run
something are what it governs. ``Bash`` (any spelling of a shell) runs every script and
executable tool of the active skills; ``Bash(python:*)``, ``Bash(node …)``, ``Bash(sh …)`` the
scripts of that language; ``Bash(scripts/x.py)`` or ``Bash(python scripts/x.py:*)`` that script
of the skill that lists it. An executable tool's name allows that tool. ``Read``, ``Glob``,
``Grep``, ``read_file``… map onto ``read_skill_resource``, which is offered anyway (reading a
skill's own files is disclosure, not action). Editing, web and agent tools have no skillweave
counterpart here and are ignored; any other plain name is taken for an executable tool's name,
and a specifier on a name skillweave does not know is ignored with a warning.

The agent loop and the MCP front door apply the result (``skillweave.agent.disclosure``): while
any active skill has ``allowed-tools``, only the union of what those skills allow is offered and
run, and what a skill allows for its own scripts skips human approval. Pure: the workflow
sandbox imports it (``AllowedTools`` is part of a run's durable state).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "MAPPING",
    "AllowedTools",
    "ToolEffect",
    "parse_allowed_tools",
    "skill_allowance",
]

ToolEffect = Literal["run", "read", "none"]

MAPPING: Final[dict[str, ToolEffect]] = {
    # Shells: run scripts (all of them, or those a specifier names).
    "bash": "run",
    "shell": "run",
    "sh": "run",
    "terminal": "run",
    "execute": "run",
    "python": "run",
    "run_skill_script": "run",
    # Reading files: read_skill_resource, which is always offered.
    "read": "read",
    "read_file": "read",
    "view": "read",
    "glob": "read",
    "grep": "read",
    "ls": "read",
    "read_skill_resource": "read",
    # No counterpart: the sandbox writes only outputs/, there is no web here, no sub-agents.
    "write": "none",
    "edit": "none",
    "multiedit": "none",
    "notebookedit": "none",
    "write_file": "none",
    "str_replace": "none",
    "webfetch": "none",
    "websearch": "none",
    "web_fetch": "none",
    "web_search": "none",
    "task": "none",
    "todowrite": "none",
    "skill": "none",
    "activate_skill": "none",
    "search_skills": "none",
}
"""Tool names other clients use (compared case-insensitively), and what each is here."""

_LANGUAGES: Final[dict[str, tuple[str, ...]]] = {
    "python": ("*.py",),
    "python3": ("*.py",),
    "node": ("*.js", "*.mjs", "*.cjs"),
    "bash": ("*.sh",),
    "sh": ("*.sh",),
}
_ENTRY: Final = re.compile(r"\s*([^\s,()]+)(?:\(([^)]*)\))?\s*,?")
_SCRIPT_PATH: Final = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.(?:py|js|mjs|cjs|sh)")


class AllowedTools(BaseModel):
    """What one skill's ``allowed-tools`` allows, on skillweave's tools.

    Attributes:
        scripts: script patterns it allows (``fnmatch``): ``*`` any script, ``*.py`` a
            language's, or a path (``scripts/fill.py``) of the listing skill only.
        tools: executable tool names it allows (as offered, or as the script declares them).
        ignored: entries with no skillweave counterpart, as written.
    """

    model_config = ConfigDict(frozen=True)

    scripts: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    def allows(self, *, own: bool, script: str, tool: tuple[str, ...] = ()) -> bool:
        """Whether it lets `script` run (a tool's script, with the tool's names in `tool`);
        `own`: the script is the listing skill's (its paths apply only to itself)."""
        if any(name in self.tools for name in tool):
            return True
        for pattern in self.scripts:
            if pattern.startswith("*") and "/" not in pattern:
                if fnmatch.fnmatchcase(script, pattern):
                    return True
            elif own and fnmatch.fnmatchcase(script, pattern):
                return True
        return False

    def describe(self) -> str:
        """What it allows, in words for the model and for people."""
        parts = []
        if "*" in self.scripts:
            parts.append("any script")
        else:
            parts += [f"scripts {pattern}" for pattern in self.scripts]
        parts += [f"the tool {name}" for name in self.tools]
        return ", ".join(parts) if parts else "no scripts or tools"


def _entries(value: Any) -> list[str]:
    """The entries of `value` as written: a list's items, or a string split at commas and
    white space outside parentheses."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [entry for item in value for entry in _entries(str(item))]
    text = str(value)
    entries, position = [], 0
    while position < len(text):
        match = _ENTRY.match(text, position)
        if match is None or match.end() == position:
            position += 1  # a stray parenthesis or comma: skip it
            continue
        entries.append(match.group(0).strip().rstrip(",").strip())
        position = match.end()
    return [entry for entry in entries if entry]


def _scripts_of(specifier: str) -> tuple[str, ...] | None:
    """The script patterns a shell specifier (``python:*``, ``python scripts/x.py:*``,
    ``scripts/x.py``) names; None when it names no skill script (``git diff:*``)."""
    command = specifier.strip().removesuffix(":*").removesuffix("*").strip()
    if not command:
        return ("*",)
    words = command.split()
    paths = [word.removeprefix("./") for word in words if _SCRIPT_PATH.fullmatch(word)]
    if paths:
        return tuple(paths)
    if len(words) == 1 and words[0] in _LANGUAGES:
        return _LANGUAGES[words[0]]
    return None


def parse_allowed_tools(value: Any) -> tuple[AllowedTools, list[str]]:
    """Read an ``allowed-tools`` value (a string or a list) onto skillweave's tools.

    Returns:
        What it allows, and a warning per entry that is no tool skillweave knows.
    """
    scripts: list[str] = []
    tools: list[str] = []
    ignored: list[str] = []
    warnings: list[str] = []
    for entry in _entries(value):
        name, _, rest = entry.partition("(")
        specifier = rest[:-1] if rest.endswith(")") else rest
        effect = MAPPING.get(name.strip().lower())
        if name.startswith("mcp__"):
            effect = "none"  # another MCP server's tool
        if effect == "run":
            named = _scripts_of(specifier) if rest else ("*",)
            if named is None:
                ignored.append(entry)
                warnings.append(f"{entry!r} names no skill script; it allows nothing here")
            else:
                scripts += named
        elif effect == "read":
            continue  # read_skill_resource is always offered
        elif effect == "none":
            ignored.append(entry)
        elif rest:
            ignored.append(entry)
            warnings.append(f"{entry!r} is no tool skillweave knows; ignored")
        else:
            tools.append(name)  # an executable skill's tool, by its name
    return (
        AllowedTools(
            scripts=tuple(dict.fromkeys(scripts)),
            tools=tuple(dict.fromkeys(tools)),
            ignored=tuple(ignored),
        ),
        warnings,
    )


def skill_allowance(text: str | None) -> tuple[AllowedTools | None, list[str]]:
    """What a skill's ``allowed-tools`` (as loaded: the text, a list joined with spaces)
    allows, and its warnings; None when the skill has none (it restricts nothing)."""
    if text is None or not text.strip():
        return None, []
    return parse_allowed_tools(text)
