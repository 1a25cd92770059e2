"""The CLI's remote mirrors against a real API: `skills upload`, `agents create/list/show` and
`run --agent ag-…` (events, answer, downloaded outputs), problem+json errors as one line, and
the message when SKILLWEAVE_API_URL is not set.

The API (skills, agents and runs on the direct engine, a real manager and sandboxes, the model
scripted) is served from a thread with its own event loop; the CLI runs in-process through
typer's runner, its settings read from the environment it is given.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from skillweave.cli import app
from skillweave.cli.agents import agent_body
from skillweave.cli.remote import is_agent_id
from skillweave.config import Settings, get_settings
from skillweave.skills.package import build_package
from tests.api.test_runs import TOKEN, api_on_direct_engine
from tests.conftest import write_skill
from tests.integration.agent.test_direct_run import CSV, SCRIPT

pytestmark = pytest.mark.timeout(120)

runner = CliRunner()


@asynccontextmanager
async def _served_api(root: Path) -> AsyncIterator[str]:
    """Skills, agents and runs on the direct engine, as tests/api/test_runs.py serves them."""
    async with api_on_direct_engine(root, SCRIPT) as client:
        yield str(client.base_url).rstrip("/")


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API's base URL, served from a thread until the module's tests are done."""
    root = tmp_path_factory.mktemp("remote-api")
    ready = threading.Event()
    box: dict[str, object] = {}

    async def serve() -> None:
        stop = asyncio.Event()
        box["stop"] = (asyncio.get_running_loop(), stop)
        try:
            async with _served_api(root) as url:
                box["url"] = url
                ready.set()
                await stop.wait()
        except BaseException as exc:
            box["error"] = exc
            raise
        finally:
            ready.set()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60), "the API did not start"
    if "error" in box:
        raise RuntimeError("the API did not start") from box["error"]  # type: ignore[arg-type]
    try:
        yield str(box["url"])
    finally:
        loop, stop = box["stop"]  # type: ignore[misc]
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)


def cli(*args: str, url: str | None, token: str | None = TOKEN) -> tuple[int, str, str]:
    """Run the CLI in-process with SKILLWEAVE_API_URL/TOKEN set (or unset, for None)."""
    env = {"SKILLWEAVE_API_URL": url, "SKILLWEAVE_API_TOKEN": token, "REMOTE_API_URL": None}
    get_settings.cache_clear()
    try:
        result = runner.invoke(app, list(args), env=env)
    finally:
        get_settings.cache_clear()
    return result.exit_code, result.stdout, result.stderr


def _hello_zip(tmp_path: Path) -> Path:
    folder = write_skill(
        tmp_path / "src" / "hello-remote",
        description="Say hello. Use when a greeting is needed.",
        files={"scripts/hello.py": "print('hello')\n"},
    )
    archive = tmp_path / "hello-remote.zip"
    archive.write_bytes(build_package(folder))
    return archive


def test_the_remote_settings_are_read_from_their_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKILLWEAVE_API_URL", "http://api.example:8080")
    monkeypatch.setenv("SKILLWEAVE_API_TOKEN", "s3cret")
    settings = Settings(_env_file=None)
    assert settings.remote_api_url == "http://api.example:8080"
    assert settings.remote_api_token is not None
    assert settings.remote_api_token.get_secret_value() == "s3cret"
    monkeypatch.delenv("SKILLWEAVE_API_URL")
    assert Settings(_env_file=None).remote_api_url is None
    assert Settings(_env_file=None, remote_api_url="http://x").remote_api_url == "http://x"


def test_an_agent_spec_maps_to_the_apis_fields(tmp_path: Path) -> None:
    spec = tmp_path / "agent.yaml"
    spec.write_text(
        "name: mapped\ninstruction: Do it.\nmodel: openai:gpt-4o-mini\nskills: [a-skill]\n"
        "catalog: {mode: auto, top_k: 3}\nlimits: {max_turns: 7}\nfollow_up_seconds: 5\n",
        encoding="utf-8",
    )
    body, notes = agent_body(spec)
    assert body["model_id"] == "openai:gpt-4o-mini"
    assert body["skill_ids"] == ["a-skill"]
    assert body["catalog_mode"] == "auto"
    assert body["limits"]["max_turns"] == 7
    assert body["follow_up_seconds"] == 5
    assert any("top_k" in note for note in notes)
    assert is_agent_id("ag-0123456789abcdef")
    assert not is_agent_id("agent.yaml")


