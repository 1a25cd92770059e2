"""Dependency discovery: each source alone, merging and conflicts, refusals, PEP 723's block
grammar, includes, limits, and the spec's digest and JSON form. Inputs are plain dicts of
package path -> bytes, as a skill version's files are handed over."""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from pathlib import Path

import pytest

from skillweave.errors import DependencyError
from skillweave.skills.dependencies import (
    MAX_SOURCE_BYTES,
    DependencySpec,
    discover_dependencies,
)
from skillweave.skills.files import iter_package_files, read_bytes
from skillweave.skills.spec import check_frontmatter

BUNDLED = Path(__file__).resolve().parents[2] / "skills"


def skill_md(frontmatter: str = "") -> bytes:
    return f"---\nname: demo\ndescription: Does things.\n{frontmatter}---\n# Demo\n".encode()


def script(*block_lines: str, before: str = "", after: str = "print('hi')\n") -> bytes:
    return (before + "".join(f"{line}\n" for line in block_lines) + after).encode()


def discover(**files: bytes | str) -> DependencySpec:
    """Files given as keyword arguments: `__` stands for `/` in the path, `_dot_` for `.`."""
    return discover_dependencies(package(**files))


def package(**files: bytes | str) -> dict[str, bytes]:
    out = {"SKILL.md": skill_md()}
    for key, content in files.items():
        path = key.replace("__", "/").replace("_dot_", ".")
        out[path] = content.encode() if isinstance(content, str) else content
    return out


def fails(files: dict[str, bytes], *, max_dependencies: int = 200) -> str:
    with pytest.raises(DependencyError) as caught:
        discover_dependencies(files, max_dependencies=max_dependencies)
    return str(caught.value)


# --- each source alone ----------------------------------------------------------------------


def test_a_skill_that_declares_nothing_has_an_empty_spec() -> None:
    spec = discover_dependencies({"SKILL.md": skill_md(), "scripts/run.py": b"print(1)\n"})
    assert spec == DependencySpec()
    assert spec.empty
    assert discover_dependencies({}).empty


def test_requirements_txt_with_comments_blank_lines_and_continuations() -> None:
    text = (
        "# tools for the report\n"
        "\n"
        "Requests>=2.31  # inline comment\n"
        "numpy >=1.26, \\\n"
        "   <2 \\\n"
        "   ; python_version >= '3.11'\n"
        "    \n"
        "PyYAML[libyaml]\n"
    )
    spec = discover(requirements_dot_txt=text)
    assert spec.python == (
        'numpy<2,>=1.26; python_version >= "3.11"',
        "pyyaml[libyaml]",
        "requests>=2.31",
    )
    assert spec.node == ()
    assert spec.sources == ("requirements.txt",)
    assert not spec.empty


def test_a_requirements_file_elsewhere_than_the_root_is_not_read() -> None:
    assert discover(scripts__requirements_dot_txt="requests\n").empty


def test_hash_options_are_ignored_and_the_pins_kept() -> None:
    text = (
        "certifi==2024.2.2 \\\n"
        "    --hash=sha256:0569859f95fc761b18b45ef421b1290a0f65f147e92a1e5eb3e635f9a5e4e66f \\\n"
        "    --hash sha256:dc383c07b76109f368f6106eee2b593b04a011ea4d55f652c6ca24a754d1cdd1\n"
    )
    assert discover(requirements_dot_txt=text).python == ("certifi==2024.2.2",)


def test_pep_723_block_in_a_script() -> None:
    spec = discover(
        scripts__report_dot_py=script(
            "# /// script",
            '# requires-python = ">=3.11"',
            "# dependencies = [",
            '#   "rich>=13",',
            '#   "Jinja2",',
            "# ]",
            "#",
            "# [tool.some-tool]",
            '# key = "value"',
            "# ///",
            before="#!/usr/bin/env python3\n",
        )
    )
    assert spec.python == ("jinja2", "rich>=13")
    assert spec.requires_python == ">=3.11"
    assert spec.sources == ("scripts/report.py (PEP 723)",)


