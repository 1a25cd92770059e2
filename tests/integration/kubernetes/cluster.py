"""A fake Kubernetes cluster on loopback, for the kubernetes sandbox backend's integration tests.

:class:`FakeCluster` runs, on a thread with an event loop of its own, the ``kmock`` Kubernetes
emulator (:class:`PodApiServer`) on 127.0.0.1 and a fake kubelet that runs every pod as a real
sandbox executor process listening on the pod's own loopback address (127.B.x.y). The code under
test reaches the API with the official ``kubernetes`` client through
:attr:`FakeCluster.kubeconfig` and the pods over HTTP at their pod IPs, as in a cluster; the test
steers and inspects the cluster with the synchronous methods of :class:`FakeCluster`;
:meth:`FakeCluster.record_pods` keeps the life of every new pod (created, first Ready, deleted)
for the tests and benchmarks that count pods in creation (:func:`in_creation_peak`).

kmock's emulator is deliberately simple (no resourceVersion, no selectors, naive merges).
:class:`PodApiServer` adds, for ``v1/pods`` only, what the real API server does and a pool
manager relies on; each item is kube-apiserver behaviour:

- create: ``uid``, ``creationTimestamp``, ``resourceVersion``, the namespace of the URL,
  ``generateName``, ``status`` reset to ``Pending``; 409 AlreadyExists; 422 Invalid for a bad
  name, label or container list;
- one global resourceVersion, increased by every write; a write that changes nothing keeps it
  and sends no event;
- patch (JSON merge patch, strategic merge patch with the usual list merge keys, JSON patch) and
  replace are atomic under the emulator's lock: a ``metadata.resourceVersion`` other than the
  stored one is 409 Conflict and changes nothing, so of two writers holding the same version
  exactly one wins. The main resource ignores ``status``; ``pods/{name}/status`` changes only
  ``status``; the pod spec is immutable but for images, activeDeadlineSeconds and tolerations;
- delete: the pod is gone at once (no grace period), with a DELETED event; ``preconditions``
  are honoured; a collection delete takes the selectors;
- list and watch take ``labelSelector`` (equality- and set-based) and ``fieldSelector`` (the pod
  fields the real server indexes); a list carries the current resourceVersion;
- watch: without a resourceVersion (or "0"), ADDED for what matches, then live events; from a
  resourceVersion, the recorded changes after it (an ERROR 410 Expired once the history was
  compacted); a pod that stops (starts) matching the selector arrives as DELETED (ADDED);
  ``timeoutSeconds`` ends the stream, after a BOOKMARK when ``allowWatchBookmarks`` is set;
- errors are ``Status`` objects with the real codes and reasons; ``pods/{name}/log`` serves the
  executor's output.

Known gaps: namespaces are not objects (every namespace exists); no finalizers or graceful
deletion (never a ``deletionTimestamp``); no ``limit``/``continue`` paging; no server-side apply
(415); no admission, quotas, scheduling or ``spec.nodeName``; restartPolicy is taken as Never
(an executor that exits ends the pod); the container's command, args, probes and resources are
ignored, only a literal or ``fieldRef`` env value is resolved, and the pod's other containers
report the executor's state. Other resources fall through to kmock's plain emulator.

Hand-written (style rule 11): no library fakes a cluster whose pods are real processes; kmock
gives the HTTP plumbing and the object store.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import copy
import datetime
import errno
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TypeVar

import aiohttp.web
import attrs
import httpx
import jsonpatch
import kmock
import yaml

from tests.conftest import REPO

__all__ = ["FakeCluster", "PodApiServer", "PodFilter", "PodLife", "PodRecorder", "in_creation_peak"]

T = TypeVar("T")
Pod = dict[str, Any]

PODS: Final = kmock.resource("", "v1", "pods")
EXECUTOR_CONTAINER: Final = "executor"
"""The container the kubelet runs as an executor process (else the pod's first container)."""
EXECUTOR_PORT: Final = 8080
"""The executor's port when the container declares none."""

_FIRST_REVISION: Final = 1000
"""Where resourceVersions start: never "0", which a watch reads as "any version"."""
_HISTORY_LIMIT: Final = 10_000
"""Changes kept for watches that resume from a resourceVersion; older ones answer 410."""
_WATCH_TICK: Final = 0.5
"""How often an idle watch checks that its client is still connected."""
_EXECUTOR_START_SECONDS: Final = 30.0
_IP_ATTEMPTS: Final = 8
_POLL_SECONDS: Final = 0.05
_THREAD_START_SECONDS: Final = 15.0
_THREAD_STOP_SECONDS: Final = 20.0
_GENERATED_CHARS: Final = "bcdfghjklmnpqrstvwxz2456789"


# --- errors as Kubernetes Status objects ----------------------------------------------------------


def _error(code: int, reason: str, message: str, *, name: str | None = None) -> Exception:
    details = {"name": name, "kind": "pods"} if name is not None else {}
    return kmock.KubernetesError(status=code, reason=reason, message=message, details=details)


def _not_found(name: str) -> Exception:
    return _error(404, "NotFound", f'pods "{name}" not found', name=name)


def _conflict(name: str, why: str) -> Exception:
    return _error(
        409, "Conflict", f'Operation cannot be fulfilled on pods "{name}": {why}', name=name
    )


def _invalid(name: str, problems: list[str]) -> Exception:
    return _error(422, "Invalid", f'Pod "{name}" is invalid: {", ".join(problems)}', name=name)


def _bad_request(message: str) -> Exception:
    return _error(400, "BadRequest", message)


_STALE: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def _status(exc: kmock.KubernetesError) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": exc.message,
        "reason": exc.reason,
        "details": exc.details or {},
        "code": exc.status,
    }


# --- selectors and validation --------------------------------------------------------------------

