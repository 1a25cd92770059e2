"""One watch on the pool's pods, on a thread of its own: :class:`PodWatch`.

A list, then a watch from its resourceVersion; listed again when the watch expires (410) or
breaks; never polling. Its events go to the event loop in order, to the pool's handler. Started
and stopped by the pool (``_pool``); its calls are the API's (``_api``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
from collections.abc import Callable
from typing import Any, Final

from kubernetes.client.exceptions import ApiException
from kubernetes.watch.watch import iter_resp_lines

from mcp_manager.kubernetes._api import RETRY_SECONDS, PodApi
from mcp_manager.kubernetes._pod import field

__all__ = ["PodWatch"]

logger = logging.getLogger("skillweave.manager.kubernetes")

_WATCH_SECONDS: Final = 240


class _WatchExpiredError(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


class PodWatch:
    """Watches the pods `selector` matches and posts each change to `on_event` on the event
    loop: ``ADDED``, ``MODIFIED`` or ``DELETED`` with the pod, or ``RELIST`` with every pod
    (after a fresh list).

    Args:
        api: the pod API.
        selector: the pool's label selector.
        on_event: called on the event loop with the event's kind and object.
    """

    def __init__(self, api: PodApi, selector: str, *, on_event: Callable[[str, Any], None]) -> None:
        self._api = api
        self._selector = selector
        self._on_event = on_event
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._response: Any = None
        self._thread: threading.Thread | None = None

    def start(self, version: str | None) -> None:
        """Watch from `version` (a list's resourceVersion; None: list first), on a thread;
        called on the event loop that receives the events."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=self._watch_forever, args=(version,), name="skillweave-k8s-watch", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Post no more events, and end the watch's blocking read."""
        self._stop.set()
        # Wake the watch thread from its blocking read: shutting the socket down is safe from
        # here (closing the response is not: it waits for the reader's lock).
        sock = getattr(getattr(self._response, "connection", None), "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

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
        while not self._stop.is_set():
            try:
                if version is None:
                    items, version = self._api.list_now(self._selector)
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
                self._stop.wait(RETRY_SECONDS)
                version = None

    def _watch_from(self, version: str) -> str | None:
        """One watch request; returns the resourceVersion to go on from (None: list first)."""
        response = self._api.open_watch(self._selector, version, seconds=_WATCH_SECONDS)
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
                version = field(obj, "metadata", "resourceVersion") or version
                if kind != "BOOKMARK" and not self._post(kind, obj):
                    return version
        finally:
            self._response = None
            response.close()
            response.release_conn()
        return version  # the server ended the watch (its timeout): go on from here
