"""The bundled library seen through the library's own API: every skill loads strictly clean,
activates, lists readable resources, and every executable tool passes our schema validator."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from skillweave.skills import (
    SkillRegistry,
    SkillScanner,
    declared_tool_scripts,
    parse_tool_schemas,
    read_resource,
    render_activation,
    validate_paths,
)
from skillweave.skills.resources import disclosed_resources, list_resources
from tests.conftest import BUNDLED_SKILLS

REGISTRY = SkillRegistry.from_scan(SkillScanner([BUNDLED_SKILLS]).scan())
EXECUTABLE = [(skill.name, script) for skill in REGISTRY for script in declared_tool_scripts(skill)]


def test_at_least_seven_skills_and_one_tree_of_three() -> None:
    assert len(REGISTRY) >= 7
    assert any(len(skill.children) >= 3 for skill in REGISTRY)
    assert REGISTRY.diagnostics == ()


def test_strictly_valid() -> None:
    report = validate_paths([BUNDLED_SKILLS], strict=True)
    assert report.ok, [str(d) for d in report.diagnostics]


@pytest.mark.parametrize("name", REGISTRY.names)
def test_every_skill_activates_and_its_text_resources_read(name: str) -> None:
    skill = REGISTRY.get(name)
    payload = render_activation(skill, children=REGISTRY.children_of(name))
    assert payload.startswith(f'<skill_content name="{name}">')
    for path in disclosed_resources(skill):  # what the model is shown (evals/ is withheld)
        if path.endswith((".md", ".py", ".mjs", ".json", ".csv", ".txt")):
            assert read_resource(skill, path)


def test_bodies_point_to_existing_references() -> None:
    with_refs = [s for s in REGISTRY if any(p.startswith("references/") for p in list_resources(s))]
    assert with_refs
    for skill in with_refs:
        for path in list_resources(skill):
            if path.startswith("references/"):
                assert path in skill.body, f"{skill.name} body does not point to {path}"


def test_python_and_node_scripts_are_bundled() -> None:
    scripts = [path for skill in REGISTRY for path in list_resources(skill)]
    assert any(path.endswith(".py") for path in scripts)
    assert any(path.endswith((".js", ".mjs")) for path in scripts)


@pytest.mark.parametrize(("skill", "script"), EXECUTABLE)
def test_executable_tools_pass_the_schema_validator(skill: str, script: str) -> None:
    path = REGISTRY.get(skill).path / script
    if path.suffix in (".js", ".mjs"):
        node = shutil.which("node")
        if node is None:
            pytest.skip("node is not installed")
        command = [node, str(path), "--help-json"]
    else:
        command = [sys.executable, str(path), "--help-json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    tools = parse_tool_schemas(done.stdout, script=script)
    assert tools
    assert all(tool.input_schema["type"] == "object" for tool in tools)
