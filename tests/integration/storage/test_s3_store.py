"""S3ArtifactStore against a real moto S3 server: the shared store suite, plus S3-only cases."""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
from collections.abc import AsyncIterator

import pytest
from minio import Minio

from skillweave.config import StorageSettings
from skillweave.errors import (
    ArtifactNotFoundError,
    BucketNotFoundError,
    ConfigError,
    StorageError,
)
from skillweave.storage import ArtifactRef, S3ArtifactStore, open_store
from skillweave.storage.reachable import not_up_yet
from skillweave.storage.store_id import store_identity
from tests.integration.storage.conftest import ACCESS_KEY, REGION, SECRET_KEY
from tests.moto import free_port
from tests.storage.store_suite import *  # noqa: F403 - the shared suite runs here
from tests.storage.store_suite import Corrupt


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


@pytest.fixture
def corrupt(raw_client: Minio, bucket: str) -> Corrupt:
    async def put_behind_its_back(key: str, data: bytes) -> None:
        await asyncio.to_thread(raw_client.put_object, bucket, key, io.BytesIO(data), len(data))

    return put_behind_its_back


def _store(endpoint: str, bucket: str, **options: bool) -> S3ArtifactStore:
    return S3ArtifactStore(
        endpoint=endpoint,
        bucket=bucket,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region=REGION,
        **options,
    )


async def test_a_missing_bucket_is_an_error_not_a_new_store(
    moto_endpoint: str, raw_client: Minio, bucket: str
) -> None:
    mistyped = _store(moto_endpoint, bucket)
    try:
        for use in (mistyped.stat("anything"), store_identity(mistyped)):
            with pytest.raises(BucketNotFoundError) as caught:
                await use
            assert str(caught.value) == (
                f"bucket {bucket!r} does not exist at http://{moto_endpoint}: create it, or set "
                "STORAGE__S3_CREATE_BUCKET=true to let skillweave create it"
            )
            assert caught.value.code == "NoSuchBucket"
            assert not_up_yet(caught.value) is None  # never passes by itself: not waited for
        assert not raw_client.bucket_exists(bucket)
        raw_client.make_bucket(bucket)  # the operator creates it: the same store now works
        assert await mistyped.stat("anything") is None
    finally:
        await mistyped.aclose()


