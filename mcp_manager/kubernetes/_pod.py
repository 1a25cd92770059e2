"""A sandbox pod as the pool reads it: the labels and annotations the pool puts on its pods,
and small readers of a pod manifest (a plain dict, as the API returns it).

Pure, no I/O: the template (``_template``), the API (``_api``), the view (``_view``), the reaper
(``_reaper``) and the pool read pods through these.
"""

from __future__ import annotations

import contextlib
import re
import time
from datetime import datetime
from typing import Any, Final

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


def field(data: Any, *path: str | int) -> Any:
    """The value at `path` in nested dicts and lists (keys and indexes); None where it stops."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(data, list) or len(data) <= step:
                return None
        elif not isinstance(data, dict):
            return None
        data = data[step] if isinstance(step, int) else data.get(step)
    return data


def name_of(pod: dict[str, Any]) -> str:
    return pod["metadata"]["name"]


def labels_of(pod: dict[str, Any]) -> dict[str, str]:
    return field(pod, "metadata", "labels") or {}


def notes_of(pod: dict[str, Any]) -> dict[str, str]:
    """The pod's annotations."""
    return field(pod, "metadata", "annotations") or {}


def as_float(value: object, default: float) -> float:
    """`value` as a number (an annotation's text), `default` when it is not one."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def created_at(pod: dict[str, Any]) -> float:
    """When the pod was created (seconds since the epoch; now when it does not say)."""
    stamp = field(pod, "metadata", "creationTimestamp")
    if not stamp:
        return time.time()
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    return time.time()


def is_ready(pod: dict[str, Any]) -> bool:
    """Running, with a pod IP, and its Ready condition true."""
    if field(pod, "status", "phase") != "Running" or not field(pod, "status", "podIP"):
        return False
    conditions = field(pod, "status", "conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def has_ended(pod: dict[str, Any]) -> bool:
    """The pod exited (failed or succeeded)."""
    return field(pod, "status", "phase") in _ENDED_PHASES


def is_terminating(pod: dict[str, Any]) -> bool:
    """The pod is being deleted."""
    return bool(field(pod, "metadata", "deletionTimestamp"))


def version_of(pod: dict[str, Any] | None) -> int | None:
    """The pod's resourceVersion as a number (None when absent or not a number)."""
    try:
        return int(field(pod, "metadata", "resourceVersion"))
    except (TypeError, ValueError):
        return None


def is_newer(incoming: dict[str, Any], known: dict[str, Any] | None) -> bool:
    """Whether a watch event is newer than what the view holds (versions compared as numbers
    where both are numbers, as the API server's are; else the event wins)."""
    new, old = version_of(incoming), version_of(known)
    return new is None or old is None or new >= old


def token_of(pod: dict[str, Any], container: str) -> str | None:
    """The executor token given to `container` of the pod."""
    for spec in field(pod, "spec", "containers") or []:
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
