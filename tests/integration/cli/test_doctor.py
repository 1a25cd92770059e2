"""``skillweave doctor`` and ``skillweave temporal setup`` (issue 28, part 1), each check with the
misconfiguration that turns it red, against real components: a Temporal dev server started
without skillweave's search attributes (where a run would never run), a store that is not
there, a manager that is down or takes another token, a model endpoint that refuses the key."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from mcp_manager.server import LoopbackServer
from skillweave.agent import AgentSpec
from skillweave.cli import app
from skillweave.cli.temporal_server import free_port, temporal_binary
from skillweave.config import Settings, get_settings
from skillweave.engines import RunRequest
from skillweave.engines.temporal import connect_engine
from skillweave.errors import ConfigError
from skillweave.storage.local import LocalArtifactStore
from tests.integration.harness import Manager

pytestmark = pytest.mark.timeout(120)


def doctor(env: dict[str, str], *args: str) -> tuple[int, dict[str, tuple[str, str]], str]:
    """Run a command with `env` as the whole skillweave configuration; for ``doctor``, its
    checks by name."""
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(app, list(args) or ["doctor", "--json"], env=env)
    finally:
        get_settings.cache_clear()
    checks = {}
    if not args:
        checks = {c["check"]: (c["status"], c["detail"]) for c in json.loads(result.stdout)}
    return result.exit_code, checks, result.stdout + result.stderr


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    return {
        # Temporal is the default engine: the tests of other checks say they do without it.
        "WORKFLOW__EXECUTION_ENGINE": "direct",
        "STORAGE__LOCAL_DIR": str(tmp_path / "store"),
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-skills")]),
        "SANDBOX__ISOLATION": "none",  # the isolation check is the manager's business here
    }


@contextlib.contextmanager
def bare_temporal(tmp_path: Path) -> Iterator[str]:
    """A Temporal dev server with no search attribute of skillweave's registered."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(temporal_binary()),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--namespace",
            "default",
            "--log-level",
            "error",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_a_namespace_without_the_search_attributes_is_red_and_setup_fixes_it(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    with bare_temporal(tmp_path) as address:
        env = {
            **base_env,
            "WORKFLOW__EXECUTION_ENGINE": "temporal",
            "WORKFLOW__TEMPORAL_ADDRESS": address,
        }
        deadline = time.monotonic() + 60
        while True:  # until the server answers
            code, checks, _ = await asyncio.to_thread(doctor, env)
            if "cannot reach" not in checks["temporal"][1]:
                break
            assert time.monotonic() < deadline, "the dev server did not start"
            await asyncio.sleep(0.5)
        assert code == 1
        status, detail = checks["temporal"]
        assert status == "fail"
        assert "SkillweaveTokens (Int) is not registered" in detail
        assert "skillweave temporal setup" in detail

        # A run is refused up front instead of staying "Running" for ever.
        settings = Settings(_env_file=None, workflow={"temporal_address": address})
        engine = await connect_engine(settings)
        with pytest.raises(ConfigError, match="skillweave temporal setup"):
            await engine.start(RunRequest(run_id="run-never", task="t", agent=AgentSpec()))

        code, _, said = await asyncio.to_thread(doctor, env, "temporal", "setup")
        assert code == 0, said
        assert "SkillweaveAgent" in said
        code, _, said = await asyncio.to_thread(doctor, env, "temporal", "setup")
        assert "every search attribute is registered" in said  # idempotent
        code, checks, _ = await asyncio.to_thread(doctor, env)
        assert checks["temporal"][0] == "ok"

        # A namespace that does not exist: one line saying how to create it, on every door.
        other = {**env, "WORKFLOW__NAMESPACE": "other"}
        missing = (
            f"namespace 'other' does not exist on Temporal at {address}: create it with "
            f"`temporal operator namespace create --namespace other --address {address}` "
            "(then `skillweave temporal setup`), or set WORKFLOW__NAMESPACE to one that exists"
        )
        code, _, said = await asyncio.to_thread(doctor, other, "temporal", "setup")
        assert code == 2, said
        assert said.splitlines() == [f"error: {missing}"] or " ".join(said.split()) == (
            f"error: {missing}"
        )
        _, checks, _ = await asyncio.to_thread(doctor, other)
        assert checks["temporal"] == ("fail", missing)


def test_without_a_temporal_server_doctor_names_both_remedies(
    base_env: dict[str, str],
) -> None:
    address = f"127.0.0.1:{free_port()}"
    env = {**base_env, "WORKFLOW__TEMPORAL_ADDRESS": address}
    del env["WORKFLOW__EXECUTION_ENGINE"]  # the default: temporal
    code, checks, _ = doctor(env)
    assert code == 1
    status, detail = checks["temporal"]
    assert status == "fail"
    assert detail.startswith(f"cannot reach Temporal at {address} (connection refused)")
    assert "`skillweave dev` in another terminal" in detail
    assert detail.endswith("local and not durable, with WORKFLOW__EXECUTION_ENGINE=direct")


async def test_doctor_names_the_stored_agents_without_a_model(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """No default model: an agent that names none cannot run, nor one whose model_id does
    not resolve; one with a model that resolves is fine."""
    from skillweave.api.agent_store import AgentCreate, AgentStore

    agents = AgentStore(LocalArtifactStore(tmp_path / "store"))  # base_env's store
    _, checks, _ = await asyncio.to_thread(doctor, base_env)
    assert checks["agents"] == ("ok", "none stored")
    named = await agents.create(
        AgentCreate(name="named", instruction="Go.", model_id="anthropic:claude-haiku-4-5")
    )
    bare = await agents.create(AgentCreate(name="bare", instruction="Go."))
    await agents.create(AgentCreate(name="fine", instruction="Go.", model_id="local"))
    env = {
        **base_env,
        "MODEL__PROFILES__LOCAL__PROVIDER": "openai",
        "MODEL__PROFILES__LOCAL__NAME": "small",
        "MODEL__PROFILES__LOCAL__BASE_URL": "http://127.0.0.1:9/v1",
    }
    _, checks, _ = await asyncio.to_thread(doctor, env)
    status, detail = checks["agents"]
    assert status == "warn"
    assert detail.startswith("2 of 3 stored agents have no model that resolves")
    assert (
        f"'bare' ({bare.id}) names none and no default model is configured "
        "(MODEL__PROVIDER, MODEL__NAME)"
    ) in detail
    assert f"'named' ({named.id}): model 'anthropic:claude-haiku-4-5' needs an API key" in detail
    assert "'fine'" not in detail
    # With a default model, the agent that names none runs on it.
    script = tmp_path / "model.yaml"
    script.write_text("turns: [{say: hi}]\n", encoding="utf-8")
    env.update({"MODEL__PROVIDER": "scripted", "MODEL__NAME": str(script)})
    _, checks, _ = await asyncio.to_thread(doctor, env)
    assert checks["agents"][0] == "warn"
    assert checks["agents"][1].startswith("1 of 3 stored agents has no model")


def test_a_store_that_cannot_be_reached_is_red(base_env: dict[str, str]) -> None:
    env = {
        **base_env,
        "STORAGE__BACKEND": "s3",
        "STORAGE__S3_ENDPOINT": f"127.0.0.1:{free_port()}",
        "STORAGE__S3_ACCESS_KEY": "k",
        "STORAGE__S3_SECRET_KEY": "s",
    }
    code, checks, _ = doctor(env)
    assert code == 1
    assert checks["store"][0] == "fail"
    said = checks["store"][1]
    assert said.startswith(f"the S3 store at {env['STORAGE__S3_ENDPOINT']} (bucket "), said
    assert "is not up (no connection): start it, or check the STORAGE__ settings" in said
    assert "MaxRetryError" not in said  # one short line, not the client's chain


async def test_a_manager_down_or_with_another_token_is_red(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    down = {**base_env, "SANDBOX__MANAGER_URL": f"http://127.0.0.1:{free_port()}"}
    code, checks, _ = await asyncio.to_thread(doctor, {**down, "SANDBOX__MANAGER_TOKEN": "x"})
    assert (code, checks["manager"][0]) == (1, "fail")
    assert "cannot reach" in checks["manager"][1]
    assert checks["agree"] == (
        "warn",
        f"not compared: the manager at {down['SANDBOX__MANAGER_URL']} did not answer",
    )

    settings = Settings(_env_file=None, sandbox={"manager_token": SecretStr("the-right-token")})
    store = LocalArtifactStore(tmp_path / "manager-store")
    async with Manager.serving(settings, store=store) as manager:
        env = {**base_env, "SANDBOX__MANAGER_URL": manager.url}
        wrong = await asyncio.to_thread(doctor, {**env, "SANDBOX__MANAGER_TOKEN": "another"})
        right = await asyncio.to_thread(
            doctor, {**env, "SANDBOX__MANAGER_TOKEN": "the-right-token"}
        )
    assert wrong[1]["manager"][0] == "fail"
    assert "refuses the token" in wrong[1]["manager"][1]
    # It answered: the comparison says why it was not made, not that nothing answered.
    assert wrong[1]["agree"] == (
        "warn",
        f"not compared: the manager at {manager.url} refused this process's token",
    )
    assert right[1]["manager"][0] == "ok"


@contextlib.asynccontextmanager
async def model_endpoint(status: int) -> AsyncIterator[str]:
    """An OpenAI-compatible server whose /models answers `status`."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def models(_request: object) -> JSONResponse:
        return JSONResponse({"data": []}, status_code=status)

    async with LoopbackServer(Starlette(routes=[Route("/v1/models", models)])) as server:
        yield f"{server.url}/v1"


async def test_a_model_without_a_key_or_refusing_it_is_red(base_env: dict[str, str]) -> None:
    openai = {**base_env, "MODEL__PROVIDER": "openai", "MODEL__NAME": "gpt-4o-mini"}
    code, checks, _ = await asyncio.to_thread(doctor, openai)
    assert code == 1
    assert checks["model"] == (
        "fail",
        "model 'openai:gpt-4o-mini' needs an API key at api.openai.com: set MODEL__API_KEY (or "
        "MODEL__BASE_URL to an OpenAI-compatible server that needs none)",
    )
    for status, expected in ((401, "fail"), (200, "ok")):
        async with model_endpoint(status) as url:
            env = {**openai, "MODEL__API_KEY": "sk-test", "MODEL__BASE_URL": url}
            _, checks, _ = await asyncio.to_thread(doctor, env)
        assert checks["model"][0] == expected, checks["model"]
    scripted = await asyncio.to_thread(doctor, base_env)
    assert scripted[1]["model"][0] == "warn"
    assert scripted[0] == 0  # a warning is not a failure


async def test_a_manager_on_another_store_or_with_a_longer_limit_disagrees(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """`agree`: what two processes must share. Red for a manager on another store, and for a
    script limit (the manager's) a worker's script step cannot hold."""
    token = "the-right-token"
    env = {**base_env, "SANDBOX__MANAGER_TOKEN": token, "WORKFLOW__EXECUTION_ENGINE": "temporal"}
    elsewhere = LocalArtifactStore(tmp_path / "manager-store")
    ours = LocalArtifactStore(tmp_path / "store")  # base_env's
    for store, limit, expected in (
        (elsewhere, 60, "the manager works on the store"),
        (ours, 1200, "SANDBOX__TIMEOUT_SECONDS (1200.0 s) is not under"),
        (ours, 60, None),
    ):
        settings = Settings(
            _env_file=None,
            sandbox={"manager_token": SecretStr(token), "timeout_seconds": limit},
        )
        async with Manager.serving(settings, store=store) as manager:
            env["SANDBOX__MANAGER_URL"] = manager.url
            _, checks, _ = await asyncio.to_thread(doctor, env)
        status, detail = checks["agree"]
        if expected is None:
            assert status == "ok", detail
        else:
            assert status == "fail"
            assert expected in detail


async def test_a_model_profile_refusing_its_key_is_red(base_env: dict[str, str]) -> None:
    async with model_endpoint(401) as url:
        env = {
            **base_env,
            "MODEL__PROFILES__LOCAL__PROVIDER": "openai",
            "MODEL__PROFILES__LOCAL__NAME": "small",
            "MODEL__PROFILES__LOCAL__API_KEY": "sk-wrong",
            "MODEL__PROFILES__LOCAL__BASE_URL": url,
        }
        code, checks, _ = await asyncio.to_thread(doctor, env)
    assert code == 1
    assert checks["model"] == (
        "fail",
        f"model profile 'local': {url} refuses MODEL__PROFILES__LOCAL__API_KEY (401)",
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox uid is taken as root only")
def test_the_isolation_check_probes_as_the_pool_does(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """As root, the namespaces mode runs scripts under a sandbox uid, and the pool probes it
    in the system's temp folder: the check does the same (a probe as root, or in a private
    TMPDIR the uid cannot reach, would refuse a mode that works)."""
    private = tmp_path / "private-temp"
    private.mkdir(mode=0o700)
    env = {**base_env, "SANDBOX__ISOLATION": "namespaces", "TMPDIR": str(private)}
    _, checks, _ = doctor(env)
    assert checks["isolation"] == (
        "ok",
        "scripts contained by namespaces with a syscall filter (SANDBOX__ISOLATION=namespaces)",
    )
