"""`ResourceReads`: the ``read_skill_resource`` side effect (``AgentServices`` hands it here).

One text file of an active skill, read at the version the run pinned and stored as the tool's
message; a missing or unreadable file is a tool result the model can act on.
"""

from __future__ import annotations

from skillweave.agent import ReadResourceInput, ToolOutcome
from skillweave.agent.disclosure import READ_SKILL_RESOURCE
from skillweave.config import SkillsSettings
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecord, TranscriptRecorder, clip, tool_record
from skillweave.errors import ResourceError
from skillweave.skills import read_resource

__all__ = ["ResourceReads"]


class ResourceReads:
    """``read_skill_resource`` over `views`, within the resource cap of `settings`, its text
    stored in `transcript`."""

    def __init__(
        self, views: SkillViews, *, transcript: TranscriptRecorder, settings: SkillsSettings
    ) -> None:
        self._views = views
        self._transcript = transcript
        self._settings = settings

    async def read(self, request: ReadResourceInput) -> ToolOutcome:
        """One text file of an active skill, at its pinned version, stored."""
        record, outcome = await self.answer(request)
        await self._transcript.store(request.run_id, request.seq, record)
        return outcome

    async def answer(self, request: ReadResourceInput) -> tuple[TranscriptRecord, ToolOutcome]:
        """:meth:`read` but not stored: the record to store at the request's seq, and what the
        loop is told of it (a model call stores it with the reply)."""
        error = False
        try:
            text = await self._read_pinned(request.skill, request.version, request.path)
        except ResourceError as exc:
            text, error = f"Cannot read that file: {exc}", True
        where = clip(f"{request.skill}/{request.path}", 120)
        summary = (
            f"[read_skill_resource {where}: {len(text)} characters, elided to save context; "
            "read it again if you need it]"
        )
        record = tool_record(
            request, tool=READ_SKILL_RESOURCE, text=text, error=error, summary=summary
        )
        outcome = ToolOutcome(seq=request.seq, chars=len(text), is_error=error, summary=summary)
        return record, outcome

    async def _read_pinned(self, name: str, version: str, path: str) -> str:
        skill = await self._views.skill_at(name, version)
        # Read here, not in a thread: a file of at most resource_max_bytes (256 KiB by default)
        # comes from the page cache in tens of microseconds, less than a hop to a thread and
        # back, which on a busy worker waits for the scheduler (issue 47, docs/BENCHMARKS.md).
        return read_resource(skill, path, max_bytes=self._settings.resource_max_bytes)
