"""A run's files: its inputs (``runs/{id}/inputs/``) and every file its scripts wrote
(``runs/{id}/executions/…/outputs/``), as ``/v1/runs/{id}/artifacts`` lists and serves them.
:class:`RunArtifacts` is made by the run service (:mod:`skillweave.api.run_service`).
"""

from __future__ import annotations

from skillweave.api.problems import ApiProblem
from skillweave.api.run_schemas import Artifact, Run
from skillweave.errors import InvalidKeyError
from skillweave.storage import ArtifactRef, ArtifactStore, keys

__all__ = ["RunArtifacts"]


class RunArtifacts:
    """The files of runs, in the store."""

    def __init__(self, store: ArtifactStore) -> None:
        self._store = store

    async def list(self, run: Run) -> list[Artifact]:
        """`run`'s inputs and outputs, each by its path under the run."""
        prefix = keys.run_prefix(run.id)
        return [
            Artifact(path=ref.key.removeprefix(prefix), size=ref.size, sha256=ref.sha256)
            for ref in await self._store.list(prefix)
            if "/inputs/" in ref.key or "/outputs/" in ref.key
        ]

    async def read(self, run: Run, path: str) -> tuple[ArtifactRef, bytes]:
        """The file at `path` under `run` (as the listing names it) and its bytes.

        Raises:
            ApiProblem: 404, the run has no such input or output.
        """
        if "/inputs/" not in f"/{path}" and "/outputs/" not in f"/{path}":
            raise ApiProblem(404, f"no artifact {path!r} in run {run.id!r}")
        try:
            key = keys.validate_key(f"{keys.run_prefix(run.id)}{path}")
            ref = await self._store.stat(key)
        except InvalidKeyError:
            ref = None
        if ref is None:
            raise ApiProblem(404, f"no artifact {path!r} in run {run.id!r}")
        return ref, await self._store.get_bytes(ref)
