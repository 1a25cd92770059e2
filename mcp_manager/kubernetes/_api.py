"""The Kubernetes API as the pool calls it: :class:`PodApi`, the few pod calls (create, the
claim that only one of two concurrent claimers wins, give back, renew a lease, delete, list,
open a watch), each returning plain dicts.

The official ``kubernetes`` client is synchronous: its calls run on a small thread pool of their
own and come back to the event loop as coroutines; listing and watching block (the watch runs
on a thread of its own, ``_watch``). Called by the pool (``_pool``), its supply of pods
(``_supply``) and its watch.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from mcp_manager.kubernetes._pod import (
    CLAIMED,
    LABEL_STATE,
    NOTE_CLAIMED_AT,
    NOTE_CLAIMED_BY,
    NOTE_LEASE,
    WARM,
    field,
    name_of,
)
from skillweave.config import KubernetesSettings
from skillweave.errors import ConfigError

__all__ = ["RETRY_SECONDS", "PodApi", "PodGoneError", "api_client"]

RETRY_SECONDS: Final = 0.5
"""How long to wait before calling the API again after a failure (a broken watch; a failed
create, whose wait grows by this much with each failure in a row)."""
_API_THREADS: Final = 16


class PodGoneError(Exception):
    """The pod does not exist (any more)."""


def api_client(settings: KubernetesSettings) -> k8s.ApiClient:
    """A client configured from the settings' kubeconfig, else the in-cluster configuration,
    else the default kubeconfig.

    Raises:
        ConfigError: no usable configuration is found.
    """
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
    """The few pod calls the pool makes, as coroutines returning plain dicts.

    The client is configured on the first call (:func:`api_client`), so that a pool made but
    never started reads no kubeconfig.
    """

    def __init__(self, settings: KubernetesSettings) -> None:
        self.namespace = settings.namespace
        self.timeout = settings.api_timeout_seconds
        self._settings = settings
        self._client: k8s.ApiClient | None = None
        self._core: k8s.CoreV1Api | None = None
        self._connecting = threading.Lock()
        self._threads = ThreadPoolExecutor(_API_THREADS, thread_name_prefix="skillweave-k8s")

    @property
    def core(self) -> k8s.CoreV1Api:
        """The client's pod calls (configured on first use, from any thread).

        Raises:
            ConfigError: no usable configuration is found.
        """
        with self._connecting:
            if self._core is None:
                self._client = api_client(self._settings)
                self._core = k8s.CoreV1Api(self._client)
            return self._core

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(
            fn, *args, _preload_content=False, _request_timeout=self.timeout, **kwargs
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

    async def claim(
        self, pod: dict[str, Any], *, by: str, lease_seconds: float
    ) -> dict[str, Any] | None:
        """Label `pod` claimed by `by`, with a lease of `lease_seconds`, with the pod's
        resourceVersion as a precondition: the API server lets exactly one of two concurrent
        claims through and answers the other 409 (then None: someone else's claim, or any
        change, came first).

        Raises:
            PodGoneError: the pod is gone.
        """
        now = time.time()
        patch = {
            "metadata": {
                "resourceVersion": field(pod, "metadata", "resourceVersion"),
                "labels": {LABEL_STATE: CLAIMED},
                "annotations": {
                    NOTE_CLAIMED_BY: by,
                    NOTE_CLAIMED_AT: f"{now:.3f}",
                    NOTE_LEASE: f"{now + lease_seconds:.3f}",
                },
            }
        }
        return await self.patch(name_of(pod), patch)

    async def give_back(self, name: str) -> dict[str, Any] | None:
        """Label a claimed pod warm again, its claim's annotations removed."""
        patch = {
            "metadata": {
                "labels": {LABEL_STATE: WARM},
                "annotations": {NOTE_CLAIMED_BY: None, NOTE_CLAIMED_AT: None, NOTE_LEASE: None},
            }
        }
        return await self.patch(name, patch)

    async def renew(self, name: str, *, until: float) -> dict[str, Any] | None:
        """Extend a claim's lease to `until` (seconds since the epoch)."""
        return await self.patch(name, {"metadata": {"annotations": {NOTE_LEASE: f"{until:.3f}"}}})

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
            _request_timeout=self.timeout,
        )
        listed = json.loads(response.data)
        return listed.get("items") or [], field(listed, "metadata", "resourceVersion")

    def open_watch(self, selector: str, version: str, *, seconds: int) -> Any:
        """A watch of the pods matching `selector` from `version`, with bookmarks, that the
        server ends after `seconds` (blocking): the unread streaming response."""
        return self.core.list_namespaced_pod(
            self.namespace,
            label_selector=selector,
            resource_version=version,
            allow_watch_bookmarks=True,
            timeout_seconds=seconds,
            watch=True,
            _preload_content=False,
            _request_timeout=(self.timeout, seconds + 30),
        )

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        if self._client is not None:
            self._client.close()