_QUALIFIED_NAME: Final = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_SUBDOMAIN: Final = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
_LABEL_KEY: Final = rf"(?:{_DNS_SUBDOMAIN}/)?{_QUALIFIED_NAME}"
_LABEL_VALUE: Final = rf"(?:{_QUALIFIED_NAME})?"
_LABEL_REQUIREMENT: Final = re.compile(
    rf"""!\s*(?P<absent>{_LABEL_KEY})
    |(?P<set_key>{_LABEL_KEY})\s+(?P<set_op>in|notin)\s*\((?P<set_values>[^()]*)\)
    |(?P<key>{_LABEL_KEY})\s*(?P<op>==|!=|=)\s*(?P<value>{_LABEL_VALUE})
    |(?P<exists>{_LABEL_KEY})""",
    re.VERBOSE,
)
_FIELD_REQUIREMENT: Final = re.compile(r"(?P<key>[A-Za-z.]+)\s*(?P<op>==|!=|=)\s*(?P<value>.*)")
_POD_FIELDS: Final = (
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
"""The pod fields a fieldSelector may name (those the real API server indexes)."""


@dataclass(frozen=True)
class _Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: frozenset[str] = frozenset()

    def holds(self, values: Mapping[str, str]) -> bool:
        present = self.key in values
        match self.op:
            case "exists":
                return present
            case "!":
                return not present
            case "=" | "in":
                return present and values[self.key] in self.values
            case _:  # "!=" and "notin" also hold where the key is absent
                return not present or values[self.key] not in self.values


def _split_requirements(text: str) -> list[str]:
    """Split a selector on the commas outside ``in (...)`` lists."""
    if not text.strip():
        return []
    parts: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    if not all(parts):
        raise _bad_request(f"unable to parse requirement: empty requirement in {text!r}")
    return parts


def parse_label_selector(text: str) -> tuple[_Requirement, ...]:
    """A ``labelSelector``: ``a=b``, ``a==b``, ``a!=b``, ``a``, ``!a``, ``a in (x,y)``,
    ``a notin (x)``, comma-separated (all must hold)."""
    requirements: list[_Requirement] = []
    for part in _split_requirements(text):
        found = _LABEL_REQUIREMENT.fullmatch(part)
        if found is None:
            raise _bad_request(f"unable to parse requirement: {part!r}")
        if found["absent"]:
            requirements.append(_Requirement(found["absent"], "!"))
        elif found["exists"]:
            requirements.append(_Requirement(found["exists"], "exists"))
        elif found["set_key"]:
            values = [value.strip() for value in found["set_values"].split(",")]
            if not all(values) or not all(re.fullmatch(_LABEL_VALUE, v) for v in values):
                raise _bad_request(f"unable to parse requirement: {part!r}")
            requirements.append(_Requirement(found["set_key"], found["set_op"], frozenset(values)))
        else:
            op = "!=" if found["op"] == "!=" else "="
            requirements.append(_Requirement(found["key"], op, frozenset({found["value"]})))
    return tuple(requirements)


def parse_field_selector(text: str) -> tuple[_Requirement, ...]:
    """A pod ``fieldSelector``: ``field=value``, ``field==value``, ``field!=value``, comma
    separated (all must hold)."""
    requirements: list[_Requirement] = []
    for part in _split_requirements(text):
        found = _FIELD_REQUIREMENT.fullmatch(part)
        if found is None:
            raise _bad_request(f"invalid field selector: {part!r}")
        if found["key"] not in _POD_FIELDS:
            raise _bad_request(f"field label not supported: {found['key']}")
        op = "!=" if found["op"] == "!=" else "="
        requirements.append(_Requirement(found["key"], op, frozenset({found["value"]})))
    return tuple(requirements)


def _pod_fields(pod: Mapping[str, Any]) -> dict[str, str]:
    values: dict[str, str] = {}
    for path in _POD_FIELDS:
        node: Any = pod
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        values[path] = node if isinstance(node, str) else ""
    return values


@dataclass(frozen=True)
class PodFilter:
    """Which pods a list, watch or collection delete is about: a namespace (None: all) and the
    requirements of its label and field selectors."""

    namespace: str | None = None
    labels: tuple[_Requirement, ...] = ()
    fields: tuple[_Requirement, ...] = ()

    @classmethod
    def parse(
        cls,
        namespace: str | None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str = "",
        name: str | None = None,
    ) -> PodFilter:
        """Parse the selectors (400 BadRequest when invalid); a mapping is ``k=v,...``."""
        if isinstance(label_selector, Mapping):
            labels = tuple(_Requirement(k, "=", frozenset({v})) for k, v in label_selector.items())
        else:
            labels = parse_label_selector(label_selector or "")
        fields = parse_field_selector(field_selector)
        if name is not None:
            fields += (_Requirement("metadata.name", "=", frozenset({name})),)
        return cls(namespace, labels, fields)

    def __call__(self, pod: Mapping[str, Any]) -> bool:
        meta = pod.get("metadata") or {}
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        labels = meta.get("labels") or {}
        if not all(requirement.holds(labels) for requirement in self.labels):
            return False
        if self.fields:
            values = _pod_fields(pod)
            return all(requirement.holds(values) for requirement in self.fields)
        return True


def _key_ok(key: object) -> bool:
    if not isinstance(key, str):
        return False
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not re.fullmatch(_DNS_SUBDOMAIN, prefix)):
        return False
    return len(name) <= 63 and re.fullmatch(_QUALIFIED_NAME, name) is not None


def _problems(pod: Mapping[str, Any]) -> list[str]:
    """What the real API server's validation would reject in this pod (the parts checked here)."""
    problems: list[str] = []
    meta = pod.get("metadata") or {}
    name = meta.get("name") or ""
    if len(name) > 253 or not re.fullmatch(_DNS_SUBDOMAIN, name):
        problems.append(
            f'metadata.name: Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist'
            " of lower case alphanumeric characters, '-' or '.', and must start and end with an"
            " alphanumeric character"
        )
    for kind in ("labels", "annotations"):
        mapping = meta.get(kind) or {}
        if not isinstance(mapping, Mapping):
            problems.append(f"metadata.{kind}: Invalid value: must be a map of strings")
            continue
        for key, value in mapping.items():
            if not _key_ok(key):
                problems.append(
                    f'metadata.{kind}: Invalid value: "{key}": name part must consist of'
                    " alphanumeric characters, '-', '_' or '.' (max 63 characters), with an"
                    " optional DNS subdomain prefix and '/'"
                )
            if not isinstance(value, str):
                problems.append(f"metadata.{kind}: Invalid value: {value!r}: must be a string")
            elif kind == "labels" and (len(value) > 63 or not re.fullmatch(_LABEL_VALUE, value)):
                problems.append(
                    f'metadata.labels: Invalid value: "{value}": a valid label must be an empty'
                    " string or consist of alphanumeric characters, '-', '_' or '.', and must"
                    " start and end with an alphanumeric character (max 63 characters)"
                )
    containers = (pod.get("spec") or {}).get("containers")
    if not isinstance(containers, list) or not containers:
        problems.append("spec.containers: Required value")
        return problems
    seen: set[str] = set()
    for index, container in enumerate(containers):
        if not isinstance(container, Mapping) or not container.get("name"):
            problems.append(f"spec.containers[{index}].name: Required value")
            continue
        if container["name"] in seen:
            problems.append(
                f'spec.containers[{index}].name: Duplicate value: "{container["name"]}"'
            )
        seen.add(container["name"])
        if not container.get("image"):
            problems.append(f"spec.containers[{index}].image: Required value")
    return problems


def _frozen_spec(spec: Any) -> Any:
    """The part of a pod spec an update may not change."""
    view = copy.deepcopy(spec) if isinstance(spec, dict) else {}
    for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        view.pop(key, None)
    for key in ("containers", "initContainers"):
        for container in view.get(key) or []:
            if isinstance(container, dict):
                container.pop("image", None)
    return view