def test_upload_a_skill_then_make_an_agent_with_it(tmp_path: Path, api_url: str) -> None:
    code, out, err = cli("skills", "upload", str(_hello_zip(tmp_path)), url=api_url)
    assert code == 0, err
    assert "uploaded hello-remote version " in out

    spec = tmp_path / "greeter.yaml"
    spec.write_text(
        "name: greeter\ninstruction: Greet people.\nskills: [hello-remote]\ncatalog: {mode: all}\n",
        encoding="utf-8",
    )
    code, out, err = cli("agents", "create", str(spec), url=api_url)
    assert code == 0, err
    agent_id = out.strip()
    assert is_agent_id(agent_id)

    code, out, err = cli("agents", "show", agent_id, url=api_url)
    assert code == 0, err
    assert '"skill_ids": [\n    "hello-remote"\n  ]' in out
    assert '"catalog_mode": "all"' in out
    code, out, _ = cli("agents", "list", url=api_url)
    assert code == 0
    assert agent_id in out
    assert "greeter" in out


def test_run_an_agent_on_the_api_to_its_answer_and_download_its_outputs(
    tmp_path: Path, api_url: str
) -> None:
    spec = tmp_path / "analyst.yaml"
    spec.write_text(
        "name: remote-analyst\ninstruction: Work with the user's data.\nskills: [data-toolkit]\n",
        encoding="utf-8",
    )
    code, out, err = cli("agents", "create", str(spec), url=api_url)
    assert code == 0, err
    agent_id = out.strip()
    data = tmp_path / "sales.csv"
    data.write_bytes(CSV)
    outputs = tmp_path / "out"

    code, out, err = cli(
        "run",
        "Profile the attached sales.csv.",
        "--agent",
        agent_id,
        "--file",
        str(data),
        "--out",
        str(outputs),
        url=api_url,
    )
    assert code == 0, err
    assert f"agent remote-analyst ({agent_id}) · API {api_url}" in err
    assert "finished" in err.lower()  # the live view's lines, one per event
    assert "Report written." in out
    assert "completed" in out
    assert (outputs / "report.md").read_text(encoding="utf-8").startswith("# Sales check")
    assert "copied → " in out

    # Later, from the API alone: the run's files listed, its outputs downloaded (issue 28).
    listed = httpx.get(f"{api_url}/v1/runs/", headers={"Authorization": f"Bearer {TOKEN}"})
    run_id = listed.json()["items"][0]["id"]
    later = tmp_path / "later"
    code, out, err = cli("runs", "artifacts", run_id, "--out", str(later), url=api_url)
    assert code == 0, err
    assert "sales.csv" in out
    assert "report.md" in out
    assert sorted(p.name for p in later.iterdir()) == sorted(p.name for p in outputs.iterdir())
    assert (later / "report.md").read_bytes() == (outputs / "report.md").read_bytes()


def test_problems_of_the_api_are_one_line_and_exit_1(tmp_path: Path, api_url: str) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"this is not a zip file")
    code, _, err = cli("skills", "upload", str(bad), url=api_url)
    assert code == 1
    assert err.startswith("error: ")
    assert "zip" in err.lower()
    assert "Traceback" not in err

    spec = tmp_path / "unknown.yaml"
    spec.write_text("name: lost\ninstruction: Do it.\nskills: [no-such-skill]\n", encoding="utf-8")
    code, _, err = cli("agents", "create", str(spec), url=api_url)
    assert code == 1
    assert "unknown skill ids: no-such-skill" in err

    code, _, err = cli("agents", "list", url=api_url, token="wrong")
    assert code == 1
    assert "SKILLWEAVE_API_TOKEN" in err


def test_without_the_api_url_the_commands_say_what_they_need(tmp_path: Path) -> None:
    archive = _hello_zip(tmp_path)
    for args in (
        ("skills", "upload", str(archive)),
        ("agents", "list"),
        ("run", "Hi.", "--agent", "ag-0123456789abcdef"),
    ):
        code, _, err = cli(*args, url=None, token=None)
        assert code == 2, args
        assert "set SKILLWEAVE_API_URL" in err, args
