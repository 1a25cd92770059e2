"""The sandbox pod template: :class:`PodTemplate` (the built-in ``sandbox_pod.yaml`` or a
mounted file, with the image and runtime class settings applied) and
:func:`security_problems`, the restricted settings a template must keep.

The manager checks the template when the app is made (``KubernetesPool.check``); the pool
renders one pod of it per creation, adding a name, its labels and a fresh executor token.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from mcp_manager.kubernetes._pod import (
    EXECUTOR_CONTAINER,
    LABEL_OWNER,
    LABEL_POOL,
    LABEL_STATE,
    LABEL_TEMPLATE,
    TOKEN_ENV,
    WARM,
    field,
)
from skillweave.config import IsolationChoice, KubernetesSettings
from skillweave.errors import ConfigError
from skillweave.sandbox import isolation_covers

__all__ = ["PodTemplate", "security_problems"]


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
        elif "emptyDir" in volume and not field(volume, "emptyDir", "sizeLimit"):
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
        if "ALL" not in (field(security, "capabilities", "drop") or []):
            problems.append(f"{where}: capabilities must drop ALL")
        if field(security, "capabilities", "add"):
            problems.append(f"{where}: capabilities.add is not allowed")
        if field(either("seccompProfile") or {}, "type") not in ("RuntimeDefault", "Localhost"):
            problems.append(f"{where}: seccompProfile must be RuntimeDefault (or Localhost)")
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where}: readOnlyRootFilesystem must be true")
        resources_ = container.get("resources") or {}
        for kind in ("requests", "limits"):
            if not all(field(resources_, kind, r) for r in ("cpu", "memory")):
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
        containers = field(self.body, "spec", "containers") or []
        for container in containers:
            if container.get("name") == self.container:
                for variable in container.get("env") or []:
                    if variable.get("name") == "EXECUTOR__ISOLATION":
                        return str(variable.get("value", "auto"))
        return "auto"

    def check_isolation(self, allowed: IsolationChoice) -> None:
        """Refuse a template whose executors run under an isolation `allowed` does not cover
        (a manager never runs scripts under a weaker mode than it announces).

        Raises:
            ConfigError: the template's isolation is not allowed (what to set is said).
        """
        declared = self.isolation
        if not isolation_covers(allowed, declared):
            raise ConfigError(
                f"the sandbox pod template runs executors with EXECUTOR__ISOLATION={declared},"
                f" which SANDBOX__ISOLATION={allowed} does not allow: set SANDBOX__ISOLATION"
                f"={declared} (and say why: e.g. the pod is the boundary) or change the template"
            )

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
        containers = field(body, "spec", "containers") or []
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