_SPEC_FORBIDDEN: Final = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    " `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only"
    " additions to existing tolerations) or `spec.terminationGracePeriodSeconds`"
)


# --- patches --------------------------------------------------------------------------------------

_MERGE_KEYS: Final = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "ports": "containerPort",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "podIPs": "ip",
    "hostIPs": "ip",
}
"""The pod lists a strategic merge patch merges by key (``patchMergeKey`` in the Go types)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any, field_name: str | None = None) -> Any:
    """A strategic merge patch for pods: a merge patch whose lists in ``_MERGE_KEYS`` merge by
    key (``$patch: delete`` removes an item) and whose ``finalizers`` are a set union. Other
    ``$`` directives are ignored."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            return {k: v for k, v in patch.items() if k != "$patch"}
        result = dict(target) if isinstance(target, dict) else {}
        for key, value in patch.items():
            if key.startswith("$"):
                continue
            if value is None:
                result.pop(key, None)
            else:
                result[key] = strategic_merge_patch(result.get(key), value, key)
        return result
    if isinstance(patch, list) and isinstance(target, list):
        if field_name == "finalizers":
            return target + [item for item in patch if item not in target]
        key = _MERGE_KEYS.get(field_name or "")
        if key is not None and all(isinstance(item, dict) and key in item for item in patch):
            merged = list(target)
            for item in patch:
                index = next(
                    (
                        i
                        for i, old in enumerate(merged)
                        if isinstance(old, dict) and old.get(key) == item[key]
                    ),
                    None,
                )
                if item.get("$patch") == "delete":
                    if index is not None:
                        del merged[index]
                elif index is None:
                    merged.append(strategic_merge_patch({}, item))
                else:
                    merged[index] = strategic_merge_patch(merged[index], item)
            return merged
    return patch


def _apply_patch(pod: Pod, body: Any, content_type: str) -> Any:
    media = content_type.split(";", 1)[0].strip().lower()
    if media in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        if not isinstance(body, dict):
            raise _bad_request("the body of a merge patch must be a JSON object")
        if media == "application/merge-patch+json":
            return merge_patch(pod, body)
        return strategic_merge_patch(pod, body)
    if media == "application/json-patch+json":
        if not isinstance(body, list):
            raise _bad_request("the body of a JSON patch must be a list of operations")
        try:
            return jsonpatch.apply_patch(pod, body)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise _error(422, "Invalid", f"the JSON patch cannot be applied: {exc}") from None
    raise _error(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format ({media or 'none'}) - accepted"
        " media types include: application/json-patch+json, application/merge-patch+json,"
        " application/strategic-merge-patch+json",
    )


# --- the API server -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Change:
    """One write: the object after it (for DELETED, its last state) and before it."""

    revision: int
    type: str  # ADDED | MODIFIED | DELETED
    obj: Pod
    old: Pod | None


def _event_for(change: _Change, selects: PodFilter) -> dict[str, Any] | None:
    """The event a watcher with this filter sees for a change, as the real API server's watch
    cache sends it: a pod that starts (stops) matching arrives as ADDED (DELETED)."""
    if change.type != "MODIFIED":
        return {"type": change.type, "object": change.obj} if selects(change.obj) else None
    now = selects(change.obj)
    was = change.old is not None and selects(change.old)
    if now:
        return {"type": "MODIFIED" if was else "ADDED", "object": change.obj}
    if was and change.old is not None:
        version = change.obj["metadata"]["resourceVersion"]
        last = {**change.old, "metadata": {**change.old["metadata"], "resourceVersion": version}}
        return {"type": "DELETED", "object": last}
    return None


def _line(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event).encode() + b"\n"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _header(request: kmock.Request, name: str) -> str:
    return next((v for k, v in request.headers.items() if k.lower() == name), "")


def _body(request: kmock.Request) -> Any:
    if not request.body:
        return None
    try:
        return json.loads(request.body)
    except ValueError:
        raise _bad_request("the body of the request is not valid JSON") from None


def _json(payload: Any, status: int = 200) -> aiohttp.web.Response:
    return aiohttp.web.json_response(payload, status=status)


