"""What a local store holds of a run's transcript, read the way a person inspecting the store
would: the run's record log, every record by its seq."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillweave.storage import LocalArtifactStore, keys
from skillweave.storage._local_record_logs import read_log

__all__ = ["record_logs", "stored_messages", "stored_records", "transcript_log_path"]


def transcript_log_path(store: LocalArtifactStore, run_id: str) -> Path:
    """The file that holds `run_id`'s transcript in `store`."""
    return store.log_path(keys.transcript_log(run_id))


def stored_records(store: LocalArtifactStore, run_id: str) -> dict[int, dict[str, Any]]:
    """Every stored record of `run_id`'s transcript (the newest of each seq), by seq; empty
    when it has none."""
    path = transcript_log_path(store, run_id)
    if not path.exists():
        return {}
    return {seq: json.loads(data) for seq, data in sorted(read_log(path).items())}


def stored_messages(store: LocalArtifactStore, run_id: str) -> list[dict[str, Any]]:
    """The messages of `run_id`'s stored transcript, in seq order."""
    return [record["message"] for record in stored_records(store, run_id).values()]


def record_logs(store: LocalArtifactStore) -> list[Path]:
    """Every record log in `store` (a run's transcript, say): what ``list`` never shows, for a
    test that checks nothing was written somewhere."""
    return sorted(store.root.rglob(".sw-log-*")) if store.root.exists() else []