def test_scripts_at_any_depth_under_scripts_are_read() -> None:
    block = script("# /// script", '# dependencies = ["tabulate"]', "# ///")
    spec = discover(scripts__lib__deep__util_dot_py=block)
    assert spec.python == ("tabulate",)
    assert spec.sources == ("scripts/lib/deep/util.py (PEP 723)",)


def test_a_block_outside_scripts_or_in_a_non_python_file_is_ignored() -> None:
    block = script("# /// script", '# dependencies = ["tabulate"]', "# ///")
    assert discover(helpers__util_dot_py=block).empty
    assert discover(tool_dot_py=block).empty
    assert discover(scripts__notes_dot_md=block, scripts__run_dot_sh=block).empty


def test_a_script_with_only_requires_python_needs_no_environment() -> None:
    spec = discover(
        scripts__a_dot_py=script("# /// script", '# requires-python = ">=3.10"', "# ///")
    )
    assert spec.requires_python == ">=3.10"
    assert spec.empty


def test_package_json_dependencies() -> None:
    manifest = {
        "name": "demo-scripts",
        "dependencies": {"lodash": "^4.17.21", "@types/node": "~20.11.0", "JSONStream": "1.x"},
        "devDependencies": {"typescript": "^5"},
        "peerDependencies": {"react": ">=18"},
        "optionalDependencies": {"fsevents": "^2"},
    }
    spec = discover(package_dot_json=json.dumps(manifest))
    assert spec.node == (("@types/node", "~20.11.0"), ("JSONStream", "1.x"), ("lodash", "^4.17.21"))
    assert spec.python == ()
    assert spec.sources == ("package.json",)


def test_node_ranges_are_normalised_only_in_whitespace() -> None:
    spec = discover(
        package_dot_json='{"dependencies": {"a": " >=1.2.0   <2 ", "b": "", "c": "latest"}}'
    )
    assert spec.node == (("a", ">=1.2.0 <2"), ("b", "*"), ("c", "latest"))


def test_frontmatter_mapping() -> None:
    frontmatter = (
        "dependencies:\n"
        "  python:\n"
        "    - pandas>=2\n"
        "    - 'openpyxl; sys_platform != \"emscripten\"'\n"
        "  node:\n"
        "    marked: ^12.0.0\n"
    )
    spec = discover_dependencies({"SKILL.md": skill_md(frontmatter)})
    assert spec.python == ('openpyxl; sys_platform != "emscripten"', "pandas>=2")
    assert spec.node == (("marked", "^12.0.0"),)
    assert spec.sources == ("SKILL.md dependencies",)


def test_frontmatter_plain_list_is_python() -> None:
    spec = discover_dependencies({"SKILL.md": skill_md("dependencies: [httpx, 'attrs>=23']\n")})
    assert spec.python == ("attrs>=23", "httpx")


def test_frontmatter_string_names_skills_and_is_not_a_package_list() -> None:
    frontmatter = "metadata:\n  dependencies: csv-profiler json-report\n"
    assert discover_dependencies({"SKILL.md": skill_md(frontmatter)}).empty
    assert discover_dependencies({"SKILL.md": skill_md("dependencies: csv-profiler\n")}).empty


def test_frontmatter_package_mapping_under_metadata_is_read() -> None:
    frontmatter = (
        "metadata:\n  dependencies:\n    python: [requests>=2]\n    node:\n      marked: ^12.0.0\n"
    )
    spec = discover_dependencies({"SKILL.md": skill_md(frontmatter)})
    assert spec.python == ("requests>=2",)
    assert spec.node == (("marked", "^12.0.0"),)
    assert spec.sources == ("SKILL.md metadata.dependencies",)


def test_frontmatter_package_list_under_metadata_is_python() -> None:
    frontmatter = "metadata:\n  dependencies: [httpx, 'attrs>=23']\n"
    spec = discover_dependencies({"SKILL.md": skill_md(frontmatter)})
    assert spec.python == ("attrs>=23", "httpx")


