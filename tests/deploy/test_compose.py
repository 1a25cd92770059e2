"""deploy/compose.yaml: the one-machine stack parses, pins its images, wires real settings and
holds no secret but development defaults the environment overrides."""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any, Final
from urllib.parse import urlsplit

import pytest
import yaml

from skillweave.cli.temporal_server import _SA_TYPES
from skillweave.engines.contract import SEARCH_ATTRIBUTES
from tests.deploy.support import DEPLOY, setting_problem, settings_from

COMPOSE: Final = DEPLOY / "compose.yaml"
SERVICES: Final = {"temporal", "minio", "manager", "worker", "api"}
SKILLWEAVE: Final = ("manager", "worker", "api")
SECRET_NAME: Final = re.compile(r"TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY|ROOT_USER")
INTERPOLATION: Final = re.compile(r"\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}")


def interpolate(value: str) -> str:
    """What compose makes of `value` with no variable set: each default, else empty."""
    return INTERPOLATION.sub(lambda m: m.group(2) or "", value)


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text("utf-8"))["services"]


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    assert isinstance(env, dict), "environment as a mapping"
    return {name: str(value) for name, value in env.items()}


def test_the_stack_has_its_services_on_pinned_images(services: dict[str, Any]) -> None:
    assert set(services) >= SERVICES
    for name, service in services.items():
        image = service.get("image", "")
        tag = image.rpartition(":")[2]
        assert tag != "latest", name
        assert re.search(r"\d", tag), f"{name}: {image!r} is not pinned"


def test_secrets_are_only_overridable_development_defaults(services: dict[str, Any]) -> None:
    seen = 0
    for name, service in services.items():
        for var, value in environment(service).items():
            if SECRET_NAME.search(var):
                seen += 1
                assert INTERPOLATION.fullmatch(value), f"{name}: {var} is hard-coded"
                if "API_KEY" in var:  # a model key has no default at all
                    assert interpolate(value) == "", f"{name}: {var}"
    assert seen >= 5


def test_skillweave_services_use_real_settings_with_valid_values(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = {}
    for name in SKILLWEAVE:
        env = {var: interpolate(value) for var, value in environment(services[name]).items()}
        assert [p for var in sorted(env) if (p := setting_problem(var))] == []
        read[name] = settings_from(env, monkeypatch)
    manager = read["manager"].sandbox
    assert manager.backend == "local"
    assert manager.host == "0.0.0.0"
    assert manager.manager_token is not None
    worker = read["worker"]
    assert worker.workflow.execution_engine == "temporal"
    assert urlsplit(f"//{worker.workflow.temporal_address}").hostname == "temporal"
    url = urlsplit(worker.sandbox.manager_url or "")
    assert (url.hostname, url.port) == ("manager", manager.port)
    assert worker.sandbox.manager_token == manager.manager_token
    assert read["manager"].storage == worker.storage == read["api"].storage
    assert worker.storage.backend == "s3"
    assert urlsplit(f"//{worker.storage.s3_endpoint}").hostname == "minio"
    assert read["api"].api.host == "0.0.0.0"
    # issue 28: the script limit is the manager's alone and fits in a step; the worker's metrics
    assert "SANDBOX__TIMEOUT_SECONDS" in environment(services["manager"])
    assert "SANDBOX__TIMEOUT_SECONDS" not in environment(services["worker"])
    assert manager.timeout_seconds == 60
    assert manager.timeout_seconds < worker.workflow.script_timeout_seconds
    assert worker.observability.worker_metrics_port > 0
    assert worker.observability.worker_metrics_host == "0.0.0.0"
    port = worker.observability.worker_metrics_port
    assert f"127.0.0.1:{port}:{port}" in services["worker"]["ports"]
    # the same credentials open MinIO
    minio = environment(services["minio"])
    access, secret = worker.storage.s3_access_key, worker.storage.s3_secret_key
    assert access is not None
    assert secret is not None
    assert interpolate(minio["MINIO_ROOT_USER"]) == access.get_secret_value()
    assert interpolate(minio["MINIO_ROOT_PASSWORD"]) == secret.get_secret_value()
    assert worker.storage.s3_create_bucket  # MinIO starts empty: the bucket is made, said loudly


def test_temporal_is_a_pinned_dev_server_with_skillweaves_search_attributes(
    services: dict[str, Any],
) -> None:
    temporal = services["temporal"]
    command = temporal["command"]
    assert command[:2] == ["server", "start-dev"]
    assert command[command.index("--ip") + 1] == "0.0.0.0"
    registered = {command[i + 1] for i, arg in enumerate(command) if arg == "--search-attribute"}
    assert registered == {
        f"{key.name}={_SA_TYPES[key.indexed_value_type.name]}" for key in SEARCH_ATTRIBUTES
    }
    assert any(port.endswith(":8233") for port in temporal["ports"]), "the UI is published"


def test_compose_accepts_the_file() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("docker is not on PATH")
    probe = subprocess.run(
        [docker, "compose", "version"], capture_output=True, text=True, timeout=30, check=False
    )
    if probe.returncode != 0:
        pytest.skip("the docker compose plugin is not installed")
    checked = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr


def test_the_api_holds_no_model_key(services: dict[str, Any]) -> None:
    """On Temporal the API never calls a model: a run whose agent names none gets the default
    the workers name, and only the workers hold the key."""
    api = environment(services["api"])
    assert not [name for name in api if name.startswith("MODEL__")], api
    assert "MODEL__API_KEY" in environment(services["worker"])
