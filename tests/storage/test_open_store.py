"""open_store: settings in, the right store out (the S3 round trip is in tests/integration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillweave.config import StorageSettings
from skillweave.errors import ConfigError
from skillweave.storage import LocalArtifactStore, S3ArtifactStore, open_store


def test_local_is_the_default_and_expands_the_home_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = open_store(StorageSettings(local_dir=Path("~/artifacts")))
    assert isinstance(store, LocalArtifactStore)
    assert store.root == (tmp_path / "artifacts").resolve()


@pytest.mark.parametrize(
    "keys_given",
    [{}, {"s3_access_key": "id"}, {"s3_secret_key": "secret"}],
)
def test_s3_without_both_keys_is_a_config_error(keys_given: dict[str, str]) -> None:
    settings = StorageSettings.model_validate({"backend": "s3", **keys_given})
    with pytest.raises(ConfigError, match="STORAGE__S3_ACCESS_KEY"):
        open_store(settings)


def test_s3_store_gets_the_secrets_but_never_shows_them() -> None:
    settings = StorageSettings.model_validate(
        {
            "backend": "s3",
            "s3_endpoint": "minio.internal:9000",
            "s3_bucket": "artifacts",
            "s3_access_key": "AKIA-ID-VALUE",
            "s3_secret_key": "very-secret-value",
            "s3_secure": True,
        }
    )
    store = open_store(settings)
    assert isinstance(store, S3ArtifactStore)
    assert store.bucket == "artifacts"
    shown = repr(store)
    assert "minio.internal:9000" in shown
    assert "very-secret-value" not in shown
    assert "AKIA-ID-VALUE" not in shown
    store.close()  # nothing was contacted: building a store does no I/O