def test_frontmatter_package_mapping_under_metadata_has_its_shape_checked() -> None:
    frontmatter = "metadata:\n  dependencies: {python: requests}\n"
    message = fails({"SKILL.md": skill_md(frontmatter)})
    assert "SKILL.md: metadata.dependencies: python: must be a list" in message


def test_frontmatter_dependencies_in_both_places_are_merged() -> None:
    frontmatter = "dependencies: [six]\nmetadata:\n  dependencies: {python: ['six>=1']}\n"
    spec = discover_dependencies({"SKILL.md": skill_md(frontmatter)})
    assert spec.python == ("six>=1",)
    assert spec.sources == ("SKILL.md metadata.dependencies", "SKILL.md dependencies")


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        ("dependencies: {ruby: [rails]}\n", "unknown key 'ruby'"),
        ("dependencies: {python: requests}\n", "python: must be a list"),
        ("dependencies: {node: [lodash]}\n", "node: must map package names"),
        ("dependencies: [requests, 3]\n", "[1]: must be a requirement string, not int"),
    ],
)
def test_frontmatter_of_the_wrong_shape(frontmatter: str, expected: str) -> None:
    message = fails({"SKILL.md": skill_md(frontmatter)})
    assert message.startswith("SKILL.md: dependencies: ")
    assert expected in message


def test_an_unreadable_frontmatter_is_a_dependency_error() -> None:
    assert fails({"SKILL.md": b"no frontmatter here\n"}).startswith("SKILL.md: ")


# --- the validator: under metadata, as the reference validator allows -----------------------


@pytest.mark.parametrize(
    "value",
    [
        {"python": ["requests>=2"], "node": {"lodash": "^4"}},
        {"python": ["requests"]},
        ["requests", "numpy"],
    ],
)
def test_the_validator_accepts_package_dependencies_under_metadata(value: object) -> None:
    data = {"name": "demo", "description": "Does things.", "metadata": {"dependencies": value}}
    assert check_frontmatter(data, path="SKILL.md", dir_name="demo") == []


@pytest.mark.parametrize("value", [{"python": ["requests"]}, ["requests"]], ids=str)
def test_a_top_level_package_dependencies_field_points_to_metadata(value: object) -> None:
    # skills-ref refuses every top-level key but the spec's, so strict validation must too.
    data = {"name": "demo", "description": "Does things.", "dependencies": value}
    (found,) = check_frontmatter(data, path="SKILL.md", dir_name="demo")
    assert (found.field, found.fatal) == ("dependencies", False)
    assert found.message == "is a skillweave extension; the spec puts it under 'metadata'"


def test_the_validator_reports_a_badly_shaped_package_dependencies_field() -> None:
    data = {"name": "demo", "description": "Does things.", "dependencies": {"python": "x"}}
    found = check_frontmatter(data, path="SKILL.md", dir_name="demo")[-1]
    assert (found.field, found.fatal) == ("dependencies", False)
    assert "must be a list of requirements" in found.message


def test_the_validator_reports_a_badly_shaped_package_mapping_under_metadata() -> None:
    metadata = {"dependencies": {"python": "x"}}
    data = {"name": "demo", "description": "Does things.", "metadata": metadata}
    (found,) = check_frontmatter(data, path="SKILL.md", dir_name="demo")
    assert (found.field, found.fatal) == ("metadata.dependencies", False)
    assert "must be a list of requirements" in found.message


def test_a_top_level_skill_name_string_still_points_to_metadata() -> None:
    data = {"name": "demo", "description": "Does things.", "dependencies": "csv-profiler"}
    (found,) = check_frontmatter(data, path="SKILL.md", dir_name="demo")
    assert found.message == "is a skillweave extension; the spec puts it under 'metadata'"


# --- merging ---------------------------------------------------------------------------------


