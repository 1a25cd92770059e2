"""`SkillSearch`: the ``search_skills`` side effect (``AgentServices`` hands it here).

The skills of the run's view that fit a query, rendered as catalog entries and stored as the
tool's message; the loop makes them attachable.
"""

from __future__ import annotations

from skillweave.agent import SearchInput, SearchOutcome
from skillweave.agent.disclosure import SEARCH_SKILLS
from skillweave.engines._views import SkillViews
from skillweave.engines.transcript import TranscriptRecorder, clip
from skillweave.engines.worker_metrics import WorkerMetrics
from skillweave.skills import render_entries

__all__ = ["SkillSearch"]


class SkillSearch:
    """``search_skills`` over `views`, its answer stored in `transcript`, counted in
    `metrics`."""

    def __init__(
        self, views: SkillViews, *, transcript: TranscriptRecorder, metrics: WorkerMetrics
    ) -> None:
        self._views = views
        self._transcript = transcript
        self._metrics = metrics

    async def search(self, request: SearchInput) -> SearchOutcome:
        """Skills that fit a query, as catalog entries; they become attachable."""
        view = await self._views.of_run(request.allowed, request.pinned)
        hits = view.search(request.query, top_k=request.top_k)
        if hits:
            text = render_entries([view.get(hit.name) for hit in hits])
        else:
            text = "No skill matches that query; try other words."
        names = tuple(hit.name for hit in hits)
        self._metrics.searches.labels(result="found" if names else "none").inc()
        summary = clip(f"[search_skills {request.query!r}: {', '.join(names) or 'no match'}]")
        chars = await self._transcript.tool_result(
            request, tool=SEARCH_SKILLS, text=text, error=False, summary=summary
        )
        return SearchOutcome(seq=request.seq, chars=chars, summary=summary, found=names)
