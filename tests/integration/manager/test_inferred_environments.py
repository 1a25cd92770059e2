"""Undeclared dependencies (issue 25), through a real manager, build sandbox and executors.

The PDF skill of ``tests/data/compat/undeclared`` imports pypdf and openpyxl and declares
nothing, as skills written for agents with preinstalled packages do: it runs unchanged, its
packages inferred from its imports and installed from a local index (hand-written wheels of
those names). An inferred package the index lacks is skipped, not fatal. The operator's base
environment reaches every skill and is built once for those that need nothing else.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from pathlib import Path

import pytest

from skillweave.sandbox.models import ExecuteRequest
from skillweave.sandbox.packages import publish_skill
from skillweave.skills import Skill, SkillRegistry, SkillScanner
from skillweave.storage import keys
from tests.conftest import write_skill
from tests.integration.harness import Manager, StartManager
from tests.mcp_manager.environment_support import bwrap_works, python_index, write_wheel

pytestmark = pytest.mark.skipif(not bwrap_works(), reason="environment builds need bubblewrap")

UNDECLARED = Path(__file__).parents[2] / "data" / "compat" / "undeclared"

PYPDF = """
class PdfReader:
    def __init__(self, path):
        data = open(path, "rb").read()
        self.pages = [page for page in data.split(b"%%Page") if page.strip()]
        self._fields = dict(
            line.split(b"=", 1) for line in data.splitlines() if line.startswith(b"/T ")
        )

    def get_fields(self):
        return {k[3:].decode(): v.decode() for k, v in self._fields.items()}
"""
OPENPYXL = """
class _Sheet:
    def __init__(self):
        self.rows = []

    def append(self, row):
        self.rows.append(list(row))


class Workbook:
    def __init__(self):
        self.active = _Sheet()

    def save(self, path):
        with open(path, "w") as out:
            out.write("\\n".join(",".join(map(str, r)) for r in self.active.rows))
"""
FORM = b"%%Page 1\n/T Full Name=Ada Lovelace\n%%Page 2\n/T Year=1843\n"


def index_with_pdf_tools(folder: Path) -> Path:
    """The local index: the demo wheels, and pypdf and openpyxl as small fakes."""
    python_index(folder)
    write_wheel(folder, "pypdf", "4.0", {"pypdf/__init__.py": PYPDF})
    write_wheel(folder, "openpyxl", "3.1", {"openpyxl/__init__.py": OPENPYXL})
    return folder


async def _run(manager: Manager, skill: Skill, script: str, **fields: object) -> object:
    return await manager.client.execute(
        ExecuteRequest(
            execution_id=f"inferred/{skill.name}/{time.monotonic_ns()}",
            run_id="run-inferred",
            skill=skill.name,
            version=skill.version,
            script=script,
            **fields,  # type: ignore[arg-type]
        )
    )


async def _manifests(manager: Manager, prefix: str) -> list[dict[str, object]]:
    found = []
    for ref in await manager.store.list(prefix):
        if ref.key.endswith(".tar.gz"):
            data = await manager.store.get_bytes(ref)
            with tarfile.open(fileobj=io.BytesIO(data)) as archive:
                member = archive.extractfile("skillweave-environment.json")
                assert member is not None
                found.append(json.loads(member.read()))
    return found


async def test_a_pdf_skill_importing_pypdf_and_openpyxl_runs_unchanged(
    start_manager: StartManager, tmp_path: Path
) -> None:
    index = index_with_pdf_tools(tmp_path / "index")
    pdf = SkillRegistry.from_scan(SkillScanner([UNDECLARED]).scan()).get("pdf")
    manager = await start_manager(environments={"find_links": [str(index)], "no_index": True})
    await publish_skill(manager.store, pdf)

    prepared = await manager.client.prepare_environment(pdf.name, pdf.version)
    assert prepared["needed"] is True
    assert prepared["dependencies"]["python"] == ["openpyxl", "pypdf"]
    assert prepared["dependencies"]["inferred"] == ["openpyxl", "pypdf"]

    form = await manager.store.put_bytes(keys.run_input_key("run-inferred", "form.pdf"), FORM)
    result = await _run(
        manager,
        pdf,
        "scripts/extract_form.py",
        args=["inputs/form.pdf"],
        inputs=[form],
    )
    assert result.status == "succeeded", result.stderr
    assert json.loads(result.stdout) == {
        "pages": 2,
        "fields": {"full_name": "Ada Lovelace", "year": "1843"},
    }
    (sheet,) = result.outputs
    assert (
        await manager.store.get_bytes(sheet.ref)
    ).decode() == "full_name,Ada Lovelace\nyear,1843"
    # The build log says what was inferred; ujson (optional, in a try) was not.
    (manifest,) = await _manifests(manager, "environments/pdf/")
    assert (manifest["inferred"], manifest["skipped"]) == (["openpyxl", "pypdf"], [])
    logs = [r for r in await manager.store.list("environments/pdf/") if r.key.endswith(".log")]
    log = (await manager.store.get_bytes(logs[0])).decode()
    assert "# inferred from the scripts' imports" in log
    assert "ujson" not in log


async def test_an_inferred_package_the_index_lacks_is_skipped_not_fatal(
    start_manager: StartManager, tmp_path: Path
) -> None:
    index = python_index(tmp_path / "index")
    root = tmp_path / "own-skills"
    write_skill(
        root / "mixed",
        description="Declares one package, imports another nobody publishes.",
        files={
            "requirements.txt": "swdemo==1.0\n",
            "scripts/use.py": "import swdemo\nprint('value', swdemo.VALUE)\n",
            "scripts/other.py": "import nowhere_to_be_found\n",
        },
    )
    mixed = SkillRegistry.from_scan(SkillScanner([root]).scan()).get("mixed")
    manager = await start_manager(environments={"find_links": [str(index)], "no_index": True})
    await publish_skill(manager.store, mixed)

    used = await _run(manager, mixed, "scripts/use.py")
    assert used.status == "succeeded", used.stderr
    assert used.stdout == "value 42\n"
    other = await _run(manager, mixed, "scripts/other.py")
    assert other.status == "failed"  # as it would without inference
    assert "No module named 'nowhere_to_be_found'" in other.stderr
    (manifest,) = await _manifests(manager, "environments/mixed/")
    assert manifest["skipped"] == ["nowhere-to-be-found"]


async def test_the_base_environment_reaches_every_skill_and_is_built_once(
    start_manager: StartManager, tmp_path: Path
) -> None:
    index = python_index(tmp_path / "index")
    root = tmp_path / "own-skills"
    # Guarded imports: nothing to infer, so these skills need the base alone.
    script = (
        "try:\n    import swdemo\nexcept ImportError:\n    swdemo = None\nprint(swdemo.VALUE)\n"
    )
    for name in ("first", "second"):
        write_skill(root / name, description="Uses the base.", files={"scripts/v.py": script})
    registry = SkillRegistry.from_scan(SkillScanner([root]).scan())
    manager = await start_manager(
        environments={
            "find_links": [str(index)],
            "no_index": True,
            "base_python": ["swdemo==1.0"],
        }
    )
    for skill in registry:
        await publish_skill(manager.store, skill)
        result = await _run(manager, skill, "scripts/v.py")
        assert result.status == "succeeded", result.stderr
        assert result.stdout == "42\n"
    assert [m["python"] for m in await _manifests(manager, "environments/")] == [["swdemo==1.0"]]
    assert await manager.metric("skillweave_sandbox_environment_builds_total") == 1