def test_sources_merge_into_one_requirement_per_canonical_name() -> None:
    files = package(
        requirements_dot_txt="Requests>=2\nnumpy\n",
        scripts__a_dot_py=script(
            "# /// script", '# dependencies = ["requests<3", "NumPy[dev]>=1.26"]', "# ///"
        ),
        scripts__b_dot_py=script("# /// script", '# dependencies = ["requests!=2.32.0"]', "# ///"),
    )
    files["SKILL.md"] = skill_md("dependencies:\n  python: [numpy<2]\n  node: {lodash: ^4}\n")
    files["package.json"] = b'{"dependencies": {"lodash": "^4"}}'
    spec = discover_dependencies(files)
    assert spec.python == ("numpy[dev]<2,>=1.26", "requests!=2.32.0,<3,>=2")
    assert spec.node == (("lodash", "^4"),)
    assert spec.sources == (
        "SKILL.md dependencies",
        "requirements.txt",
        "scripts/a.py (PEP 723)",
        "scripts/b.py (PEP 723)",
        "package.json",
    )


def test_equal_markers_merge() -> None:
    spec = discover(
        requirements_dot_txt="colorama>=0.4; sys_platform == 'win32'\n",
        scripts__a_dot_py=script(
            "# /// script",
            "# dependencies = [\"colorama<1 ; sys_platform=='win32'\"]",
            "# ///",
        ),
    )
    assert spec.python == ('colorama<1,>=0.4; sys_platform == "win32"',)


def test_the_same_pin_twice_is_no_conflict() -> None:
    spec = discover(
        requirements_dot_txt="attrs==23.2.0\n",
        scripts__a_dot_py=script("# /// script", '# dependencies = ["attrs==23.2.0"]', "# ///"),
    )
    assert spec.python == ("attrs==23.2.0",)


def test_requires_python_of_several_scripts_is_intersected() -> None:
    spec = discover(
        scripts__a_dot_py=script("# /// script", '# requires-python = ">=3.9"', "# ///"),
        scripts__b_dot_py=script("# /// script", '# requires-python = "<3.13,>=3.10"', "# ///"),
    )
    assert spec.requires_python == "<3.13,>=3.10,>=3.9"


# --- conflicts ---------------------------------------------------------------------------------


def test_different_exact_pins_conflict_and_the_message_names_both_sources() -> None:
    message = fails(
        package(
            requirements_dot_txt="# pinned\nattrs==23.1.0\n",
            scripts__a_dot_py=script("# /// script", '# dependencies = ["attrs==24.2.0"]', "# ///"),
        )
    )
    assert "conflicting requirements for 'attrs'" in message
    assert "attrs==23.1.0 (from requirements.txt:2)" in message
    assert "attrs==24.2.0 (from scripts/a.py (PEP 723) dependencies[0])" in message


def test_a_pin_excluded_by_a_range_conflicts() -> None:
    files = package(requirements_dot_txt="pydantic>=2\n")
    files["SKILL.md"] = skill_md("dependencies: [pydantic==1.10.13]\n")
    message = fails(files)
    assert "pydantic==1.10.13 (from SKILL.md dependencies python[0])" in message
    assert "pydantic>=2 (from requirements.txt:1)" in message


def test_different_markers_conflict() -> None:
    message = fails(
        package(
            requirements_dot_txt="uvloop; sys_platform != 'win32'\n",
            scripts__a_dot_py=script("# /// script", '# dependencies = ["uvloop"]', "# ///"),
        )
    )
    assert "conflicting requirements for 'uvloop'" in message
    assert "markers differ" in message


def test_conflicting_node_ranges_name_both_sources() -> None:
    files = package(package_dot_json='{"dependencies": {"lodash": "^4.17.0"}}')
    files["SKILL.md"] = skill_md("dependencies:\n  node: {lodash: '~4.17.0'}\n")
    message = fails(files)
    assert "conflicting Node dependency 'lodash'" in message
    assert "'~4.17.0' (from SKILL.md dependencies node.lodash)" in message
    assert "'^4.17.0' (from package.json dependencies.lodash)" in message


def test_contradictory_requires_python_pins_conflict() -> None:
    message = fails(
        package(
            scripts__a_dot_py=script("# /// script", '# requires-python = "==3.11"', "# ///"),
            scripts__b_dot_py=script("# /// script", '# requires-python = "==3.12"', "# ///"),
        )
    )
    assert "conflicting requirements for 'python'" in message
    assert "scripts/a.py (PEP 723)" in message
    assert "scripts/b.py (PEP 723)" in message


