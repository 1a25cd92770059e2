"""The run records (``runs/{id}/run.json``) of the runs started over the API, and how the runs
this process watched ended.

:class:`RunRecords` is made with the run service (:mod:`skillweave.api.run_service`); the
launcher writes a record when it starts a run and again when the run ends, the reader reads
them. On the direct engine a run lives in its API's process: :meth:`RunRecords.mark_lost` ends,
when the API starts, every record an earlier process left ``running``.
"""

from __future__ import annotations

import logging
from typing import Final

from skillweave.api.records import read_record
from skillweave.api.run_schemas import Run
from skillweave.engines import RunResult
from skillweave.storage import ArtifactStore, keys

__all__ = ["LOST_REASON", "RunRecords"]

logger = logging.getLogger("skillweave.api")

LOST_REASON: Final = (
    "lost: the API restarted while it ran; direct-engine runs do not survive a restart — "
    "use the temporal engine (WORKFLOW__EXECUTION_ENGINE=temporal)"
)
"""Why a direct-engine run that was running when its API stopped ended."""


class RunRecords:
    """Run records in the store, and the results of the runs this process saw end."""

    def __init__(self, store: ArtifactStore) -> None:
        self._store = store
        self._results: dict[str, RunResult] = {}

    def result(self, run_id: str) -> RunResult | None:
        """How the run ended, when this process saw it end (its record may lag)."""
        return self._results.get(run_id)

    async def ended(self, run: Run, result: RunResult) -> Run:
        """Note that `run` ended with `result` and write its record so; the run as it ended."""
        self._results[run.id] = result
        ended = run.model_copy(update={"status": result.status, "result": result})
        await self.save(ended)
        return ended

    def seen_end(self, run: Run, result: RunResult) -> Run:
        """Note that `run` ended with `result` (its record is not rewritten); the run as it
        ended."""
        self._results[run.id] = result
        return run.model_copy(update={"status": result.status, "result": result})

    async def save(self, run: Run) -> None:
        """Write `run`'s record (what it waits for is not stored: it is read when asked)."""
        await self._store.put_bytes(
            keys.run_record_key(run.id),
            run.model_dump_json(exclude={"waiting"}).encode(),
            content_type="application/json",
        )

    async def read(self, run_id: str) -> Run | None:
        """The record of `run_id`, or None when there is none.

        Raises:
            InvalidKeyError: `run_id` cannot be a run's.
        """
        data = await read_record(self._store, keys.run_record_key(run_id))
        return None if data is None else Run.model_validate_json(data)

    async def all(self) -> list[Run]:
        """Every run record in the store, newest first."""
        runs = []
        for ref in await self._store.list("runs/"):
            if ref.key.endswith("/run.json") and ref.key.count("/") == 2:
                data = await read_record(self._store, ref.key)
                if data is not None:
                    runs.append(Run.model_validate_json(data))
        runs.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return runs

    async def mark_lost(self) -> list[str]:
        """End every record still ``running``: on an engine whose runs live in this process
        (direct), no run of this process owns it, so it died with an earlier one. Called once
        when the API starts; returns the ids marked."""
        lost = []
        for run in await self.all():
            if run.status != "running" or run.result is not None or run.id in self._results:
                continue
            result = RunResult(run_id=run.id, status="failed", reason=LOST_REASON)
            await self.save(run.model_copy(update={"status": "failed", "result": result}))
            lost.append(run.id)
        if lost:
            logger.warning(
                "marked %d run(s) of an earlier API process as lost: %s", len(lost), ", ".join(lost)
            )
        return lost
