"""The runs the API serves on one engine: :class:`RunService` puts together what starts them
(:class:`~skillweave.api.run_launcher.RunLauncher`), reads them
(:class:`~skillweave.api.run_reader.RunReader`), talks to them
(:class:`~skillweave.api.run_control.RunControl`) and serves their files
(:class:`~skillweave.api.run_artifacts.RunArtifacts`), over one set of run records.

The ``open_runs`` start-up hook (:mod:`skillweave.api.runs`) opens it; the app's state holds it
(:class:`~skillweave.api.state.ApiState`).
"""

from __future__ import annotations

from skillweave.api.agent_store import AgentStore
from skillweave.api.run_artifacts import RunArtifacts
from skillweave.api.run_control import RunControl
from skillweave.api.run_launcher import RunLauncher
from skillweave.api.run_reader import RunReader
from skillweave.api.run_records import RunRecords
from skillweave.api.served_skills import NoSkills, ServedSkills
from skillweave.api.skill_pins import SkillPins
from skillweave.config import ModelSettings
from skillweave.engines import Engine
from skillweave.storage import ArtifactStore

__all__ = ["NoRuns", "RunService"]


class RunService:
    """Runs over one engine, their records in the store.

    Attributes:
        engine: the engine the runs run on.
        launcher: starts runs.
        reader: reads runs and lists them.
        control: messages, approvals and cancels.
        artifacts: the runs' files.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        store: ArtifactStore,
        model: ModelSettings,
        agents: AgentStore,
        skills: ServedSkills | NoSkills,
    ) -> None:
        self.engine = engine
        self._records = RunRecords(store)
        self.launcher = RunLauncher(
            engine,
            store=store,
            model=model,
            agents=agents,
            records=self._records,
            pins=SkillPins(store, skills),
        )
        self.reader = RunReader(engine, self._records)
        self.control = RunControl(engine)
        self.artifacts = RunArtifacts(store)

    async def mark_lost(self) -> list[str]:
        """On an engine whose runs live in this process (direct), end every record still
        ``running``: it died with an earlier process. Called once when the API starts;
        returns the ids marked."""
        if getattr(self.engine, "describe", None) is not None:  # temporal: runs outlive the API
            return []
        return await self._records.mark_lost()

    async def close(self) -> None:
        """Stop watching the runs started here."""
        await self.launcher.close()


class NoRuns:
    """No runs: the app was composed without ``open_runs`` (and so without the run routes)."""
