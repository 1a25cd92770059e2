"""A mistyped bucket is not a new store (issue 41): ``skillweave doctor``, run as an operator
types it against a real S3 (moto on loopback), fails the store check with one line that says
what to do, creates nothing, and a starting service stops on it (it never passes by itself);
with ``STORAGE__S3_CREATE_BUCKET=true`` the bucket is created and the new store's id named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from minio import Minio

from skillweave.cli.checks import run_checks
from skillweave.config import Settings
from tests.conftest import REPO
from tests.moto import moto_server

pytestmark = pytest.mark.timeout(120)

BUCKET = "skillweave-mistyped"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_server(tmp_path_factory.mktemp("moto")) as where:
        yield where


def _env(endpoint: str, tmp_path: Path, **more: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("STORAGE__", "SANDBOX__"))}
    return {
        **keep,
        "WORKFLOW__EXECUTION_ENGINE": "direct",
        "SKILLS__DIRS": json.dumps([str(tmp_path / "no-skills")]),
        "SANDBOX__ISOLATION": "none",
        "STORAGE__BACKEND": "s3",
        "STORAGE__S3_ENDPOINT": endpoint,
        "STORAGE__S3_BUCKET": BUCKET,
        "STORAGE__S3_ACCESS_KEY": "doctor-access",
        "STORAGE__S3_SECRET_KEY": "doctor-secret",
        "STORAGE__S3_REGION": "us-east-1",
        **more,
    }


def _doctor(env: dict[str, str]) -> tuple[dict[str, tuple[str, str]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "skillweave.cli", "doctor", "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    checks = {c["check"]: (c["status"], c["detail"]) for c in json.loads(done.stdout)}
    return checks, done.stderr


def _bucket_exists(endpoint: str) -> bool:
    http = urllib3.PoolManager()
    try:
        client = Minio(
            endpoint,
            access_key="a",
            secret_key="b",
            secure=False,
            region="us-east-1",
            http_client=http,
        )
        return client.bucket_exists(BUCKET)
    finally:
        http.clear()


async def test_a_missing_bucket_is_one_line_and_stops_a_service(
    endpoint: str, tmp_path: Path
) -> None:
    env = _env(endpoint, tmp_path)
    checks, _ = _doctor(env)
    assert checks["store"] == (
        "fail",
        f"bucket {BUCKET!r} does not exist at http://{endpoint}: create it, or set "
        "STORAGE__S3_CREATE_BUCKET=true to let skillweave create it",
    )
    assert not _bucket_exists(endpoint)
    # A service starting (here a manager) stops on it: not a failure it waits out.
    settings = Settings(
        _env_file=None,
        storage={
            "backend": "s3",
            "s3_endpoint": endpoint,
            "s3_bucket": BUCKET,
            "s3_access_key": "a",
            "s3_secret_key": "b",
        },
        sandbox={"isolation": "none"},
    )
    [store] = [c for c in await run_checks(settings, "manager") if c.name == "store"]
    assert (store.status, store.transient) == ("fail", False)

    created, _ = _doctor(_env(endpoint, tmp_path, STORAGE__S3_CREATE_BUCKET="true"))
    assert _bucket_exists(endpoint)
    status, line = created["store"]
    assert status == "warn"
    assert line.startswith(
        f"created bucket {BUCKET!r} at http://{endpoint} (STORAGE__S3_CREATE_BUCKET=true): "
        "a new, empty store, id "
    )
    store_id = line.split(", id ", 1)[1].split(" ", 1)[0]
    # The next process finds the bucket: the same store, no longer new.
    again, _ = _doctor(_env(endpoint, tmp_path, STORAGE__S3_CREATE_BUCKET="true"))
    assert again["store"][0] == "ok"
    assert f"id {store_id}," in again["store"][1]
