"""Running scripts exactly once: :class:`ExecutionService`, behind ``/sandbox/execute``.

An ``execution_id`` is an idempotency key (runs send ``skillweave.agent.idempotency.execution_key``,
stable across retries). Three layers make a repeated key return the first outcome and never run
a finished script again:

1. **Stored result.** Every finished execution (succeeded, failed, timed out, cancelled, or an
   executor error) is written to the artifact store; a repeat reads it back, also after a manager
   restart.
2. **In flight.** A repeat that arrives while the first is still running awaits the same future.
3. **Claim.** Once a sandbox is in hand, and just before the script is handed to it, a claim
   record is created with an atomic put-if-absent: from then on the script may run. The
   manager renews the claim while the script runs. A request that loses the claim gives its
   sandbox back unused and returns the stored result when there is one; while the claim is
   renewed (another manager runs it now) it gets :class:`ExecutionInProgressError` and asks
   again after the Retry-After; once the claim lapsed unrenewed (its manager stopped, and its
   sandbox with it), the next attempt is claimed, atomically again, and the script runs. That
   run is safe: a sandbox reaches nothing outside itself, and outputs are collected only from
   a run that finished, so the interrupted run left nothing behind. Nothing is written while
   a request waits for a sandbox, so a request refused for want of one (503) leaves its id
   free.

The manager moves every byte: it reads the skill package (by name and pinned version) and the
input artifacts from the store, pushes them to the sandbox, fetches declared outputs (files under
``outputs/``) and over-cap stdout/stderr back, and stores them as artifacts of the run. Sandboxes
never see store credentials. Per-skill secrets join only that skill's environment, bound to
its one canonical name and its owner's versions (``skillweave.sandbox.bindings``: a run that
is not bound gets no secrets, credentials or network, and says why in the log and its audit
record); every configured secret is masked (``skillweave.sandbox.masking``) in each result
before it is stored or answered, and in each full stdout/stderr log after its transfer was
verified and before it is stored, so the log's artifact ref describes the masked bytes.

**The audit log counts truth.** Each script start is one ``execution`` record, written where
the start is decided: once the claim of the key is won, and before the script may begin, so
nothing runs unrecorded. **An execution whose ``execution`` audit record cannot be stored is
refused before anything runs**: the script is not started, the claim is withdrawn (the id
stays free) and the request gets :class:`~skillweave.errors.AuditUnavailableError`, which
``/sandbox/execute`` answers 503 ``audit_unavailable`` with a Retry-After
(``AUDIT_RETRY_SECONDS``) and the one refusal line of every door
(:func:`skillweave.sandbox.problems.audit_refusal`, naming the store's error code); a caller
waits and asks again, and the same request then runs once and is recorded once. (Each writer
appends to a chain of its own, so no race can be lost: what remains is the store failing.) A
request answered without a start is an ``execution_repeat`` record saying how it was answered
(:data:`RepeatAnswer`): from the ``stored`` result, with the result of this manager's run of
it (``joined``), or refused as ``in_progress`` (another manager's run holds the claim). A
request refused (invalid, a conflict, no sandbox free) started nothing and is not recorded.
Every record names this manager's id (``SANDBOX__MANAGER_ID``) as its actor. A repeat's record
is best effort (logged when it cannot be written): nothing ran, and the start it repeats is in
the log already.

The package's private modules, one concept each: ``_service`` (:class:`ExecutionService`, which
composes the rest), preparing what a run carries — ``_preparation`` (the request checked, its
inputs read, the sandbox's request made), ``_packages`` (skill packages, kept by version),
``_admission`` (a version's package and signature, and whether it is bound to its secrets),
``_environment`` (the packed dependency environment), ``_grants`` (the egress grant),
``_secrets`` (the per-skill secrets and their masking) — and running it: ``_runner`` (in a
sandbox, once per claim), ``_results`` (stored results and claims), ``_inflight`` (runs going
on, and cancelling one), ``_audit`` (the start and repeat records). Beside the package:
``claims`` (the store claim with its renewed lease, shared with environment builds),
``executor_client`` (the executor protocol), ``records`` (the stored record and the request
fingerprint) and ``cache`` (the bounded caches of packages and specs).
"""

from mcp_manager.executions._audit import RepeatAnswer
from mcp_manager.executions._environment import PreparedEnvironment
from mcp_manager.executions._service import ExecutionService
from mcp_manager.records import ExecutionState

__all__ = [
    "ExecutionService",
    "ExecutionState",
    "PreparedEnvironment",
    "RepeatAnswer",
]