# --- refused options, URLs and specs that escape the index ----------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "-i https://evil.example/simple",
        "--index-url https://evil.example/simple",
        "--index-url=https://evil.example/simple",
        "--extra-index-url https://evil.example/simple",
        "-f https://evil.example/wheels",
        "--find-links ./wheels",
        "--no-index",
        "-e .",
        "--editable git+https://example.invalid/x.git#egg=x",
        "-c constraints.txt",
        "--trusted-host evil.example",
        "--pre",
    ],
)
def test_options_are_refused(line: str) -> None:
    message = fails(package(requirements_dot_txt=f"requests\n{line}\n"))
    assert message.startswith("requirements.txt:2: option '")
    assert "operator's choice" in message


@pytest.mark.parametrize(
    "line",
    [
        "https://example.invalid/pkg-1.0-py3-none-any.whl",
        "git+https://example.invalid/pkg.git",
        "./vendor/pkg",
        "../pkg",
        "/abs/pkg.tar.gz",
        "pkg-1.0.tar.gz",
        "vendor/pkg-1.0-py3-none-any.whl",
        "file:///tmp/pkg",
        "pkg@https://example.invalid/pkg.zip",
        "pkg @ https://example.invalid/pkg.zip",
        "pkg @ file:///tmp/pkg",
    ],
)
def test_urls_and_paths_as_requirements_are_refused(line: str) -> None:
    message = fails(package(requirements_dot_txt=f"{line}\n"))
    assert message.startswith("requirements.txt:1: ")
    assert "operator's package index" in message


def test_a_url_in_a_pep_723_block_is_refused() -> None:
    files = package(
        scripts__a_dot_py=script(
            "# /// script", '# dependencies = ["x @ https://example.invalid/x.whl"]', "# ///"
        )
    )
    assert fails(files).startswith("scripts/a.py (PEP 723) dependencies[0]: ")


def test_options_after_a_requirement_other_than_hash_are_refused() -> None:
    message = fails(package(requirements_dot_txt="pkg --config-settings=x=y\n"))
    assert "'--config-settings' is not accepted" in message


@pytest.mark.parametrize(
    "spec",
    [
        "file:../local-lib",
        "link:../local-lib",
        "git+https://example.invalid/x.git",
        "git://example.invalid/x.git",
        "github:user/repo",
        "user/repo",
        "https://example.invalid/x.tgz",
        "npm:other-package@^1",
        "workspace:*",
        "./vendor/x",
        "~/x",
    ],
)
def test_node_specs_that_escape_the_registry_are_refused(spec: str) -> None:
    message = fails(package(package_dot_json=json.dumps({"dependencies": {"x": spec}})))
    assert message.startswith("package.json dependencies.x: ")
    assert "operator's registry" in message


@pytest.mark.parametrize(
    "name", ["_private", ".hidden", "has space", "@Scope/x", "node_modules", ""]
)
def test_invalid_npm_names_are_refused(name: str) -> None:
    message = fails(package(package_dot_json=json.dumps({"dependencies": {name: "^1"}})))
    assert "is not a valid npm package name" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("[1, 2]", "must be a JSON object"),
        ('{"dependencies": ["lodash"]}', "'dependencies' must map"),
        ('{"dependencies": {"lodash": 4}}', "must be a string"),
        ("{not json", "not valid JSON"),
        ('{"dependencies": {"x": "^1 $(id)"}}', "is not an npm version range"),
        ('{"dependencies": {"x": "^1 `id`"}}', "is not an npm version range"),
    ],
)
def test_malformed_package_json(content: str, expected: str) -> None:
    message = fails(package(package_dot_json=content))
    assert message.startswith("package.json")
    assert expected in message


# --- invalid requirements name the file and line ----------------------------------------------