@attrs.define(kw_only=True)
class PodApiServer(kmock.KubernetesEmulator):
    """kmock's Kubernetes emulator with the real API server's semantics for ``v1/pods``.

    See the module docstring for what it adds. The coroutines (``create``, ``patch``, ...) are
    the same code paths as the HTTP requests; they run on the emulator's loop only.
    """

    log_source: Callable[[str, str], Path | None] | None = None
    """Where ``GET pods/{name}/log`` reads a pod's output (the kubelet's log file)."""
    verbs: collections.Counter[str] = attrs.field(factory=collections.Counter, init=False)
    """Pod requests served, by verb: list, watch, get, create, patch, update, delete, ..."""

    conflicts: int = attrs.field(default=0, init=False)
    """409 Conflict answers so far (stale resourceVersions, failed delete preconditions)."""

    _revision: int = attrs.field(default=_FIRST_REVISION, init=False)
    _changes: collections.deque[_Change] = attrs.field(factory=collections.deque, init=False)
    _compacted: int = attrs.field(default=_FIRST_REVISION, init=False)
    _watches: set[asyncio.Queue[_Change | None]] = attrs.field(factory=set, init=False)
    _listeners: set[asyncio.Queue[_Change | None]] = attrs.field(factory=set, init=False)

    # --- state, under self._lock

    def _current(self, namespace: str, name: str) -> Pod | None:
        key = (PODS, namespace, name)
        if key not in self._objects or self._objects[key].deleted:
            return None
        return self._objects[key].raw

    def _current_pods(self) -> list[Pod]:
        pods = [
            obj.raw
            for (resource, _, _), obj in self._objects.items()
            if resource == PODS and not obj.deleted
        ]
        return sorted(pods, key=lambda pod: (pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _record(self, kind: str, pod: Pod, old: Pod | None) -> Pod:
        """Store a write: a new resourceVersion, a change for the watches and listeners."""
        self._revision += 1
        pod = copy.deepcopy(pod)
        pod["metadata"]["resourceVersion"] = str(self._revision)
        key = (PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
        if kind == "DELETED":
            self._objects[key].delete()
        elif key not in self._objects:
            self._objects[key] = pod
        elif self._objects[key].deleted:
            self._objects[key].create(pod)
        else:
            self._objects[key].history.append(pod)
        change = _Change(self._revision, kind, pod, old)
        self._changes.append(change)
        while len(self._changes) > _HISTORY_LIMIT:
            self._compacted = self._changes.popleft().revision
        for queue in self._watches | self._listeners:
            queue.put_nowait(change)
        return copy.deepcopy(pod)

    def _update(self, old: Pod, new: Any, subresource: str | None) -> Pod:
        name = old["metadata"]["name"]
        if not isinstance(new, dict) or not isinstance(new.get("metadata", {}), dict):
            raise _bad_request("the patched object is not a pod")
        wanted = new.get("metadata", {}).get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise _conflict(name, _STALE)
        if subresource == "status":
            result = {**old, "status": new.get("status") or {}}
        else:
            meta = dict(new.get("metadata") or {})
            for key in ("name", "namespace", "uid", "creationTimestamp", "resourceVersion"):
                meta[key] = old["metadata"][key]
            result = {**new, "metadata": meta, "kind": "Pod", "apiVersion": "v1"}
            result["status"] = old.get("status") or {}
            if _frozen_spec(new.get("spec")) != _frozen_spec(old.get("spec")):
                raise _invalid(name, [_SPEC_FORBIDDEN])
            if problems := _problems(result):
                raise _invalid(name, problems)
        if result == old:  # no change: no new resourceVersion, no event
            return copy.deepcopy(old)
        return self._record("MODIFIED", result, old)

    # --- the API, as coroutines on the emulator's loop

    async def create(self, namespace: str, body: Any) -> Pod:
        """``POST /api/v1/namespaces/{namespace}/pods``."""
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise _bad_request("the body of the request is not a pod")
        if body.get("kind", "Pod") != "Pod" or body.get("apiVersion", "v1") != "v1":
            raise _bad_request(
                f"the API version in the data ({body.get('apiVersion')}) does not match"
            )
        pod = copy.deepcopy(body)
        meta = pod.setdefault("metadata", {})
        if meta.get("namespace", namespace) != namespace:
            raise _bad_request(
                "the namespace of the provided object does not match the namespace sent on the"
                " request"
            )
        if meta.get("resourceVersion"):
            raise _error(
                500, "InternalError", "resourceVersion should not be set on objects to be created"
            )
        async with self._lock:
            if not meta.get("name") and meta.get("generateName"):
                while True:
                    suffix = "".join(random.choices(_GENERATED_CHARS, k=5))
                    meta["name"] = str(meta["generateName"])[:58] + suffix
                    if self._current(namespace, meta["name"]) is None:
                        break
            name = meta.get("name") or ""
            if not name:
                raise _invalid(
                    name, ["metadata.name: Required value: name or generateName is required"]
                )
            for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
                meta.pop(key, None)
            meta.update(namespace=namespace, uid=str(uuid.uuid4()), creationTimestamp=_now())
            pod.update(apiVersion="v1", kind="Pod", status={"phase": "Pending"})
            if problems := _problems(pod):
                raise _invalid(name, problems)
            if self._current(namespace, name) is not None:
                raise _error(409, "AlreadyExists", f'pods "{name}" already exists', name=name)
            return self._record("ADDED", pod, None)

    async def get(self, namespace: str, name: str) -> Pod | None:
        async with self._lock:
            pod = self._current(namespace, name)
        return copy.deepcopy(pod)

    async def list(self, selects: PodFilter) -> dict[str, Any]:
        """A ``PodList`` of the matching pods at the current resourceVersion."""
        async with self._lock:
            items = [copy.deepcopy(pod) for pod in self._current_pods() if selects(pod)]
            version = str(self._revision)
        for item in items:  # a list's items carry no kind, as from the real server
            item.pop("kind", None)
            item.pop("apiVersion", None)
        return {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": version},
            "items": items,
        }

    async def patch(
        self,
        namespace: str,
        name: str,
        body: Any,
        *,
        content_type: str,
        subresource: str | None = None,
    ) -> Pod:
        """``PATCH pods/{name}`` or ``pods/{name}/status``; 409 on a stale resourceVersion."""
        async with self._lock:
            old = self._current(namespace, name)
            if old is None:
                raise _not_found(name)
            return self._update(
                old, _apply_patch(copy.deepcopy(old), body, content_type), subresource
            )

    async def replace(
        self, namespace: str, name: str, body: Any, *, subresource: str | None = None
    ) -> Pod:
        """``PUT pods/{name}`` or ``pods/{name}/status``; 409 on a stale resourceVersion."""
        if not isinstance(body, dict):
            raise _bad_request("the body of the request is not a pod")
        given = (body.get("metadata") or {}).get("name")
        if given != name:
            raise _bad_request(
                f"the name of the object ({given}) does not match the name on the URL ({name})"
            )
        async with self._lock:
            old = self._current(namespace, name)
            if old is None:
                raise _not_found(name)
            return self._update(old, copy.deepcopy(body), subresource)

    async def delete(self, namespace: str, name: str, options: Any = None) -> Pod:
        """``DELETE pods/{name}``: gone at once; ``preconditions`` (uid, resourceVersion) hold."""
        preconditions = (options.get("preconditions") if isinstance(options, dict) else None) or {}
        async with self._lock:
            old = self._current(namespace, name)
            if old is None:
                raise _not_found(name)
            uid, version = old["metadata"]["uid"], old["metadata"]["resourceVersion"]
            if preconditions.get("uid") and preconditions["uid"] != uid:
                why = (
                    f"Precondition failed: UID in precondition: {preconditions['uid']},"
                    f" UID in object meta: {uid}"
                )
                raise _conflict(name, why)
            if preconditions.get("resourceVersion") and preconditions["resourceVersion"] != version:
                why = (
                    f"the ResourceVersion in the precondition ({preconditions['resourceVersion']})"
                    f" does not match the ResourceVersion in record ({version})."
                    " The object might have been modified"
                )
                raise _conflict(name, why)
            return self._record("DELETED", old, old)

    async def delete_collection(self, selects: PodFilter) -> dict[str, Any]:
        """``DELETE /api/v1/namespaces/{namespace}/pods``: every matching pod."""
        async with self._lock:
            deleted = [
                self._record("DELETED", pod, pod) for pod in self._current_pods() if selects(pod)
            ]
            version = str(self._revision)
        return {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": version},
            "items": deleted,
        }

    async def write_status(
        self, namespace: str, name: str, uid: str, status: dict[str, Any]
    ) -> bool:
        """The kubelet's status update of one pod (this uid); False when it is gone."""
        async with self._lock:
            old = self._current(namespace, name)
            if old is None or old["metadata"]["uid"] != uid:
                return False
            self._update(old, {**old, "status": status}, "status")
            return True

    def listen(self) -> asyncio.Queue[_Change | None]:
        """Every change from now on, unfiltered, as the kubelet sees them (None: the end)."""
        queue: asyncio.Queue[_Change | None] = asyncio.Queue()
        self._listeners.add(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[_Change | None]) -> None:
        self._listeners.discard(queue)

    def end_watches(self) -> None:
        """End every open watch stream, as an API server does when it restarts or times out."""
        for queue in self._watches:
            queue.put_nowait(None)

    async def compact(self) -> None:
        """Forget the change history: a watch from an older resourceVersion gets 410 Expired."""
        async with self._lock:
            self._changes.clear()
            self._compacted = self._revision

    @property
    def open_watches(self) -> int:
        return len(self._watches)

    # --- HTTP

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        if request.resource != PODS:
            return await super()._handle(request)
        try:
            return await self._serve(request)
        except kmock.KubernetesError as exc:
            if exc.status == 409 and exc.reason == "Conflict":
                self.conflicts += 1
            return _json(_status(exc), status=exc.status)

    async def _serve(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        method = str(request.method.value).upper()
        namespace, name, subresource = request.namespace, request.name, request.subresource
        params = request.params
        watching = params.get("watch", "").lower() in ("true", "1")
        if method == "GET" and (name is None or watching):
            selects = PodFilter.parse(
                namespace,
                label_selector=params.get("labelSelector", ""),
                field_selector=params.get("fieldSelector", ""),
                name=name,
            )
            self.verbs["watch" if watching else "list"] += 1
            if watching:
                return await self._watch(request, selects)
            return _json(await self.list(selects))
        if namespace is None:
            raise _error(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        if name is None:
            if method == "POST":
                self.verbs["create"] += 1
                return _json(await self.create(namespace, _body(request)), status=201)
            if method == "DELETE":
                self.verbs["deletecollection"] += 1
                selects = PodFilter.parse(
                    namespace,
                    label_selector=params.get("labelSelector", ""),
                    field_selector=params.get("fieldSelector", ""),
                )
                return _json(await self.delete_collection(selects))
        elif subresource in (None, "status"):
            if method == "GET":
                self.verbs["get"] += 1
                if (pod := await self.get(namespace, name)) is None:
                    raise _not_found(name)
                return _json(pod)
            if method == "PATCH":
                self.verbs["patch"] += 1
                content_type = _header(request, "content-type")
                pod = await self.patch(
                    namespace,
                    name,
                    _body(request),
                    content_type=content_type,
                    subresource=subresource,
                )
                return _json(pod)
            if method == "PUT":
                self.verbs["update"] += 1
                return _json(
                    await self.replace(namespace, name, _body(request), subresource=subresource)
                )
            if method == "DELETE" and subresource is None:
                self.verbs["delete"] += 1
                return _json(await self.delete(namespace, name, _body(request)))
        elif subresource == "log" and method == "GET":
            self.verbs["log"] += 1
            if await self.get(namespace, name) is None:
                raise _not_found(name)
            path = self.log_source(namespace, name) if self.log_source is not None else None
            text = path.read_text(errors="replace") if path is not None and path.exists() else ""
            return aiohttp.web.Response(text=text, content_type="text/plain")
        else:
            raise _error(
                404, "NotFound", f"the server could not find the requested resource ({subresource})"
            )
        raise _error(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )

    async def _watch(
        self, request: kmock.Request, selects: PodFilter
    ) -> aiohttp.web.StreamResponse:
        """Stream newline-delimited watch events until ``timeoutSeconds``, the client leaves or
        :meth:`end_watches`."""
        params = request.params
        since = params.get("resourceVersion", "")
        try:
            timeout = float(params["timeoutSeconds"]) if params.get("timeoutSeconds") else None
            since_version = int(since) if since not in ("", "0") else None
        except ValueError:
            raise _bad_request(f"invalid resourceVersion or timeoutSeconds: {params}") from None
        bookmarks = params.get("allowWatchBookmarks", "").lower() == "true"
        queue: asyncio.Queue[_Change | None] = asyncio.Queue()
        expired = False
        async with self._lock:
            if since_version is None:
                first = [
                    {"type": "ADDED", "object": pod} for pod in self._current_pods() if selects(pod)
                ]
            elif since_version < self._compacted:
                gone = _error(
                    410,
                    "Expired",
                    f"too old resource version: {since_version} ({self._compacted + 1})",
                )
                first, expired = [{"type": "ERROR", "object": _status(gone)}], True
            else:
                changes = (change for change in self._changes if change.revision > since_version)
                first = [event for change in changes if (event := _event_for(change, selects))]
            seen = self._revision
            if not expired:
                self._watches.add(queue)
        raw = request._raw_request
        assert raw is not None  # kmock keeps it for every request that came over HTTP
        response = aiohttp.web.StreamResponse(headers={"Content-Type": "application/json"})
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            await response.prepare(raw)
            for event in first:
                await response.write(_line(event))
            while not expired:
                wait = _WATCH_TICK if deadline is None else min(_WATCH_TICK, deadline - loop.time())
                if wait <= 0:
                    if bookmarks:
                        mark = {
                            "kind": "Pod",
                            "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(seen)},
                        }
                        await response.write(_line({"type": "BOOKMARK", "object": mark}))
                    break
                try:
                    change = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    if raw.transport is None or raw.transport.is_closing():
                        break  # the client went away
                    continue
                if change is None:
                    break
                seen = change.revision
                if (event := _event_for(change, selects)) is not None:
                    await response.write(_line(event))
            await response.write_eof()
        except ConnectionError:
            pass  # the client went away mid-write
        finally:
            self._watches.discard(queue)
        return response


# --- the kubelet ----------------------------------------------------------------------------------


class _StartError(Exception):
    """The container could not start; the message goes to the pod's status."""


@dataclass(eq=False)
class _Container:
    """A pod's container as the fake kubelet runs it: one executor process."""

    namespace: str
    name: str
    uid: str
    workdir: Path
    log_path: Path
    ip: str | None = None
    port: int = EXECUTOR_PORT
    started_at: str = ""
    process: subprocess.Popen[bytes] | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the pod's final status (Failed or Succeeded) is written."""

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


def _executor_container(pod: Pod) -> dict[str, Any]:
    containers = pod["spec"]["containers"]
    return next((c for c in containers if c.get("name") == EXECUTOR_CONTAINER), containers[0])


def _container_port(container: Mapping[str, Any]) -> int:
    ports = [p["containerPort"] for p in container.get("ports") or [] if "containerPort" in p]
    return int(ports[0]) if ports else EXECUTOR_PORT


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode  # a signal N is 128 + N


def _pod_status(
    pod: Pod,
    container: _Container,
    *,
    phase: str,
    state: dict[str, Any],
    message: str | None = None,
) -> dict[str, Any]:
    """The status the kubelet writes; every container of the pod reports the executor's state."""
    now = _now()
    ready = "running" in state
    reason = None if ready else "PodCompleted" if phase == "Succeeded" else "ContainersNotReady"
    condition: dict[str, Any] = {"status": "True" if ready else "False", "lastTransitionTime": now}
    if reason is not None:
        condition["reason"] = reason
    status: dict[str, Any] = {
        "phase": phase,
        "hostIP": "127.0.0.1",
        "hostIPs": [{"ip": "127.0.0.1"}],
        "startTime": container.started_at,
        "qosClass": "BestEffort",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": container.started_at},
            {"type": "Initialized", "status": "True", "lastTransitionTime": container.started_at},
            {"type": "ContainersReady", **condition},
            {"type": "Ready", **condition},
        ],
        "containerStatuses": [
            {
                "name": spec["name"],
                "image": spec.get("image", ""),
                "imageID": "",
                "containerID": f"fake://{container.uid}/{spec['name']}",
                "ready": ready,
                "started": ready,
                "restartCount": 0,
                "state": state,
            }
            for spec in pod["spec"]["containers"]
        ],
    }
    if container.ip is not None and phase != "Pending":
        status.update(podIP=container.ip, podIPs=[{"ip": container.ip}])
    if message is not None:
        status["message"] = message
    return status


def _kill(process: subprocess.Popen[bytes] | None) -> None:
    """SIGKILL a process group and reap its leader."""
    if process is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _port_free(ip: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((ip, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            raise
    return True


class _Kubelet:
    """Runs each new pod of its namespaces as an executor process on a loopback IP of its own,
    reports it Running and Ready once ``/healthz`` answers, and kills it when the pod is deleted."""

    def __init__(
        self,
        api: PodApiServer,
        *,
        root: Path,
        namespaces: Collection[str] | None,
        start_delay: float,
    ) -> None:
        self.api = api
        self.root = root
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self.start_delay = start_delay
        self.running = asyncio.Event()
        self.running.set()
        self.containers: dict[str, _Container] = {}  # by pod uid, until the pod is deleted
        self._tasks: dict[_Container, asyncio.Task[None]] = {}  # until the process is reaped
        self._subnet = random.randint(
            100, 250
        )  # 127.<subnet>.x.y: away from other clusters' leftovers
        self._hosts = 0
        self._probe = httpx.AsyncClient(timeout=1.0, trust_env=False)
        self.failures: list[BaseException] = []  # bugs of the kubelet, raised at close

    def log_path(self, namespace: str, name: str) -> Path | None:
        found = self.find(namespace, name)
        return None if found is None else found.log_path

    def find(self, namespace: str, name: str) -> _Container | None:
        return next(
            (c for c in self.containers.values() if (c.namespace, c.name) == (namespace, name)),
            None,
        )

    def executors_running(self) -> int:
        return sum(1 for container in self._tasks if container.alive())

    async def run(self, queue: asyncio.Queue[_Change | None]) -> None:
        """Follow the API server's changes (from :meth:`PodApiServer.listen`) until None."""
        try:
            while (change := await queue.get()) is not None:
                meta = change.obj["metadata"]
                if self.namespaces is not None and meta["namespace"] not in self.namespaces:
                    continue
                if change.type == "ADDED":
                    self._start(change.obj)
                elif change.type == "DELETED":
                    container = self.containers.pop(meta["uid"], None)
                    if container is not None and (task := self._tasks.get(container)) is not None:
                        task.cancel()  # its finally kills and reaps
        finally:
            self.api.unlisten(queue)

    async def kill(self, namespace: str, name: str, *, timeout: float) -> None:
        """SIGKILL a pod's executor, as when its container dies; wait for the Failed status."""
        container = self.find(namespace, name)
        if container is None or container.process is None:
            raise LookupError(f"no executor started for pod {namespace}/{name}")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(container.process.pid, signal.SIGKILL)
        await asyncio.wait_for(container.ended.wait(), timeout)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._probe.aclose()

    def _start(self, pod: Pod) -> None:
        meta = pod["metadata"]
        stem = f"{meta['namespace']}-{meta['name']}-{meta['uid'][:8]}"
        # The work folder is in the system's temp dir, not under tmp_path: an executor running as
        # root needs a path its sandbox user can traverse (pytest's folders are 0700).
        workdir = Path(tempfile.mkdtemp(prefix=f"fake-pod-{stem}-"))
        workdir.chmod(0o711)
        container = _Container(
            meta["namespace"], meta["name"], meta["uid"], workdir, self.root / f"{stem}.log"
        )
        self.containers[container.uid] = container
        task = asyncio.create_task(self._run(container, pod), name=f"kubelet {stem}")
        self._tasks[container] = task
        task.add_done_callback(lambda _: self._tasks.pop(container, None))
        task.add_done_callback(self._note_failure)

    def _note_failure(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.failures.append(exc)

    async def _write(self, container: _Container, status: dict[str, Any]) -> None:
        await self.api.write_status(container.namespace, container.name, container.uid, status)

    async def _run(self, container: _Container, pod: Pod) -> None:
        try:
            await self.running.wait()
            container.started_at = _now()
            creating = {"waiting": {"reason": "ContainerCreating"}}
            await self._write(
                container, _pod_status(pod, container, phase="Pending", state=creating)
            )
            if self.start_delay > 0:
                await asyncio.sleep(self.start_delay)  # the image pull of a cold start
            await self.running.wait()
            try:
                await self._start_executor(container, pod)
            except _StartError as exc:
                state = {"terminated": {"exitCode": 1, "reason": "StartError", "message": str(exc)}}
                status = _pod_status(pod, container, phase="Failed", state=state, message=str(exc))
                await self._write(container, status)
            else:
                await self._watch_executor(container, pod)
            container.ended.set()
            await asyncio.Event().wait()  # the pod and its workdir stay until the pod is deleted
        finally:
            _kill(container.process)
            shutil.rmtree(container.workdir, ignore_errors=True)
            container.ended.set()

    async def _watch_executor(self, container: _Container, pod: Pod) -> None:
        """Report the pod Running and Ready, then Failed (Succeeded) when the executor exits."""
        started_at = _now()
        running = {"running": {"startedAt": started_at}}
        await self._write(container, _pod_status(pod, container, phase="Running", state=running))
        assert container.process is not None
        while (returncode := container.process.poll()) is None:
            await asyncio.sleep(_POLL_SECONDS)
        code = _exit_code(returncode)
        terminated = {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started_at,
            "finishedAt": _now(),
        }
        phase = "Succeeded" if code == 0 else "Failed"
        state = {"terminated": terminated}
        await self._write(container, _pod_status(pod, container, phase=phase, state=state))

    async def _start_executor(self, container: _Container, pod: Pod) -> None:
        spec = _executor_container(pod)
        container.port = _container_port(spec)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        for item in spec.get("env") or []:
            env[item["name"]] = self._env_value(pod, item)
        for attempt in range(_IP_ATTEMPTS):
            container.ip = self._allocate_ip(container.port)
            with container.log_path.open("ab") as log:
                container.process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "sandbox_executor",
                        "--host",
                        container.ip,
                        "--port",
                        str(container.port),
                        "--workdir",
                        str(container.workdir),
                        "--parent-pid",
                        str(os.getpid()),
                        "--log-level",
                        "warning",
                    ],
                    cwd=REPO,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            problem = await self._until_ready(container)
            if problem is None:
                return
            _kill(container.process)
            if "address already in use" not in problem.lower() or attempt == _IP_ATTEMPTS - 1:
                raise _StartError(problem)

    def _env_value(self, pod: Pod, item: Mapping[str, Any]) -> str:
        if "valueFrom" not in item:
            return str(item.get("value", ""))
        path = (item["valueFrom"].get("fieldRef") or {}).get("fieldPath")
        meta = pod["metadata"]
        values = {
            "metadata.name": meta["name"],
            "metadata.namespace": meta["namespace"],
            "metadata.uid": meta["uid"],
        }
        if path not in values:
            raise _StartError(
                f"CreateContainerConfigError: env {item['name']}: valueFrom is not emulated"
            )
        return values[path]

    def _allocate_ip(self, port: int) -> str:
        """The next unused 127.<subnet>.x.y whose port is free (never reused within a cluster)."""
        while True:
            self._hosts += 1
            third, fourth = divmod(self._hosts, 254)
            if third > 255:
                raise _StartError("the fake cluster ran out of pod IPs")
            ip = f"127.{self._subnet}.{third}.{fourth + 1}"
            if _port_free(ip, port):
                return ip

    async def _until_ready(self, container: _Container) -> str | None:
        """None once ``/healthz`` answers ready, else why the executor did not start."""
        assert container.process is not None
        url = f"http://{container.ip}:{container.port}/healthz"
        deadline = time.monotonic() + _EXECUTOR_START_SECONDS
        while True:
            if (returncode := container.process.poll()) is not None:
                output = container.log_path.read_text(errors="replace")[-2000:]
                return f"the executor exited with {returncode}: {output}"
            with contextlib.suppress(httpx.HTTPError, ValueError):
                answer = await self._probe.get(url)
                if answer.status_code == 200 and answer.json().get("status") == "ready":
                    return None
            if time.monotonic() > deadline:
                return f"the executor was not ready in {_EXECUTOR_START_SECONDS}s"
            await asyncio.sleep(_POLL_SECONDS)


# --- what happened to the pods, for tests and benchmarks ---------------------------------------


@dataclass
class PodLife:
    """One pod's life as the API server recorded it, in ``time.monotonic()`` seconds (the same
    clock in every thread of the process): created, first Ready, deleted (None: not yet)."""

    name: str
    created: float
    ready: float | None = None
    deleted: float | None = None


def _ready_now(pod: Pod) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class PodRecorder:
    """The life of every pod of one namespace created while it records (see
    :meth:`FakeCluster.record_pods`): read :meth:`lives` at any time, :meth:`stop` at the end.

    It listens to the API server's changes on the cluster's loop, as the kubelet does, so it
    sees every write in order, with no polling and nothing asked of the code under test.
    """

    def __init__(self, cluster: FakeCluster, namespace: str) -> None:
        self._cluster = cluster
        self._namespace = namespace
        self._lives: dict[str, PodLife] = {}
        self._task: asyncio.Task[None] | None = None

    async def _start(self) -> None:
        queue = self._cluster.api.listen()
        self._task = asyncio.create_task(self._follow(queue), name="pod recorder")

    async def _follow(self, queue: asyncio.Queue[_Change | None]) -> None:
        try:
            while (change := await queue.get()) is not None:
                meta = change.obj["metadata"]
                if meta["namespace"] != self._namespace:
                    continue
                now = time.monotonic()
                life = self._lives.get(meta["uid"])
                if change.type == "ADDED":
                    self._lives[meta["uid"]] = PodLife(meta["name"], created=now)
                elif life is None:
                    continue  # created before the recording began
                elif change.type == "DELETED":
                    life.deleted = now
                elif life.ready is None and _ready_now(change.obj):
                    life.ready = now
        finally:
            self._cluster.api.unlisten(queue)

    def lives(self) -> list[PodLife]:
        """Every pod created since the recording began, in order of creation (copies)."""

        def snapshot() -> list[PodLife]:
            return [replace(life) for life in self._lives.values()]

        return self._cluster._call(self._cluster._in_loop(snapshot))

    def stop(self) -> None:
        async def cancel() -> None:
            if self._task is not None:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

        self._cluster._call(cancel())


def in_creation_peak(lives: Collection[PodLife], *, until: float | None = None) -> int:
    """The most pods that were being created at once: created, not yet Ready nor deleted
    (considering only what happened before `until`, when given)."""
    edges: list[tuple[float, int]] = []
    for life in lives:
        if until is not None and life.created > until:
            continue
        ends = [t for t in (life.ready, life.deleted) if t is not None]
        edges.append((life.created, 1))
        if ends and (until is None or min(ends) <= until):
            edges.append((min(ends), -1))
    peak = now = 0
    for _, step in sorted(edges):  # at the same moment, ends (-1) before starts (+1)
        now += step
        peak = max(peak, now)
    return peak


# --- the cluster, for tests -----------------------------------------------------------------------


class FakeCluster:
    """A Kubernetes API server and a kubelet of real executor processes, on loopback.

    Usage::

        with FakeCluster(tmp_path) as cluster:
            api = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
            ...

    Everything runs on a thread of its own with its own event loop; the methods here are
    synchronous and safe to call from any other thread (including a test's event loop: they
    block it only for the call). Two clusters in one process must close in the reverse order
    of their start (kmock's server hooks aiohttp's resolver), as nested ``with`` blocks do.

    Args:
        tmp_path: where the kubeconfig and the executors' logs go (their work folders are in
            the system's temp dir, which a sandbox user can traverse; removed with the pod).
        start_delay: seconds between a pod's creation and its executor's start (a cold start).
        kubelet_namespaces: the namespaces whose pods the kubelet runs; None: all. Pods
            elsewhere stay Pending.
    """

    def __init__(
        self,
        tmp_path: Path,
        *,
        start_delay: float = 0.0,
        kubelet_namespaces: Collection[str] | None = None,
    ) -> None:
        self.root = tmp_path / "fake-cluster"
        self.kubeconfig = self.root / "kubeconfig.yaml"
        """A kubeconfig with one context, ``fake``, pointing at :attr:`url` without auth."""
        self._start_delay = start_delay
        self._namespaces = kubelet_namespaces
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._api: PodApiServer | None = None
        self._kubelet: _Kubelet | None = None
        self._url: str | None = None

    def __enter__(self) -> FakeCluster:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the API server."""
        if self._url is None:
            raise RuntimeError("the fake cluster is not running")
        return self._url

    # --- life cycle

    def start(self) -> None:
        """Start the API server and the kubelet; write :attr:`kubeconfig`."""
        if self._thread is not None:
            raise RuntimeError("the fake cluster was started already")
        self.root.mkdir(parents=True, exist_ok=True)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._run_thread, name="fake-kubernetes", daemon=True
        )
        self._thread.start()
        try:
            self._url = self._ready.result(timeout=_THREAD_START_SECONDS)
        except BaseException:
            self.close()
            raise
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self._url}}],
            "users": [{"name": "fake", "user": {}}],
            "contexts": [
                {
                    "name": "fake",
                    "context": {"cluster": "fake", "user": "fake", "namespace": "default"},
                }
            ],
            "current-context": "fake",
        }
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")

    def close(self) -> None:
        """Kill every executor, stop the server and the thread (idempotent)."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None or loop is None:
            return
        if stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                loop.call_soon_threadsafe(stop.set)
        thread.join(_THREAD_STOP_SECONDS)
        if thread.is_alive():
            raise RuntimeError(f"the fake cluster's thread did not stop in {_THREAD_STOP_SECONDS}s")
        self._thread = None
        self._url = None
        self._api = self._kubelet = None
        if self._failure is not None:
            raise RuntimeError(f"the fake cluster failed: {self._failure!r}") from self._failure

    def _run_thread(self) -> None:
        assert self._loop is not None
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:
            self._failure = exc
            if not self._ready.done():
                self._ready.set_exception(exc)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            asyncio.set_event_loop(None)
            loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        api = PodApiServer()
        kubelet = _Kubelet(
            api, root=self.root, namespaces=self._namespaces, start_delay=self._start_delay
        )
        api.log_source = kubelet.log_path
        async with api, kmock.Server(api, host="127.0.0.1") as server:
            self._api, self._kubelet = api, kubelet
            listening = asyncio.create_task(kubelet.run(api.listen()), name="kubelet")
            self._ready.set_result(f"http://127.0.0.1:{server.port}")
            try:
                await self._stop.wait()
            finally:
                await kubelet.close()
                listening.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listening
                api.end_watches()
                for _ in range(100):  # let the watch streams end before the server stops
                    if not api.open_watches:
                        break
                    await asyncio.sleep(0.02)
            if kubelet.failures:
                raise kubelet.failures[0]

    def _call(self, coro: Coroutine[Any, Any, T], *, timeout: float = 30.0) -> T:
        if self._loop is None or self._thread is None or self._api is None:
            coro.close()
            raise RuntimeError("the fake cluster is not running")
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("FakeCluster's methods are for other threads, not its own")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    @property
    def api(self) -> PodApiServer:
        """The emulator itself (its coroutines run on the cluster's loop only)."""
        if self._api is None:
            raise RuntimeError("the fake cluster is not running")
        return self._api

    @property
    def kubelet(self) -> _Kubelet:
        if self._kubelet is None:
            raise RuntimeError("the fake cluster is not running")
        return self._kubelet

    # --- pods

    def create_pod(self, namespace: str, body: Mapping[str, Any]) -> Pod:
        """Create a pod as ``POST`` would; raises ``kmock.KubernetesError`` as the API answers."""
        return self._call(self.api.create(namespace, copy.deepcopy(dict(body))))

    def pods(
        self, namespace: str | None = None, selector: Mapping[str, str] | str | None = None
    ) -> list[Pod]:
        """The current pods of a namespace (None: all) matching a label selector."""
        selects = PodFilter.parse(namespace, label_selector=selector)
        return self._call(self.api.list(selects))["items"]

    def pod(self, namespace: str, name: str) -> Pod | None:
        """One pod as stored now, or None."""
        return self._call(self.api.get(namespace, name))

    def delete_pod(self, namespace: str, name: str) -> bool:
        """Delete a pod as ``DELETE`` would; False when it did not exist."""

        async def delete() -> bool:
            try:
                await self.api.delete(namespace, name)
            except kmock.KubernetesError as exc:
                if exc.status == 404:
                    return False
                raise
            return True

        return self._call(delete())

    def kill_pod(self, namespace: str, name: str, *, timeout: float = 10.0) -> None:
        """Simulate the container dying: SIGKILL its executor; returns once the pod is Failed
        (Ready False, terminated with exit code 137). The pod stays until someone deletes it."""
        self._call(self.kubelet.kill(namespace, name, timeout=timeout), timeout=timeout + 5)

    def pod_log(self, namespace: str, name: str) -> str:
        """What the pod's executor printed so far."""
        path = self._call(self._in_loop(lambda: self.kubelet.log_path(namespace, name)))
        return path.read_text(errors="replace") if path is not None and path.exists() else ""

    def executors_running(self) -> int:
        """How many executor processes are alive (including those of pods being deleted)."""
        return self._call(self._in_loop(self.kubelet.executors_running))

    # --- steering

    def set_start_delay(self, seconds: float) -> None:
        """Delay the executor start of pods the kubelet picks up from now on (a cold start)."""

        def set_delay() -> None:
            self.kubelet.start_delay = seconds

        self._call(self._in_loop(set_delay))

    def pause_kubelet(self) -> None:
        """New pods stay Pending (not even scheduled) until :meth:`resume_kubelet`."""
        self._call(self._in_loop(self.kubelet.running.clear))

    def resume_kubelet(self) -> None:
        self._call(self._in_loop(self.kubelet.running.set))

    def end_watches(self) -> None:
        """End every open watch stream (the client must watch again from its resourceVersion)."""
        self._call(self._in_loop(self.api.end_watches))

    def record_pods(self, namespace: str) -> PodRecorder:
        """Start recording the life of every pod created in `namespace` from now on."""
        recorder = PodRecorder(self, namespace)
        self._call(recorder._start())
        return recorder

    def expire_watch_history(self) -> None:
        """Compact the history: a watch from any earlier resourceVersion gets 410 Expired."""
        self._call(self.api.compact())

    def request_counts(self) -> dict[str, int]:
        """Pod requests served so far, by verb (list, watch, get, create, patch, delete, ...)."""
        return self._call(self._in_loop(lambda: dict(self.api.verbs)))

    def conflicts(self) -> int:
        """409 Conflict answers so far (a stale resourceVersion, a failed delete precondition)."""
        return self._call(self._in_loop(lambda: self.api.conflicts))

    def open_watches(self) -> int:
        """Watch streams open now."""
        return self._call(self._in_loop(lambda: self.api.open_watches))

    @staticmethod
    async def _in_loop(function: Callable[[], T]) -> T:
        return function()

    def wait_for(self, predicate: Callable[[], T], *, timeout: float = 10.0, what: str = "") -> T:
        """Poll `predicate` (in the calling thread) until it returns something truthy; return it."""
        deadline = time.monotonic() + timeout
        while not (value := predicate()):
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {timeout}s: {what or predicate}")
            time.sleep(_POLL_SECONDS)
        return value
