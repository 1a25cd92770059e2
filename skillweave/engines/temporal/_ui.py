"""What the Temporal UI shows of a run: its page (:func:`ui_link`), and the one-line summary and
fixed details a workflow is started with (:func:`summary_of`, :func:`details_of`, defined in
``skillweave.engines.run_start``, which an eval batch's child runs are started with too).

The engine gives the summary and details at start; the CLI prints the link.
"""

from __future__ import annotations

from skillweave.engines.contract import workflow_id
from skillweave.engines.run_start import SUMMARY_MAX_CHARS, details_of, summary_of

__all__ = ["SUMMARY_MAX_CHARS", "details_of", "summary_of", "ui_link"]


def ui_link(base: str, namespace: str, run_id: str) -> str:
    """The Temporal UI page of a run's workflow."""
    return f"{base.rstrip('/')}/namespaces/{namespace}/workflows/{workflow_id(run_id)}"