async def test_a_bucket_is_created_only_when_told_and_said_loudly(
    moto_endpoint: str, raw_client: Minio, bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    told = _store(moto_endpoint, bucket, create_bucket=True)
    try:
        with caplog.at_level(logging.WARNING, logger="skillweave.storage.s3"):
            assert await told.stat("anything") is None
            assert await told.put_bytes("k", b"v")
        identity = await store_identity(told)
        said = told.created
    finally:
        await told.aclose()
    assert raw_client.bucket_exists(bucket)
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line == (
        f"created bucket {bucket!r} at http://{moto_endpoint} (STORAGE__S3_CREATE_BUCKET=true): "
        f"a new, empty store, id {identity}"
    )
    assert said == line  # what a CLI, whose library log lines are quiet, shows


async def test_ensure_bucket_is_explicit_and_idempotent(
    moto_endpoint: str, raw_client: Minio, bucket: str
) -> None:
    raw_client.make_bucket(bucket)  # someone else created it first
    one = S3ArtifactStore(
        endpoint=f"http://{moto_endpoint}",
        bucket=bucket,
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
    )
    try:
        await one.ensure_bucket()
        await one.ensure_bucket()
        assert await one.put_bytes("k", b"v")
    finally:
        await one.aclose()


async def test_hash_and_type_are_object_metadata(
    store: S3ArtifactStore, raw_client: Minio, bucket: str
) -> None:
    ref = await store.put_bytes("runs/r1/inputs/a.txt", b"meta", content_type="text/plain")
    info = raw_client.stat_object(bucket, ref.key)
    assert info.metadata["x-amz-meta-sha256"] == hashlib.sha256(b"meta").hexdigest()
    assert info.content_type == "text/plain"


async def test_put_if_absent_is_a_conditional_put(
    store: S3ArtifactStore, raw_client: Minio, bucket: str
) -> None:
    """The claim must be decided by the server: a key created by another client counts."""
    await store.ensure_bucket()
    raw_client.put_object(bucket, "claims/x", io.BytesIO(b"other"), 5)
    assert await store.put_if_absent("claims/x", b"mine") is None
    response = raw_client.get_object(bucket, "claims/x")
    try:
        assert response.read() == b"other"
    finally:
        response.close()
        response.release_conn()


async def test_objects_written_by_other_tools_are_hashed(
    store: S3ArtifactStore, raw_client: Minio, bucket: str
) -> None:
    await store.ensure_bucket()
    raw_client.put_object(bucket, "skills/x/v1.zip", io.BytesIO(b"PK..."), 5, "application/zip")
    raw_client.put_object(bucket, "bad//name", io.BytesIO(b"x"), 1)
    ref = await store.stat("skills/x/v1.zip")
    assert ref == ArtifactRef(
        key="skills/x/v1.zip",
        size=5,
        sha256=hashlib.sha256(b"PK...").hexdigest(),
        content_type="application/zip",
    )
    assert await store.get_bytes(ref) == b"PK..."
    assert await store.list("") == [ref]  # the object with an invalid key name is skipped


async def test_server_errors_become_storage_errors(
    store: S3ArtifactStore, raw_client: Minio, bucket: str
) -> None:
    await store.ensure_bucket()
    raw_client.remove_bucket(bucket)  # gone behind the store's back
    with pytest.raises(StorageError) as caught:
        await store.put_bytes("k", b"v")
    assert caught.value.code == "NoSuchBucket"
    assert not isinstance(caught.value, ArtifactNotFoundError)
    assert "NoSuchBucket" in str(caught.value)


async def test_unreachable_server_is_a_storage_error_without_secrets() -> None:
    secret = "sup3r-s3cret-value"
    unreachable = S3ArtifactStore(
        endpoint=f"127.0.0.1:{free_port()}",
        bucket="nobody-home",
        access_key="AKIAEXAMPLE",
        secret_key=secret,
        region=REGION,
    )
    try:
        with pytest.raises(StorageError) as caught:
            await unreachable.stat("k")
        assert caught.value.code == "ConnectionError"
        assert secret not in str(caught.value)
        assert secret not in repr(unreachable)
        assert "AKIAEXAMPLE" not in repr(unreachable)
    finally:
        await unreachable.aclose()


async def test_open_store_builds_an_s3_store(
    moto_endpoint: str, bucket: str, raw_client: Minio
) -> None:
    settings = {
        "backend": "s3",
        "s3_endpoint": moto_endpoint,
        "s3_bucket": bucket,
        "s3_access_key": ACCESS_KEY,
        "s3_secret_key": SECRET_KEY,
        "s3_region": REGION,
    }
    unset = open_store(StorageSettings.model_validate(settings))
    try:
        with pytest.raises(BucketNotFoundError):
            await unset.put_bytes("k", b"v")
    finally:
        await unset.aclose()
    assert not raw_client.bucket_exists(bucket)
    opened = open_store(StorageSettings.model_validate({**settings, "s3_create_bucket": True}))
    assert isinstance(opened, S3ArtifactStore)
    try:
        ref = await opened.put_bytes("k", b"v")
        assert await opened.get_bytes(ref) == b"v"
        assert SECRET_KEY not in repr(opened)
    finally:
        await opened.aclose()


@pytest.mark.parametrize(
    ("endpoint", "bucket_name"),
    [("ftp://host:21", "ok-bucket"), ("host:9000/path", "ok-bucket"), ("host:9000", "Bad_Bucket")],
)
def test_bad_endpoint_or_bucket_is_a_config_error(endpoint: str, bucket_name: str) -> None:
    with pytest.raises(ConfigError):
        S3ArtifactStore(endpoint=endpoint, bucket=bucket_name, access_key="a", secret_key="b")
