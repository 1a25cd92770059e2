"""The ``STORAGE__`` section: where artifacts, transcripts and uploaded skill packages live.
Part of :class:`~skillweave.config.Settings`; ``skillweave.storage.open_store`` reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

__all__ = ["StorageSettings"]


class StorageSettings(BaseModel):
    """Where artifacts, transcripts and uploaded skill packages live."""

    backend: Literal["local", "s3"] = "local"
    local_dir: Path = Path("~/.skillweave/store")
    s3_endpoint: str = "localhost:9000"
    s3_bucket: str = "skillweave"
    s3_access_key: SecretStr | None = None
    s3_secret_key: SecretStr | None = None
    s3_secure: bool = False
    s3_region: str | None = None
    s3_create_bucket: bool = Field(
        default=False,
        description="Create s3_bucket when it is missing (said in one WARNING line with the new "
        "store's id); false: a missing bucket is an error, so a mistyped name is never a new, "
        "empty store.",
    )
