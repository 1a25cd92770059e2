"""The Temporal engine's client side: :class:`TemporalEngine` (the ``Engine`` protocol over a
Temporal client, ``WORKFLOW__EXECUTION_ENGINE=temporal``), how a client is opened, and what a
namespace and its workers must be for a run to run.

Callers (the CLI, the API, the worker entry point, benchmarks) import from here; the modules
behind it are private:

- ``_engine``: :class:`TemporalEngine`, which composes the collaborators below;
- ``_connection``: :func:`connect` and :func:`connect_engine`, every client with skillweave's
  data converter (and tracing's interceptor when on), :class:`TemporalUnreachableError`;
- ``_start``: starting a run's workflow, refused where it could never run;
- ``_results``: how a run ended, whichever way its workflow closed;
- ``_routing``: the engine's store and the task queue its runs run on;
- ``_handles``: one run's workflow handle and its queries;
- ``_follow``: following a run's events, with a :class:`FollowNote` between them while no
  worker answers (followers outlive workers);
- ``_pending``: the retries and waits read from a run's pending activities;
- ``_errors``: the server's answers about a run as errors (:class:`NoWorkerError`);
- ``_visibility``: listing runs by search attributes (:class:`RunRow`, :func:`runs_query`);
- ``_ui``: what the Temporal UI shows of a run (:func:`ui_link`, :func:`summary_of`,
  :func:`details_of`);
- ``_logging``: how much the SDK says, and where it serves its metrics (:func:`configure_logging`,
  :func:`sdk_metrics_address`);
- ``_namespace``: the namespace and its search attributes (``skillweave temporal setup``);
- ``_workers``: worker identities and the roll call of a base task queue (:class:`Roll`).
"""

from skillweave.engines.notes import FollowNote
from skillweave.engines.temporal._connection import (
    TemporalUnreachableError,
    connect,
    connect_engine,
)
from skillweave.engines.temporal._engine import TemporalEngine
from skillweave.engines.temporal._errors import NoWorkerError
from skillweave.engines.temporal._follow import FOLLOW_WORKER_WAIT_SECONDS
from skillweave.engines.temporal._logging import configure_logging, sdk_metrics_address
from skillweave.engines.temporal._namespace import (
    register_search_attributes,
    require_namespace,
    search_attribute_problems,
)
from skillweave.engines.temporal._results import FAILURE_TYPES
from skillweave.engines.temporal._ui import details_of, summary_of, ui_link
from skillweave.engines.temporal._visibility import PHASES, RunRow, runs_query
from skillweave.engines.temporal._workers import (
    Roll,
    default_model_of_worker,
    read_roll,
    recent_pollers,
    store_of_worker,
    stores_of,
    warn_if_alone,
    worker_identity,
)

__all__ = [
    "FAILURE_TYPES",
    "FOLLOW_WORKER_WAIT_SECONDS",
    "PHASES",
    "FollowNote",
    "NoWorkerError",
    "Roll",
    "RunRow",
    "TemporalEngine",
    "TemporalUnreachableError",
    "configure_logging",
    "connect",
    "connect_engine",
    "default_model_of_worker",
    "details_of",
    "read_roll",
    "recent_pollers",
    "register_search_attributes",
    "require_namespace",
    "runs_query",
    "sdk_metrics_address",
    "search_attribute_problems",
    "store_of_worker",
    "stores_of",
    "summary_of",
    "ui_link",
    "warn_if_alone",
    "worker_identity",
]
