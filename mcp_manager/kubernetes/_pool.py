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
pods take to become ready (Little's law; see :class:`_Demand`). So a pod's replacement is
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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import functools
import hashlib
import json
import logging
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any, Final

import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException
from kubernetes.watch.watch import iter_resp_lines

from mcp_manager.backends import Sandbox
from mcp_manager.metrics import ManagerMetrics
from mcp_manager.pool import PoolStatus
from skillweave.config import IsolationChoice, KubernetesSettings
from skillweave.errors import ConfigError, PoolExhaustedError
from skillweave.sandbox.models import isolation_covers

__all__ = ["KubernetesPool", "PodApi", "PodTemplate", "security_problems"]

logger = logging.getLogger("skillweave.manager.kubernetes")

LABEL_POOL: Final = "skillweave.dev/pool"
LABEL_STATE: Final = "skillweave.dev/state"
LABEL_OWNER: Final = "skillweave.dev/owner"
LABEL_TEMPLATE: Final = "skillweave.dev/template"
NOTE_CLAIMED_BY: Final = "skillweave.dev/claimed-by"
NOTE_CLAIMED_AT: Final = "skillweave.dev/claimed-at"
NOTE_LEASE: Final = "skillweave.dev/lease-expires"
WARM: Final = "warm"
CLAIMED: Final = "claimed"
TOKEN_ENV: Final = "EXECUTOR__TOKEN"
EXECUTOR_CONTAINER: Final = "executor"

_ENDED_PHASES: Final = frozenset({"Failed", "Succeeded"})
_WATCH_SECONDS: Final = 240
_RETRY_SECONDS: Final = 0.5
_API_THREADS: Final = 16
_RATE_WINDOW_SECONDS: Final = 10.0
"""The claims a replica's claim rate is read from: those of the last 10 s (or 4 pod start
times, when pods take longer to start): long enough to smooth, short enough to follow."""
_START_SMOOTHING: Final = 0.25
"""Weight of the newest pod start time in the running estimate (an exponential average)."""


# --- the pod template ------------------------------------------------------------------------


def _get(data: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(data, list) or len(data) <= step:
                return None
        elif not isinstance(data, dict):
            return None
        data = data[step] if isinstance(step, int) else data.get(step)
    return data


def security_problems(pod: dict[str, Any]) -> list[str]:
    """What a sandbox pod template lacks of the restricted settings (empty when it has all)."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    pod_security = spec.get("securityContext") or {}
    problems: list[str] = []
    if spec.get("automountServiceAccountToken") is not False:
        problems.append("spec.automountServiceAccountToken must be false")
    if not isinstance(spec.get("activeDeadlineSeconds"), int):
        problems.append("spec.activeDeadlineSeconds must be set (the backstop)")
    if spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"):
        problems.append("host namespaces (hostNetwork/hostPID/hostIPC) are not allowed")
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    if not containers:
        problems.append("spec.containers is empty")
    volumes = {v.get("name"): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for volume in volumes.values():
        if "hostPath" in volume:
            problems.append(f"volume {volume.get('name')!r} is a hostPath")
        elif "emptyDir" in volume and not _get(volume, "emptyDir", "sizeLimit"):
            problems.append(f"emptyDir volume {volume.get('name')!r} needs a sizeLimit")
    for container in containers:
        where = f"container {container.get('name')!r}"
        security = container.get("securityContext") or {}

        def either(key: str, sec: dict[str, Any] = security) -> Any:
            return sec.get(key, pod_security.get(key))

        if either("runAsNonRoot") is not True:
            problems.append(f"{where}: runAsNonRoot must be true")
        if either("runAsUser") == 0:
            problems.append(f"{where}: runAsUser must not be 0")
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation must be false")
        if security.get("privileged"):
            problems.append(f"{where}: privileged is not allowed")
        if "ALL" not in (_get(security, "capabilities", "drop") or []):
            problems.append(f"{where}: capabilities must drop ALL")
        if _get(security, "capabilities", "add"):
            problems.append(f"{where}: capabilities.add is not allowed")
        if _get(either("seccompProfile") or {}, "type") not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{where}: seccompProfile must be RuntimeDefault (or Localhost)")
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where}: readOnlyRootFilesystem must be true")
        resources_ = container.get("resources") or {}
        for kind in ("requests", "limits"):
            if not all(_get(resources_, kind, r) for r in ("cpu", "memory")):
                problems.append(f"{where}: resources.{kind} needs cpu and memory")
        mounted = {m.get("name") for m in container.get("volumeMounts") or []}
        if not any("emptyDir" in volumes.get(name, {}) for name in mounted):
            problems.append(f"{where}: needs an emptyDir workspace mounted (read-only root)")
    return problems


@dataclass(frozen=True)
class PodTemplate:
    """A validated sandbox pod template and what the pool needs to know of it."""

    body: dict[str, Any]
    digest: str
    container: str
    port: int

    @property
    def isolation(self) -> str:
        """The ``EXECUTOR__ISOLATION`` the executor container is given (``auto`` unset)."""
        containers = _get(self.body, "spec", "containers") or []
        for container in containers:
            if container.get("name") == self.container:
                for variable in container.get("env") or []:
                    if variable.get("name") == "EXECUTOR__ISOLATION":
                        return str(variable.get("value", "auto"))
        return "auto"

    @classmethod
    def load(cls, settings: KubernetesSettings) -> PodTemplate:
        """Read the template (settings' file or the built-in one), apply the image and runtime
        class settings, and check it.

        Raises:
            ConfigError: unreadable, not a Pod, or missing a restricted setting (all named).
        """
        source = settings.template_file
        try:
            if source is None:
                text = resources.files("mcp_manager").joinpath("sandbox_pod.yaml").read_text()
            else:
                text = source.read_text(encoding="utf-8")
            body = yaml.safe_load(text)
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the sandbox pod template {source}: {exc}") from exc
        where = source or "the built-in sandbox pod template"
        if not isinstance(body, dict) or body.get("kind", "Pod") != "Pod":
            raise ConfigError(f"{where} is not a Pod manifest")
        if "template" in body and "spec" not in body:  # a PodTemplate object: take its template
            body = body["template"]
        containers = _get(body, "spec", "containers") or []
        container = next(
            (c for c in containers if c.get("name") == EXECUTOR_CONTAINER),
            containers[0] if containers else None,
        )
        if container is None:
            raise ConfigError(f"{where} has no containers")
        if settings.image:
            container["image"] = settings.image
        if settings.runtime_class:
            body["spec"]["runtimeClassName"] = settings.runtime_class
        problems = security_problems(body)
        if problems:
            raise ConfigError(f"{where} is not restricted enough: " + "; ".join(problems))
        port = next(
            (p["containerPort"] for p in container.get("ports") or [] if "containerPort" in p),
            settings.executor_port,
        )
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Pod")
        body.setdefault("metadata", {})
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
        return cls(body=body, digest=digest, container=container["name"], port=int(port))

    def render(self, *, name: str, namespace: str, pool: str, owner: str, token: str) -> dict:
        """One pod of the pool: the template plus name, labels and a fresh executor token."""
        pod = copy.deepcopy(self.body)
        metadata = pod["metadata"]
        metadata.pop("generateName", None)
        metadata.update(name=name, namespace=namespace)
        metadata["labels"] = {
            **(metadata.get("labels") or {}),
            LABEL_POOL: pool,
            LABEL_OWNER: owner,
            LABEL_TEMPLATE: self.digest,
            LABEL_STATE: WARM,
        }
        for container in pod["spec"]["containers"]:
            if container["name"] == self.container:
                env = [e for e in container.get("env") or [] if e.get("name") != TOKEN_ENV]
                container["env"] = [*env, {"name": TOKEN_ENV, "value": token}]
        return pod


# --- the API -----------------------------------------------------------------------------------


class PodGoneError(Exception):
    """The pod does not exist (any more)."""


class _WatchExpiredError(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


def _api_client(settings: KubernetesSettings) -> k8s.ApiClient:
    configuration = k8s.Configuration()
    try:
        if settings.kubeconfig is None:
            try:
                k8s_config.load_incluster_config(client_configuration=configuration)
            except ConfigException:
                k8s_config.load_kube_config(
                    context=settings.context, client_configuration=configuration
                )
        else:
            k8s_config.load_kube_config(
                config_file=str(settings.kubeconfig),
                context=settings.context,
                client_configuration=configuration,
            )
    except (ConfigException, OSError) as exc:
        raise ConfigError(f"cannot configure the Kubernetes client: {exc}") from exc
    configuration.connection_pool_maxsize = _API_THREADS * 2
    return k8s.ApiClient(configuration)


class PodApi:
    """The few pod calls the pool makes, as coroutines returning plain dicts."""

    def __init__(self, settings: KubernetesSettings) -> None:
        self.namespace = settings.namespace
        self._timeout = settings.api_timeout_seconds
        self.client = _api_client(settings)
        self.core = k8s.CoreV1Api(self.client)
        self._threads = ThreadPoolExecutor(_API_THREADS, thread_name_prefix="skillweave-k8s")

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(
            fn, *args, _preload_content=False, _request_timeout=self._timeout, **kwargs
        )
        response = await asyncio.get_running_loop().run_in_executor(self._threads, call)
        return json.loads(response.data) if response.data else {}

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        return await self._call(self.core.create_namespaced_pod, self.namespace, body)

    async def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """A JSON merge patch; None when its resourceVersion precondition failed (409)."""
        try:
            return await self._call(
                self.core.patch_namespaced_pod,
                name,
                self.namespace,
                body,
                _content_type="application/merge-patch+json",
            )
        except ApiException as exc:
            if exc.status == 409:
                return None
            if exc.status == 404:
                raise PodGoneError(name) from None
            raise

    async def delete(self, name: str, version: str | None = None) -> bool:
        """Delete a pod (only at `version`, when given); False when it was already gone or
        had changed since (409)."""
        body = {"preconditions": {"resourceVersion": version}} if version else None
        try:
            await self._call(self.core.delete_namespaced_pod, name, self.namespace, body=body)
        except ApiException as exc:
            if exc.status in (404, 409):
                return False
            raise
        return True

    def list_now(self, selector: str) -> tuple[list[dict[str, Any]], str | None]:
        """The pods matching `selector` and the list's resourceVersion (blocking)."""
        response = self.core.list_namespaced_pod(
            self.namespace,
            label_selector=selector,
            _preload_content=False,
            _request_timeout=self._timeout,
        )
        listed = json.loads(response.data)
        return listed.get("items") or [], _get(listed, "metadata", "resourceVersion")

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.client.close()


# --- reading pods --------------------------------------------------------------------------------


def _name(pod: dict[str, Any]) -> str:
    return pod["metadata"]["name"]


def _labels(pod: dict[str, Any]) -> dict[str, str]:
    return _get(pod, "metadata", "labels") or {}


def _notes(pod: dict[str, Any]) -> dict[str, str]:
    return _get(pod, "metadata", "annotations") or {}


def _float(value: object, default: float) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _created(pod: dict[str, Any]) -> float:
    stamp = _get(pod, "metadata", "creationTimestamp")
    if not stamp:
        return time.time()
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    return time.time()


def _ready(pod: dict[str, Any]) -> bool:
    if _get(pod, "status", "phase") != "Running" or not _get(pod, "status", "podIP"):
        return False
    conditions = _get(pod, "status", "conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _ended(pod: dict[str, Any]) -> bool:
    return _get(pod, "status", "phase") in _ENDED_PHASES


def _terminating(pod: dict[str, Any]) -> bool:
    return bool(_get(pod, "metadata", "deletionTimestamp"))


def _version(pod: dict[str, Any] | None) -> int | None:
    try:
        return int(_get(pod, "metadata", "resourceVersion"))
    except (TypeError, ValueError):
        return None


def _newer(incoming: dict[str, Any], known: dict[str, Any] | None) -> bool:
    """Whether a watch event is newer than what the view holds (versions compared as numbers
    where both are numbers, as the API server's are; else the event wins)."""
    new, old = _version(incoming), _version(known)
    return new is None or old is None or new >= old


def _token(pod: dict[str, Any], container: str) -> str | None:
    for spec in _get(pod, "spec", "containers") or []:
        if spec.get("name") == container:
            for env in spec.get("env") or []:
                if env.get("name") == TOKEN_ENV:
                    return env.get("value")
    return None


def label_value(text: str) -> str:
    """`text` as a valid label value (at most 63 characters of [A-Za-z0-9._-], alphanumeric
    at both ends)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", text)[:63].strip("._-")
    return cleaned or "manager"


# --- how many pods to create ahead ------------------------------------------------------------


class _Demand:
    """The pods a replica should have in creation beyond its target (Little's law): its claim
    rate × the time its pods take from the create call to Ready, both measured as they happen.

    The rate is (n - 1) claims over the time since the first of the last n, within the window
    (:data:`_RATE_WINDOW_SECONDS`, at least 4 start times); that time counts as at least half
    the window. So a client running scripts one after another, each claim waiting for its
    pod, gets no pod ahead (fewer than one claim per start time); a steady stream gets rate ×
    start time; a one-off burst of k claims at most about k / 2 (reaped when unused); and the
    rate decays as soon as claims stop. Rounded down: a fraction of a pod is the target's job.
    Claims that wait are the pool's business (:meth:`KubernetesPool._wanted`), not the rate's.
    Plain state, no I/O: the pool feeds it from its claims and its watch, with `now` from
    ``time.monotonic()``.
    """

    def __init__(self) -> None:
        self.start_seconds: float | None = None
        """The running estimate of a pod's start time; None until one of ours was Ready."""
        self._claims: collections.deque[float] = collections.deque()
        self._born: dict[str, float] = {}

    def claimed(self, now: float) -> None:
        """A claim arrived (whether it finds a pod warm or not)."""
        self._claims.append(now)

    def creating(self, name: str, now: float) -> None:
        """The create call for pod `name` goes out."""
        self._born[name] = now

    def ready(self, name: str, now: float) -> None:
        """Pod `name` was seen Ready: one more start time, if it is one of ours in creation."""
        born = self._born.pop(name, None)
        if born is None:
            return
        took = max(0.0, now - born)
        last = self.start_seconds
        self.start_seconds = took if last is None else last + _START_SMOOTHING * (took - last)

    def gone(self, name: str) -> None:
        """Pod `name` was never created, or is gone before it was Ready."""
        self._born.pop(name, None)

    def forget_before(self, moment: float) -> None:
        """Drop creations from before `moment` (their pods are reaped as never started)."""
        self._born = {name: born for name, born in self._born.items() if born >= moment}

    def rate(self, now: float) -> float:
        """Claims per second, recently (see the class docstring)."""
        start = self.start_seconds or 0.0
        window = max(_RATE_WINDOW_SECONDS, 4 * start)
        while self._claims and self._claims[0] < now - window:
            self._claims.popleft()
        if len(self._claims) < 2:
            return 0.0
        return (len(self._claims) - 1) / max(now - self._claims[0], window / 2)

    def ahead(self, now: float) -> int:
        """Pods to have in creation beyond the target: rate × start time, rounded down."""
        if self.start_seconds is None:
            return 0
        return int(self.rate(now) * self.start_seconds)


# --- the pool ----------------------------------------------------------------------------------


class KubernetesPool:
    """A warm pool of sandbox pods (see the module docstring).

    Args:
        settings: the backend's settings (namespace, pool, template, lease, reaper, ...).
        target: warm pods this replica keeps of its own (more, while its claim rate needs
            pods in creation ahead of the claims).
        maximum: pods this replica may have alive (its unclaimed pods, starting ones, and the
            ones it holds).
        claim_timeout: how long a claim waits when no pod is warm.
        start_timeout: how long a pod may take to become ready before it is replaced.
        metrics: where claim latencies, pool size and reaped pods are reported.
        api: the pod API (default: from the settings' kubeconfig or the in-cluster config).
        manager_id: this replica's id, on the pods it owns and claims (the manager passes
            its one id, ``SandboxSettings.manager_identity``, as a label value); default the
            settings' ``manager_id``, else the host name.
    """

    one_shot = True

    def __init__(
        self,
        settings: KubernetesSettings,
        *,
        target: int,
        maximum: int,
        claim_timeout: float,
        start_timeout: float,
        metrics: ManagerMetrics,
        api: PodApi | None = None,
        manager_id: str | None = None,
    ) -> None:
        self.settings = settings
        self.template = PodTemplate.load(settings)
        self.target = min(target, maximum)
        self.maximum = maximum
        self.claim_timeout = claim_timeout
        self.start_timeout = start_timeout
        self.manager_id = label_value(manager_id or settings.manager_id or socket.gethostname())
        self.selector = f"{LABEL_POOL}={settings.pool}"
        self._api = api
        self._metrics = metrics
        self._pods: dict[str, dict[str, Any]] = {}
        self._claimed: dict[str, Sandbox] = {}
        self._trying: set[str] = set()
        self._stale: dict[str, int | None] = {}
        self._deleting: set[str] = set()
        self._creating = 0
        self._waiting = 0
        self._failures = 0
        self._demand = _Demand()
        self._changed = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._response: Any = None
        self._watch_thread: threading.Thread | None = None
        self._closed = False

    @staticmethod
    def check(settings: KubernetesSettings, *, isolation: IsolationChoice = "auto") -> None:
        """Fail fast on what would stop the pool at start-up: the template, the isolation its
        executors are configured with (it must be one `isolation` allows: a manager never
        runs scripts under a weaker mode than it announces) and the client's configuration
        (so ``skillweave manager`` says what is wrong before it serves).

        Raises:
            ConfigError: the template is unusable, its isolation is not allowed, or no cluster
                configuration is found.
        """
        declared = PodTemplate.load(settings).isolation
        if not isolation_covers(isolation, declared):
            raise ConfigError(
                f"the sandbox pod template runs executors with EXECUTOR__ISOLATION={declared},"
                f" which SANDBOX__ISOLATION={isolation} does not allow: set SANDBOX__ISOLATION"
                f"={declared} (and say why: e.g. the pod is the boundary) or change the template"
            )
        _api_client(settings).close()

    @property
    def api(self) -> PodApi:
        if self._api is None:
            self._api = PodApi(self.settings)
        return self._api

    # --- life cycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """List the pool's pods, reap what needs reaping, start the watch, fill up."""
        self._loop = asyncio.get_running_loop()
        items, version = await asyncio.to_thread(self.api.list_now, self.selector)
        self._replace_view(items)
        logger.info(
            "kubernetes pool %s/%s: %d pods found, %d of them warm and ours",
            self.settings.namespace,
            self.settings.pool,
            len(items),
            len(self._own_warm()),
        )
        await self._reap()
        self._watch_thread = threading.Thread(
            target=self._watch_forever, args=(version,), name="skillweave-k8s-watch", daemon=True
        )
        self._watch_thread.start()
        self._track(self._every(self.settings.reap_interval_seconds, self._reap))
        self._track(self._every(self.settings.lease_seconds / 3, self._renew_leases))
        self._refill()

    async def close(self) -> None:
        """Stop watching and refilling; delete the pods this replica holds. Its warm pods stay,
        for a restart of the same replica to adopt (others may claim them meanwhile)."""
        self._closed = True
        self._stop.set()
        # Wake the watch thread from its blocking read: shutting the socket down is safe from
        # here (closing the response is not: it waits for the reader's lock).
        sock = getattr(getattr(self._response, "connection", None), "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        held = list(self._claimed)
        self._claimed.clear()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(self._delete(name, "manager stopped") for name in held))
        self._wake()
        if self._api is not None:
            self._api.close()

    async def wait_ready(self, timeout: float) -> None:
        """Wait until this replica has its target of warm pods (for tests and benchmarks)."""
        async with asyncio.timeout(timeout):
            while len(self._own_warm(ready_only=True)) < self.target:
                await self._wait_change()

    def status(self) -> PoolStatus:
        return PoolStatus(
            backend="kubernetes",
            target=self.target,
            maximum=self.maximum,
            ready=len(self._warm()),
            starting=self._starting(),
            busy=len(self._claimed),
        )

    # --- claims ----------------------------------------------------------------------------

    async def claim(self) -> tuple[Sandbox, bool]:
        """Claim a warm pod; returns its sandbox and whether one was warm when asked.

        Raises:
            PoolExhaustedError: no pod became warm within the claim timeout.
        """
        started = time.perf_counter()
        warm = bool(self._warm())
        deadline = time.monotonic() + self.claim_timeout
        self._demand.claimed(time.monotonic())
        self._waiting += 1
        try:
            sandbox = await self._claim_until(deadline)
        finally:
            self._waiting -= 1
        self._metrics.claim_seconds.labels(kind="warm" if warm else "cold").observe(
            time.perf_counter() - started
        )
        self._report()
        self._refill()  # the claimed pod's replacement, no longer counting this claim waiting
        return sandbox, warm

    async def _claim_until(self, deadline: float) -> Sandbox:
        while True:
            if self._closed:
                raise PoolExhaustedError("the sandbox pool is shutting down", retry_after=5)
            for pod in self._warm():
                sandbox = await self._try_claim(pod)
                if sandbox is not None:
                    return sandbox
            self._refill()  # a pod on its way for this claim, if none is yet
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PoolExhaustedError(
                    f"no sandbox pod warm within {self.claim_timeout:g} s "
                    f"({self._alive()} of {self.maximum} alive in this replica)",
                    retry_after=max(1, round(self.claim_timeout)),
                )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._wait_change()

    async def _try_claim(self, pod: dict[str, Any]) -> Sandbox | None:
        name = _name(pod)
        now = time.time()
        patch = {
            "metadata": {
                "resourceVersion": _get(pod, "metadata", "resourceVersion"),
                "labels": {LABEL_STATE: CLAIMED},
                "annotations": {
                    NOTE_CLAIMED_BY: self.manager_id,
                    NOTE_CLAIMED_AT: f"{now:.3f}",
                    NOTE_LEASE: f"{now + self.settings.lease_seconds:.3f}",
                },
            }
        }
        self._trying.add(name)
        try:
            updated = await self.api.patch(name, patch)
        except PodGoneError:
            self._forget(name)
            return None
        finally:
            self._trying.discard(name)
        if updated is None:  # someone else's claim (or any change) came first
            self._stale[name] = _version(pod)
            self._metrics.claim_conflicts.inc()
            return None
        self._remember(updated)
        token = _token(updated, self.template.container)
        ip = _get(updated, "status", "podIP")
        sandbox = Sandbox(id=name, url=f"http://{ip}:{self.template.port}", token=token or "")
        self._claimed[name] = sandbox
        return sandbox

    async def unclaim(self, sandbox: Sandbox) -> None:
        """Give back a claimed pod in which nothing ran: warm again (deleted if that fails)."""
        self._claimed.pop(sandbox.id, None)
        patch = {
            "metadata": {
                "labels": {LABEL_STATE: WARM},
                "annotations": {NOTE_CLAIMED_BY: None, NOTE_CLAIMED_AT: None, NOTE_LEASE: None},
            }
        }
        try:
            updated = await self.api.patch(sandbox.id, patch)
        except (PodGoneError, ApiException, OSError):
            updated = None
        if updated is None:
            self._track(self._delete(sandbox.id, "could not be given back"))
        else:
            self._remember(updated)
        self._report()

    async def release(self, sandbox: Sandbox) -> None:
        """A used pod: deleted (in the background); its owner starts a replacement at once."""
        self._claimed.pop(sandbox.id, None)
        self._deleting.add(sandbox.id)
        self._track(self._delete(sandbox.id, None))
        self._report()
        self._refill()

    # --- the view ---------------------------------------------------------------------------

    def _warm(self) -> list[dict[str, Any]]:
        """Claimable pods, oldest first (pods of replicas gone are used up before new ones)."""
        now = time.time()
        found = [
            pod
            for pod in self._pods.values()
            if _labels(pod).get(LABEL_STATE) == WARM
            and _labels(pod).get(LABEL_TEMPLATE) == self.template.digest
            and _ready(pod)
            and not _terminating(pod)
            and _name(pod) not in self._trying
            and _name(pod) not in self._deleting
            and self._stale.get(_name(pod), -1) != _version(pod)
            and now - _created(pod) < self.settings.max_age_seconds
        ]
        return sorted(found, key=lambda p: (_created(p), _name(p)))

    def _own(self) -> list[dict[str, Any]]:
        return [
            pod
            for pod in self._pods.values()
            if _labels(pod).get(LABEL_OWNER) == self.manager_id
            and not _terminating(pod)
            and _name(pod) not in self._deleting
        ]

    def _own_warm(self, *, ready_only: bool = False) -> list[dict[str, Any]]:
        """This replica's unclaimed pods of the current template, ready or starting."""
        return [
            pod
            for pod in self._own()
            if _labels(pod).get(LABEL_STATE) == WARM
            and _labels(pod).get(LABEL_TEMPLATE) == self.template.digest
            and not _ended(pod)
            and (_ready(pod) or not ready_only)
        ]

    def _starting(self) -> int:
        return self._creating + sum(1 for pod in self._own_warm() if not _ready(pod))

    def _alive(self) -> int:
        """Pods counted against this replica's maximum: its unclaimed pods, the ones it is
        creating, and the ones it holds or is claiming (whoever created them)."""
        unclaimed = {_name(p) for p in self._own() if _labels(p).get(LABEL_STATE) != CLAIMED}
        return len(unclaimed | set(self._claimed) | self._trying) + self._creating

    def _remember(self, pod: dict[str, Any]) -> None:
        name = _name(pod)
        if _newer(pod, self._pods.get(name)):
            self._pods[name] = pod
            if self._stale.get(name, -1) != _version(pod):
                self._stale.pop(name, None)
            if _ready(pod):
                self._demand.ready(name, time.monotonic())
        self._wake()

    def _forget(self, name: str) -> None:
        self._demand.gone(name)
        self._pods.pop(name, None)
        self._stale.pop(name, None)
        self._deleting.discard(name)
        self._wake()

    def _replace_view(self, items: list[dict[str, Any]]) -> None:
        self._pods = {_name(pod): pod for pod in items}
        self._deleting &= set(self._pods)
        self._stale = {k: v for k, v in self._stale.items() if k in self._pods}
        self._wake()

    def _on_event(self, kind: str, obj: Any) -> None:
        if self._closed:
            return
        if kind == "RELIST":
            self._replace_view(obj)
        elif kind == "DELETED":
            self._forget(_name(obj))
        elif kind in ("ADDED", "MODIFIED"):
            self._remember(obj)
        else:
            return
        self._report()
        self._refill()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait_change(self) -> None:
        await self._changed.wait()

    # --- the watch (on its own thread) -----------------------------------------------------

    def _post(self, kind: str, obj: Any) -> bool:
        loop = self._loop
        if loop is None or self._stop.is_set():
            return False
        try:
            loop.call_soon_threadsafe(self._on_event, kind, obj)
        except RuntimeError:  # the loop is closed
            return False
        return True

    def _watch_forever(self, version: str | None) -> None:
        """List, then watch from the list's resourceVersion; list again when the watch
        expires (410) or fails. Events go to the event loop in order."""
        api = self.api
        while not self._stop.is_set():
            try:
                if version is None:
                    items, version = api.list_now(self.selector)
                    if not self._post("RELIST", items):
                        return
                version = self._watch_from(version)
            except _WatchExpiredError:
                version = None
            except Exception as exc:
                if self._stop.is_set():
                    return
                reason = exc.reason if isinstance(exc, ApiException) else repr(exc)
                logger.warning("the pod watch broke (%s); listing again", reason)
                self._stop.wait(_RETRY_SECONDS)
                version = None

    def _watch_from(self, version: str) -> str | None:
        """One watch request; returns the resourceVersion to go on from (None: list first)."""
        api = self.api
        response = api.core.list_namespaced_pod(
            api.namespace,
            label_selector=self.selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=_WATCH_SECONDS,
            watch=True,
            _preload_content=False,
            _request_timeout=(api._timeout, _WATCH_SECONDS + 30),
        )
        self._response = response
        try:
            for line in iter_resp_lines(response):
                if not line.strip():
                    continue
                event = json.loads(line)
                kind, obj = event.get("type", ""), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise _WatchExpiredError
                    raise ApiException(status=obj.get("code"), reason=obj.get("message"))
                version = _get(obj, "metadata", "resourceVersion") or version
                if kind != "BOOKMARK" and not self._post(kind, obj):
                    return version
        finally:
            self._response = None
            response.close()
            response.release_conn()
        return version  # the server ended the watch (its timeout): go on from here

    # --- refill, reaper, leases ---------------------------------------------------------------

    def _wanted(self) -> int:
        """Unclaimed pods (warm, starting, being created) this replica wants of its own: the
        target, the pods its claim rate needs in creation, and one for each of its waiting
        claims that no warm pod will serve (so a starved replica grows its pipeline at once,
        up to the maximum, instead of waiting for its rate to show the demand)."""
        unserved = self._waiting - len(self._warm()) - len(self._trying)
        return self.target + self._demand.ahead(time.monotonic()) + max(0, unserved)

    def _refill(self) -> None:
        """Start the pods missing from :meth:`_wanted`, at once and side by side, as many as
        the maximum allows."""
        if self._closed or self._loop is None:
            return
        missing = self._wanted() - len(self._own_warm()) - self._creating
        for _ in range(max(0, min(missing, self.maximum - self._alive()))):
            self._start_one()

    def _start_one(self) -> None:
        self._creating += 1
        self._track(self._create())

    async def _create(self) -> None:
        name = f"sw-{self.settings.pool}-{secrets.token_hex(5)}"
        body = self.template.render(
            name=name,
            namespace=self.settings.namespace,
            pool=self.settings.pool,
            owner=self.manager_id,
            token=secrets.token_urlsafe(32),
        )
        created: dict[str, Any] | None = None
        try:
            if self._failures:
                await asyncio.sleep(min(_RETRY_SECONDS * self._failures, 5.0))
            self._demand.creating(name, time.monotonic())
            created = await self.api.create(body)
            self._failures = 0
        except (ApiException, OSError, ValueError) as exc:
            self._failures += 1
            reason = exc.reason if isinstance(exc, ApiException) else repr(exc)
            logger.warning("creating sandbox pod %s failed: %s", name, reason)
        finally:
            self._creating -= 1
        if created is not None and created.get("metadata"):
            self._remember(created)
        else:
            self._demand.gone(name)
        self._report()
        if created is None and not self._closed:
            self._track(self._refill_soon())

    async def _refill_soon(self) -> None:
        await asyncio.sleep(_RETRY_SECONDS)
        self._refill()

    async def _delete(self, name: str, reason: str | None, version: str | None = None) -> None:
        """Delete a pod; the reaper passes the version it judged, so a pod claimed or renewed
        since is left alone (and judged again on the next round)."""
        self._deleting.add(name)
        try:
            deleted = await self.api.delete(name, version)
        except (ApiException, OSError) as exc:
            self._deleting.discard(name)  # the reaper tries again
            logger.warning("deleting sandbox pod %s failed: %r", name, exc)
            return
        if version is not None and not deleted and name in self._pods:
            self._deleting.discard(name)  # it changed under us: judged again next round
            return
        if reason is not None:
            logger.info("deleting sandbox pod %s: %s", name, reason)
            self._metrics.reaped.labels(reason=reason.split(" (")[0]).inc()

    def _doomed(self, pod: dict[str, Any], now: float) -> str | None:
        """Why the reaper deletes `pod`, or None."""
        labels, notes, name = _labels(pod), _notes(pod), _name(pod)
        if _terminating(pod) or name in self._deleting or name in self._trying:
            return None
        mine = labels.get(LABEL_OWNER) == self.manager_id
        if labels.get(LABEL_STATE) == CLAIMED:
            if notes.get(NOTE_CLAIMED_BY) == self.manager_id and name not in self._claimed:
                return "orphaned claim"
            if name in self._claimed:
                return None
            if _float(notes.get(NOTE_LEASE), 0.0) < now:
                return "lease expired"
            if now - _float(notes.get(NOTE_CLAIMED_AT), now) > self.settings.claim_max_seconds:
                return "claimed too long"
            return None
        if _ended(pod):
            return "exited"
        if now - _created(pod) > self.settings.max_age_seconds:
            return "rotated (max age)"
        if mine and labels.get(LABEL_TEMPLATE) != self.template.digest:
            return "rotated (template changed)"
        if mine and not _ready(pod) and now - _created(pod) > self.start_timeout:
            return "did not start"
        return None

    async def _reap(self) -> None:
        now = time.time()
        doomed = [(n, why) for n, pod in self._pods.items() if (why := self._doomed(pod, now))]
        self._demand.forget_before(time.monotonic() - self.start_timeout)
        if not self._waiting:  # pods a burst started cold or ahead go back, newest first
            gone = {name for name, _ in doomed}
            own = [p for p in self._own_warm() if _name(p) not in gone]
            own.sort(key=lambda p: (_ready(p), -_created(p)))
            surplus = own[: max(0, len(own) - self._wanted())]
            doomed += [(_name(p), "over target") for p in surplus]
        for name, _ in doomed:
            self._deleting.add(name)
        versions = {
            name: _get(self._pods.get(name), "metadata", "resourceVersion") for name, _ in doomed
        }
        await asyncio.gather(*(self._delete(n, why, versions[n]) for n, why in doomed))
        if doomed:
            self._refill()

    async def _renew_leases(self) -> None:
        until = f"{time.time() + self.settings.lease_seconds:.3f}"
        for name in list(self._claimed):
            with contextlib.suppress(PodGoneError, ApiException, OSError):
                patch = {"metadata": {"annotations": {NOTE_LEASE: until}}}
                updated = await self.api.patch(name, patch)
                if updated is not None:
                    self._remember(updated)

    async def _every(self, seconds: float, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        while not self._closed:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception:
                logger.exception("kubernetes pool housekeeping failed")

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _report(self) -> None:
        self._metrics.pool_ready.set(len(self._warm()))
        self._metrics.pool_busy.set(len(self._claimed))
