"""The ``kubernetes`` backend: sandbox pods from a template, a warm pool shared by managers.

Sandboxes are pods in one namespace, made from a pod template (:class:`PodTemplate`, the
built-in ``sandbox_pod.yaml`` or a mounted file) that must keep the restricted security
settings; the manager adds a name, the labels below and a fresh executor token.

Labels and annotations on every pod of a pool:

- ``skillweave.dev/pool`` (the pool's name: managers of one pool share its pods),
  ``skillweave.dev/owner`` (the replica that created it and keeps its count up),
  ``skillweave.dev/template`` (a digest of the rendered template: rotation on change),
  ``skillweave.dev/state``: ``warm`` or ``claimed``;
- when claimed: ``skillweave.dev/claimed-by``, ``-claimed-at`` and ``-lease-expires``, which
  the claimer renews while the script runs.

:class:`KubernetesPool` keeps a view of the pool's pods fed by one watch (a list, then a watch
from its resourceVersion; relisted when the watch ends or expires), never by polling. A pod is
warm when it is labelled warm, Running and Ready, has a pod IP, carries the current template
and is not being deleted. A claim patches the state label of the oldest warm pod with the
pod's resourceVersion as a precondition: the API server lets exactly one of two concurrent
claims through and answers the other 409, which then tries the next pod. After the execution
the pod is deleted, never reused. Each replica has at most ``maximum`` pods alive (its
unclaimed pods, pods being created, and the pods it holds) and keeps of its own, warm or
starting, ``target`` pods plus the ones its claim rate needs in creation: rate × the time its
pods take to become ready (Little's law; see ``_demand``). So a pod's replacement is
created the moment it is claimed (by its owner, who sees the claim in its watch), creations
overlap with each other and with executions, and under sustained load pods are made ahead of
the claims that will take them, as fast as the cluster starts them, up to the maximum. When
no pod is warm, a claim starts one (cold) if none is on its way for it and the maximum allows,
and waits, up to the claim timeout, then raises :class:`~skillweave.errors.PoolExhaustedError`
(503 + Retry-After).

A reaper runs at start-up and every ``reap_interval_seconds``: it deletes claimed pods whose
claimer's lease expired (the manager is gone), claimed pods held longer than
``claim_max_seconds``, pods this replica claimed in an earlier life (same manager id, so a
restart reaps them at once), pods that exited, its own pods that never became ready, its own
warm pods over the target (plus what its claim rate still needs in creation) once no claim
waits (a burst starts pods cold and ahead), and rotates warm pods past ``max_age_seconds``
or, for its own, made from another template. Warm pods of a replica that restarted with the
same id are adopted as they are.

The official ``kubernetes`` client is synchronous: its calls run on a small thread pool of
their own and the watch on a thread of its own; their results come back to the event loop.

The package's modules, lowest first: ``_pod`` (labels, annotations, reading a pod manifest),
``_template`` (:class:`PodTemplate`, :func:`security_problems`), ``_api`` (:class:`PodApi`),
``_demand`` (the pods to create ahead), ``_view`` (what a replica knows of the pool's pods),
``_reaper`` (which pods to delete), ``_watch`` (the watch thread), ``_supply`` (creating and
deleting pods) and ``_pool`` (:class:`KubernetesPool`, the claims). The manager's app
(``mcp_manager.app``) imports :class:`KubernetesPool` only when the backend is ``kubernetes``.
"""

from mcp_manager.kubernetes._api import PodApi, PodGoneError
from mcp_manager.kubernetes._pod import (
    LABEL_OWNER,
    LABEL_POOL,
    LABEL_STATE,
    LABEL_TEMPLATE,
    NOTE_CLAIMED_AT,
    NOTE_CLAIMED_BY,
    NOTE_LEASE,
    TOKEN_ENV,
    label_value,
)
from mcp_manager.kubernetes._pool import KubernetesPool
from mcp_manager.kubernetes._template import PodTemplate, security_problems

__all__ = [
    "LABEL_OWNER",
    "LABEL_POOL",
    "LABEL_STATE",
    "LABEL_TEMPLATE",
    "NOTE_CLAIMED_AT",
    "NOTE_CLAIMED_BY",
    "NOTE_LEASE",
    "TOKEN_ENV",
    "KubernetesPool",
    "PodApi",
    "PodGoneError",
    "PodTemplate",
    "label_value",
    "security_problems",
]