def test_an_invalid_requirement_names_the_file_and_line() -> None:
    message = fails(package(requirements_dot_txt="requests\n\nnumpy>=>1\n"))
    assert message.startswith("requirements.txt:3: invalid requirement 'numpy>=>1'")


def test_an_invalid_requirement_in_a_script_names_the_script() -> None:
    files = package(
        scripts__a_dot_py=script("# /// script", '# dependencies = ["ok", "bad name"]', "# ///")
    )
    assert fails(files).startswith("scripts/a.py (PEP 723) dependencies[1]: invalid requirement")


def test_a_requirement_not_starting_with_a_name_is_invalid() -> None:
    assert "must start with a project name" in fails(package(requirements_dot_txt=">=1.0\n"))


def test_a_source_that_is_not_utf8_is_refused() -> None:
    assert fails(package(requirements_dot_txt=b"caf\xe9\n")) == (
        "requirements.txt: not UTF-8 text (byte 3)"
    )


def test_an_invalid_requires_python_names_the_script() -> None:
    files = package(
        scripts__a_dot_py=script("# /// script", '# requires-python = "3.11+"', "# ///")
    )
    assert fails(files).startswith("scripts/a.py (PEP 723): invalid requires-python '3.11+'")


# --- includes --------------------------------------------------------------------------------


def test_includes_are_read_relative_to_the_including_file() -> None:
    spec = discover(
        requirements_dot_txt="-r\treqs/base.txt\nrich\n",
        reqs__base_dot_txt="--requirement extra.txt\nclick\n",
        reqs__extra_dot_txt="-rmore.txt\n",
        reqs__more_dot_txt="--requirement=../last.txt\n",
        last_dot_txt="tabulate\n",
    )
    assert spec.python == ("click", "rich", "tabulate")
    assert spec.sources == ("requirements.txt", "reqs/base.txt", "last.txt")


def test_a_file_included_twice_is_read_once() -> None:
    spec = discover(
        requirements_dot_txt="-r a.txt\n-r b.txt\n",
        a_dot_txt="-r common.txt\n",
        b_dot_txt="-r common.txt\n",
        common_dot_txt="six\n",
    )
    assert spec.python == ("six",)


def test_an_include_fan_does_not_blow_up() -> None:
    # Each file includes the next one twice: 2**40 reads if every include were followed.
    files = {f"r{i}.txt": f"-r r{i + 1}.txt\n-r r{i + 1}.txt\n".encode() for i in range(40)}
    files["r40.txt"] = b"six\n"
    files["requirements.txt"] = b"-r r0.txt\n"
    started = time.perf_counter()
    assert discover_dependencies(files).python == ("six",)
    assert time.perf_counter() - started < 1


def test_an_include_loop_is_refused() -> None:
    message = fails(
        package(
            requirements_dot_txt="-r a.txt\n",
            a_dot_txt="six\n-r b.txt\n",
            b_dot_txt="-r a.txt\n",
        )
    )
    assert message == "b.txt:1: include loop: requirements.txt -> a.txt -> b.txt -> a.txt"


def test_a_file_including_itself_is_a_loop() -> None:
    assert "include loop" in fails(package(requirements_dot_txt="-r requirements.txt\n"))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("../outside.txt", "leaves the skill package"),
        ("reqs/../../outside.txt", "leaves the skill package"),
        ("/etc/passwd", "inside the skill package"),
        ("https://example.invalid/reqs.txt", "inside the skill package"),
        ("~/reqs.txt", "inside the skill package"),
        ("missing.txt", "no such file in the skill package"),
        ("", "names no file"),
    ],
)
def test_includes_cannot_escape_the_package(target: str, expected: str) -> None:
    message = fails(package(requirements_dot_txt=f"-r {target}\n"))
    assert message.startswith("requirements.txt:1: ")
    assert expected in message


# --- PEP 723 block grammar ---------------------------------------------------------------------


def test_two_script_blocks_in_one_file_are_an_error() -> None:
    block = ("# /// script", '# dependencies = ["a"]', "# ///")
    content = script(*block, after="import os\n") + script(*block)
    assert fails(package(scripts__a_dot_py=content)) == (
        "scripts/a.py: 2 '# /// script' blocks; PEP 723 allows one"
    )


