from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.config import get_settings
from tests.conftest import BUNDLED_SKILLS, MakeSkill, write_skill

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def lib(tmp_path: Path, make_skill: MakeSkill) -> Path:
    make_skill("kit", description="Tabular data tools.", files={"references/r.md": "R\n"})
    make_skill("kit/csv-stats", description="Profile CSV columns into statistics.")
    make_skill("kit/md-report", description="Write a Markdown report from statistics.")
    make_skill("converter", description="Convert units of length and mass.")
    return tmp_path / "lib"


# --- validate ----------------------------------------------------------------------------


def test_validate_clean_library_exits_0(lib: Path) -> None:
    code, out, _ = run("skills", "validate", str(lib), "--strict")
    assert code == 0
    assert "4 skill folders checked: 0 errors, 0 warnings (strict)" in out


def test_validate_strict_vs_lenient(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("mismatch", name="other-name")
    lenient_code, lenient_out, _ = run("skills", "validate", str(tmp_path / "lib"))
    strict_code, strict_out, _ = run("skills", "validate", str(tmp_path / "lib"), "--strict")
    assert lenient_code == 0
    assert "warning:" in lenient_out
    assert strict_code == 1
    expected = f"{tmp_path / 'lib' / 'mismatch' / 'SKILL.md'}: name: 'other-name' does not match"
    assert expected in strict_out


def test_validate_reports_every_violation(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("bad", name="Bad--Name-", extra="compatibility: ''\nauthor: me")
    code, out, _ = run("skills", "validate", str(tmp_path / "lib" / "bad"), "--strict", "--json")
    assert code == 1
    report = json.loads(out)
    fields = [e["field"] for e in report["errors"]]
    # characters, trailing hyphen, double hyphen, mismatch; and the flag that such a name
    # gets no secrets, credentials or network (issue 38)
    assert fields.count("name") == 5
    assert sum("it gets no secrets" in e["message"] for e in report["errors"]) == 1
    assert "compatibility" in fields
    assert "author" in fields


def test_validate_lenient_error_for_missing_description(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    folder = make_skill("nodesc", description=None)
    code, out, _ = run("skills", "validate", str(folder / "SKILL.md"), "--json")
    assert code == 1
    (error,) = json.loads(out)["errors"]
    assert error["field"] == "description"
    assert error["fatal"] is True


def test_validate_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run("skills", "validate", str(tmp_path / "missing"))[0] == 2
    (tmp_path / "notes.txt").write_text("x")
    assert run("skills", "validate", str(tmp_path / "notes.txt"))[0] == 2
    assert run("skills", "validate")[0] == 2
    assert run("skills", "validate", str(tmp_path), "--bogus")[0] == 2


def test_validate_folder_without_skills_is_an_error(tmp_path: Path) -> None:
    code, out, _ = run("skills", "validate", str(tmp_path))
    assert code == 1
    assert "no SKILL.md found" in out


# --- list, search, catalog, show --------------------------------------------------------


def test_list_json(lib: Path) -> None:
    code, out, _ = run("skills", "list", "--dir", str(lib), "--json")
    assert code == 0
    skills = {s["name"]: s for s in json.loads(out)}
    assert set(skills) == {"kit", "csv-stats", "md-report", "converter"}
    kit = skills["kit"]
    assert {"name", "description", "path", "version", "type", "parent", "children"} <= set(kit)
    assert kit["children"] == ["csv-stats", "md-report"]
    assert kit["parent"] is None
    assert skills["csv-stats"]["parent"] == "kit"
    assert len(kit["version"]) == 64
    assert kit["type"] == "contextual"
    assert kit["path"] == str(lib / "kit")


def test_list_table_is_one_line_per_skill_at_80_columns(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    make_skill("kit", description="Tabular data tools. " * 20)
    make_skill("kit/csv-stats", description="Profile CSV columns into statistics. " * 20)
    make_skill("converter", description="Convert units of length and mass. " * 20)
    done = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "skills", "list", "--dir", str(tmp_path / "lib")],
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 1 + 3 + 1, done.stdout  # the header, a line per skill, the count
    assert all(len(line) <= 80 for line in lines), done.stdout
    assert lines[3].startswith("  └ csv-stats "), done.stdout
    assert lines[1].rstrip().endswith("…"), done.stdout  # the description gives way


def test_list_table_shows_the_tree(lib: Path) -> None:
    code, out, _ = run("skills", "list", "--dir", str(lib))
    assert code == 0
    assert "└ csv-stats" in out
    assert "4 skills in 2 roots" in out


def test_dir_may_repeat_and_later_wins(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("same", root=tmp_path / "a", description="From A.")
    make_skill("same", root=tmp_path / "b", description="From B.")
    code, out, err = run(
        "skills", "list", "--dir", str(tmp_path / "a"), "--dir", str(tmp_path / "b"), "--json"
    )
    assert code == 0
    assert [s["description"] for s in json.loads(out)] == ["From B."]
    assert "overrides" in err


def test_missing_dir_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run("skills", "list", "--dir", str(tmp_path / "nope"))
    assert code == 2
    assert "not a directory" in err


def test_search_json_best_first(lib: Path) -> None:
    code, out, _ = run("skills", "search", "profile csv columns", "--dir", str(lib), "--json")
    assert code == 0
    hits = json.loads(out)
    assert hits[0]["name"] == "csv-stats"
    assert set(hits[0]) == {"name", "score", "strategy"}
    assert {h["strategy"] for h in hits} == {"hybrid"}  # auto, with the embeddings extra
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    code, out, _ = run("skills", "search", "csv", "--dir", str(lib), "--top", "1", "--json")
    assert len(json.loads(out)) == 1
    code, out, _ = run(
        "skills", "search", "csv", "--dir", str(lib), "--selection", "keyword", "--json"
    )
    assert code == 0
    assert {h["strategy"] for h in json.loads(out)} == {"keyword"}


def test_catalog_prints_the_exact_tier1_text(lib: Path) -> None:
    code, out, _ = run("skills", "catalog", "--dir", str(lib), "--mode", "all")
    assert code == 0
    assert out.count("<skill ") == 2
    assert '<skill name="kit" sub_skills="2">Tabular data tools.</skill>' in out
    code, out, _ = run(
        "skills", "catalog", "--dir", str(lib), "--mode", "auto", "--query", "csv statistics"
    )
    assert '<skill name="csv-stats">' in out
    assert run("skills", "catalog", "--dir", str(lib), "--mode", "everything")[0] == 2
    code, out, err = run("skills", "catalog", "--dir", str(lib), "--max-chars", "300")
    assert code == 0
    assert len(out) <= 300
    assert "behind search_skills" in err


def test_show_prints_the_activation_payload(lib: Path) -> None:
    code, out, _ = run("skills", "show", "kit", "--dir", str(lib))
    assert code == 0
    assert out.startswith('<skill_content name="kit">\n')
    assert "<skill_resources>\nreferences/r.md\n</skill_resources>" in out
    assert '<skill name="csv-stats">' in out


def test_show_names_inferred_dependencies_on_stderr() -> None:
    undeclared = NAMESPACES.parent / "undeclared"
    code, out, err = run("skills", "show", "pdf", "--dir", str(undeclared))
    assert code == 0
    assert out.startswith('<skill_content name="pdf">')
    assert "dependency" not in out  # stdout stays the payload, byte for byte
    lines = err.splitlines()
    # First where it comes from and whether runs may use it (issue 39).
    assert lines[0].startswith("pdf: source directory · state enabled · version ")
    assert lines[1:3] == [
        "dependency: python openpyxl (inferred from the scripts' imports)",
        "dependency: python pypdf (inferred from the scripts' imports)",
    ]
    # Then its scan and its signature (issue 27).
    assert lines[3].startswith("scan: ")
    assert lines[-1].startswith("signature: unsigned: skill 'pdf' version ")


def test_show_names_the_network_a_skill_declares_and_its_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(
        tmp_path / "lib" / "sales",
        description="Sales. Use for sales.",
        extra='metadata:\n  network:\n    "api.example.com:443": reads the figures',
    )
    monkeypatch.setenv("STORAGE__LOCAL_DIR", str(tmp_path / "store"))
    code, _, err = run("skills", "show", "sales", "--dir", str(tmp_path / "lib"))
    assert code == 0
    assert "network: api.example.com:443 (reads the figures): not approved" in err
    assert "must be a string" not in err  # a structured network is no spec violation
    approvals = (
        '{"sales": {"destinations": ["api.example.com:443"], "version": "' + "a" * 64 + '"}}'
    )
    monkeypatch.setenv("SANDBOX__EGRESS__APPROVALS", approvals)
    get_settings.cache_clear()
    code, _, err = run("skills", "show", "sales", "--dir", str(tmp_path / "lib"))
    assert "approved in the settings, version aaaaaaaaaaaa" in err


def test_show_unknown_skill(lib: Path) -> None:
    code, _, err = run("skills", "show", "nope", "--dir", str(lib))
    assert code == 1
    assert "unknown skill 'nope'" in err


NAMESPACES = BUNDLED_SKILLS.parent / "tests" / "data" / "compat" / "namespaces"


def test_namespaced_skills_are_listed_shown_and_scoped(tmp_path: Path) -> None:
    code, out, _ = run("skills", "list", "--dir", str(NAMESPACES))
    assert code == 0
    assert out.splitlines()[0].split()[:5] == ["skill", "namespace", "source", "state", "version"]
    assert "formats.pdf.parser  formats.pdf" in out
    code, out, _ = run("skills", "show", "web.scraper", "--dir", str(NAMESPACES))
    assert (code, out.splitlines()[0]) == (0, '<skill_content name="scraper">')
    code, _, err = run("skills", "show", "parser", "--dir", str(NAMESPACES))
    assert code == 1
    assert "is in several namespaces; name one of formats.csv.parser, formats.pdf.parser" in err

    from skillweave.cli.agent_run import load_agent
    from skillweave.errors import AgentSpecError
    from skillweave.skills import SkillRegistry, SkillScanner

    registry = SkillRegistry.from_scan(SkillScanner([NAMESPACES]).scan())
    spec_file = tmp_path / "agent.yaml"
    spec_file.write_text("name: web\nskills: [web.*, formats.pdf.parser]\n")
    assert load_agent(spec_file, registry).skills == ("web.*", "formats.pdf.parser")
    spec_file.write_text("name: web\nskills: [parser]\n")
    with pytest.raises(AgentSpecError, match="'parser' is in several namespaces"):
        load_agent(spec_file, registry)


# --- pack / unpack -----------------------------------------------------------------------


def test_pack_and_unpack_round_trip(lib: Path, tmp_path: Path) -> None:
    archive = tmp_path / "kit.zip"
    code, _, _ = run("skills", "pack", str(lib / "kit"), "-o", str(archive))
    assert code == 0
    with zipfile.ZipFile(archive) as zf:
        assert "kit/SKILL.md" in zf.namelist()
        assert "kit/csv-stats/SKILL.md" in zf.namelist()
    code, out, _ = run("skills", "unpack", str(archive), "-o", str(tmp_path / "out"))
    assert code == 0
    assert "extracted skill folder" in out
    assert (tmp_path / "out" / "kit" / "references" / "r.md").read_text() == "R\n"
    code, out, _ = run("skills", "list", "--dir", str(tmp_path / "out"), "--json")
    assert {s["name"] for s in json.loads(out)} == {"kit", "csv-stats", "md-report"}


def test_unpack_refuses_traversal(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("x/SKILL.md", "---\nname: x\ndescription: d\n---\n")
        zf.writestr("../escape.txt", "gotcha")
    code, _, err = run("skills", "unpack", str(archive), "-o", str(tmp_path / "out"))
    assert code == 1
    assert "../escape.txt" in err
    assert not (tmp_path / "escape.txt").exists()


# --- the installed command and the bundled library ---------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "skillweave.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_bundled_library_is_strictly_valid() -> None:
    result = cli("skills", "validate", str(BUNDLED_SKILLS), "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors, 0 warnings (strict)" in result.stdout


def test_demo_example_fits_the_bundled_skills() -> None:
    # `skillweave demo` runs examples/demo end to end (tests/integration/cli/test_run.py);
    # here: its agent, script and data agree with the bundled library, without running it.
    from skillweave.cli.agent_run import load_agent
    from skillweave.config import SkillsSettings
    from skillweave.llm import ScriptedProvider
    from skillweave.skills import SkillLibrary

    demo = BUNDLED_SKILLS.parent / "examples" / "demo"
    registry = SkillLibrary(SkillsSettings(), dirs=[BUNDLED_SKILLS]).refresh()
    spec = load_agent(demo / "agent.yaml", registry)
    assert spec.model is None  # the demo passes its script; `skillweave run` takes a real model
    assert spec.skills is not None
    assert "data-toolkit" in spec.skills
    provider = ScriptedProvider.from_file(demo / "script.yaml")
    calls = [call for turn in provider.turns for call in turn.tool_calls]
    activated = [call.arguments["name"] for call in calls if call.name == "activate_skill"]
    assert activated == ["data-toolkit", "csv-profiler", "json-report"]
    assert all(registry.get(name).parent == "data-toolkit" for name in activated[1:])
    assert "render_stats_report" in [call.name for call in calls]
    assert provider.turns[-1].tool_calls == ()  # it ends with an answer
    header = (demo / "sales.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("order_id,")


def test_run_takes_the_documented_options() -> None:
    code, out, _ = run("run", "--help")
    assert code == 0
    for option in ("--agent", "--model", "--file", "--engine", "--out", "--json"):
        assert option in out


def test_version_and_help() -> None:
    code, out, _ = run("--version")
    assert (code, out.strip()) == (0, "skillweave 0.1.0")
    code, out, _ = run("skills", "--help")
    assert code == 0
    for command in ("validate", "list", "search", "catalog", "show", "pack", "unpack"):
        assert command in out


def test_list_says_which_skills_were_skipped(tmp_path: Path, make_skill: MakeSkill) -> None:
    make_skill("good")
    make_skill("nodesc", description=None)
    code, out, err = run("skills", "list", "--dir", str(tmp_path / "lib"), "--json")
    assert code == 0
    assert [s["name"] for s in json.loads(out)] == ["good"]
    assert f"skipped: {tmp_path / 'lib' / 'nodesc' / 'SKILL.md'}: description:" in err
