"""The sandbox pod template: the built-in one passes, each restriction dropped is named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from mcp_manager import create_app
from mcp_manager.kubernetes import (
    LABEL_OWNER,
    LABEL_POOL,
    LABEL_STATE,
    LABEL_TEMPLATE,
    TOKEN_ENV,
    PodTemplate,
    label_value,
    security_problems,
)
from skillweave.config import KubernetesSettings, Settings
from skillweave.errors import ConfigError

BUILT_IN = Path(__file__).parents[2] / "mcp_manager" / "sandbox_pod.yaml"


def _template() -> dict[str, Any]:
    return yaml.safe_load(BUILT_IN.read_text())


def _executor(pod: dict[str, Any]) -> dict[str, Any]:
    return pod["spec"]["containers"][0]


def test_the_built_in_template_is_restricted() -> None:
    assert security_problems(_template()) == []
    template = PodTemplate.load(KubernetesSettings())
    assert template.container == "executor"
    assert template.port == 8080
    assert len(template.digest) == 16


def _drop(path: tuple[str | int, ...]):
    def edit(pod: dict[str, Any]) -> None:
        node: Any = pod
        for step in path[:-1]:
            node = node[step]
        del node[path[-1]]

    return edit


def _set(path: tuple[str | int, ...], value: object):
    def edit(pod: dict[str, Any]) -> None:
        node: Any = pod
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value

    return edit


C = ("spec", "containers", 0)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (_drop(("spec", "automountServiceAccountToken")), "automountServiceAccountToken"),
        (_drop(("spec", "activeDeadlineSeconds")), "activeDeadlineSeconds"),
        (_set(("spec", "hostNetwork"), True), "host namespaces"),
        (_drop((*C, "securityContext", "runAsNonRoot")), None),  # the pod level still says so
        (_set((*C, "securityContext", "runAsNonRoot"), False), "runAsNonRoot"),
        (_set(("spec", "securityContext", "runAsUser"), 0), "runAsUser"),
        (_drop((*C, "securityContext", "allowPrivilegeEscalation")), "allowPrivilegeEscalation"),
        (_set((*C, "securityContext", "privileged"), True), "privileged"),
        (_set((*C, "securityContext", "capabilities", "drop"), ["NET_RAW"]), "drop ALL"),
        (_set((*C, "securityContext", "capabilities", "add"), ["SYS_ADMIN"]), "capabilities.add"),
        (_set((*C, "securityContext", "seccompProfile", "type"), "Unconfined"), "seccompProfile"),
        (_drop((*C, "securityContext", "readOnlyRootFilesystem")), "readOnlyRootFilesystem"),
        (_drop((*C, "resources", "limits")), "resources.limits"),
        (_drop((*C, "resources", "requests")), "resources.requests"),
        (_drop(("spec", "volumes", 0, "emptyDir", "sizeLimit")), "sizeLimit"),
        (_set(("spec", "volumes", 0), {"name": "w", "hostPath": {"path": "/"}}), "hostPath"),
        (_set((*C, "volumeMounts"), []), "emptyDir workspace"),
    ],
)
def test_each_dropped_restriction_is_named(edit, named: str | None, tmp_path: Path) -> None:
    pod = _template()
    edit(pod)
    problems = security_problems(pod)
    if named is None:
        assert problems == []
        return
    assert any(named in problem for problem in problems), problems
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    with pytest.raises(ConfigError, match="not restricted enough"):
        PodTemplate.load(KubernetesSettings(template_file=path))


def test_unreadable_or_foreign_templates_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        PodTemplate.load(KubernetesSettings(template_file=tmp_path / "missing.yaml"))
    (tmp_path / "bad.yaml").write_text("kind: [unclosed")
    with pytest.raises(ConfigError, match="cannot read"):
        PodTemplate.load(KubernetesSettings(template_file=tmp_path / "bad.yaml"))
    (tmp_path / "svc.yaml").write_text("kind: Service\nspec: {}\n")
    with pytest.raises(ConfigError, match="not a Pod"):
        PodTemplate.load(KubernetesSettings(template_file=tmp_path / "svc.yaml"))


def test_render_adds_identity_labels_and_a_token_without_touching_the_template() -> None:
    template = PodTemplate.load(
        KubernetesSettings(image="registry.example/executor:9", runtime_class="gvisor")
    )
    before = copy.deepcopy(template.body)
    pod = template.render(name="sw-x", namespace="sbx", pool="p", owner="m-1", token="t0k")
    assert template.body == before
    assert pod["metadata"]["name"] == "sw-x"
    assert pod["metadata"]["namespace"] == "sbx"
    labels = pod["metadata"]["labels"]
    assert labels[LABEL_POOL] == "p"
    assert labels[LABEL_OWNER] == "m-1"
    assert labels[LABEL_STATE] == "warm"
    assert labels[LABEL_TEMPLATE] == template.digest
    assert labels["app.kubernetes.io/name"] == "skillweave-sandbox"
    assert pod["spec"]["runtimeClassName"] == "gvisor"
    executor = _executor(pod)
    assert executor["image"] == "registry.example/executor:9"
    assert {"name": TOKEN_ENV, "value": "t0k"} in executor["env"]


def test_the_digest_follows_the_template() -> None:
    plain = PodTemplate.load(KubernetesSettings())
    other = PodTemplate.load(KubernetesSettings(image="registry.example/executor:10"))
    assert plain.digest != other.digest
    assert PodTemplate.load(KubernetesSettings()).digest == plain.digest


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("skillweave-manager-7d9c-x2", "skillweave-manager-7d9c-x2"),
        ("host.example.org", "host.example.org"),
        ("-weird name!-", "weird-name"),
        ("x" * 80, "x" * 63),
        ("___", "manager"),
    ],
)
def test_label_values(text: str, value: str) -> None:
    assert label_value(text) == value


def _kubernetes_settings(**kubernetes: object) -> Settings:
    return Settings(
        _env_file=None,
        sandbox={
            "backend": "kubernetes",
            "manager_token": SecretStr("t"),
            "isolation": "none",  # the built-in template's: the pod is the boundary
            "kubernetes": kubernetes,
        },
    )


def test_the_manager_refuses_to_start_on_a_loose_template_or_no_cluster(tmp_path: Path) -> None:
    """Checked when the app is made, so ``skillweave manager`` says what is wrong at once."""
    loose = _template()
    del loose["spec"]["automountServiceAccountToken"]
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(loose))
    with pytest.raises(ConfigError, match="automountServiceAccountToken"):
        create_app(_kubernetes_settings(template_file=tmp_path / "pod.yaml"))
    with pytest.raises(ConfigError, match="cannot configure the Kubernetes client"):
        create_app(_kubernetes_settings(kubeconfig=tmp_path / "no-such-kubeconfig"))


def test_the_manager_refuses_pods_whose_isolation_its_setting_does_not_allow(
    tmp_path: Path,
) -> None:
    """The built-in template's executors run with isolation none: a manager that announces
    auto must not use them; one that says none may; a template that asks for auto fits auto."""
    settings = _kubernetes_settings(kubeconfig=tmp_path / "no-such-kubeconfig")
    strict = settings.model_copy(
        update={"sandbox": settings.sandbox.model_copy(update={"isolation": "auto"})}
    )
    with pytest.raises(ConfigError, match="EXECUTOR__ISOLATION=none, which SANDBOX__ISOLATION"):
        create_app(strict)
    # Past the isolation check, the next one (no cluster) speaks.
    with pytest.raises(ConfigError, match="cannot configure the Kubernetes client"):
        create_app(settings)
    contained = _template()
    for variable in contained["spec"]["containers"][0]["env"]:
        if variable["name"] == "EXECUTOR__ISOLATION":
            variable["value"] = "auto"
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(contained))
    auto = strict.model_copy(deep=True)
    auto.sandbox.kubernetes.template_file = tmp_path / "pod.yaml"
    with pytest.raises(ConfigError, match="cannot configure the Kubernetes client"):
        create_app(auto)