def test_blocks_of_other_types_are_ignored() -> None:
    content = script(
        "# /// pyproject", '# dependencies = ["ignored"]', "# ///", after="import os\n"
    ) + script("# /// script", '# dependencies = ["kept"]', "# ///")
    assert discover(scripts__a_dot_py=content).python == ("kept",)


def test_an_unclosed_block_is_ignored() -> None:
    content = script("# /// script", '# dependencies = ["never"]')
    assert discover(scripts__a_dot_py=content).empty


def test_a_closing_line_is_the_last_one_followed_by_a_non_comment() -> None:
    # The PEP's own example: '# ///' lines inside the content do not end the block.
    content = script(
        "# /// script",
        '# dependencies = ["a"]',
        '# note = """',
        "# /// text",
        "# ///",
        '# """',
        "# ///",
    )
    assert discover(scripts__a_dot_py=content).python == ("a",)


@pytest.mark.parametrize(
    "opening",
    [
        "#/// script",
        "# ///script",
        "#  /// script",
        " # /// script",
        "# /// script ",
        "# /// Script",
    ],
)
def test_an_opening_line_must_be_exact(opening: str) -> None:
    content = script(opening, '# dependencies = ["a"]', "# ///")
    assert discover(scripts__a_dot_py=content).empty


def test_a_content_line_must_be_a_bare_hash_or_hash_space() -> None:
    # '#x' is not a content line, so no block matches at all.
    content = script("# /// script", '#dependencies = ["a"]', "# ///")
    assert discover(scripts__a_dot_py=content).empty


def test_a_block_can_be_anywhere_in_the_file_and_at_its_very_end() -> None:
    content = b'import sys\n\n# /// script\n# dependencies = ["late"]\n# ///'
    assert discover(scripts__a_dot_py=content).python == ("late",)


def test_crlf_line_ends_are_read_as_python_reads_them() -> None:
    content = b'# /// script\r\n# dependencies = ["crlf"]\r\n# ///\r\nprint(1)\r\n'
    assert discover(scripts__a_dot_py=content).python == ("crlf",)


def test_a_block_that_is_not_toml_is_an_error() -> None:
    content = script("# /// script", "# dependencies = [", "# ///")
    assert fails(package(scripts__a_dot_py=content)).startswith(
        "scripts/a.py (PEP 723): the block is not valid TOML"
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('# dependencies = "requests"', "'dependencies' must be a list"),
        ("# dependencies = [1]", "'dependencies' must be a list"),
        ("# requires-python = 3.11", "'requires-python' must be a string"),
    ],
)
def test_a_block_with_fields_of_the_wrong_type(line: str, expected: str) -> None:
    assert expected in fails(package(scripts__a_dot_py=script("# /// script", line, "# ///")))


# --- limits ----------------------------------------------------------------------------------


def test_too_many_dependencies() -> None:
    python = "".join(f"pkg{i}\n" for i in range(6))
    node = json.dumps({"dependencies": {f"n{i}": "^1" for i in range(5)}})
    files = package(requirements_dot_txt=python, package_dot_json=node)
    assert discover_dependencies(files, max_dependencies=11).python[0] == "pkg0"
    message = fails(files, max_dependencies=10)
    assert message.startswith("11 dependencies declared, the limit is 10")


def test_the_limit_counts_distinct_projects_not_lines() -> None:
    files = package(requirements_dot_txt="Six\nsix>=1\nSIX<2\n", package_dot_json="{}")
    assert discover_dependencies(files, max_dependencies=1).python == ("six<2,>=1",)


def test_a_huge_list_is_refused_quickly() -> None:
    lines = "".join(f"package-number-{i}>=1.0\n" for i in range(40_000))
    files = package(requirements_dot_txt=lines)
    assert len(files["requirements.txt"]) < MAX_SOURCE_BYTES
    started = time.perf_counter()
    assert fails(files).startswith("40000 dependencies declared, the limit is 200")
    assert time.perf_counter() - started < 2


