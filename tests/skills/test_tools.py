from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillweave.errors import ToolSchemaError
from skillweave.skills.discovery import SkillScanner
from skillweave.skills.tools import declared_tool_scripts, parse_tool_schemas
from tests.conftest import MakeSkill

SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "number"}, "unit": {"type": "string", "enum": ["m", "km"]}},
    "required": ["value"],
}


def test_single_tool() -> None:
    (tool,) = parse_tool_schemas(
        json.dumps({"name": "convert", "description": "Convert.", "input_schema": SCHEMA}),
        script="scripts/convert.py",
    )
    assert tool.name == "convert"
    assert tool.input_schema == SCHEMA


def test_a_list_and_the_aliases() -> None:
    tools = parse_tool_schemas(
        json.dumps(
            [
                {"name": "a", "description": "A.", "parameters": SCHEMA},
                {"name": "b", "description": "B.", "inputSchema": {"type": "object"}},
            ]
        ),
        script="s",
    )
    assert [t.name for t in tools] == ["a", "b"]


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("not json", "did not print JSON"),
        ("[]", "expected 1 to 32 tools"),
        ('"text"', "tool 0 is not a JSON object"),
        ('{"name": "bad name!", "description": "d", "input_schema": {"type": "object"}}', "name"),
        ('{"name": "x", "description": "", "input_schema": {"type": "object"}}', "description"),
        ('{"name": "x", "description": "d"}', "input_schema"),
        ('{"name": "x", "description": "d", "input_schema": {"type": "array"}}', '"object"'),
        (
            '{"name": "x", "description": "d", "input_schema": {"type": "object", "required": 5}}',
            "not a valid JSON Schema",
        ),
        (
            '[{"name": "x", "description": "d", "input_schema": {"type": "object"}},'
            ' {"name": "x", "description": "e", "input_schema": {"type": "object"}}]',
            "duplicate tool names",
        ),
    ],
)
def test_invalid_output(output: str, message: str) -> None:
    with pytest.raises(ToolSchemaError, match=message):
        parse_tool_schemas(output, script="scripts/t.py")


def test_declared_tool_scripts(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill(
        "explicit",
        extra="metadata:\n  type: executable\n  tools: scripts/one.py",
        files={"scripts/one.py": "", "scripts/two.py": ""},
    )
    make_skill(
        "implicit",
        extra="metadata:\n  type: executable",
        files={"scripts/b.py": "", "scripts/a.mjs": "", "scripts/_helper.py": ""},
    )
    make_skill(
        "lazy",  # the Lazy-Skills layout: the entry point at the top of the folder
        extra="metadata:\n  type: executable",
        files={"execute.py": "", "helper.py": "", "scripts/more.sh": ""},
    )
    make_skill("plain", files={"scripts/x.py": "", "execute.py": ""})
    skills = SkillScanner([tmp_path / "lib"]).scan().skills
    assert declared_tool_scripts(skills["explicit"]) == ("scripts/one.py",)
    assert declared_tool_scripts(skills["implicit"]) == ("scripts/a.mjs", "scripts/b.py")
    assert declared_tool_scripts(skills["lazy"]) == ("execute.py", "scripts/more.sh")
    assert declared_tool_scripts(skills["plain"]) == ()
