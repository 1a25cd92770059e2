"""The audit log on S3 against a real moto server: the suite of tests/storage/audit_suite.py
(several writers' chains and the checkpoint chain, every kind of tampering, concurrent writers,
verify racing appends, reading), blocks and checkpoints written with conditional puts."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from minio import Minio

from skillweave.storage import S3ArtifactStore
from tests.integration.storage.conftest import ACCESS_KEY, REGION, SECRET_KEY
from tests.storage.audit_suite import *  # noqa: F403 - the shared suite runs here


@pytest.fixture
async def store(
    moto_endpoint: str, bucket: str, raw_client: Minio
) -> AsyncIterator[S3ArtifactStore]:
    raw_client.make_bucket(bucket)  # as an operator does: the store creates none by default
    the_store = S3ArtifactStore(
        endpoint=moto_endpoint,
        bucket=bucket,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region=REGION,
    )
    yield the_store
    await the_store.aclose()