def test_a_source_over_one_mebibyte_is_refused() -> None:
    big = b"# padding\n" * (MAX_SOURCE_BYTES // 10 + 1)
    for path in ("requirements.txt", "package.json", "scripts/big.py", "SKILL.md"):
        files = {"SKILL.md": skill_md(), path: big}
        message = fails(files)
        assert message.startswith(f"{path}: ")
        assert "at most 1,048,576 bytes" in message


def test_the_bundled_skills_declare_no_packages() -> None:
    # Real packages, read as the manager will hand them over: stdlib-only scripts.
    roots = [path.parent for path in BUNDLED.rglob("SKILL.md")]
    assert roots
    for root in roots:
        files = {rel: read_bytes(entry.path) for rel, entry in iter_package_files(root)}
        assert discover_dependencies(files).empty, root


def test_max_dependencies_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        discover_dependencies({}, max_dependencies=0)


# --- the spec --------------------------------------------------------------------------------


def test_digest_is_stable_and_independent_of_declaration_order() -> None:
    lines = ["requests>=2", "numpy<2", "rich", "attrs==23.2.0"]
    ranges = {"lodash": "^4", "marked": "^12", "@types/node": "^20"}
    digests = set()
    node_orders = itertools.cycle(itertools.permutations(ranges.items()))
    for order in itertools.permutations(lines):
        requirements = "".join(f"{line}\n" for line in order)
        node = dict(next(node_orders))
        spec = discover(
            requirements_dot_txt=requirements, package_dot_json=json.dumps({"dependencies": node})
        )
        digests.add(spec.digest())
    assert len(digests) == 1
    # The same declarations spread over other sources install the same thing.
    moved = package(
        scripts__a_dot_py=script(
            "# /// script",
            '# dependencies = ["rich", "numpy<2"]',
            "# ///",
        ),
        requirements_dot_txt="attrs==23.2.0\nRequests>=2\n",
        package_dot_json=json.dumps({"dependencies": ranges}),
    )
    assert discover_dependencies(moved).digest() in digests
    # The canonical form, written out: digests stored beside builds must not drift.
    canonical = '{"node":[["x","^1"]],"python":["a>=1","b"],"requires_python":">=3.11"}'
    spec = DependencySpec(python=("a>=1", "b"), node=(("x", "^1"),), requires_python=">=3.11")
    assert spec.digest() == hashlib.sha256(canonical.encode()).hexdigest()


def test_different_specs_have_different_digests() -> None:
    base = DependencySpec(python=("requests>=2",))
    assert base.digest() != DependencySpec(python=("requests>=3",)).digest()
    assert (
        base.digest() != DependencySpec(python=("requests>=2",), requires_python=">=3.11").digest()
    )
    assert base.digest() != DependencySpec(python=("requests>=2",), node=(("x", "^1"),)).digest()
    assert base.digest() == DependencySpec(python=("requests>=2",), sources=("a",)).digest()


def test_json_round_trip() -> None:
    spec = discover(
        requirements_dot_txt="requests>=2\n",
        package_dot_json='{"dependencies": {"lodash": "^4"}}',
        scripts__a_dot_py=script("# /// script", '# requires-python = ">=3.11"', "# ///"),
    )
    stored = json.loads(json.dumps(spec.to_json()))
    assert stored == {
        "python": ["requests>=2"],
        "node": {"lodash": "^4"},
        "requires_python": ">=3.11",
        "sources": ["requirements.txt", "scripts/a.py (PEP 723)", "package.json"],
        "inferred": [],
    }
    assert DependencySpec.from_json(stored) == spec


@pytest.mark.parametrize(
    "data",
    [
        {"python": "requests"},
        {"python": [1]},
        {"node": ["lodash"]},
        {"node": {"lodash": 4}},
        {"requires_python": 3},
        {"sources": "x"},
    ],
)
def test_from_json_refuses_a_malformed_spec(data: dict[str, object]) -> None:
    with pytest.raises(DependencyError, match="malformed"):
        DependencySpec.from_json(data)
