"""A real S3 endpoint for the storage tests: one ``moto_server`` process per session on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import urllib3
from minio import Minio

from tests.moto import moto_server

ACCESS_KEY = "skillweave-test-access"
SECRET_KEY = "skillweave-test-secret-do-not-log"
REGION = "us-east-1"


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``127.0.0.1:{port}`` of a moto S3 server, started once and terminated at the end."""
    with moto_server(tmp_path_factory.mktemp("moto")) as endpoint:
        yield endpoint


@pytest.fixture
def bucket() -> str:
    """A fresh bucket name per test, not created: a store fixture creates it, as an operator
    would (a store creates a missing bucket only when told to: STORAGE__S3_CREATE_BUCKET)."""
    return f"sw-test-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def raw_client(moto_endpoint: str) -> Iterator[Minio]:
    """A plain minio client on the same server, to act behind the store's back."""
    http = urllib3.PoolManager()
    client = Minio(
        moto_endpoint,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        secure=False,
        region=REGION,
        http_client=http,
    )
    yield client
    http.clear()
