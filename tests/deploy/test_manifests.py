"""deploy/k8s: the kustomize base and overlays render, and what they render is safe and coherent.

With ``kubectl`` on PATH every directory is built with ``kubectl kustomize`` (no warnings
allowed). Without it, :func:`_resources_of` stands in: it loads the ``resources`` of each
kustomization.yaml, recursively, and applies nothing else (no patches, replicas, generators),
so the assertions about what the overlays change are skipped and the rest run on the plain
resources.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import pytest
import yaml

from skillweave.cli.temporal_server import _SA_TYPES
from skillweave.config import KubernetesSettings
from skillweave.engines.contract import SEARCH_ATTRIBUTES
from tests.deploy.support import BUILT_IN_TEMPLATE, DEPLOY, setting_problem, settings_from

Doc = dict[str, Any]

K8S: Final = DEPLOY / "k8s"
KUBECTL: Final = shutil.which("kubectl")
NEEDS_KUSTOMIZE: Final = (
    "kubectl is not on PATH: only kustomize applies the overlays' patches, replicas and "
    "generators (the fallback loader reads the plain resources)"
)

SYSTEM_NS: Final = "skillweave-system"
SANDBOX_NS: Final = "skillweave-sandboxes"
MANAGER: Final = "skillweave-manager"
WORKER: Final = "skillweave-worker"
API: Final = "skillweave-api"
OURS: Final = (MANAGER, WORKER, API)
TEMPLATE_CONFIGMAP: Final = "skillweave-sandbox-pod-template"
SANDBOX_VERBS: Final = {"create", "get", "list", "watch", "patch", "delete"}
CLUSTER_SCOPED: Final = {"Namespace", "RuntimeClass", "ClusterRole", "ClusterRoleBinding"}
DEPRECATED_KUSTOMIZE_FIELDS: Final = {
    "bases",
    "commonLabels",
    "patchesStrategicMerge",
    "patchesJson6902",
    "vars",
    "imageTags",
}
TARGETS: Final = ("base", "overlays/local", "overlays/prod")


# --- rendering -------------------------------------------------------------------------------


def _resources_of(directory: Path) -> Iterator[Doc]:
    """Without kustomize: the documents of the kustomization's `resources`, recursively."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text("utf-8"))
    for entry in kustomization.get("resources", []):
        path = (directory / entry).resolve()
        if path.is_dir():
            yield from _resources_of(path)
        else:
            yield from (doc for doc in yaml.safe_load_all(path.read_text("utf-8")) if doc)


@functools.cache
def render(target: str) -> tuple[Doc, ...]:
    """The documents `deploy/k8s/<target>` builds to."""
    directory = K8S / target
    if KUBECTL is None:
        return tuple(_resources_of(directory))
    built = subprocess.run(
        [KUBECTL, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 0, f"kubectl kustomize {target}: {built.stderr}"
    assert built.stderr == "", f"kubectl kustomize {target} warned: {built.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(built.stdout) if doc)


def needs_kustomize() -> None:
    if KUBECTL is None:
        pytest.skip(NEEDS_KUSTOMIZE)


@pytest.fixture(params=TARGETS)
def docs(request: pytest.FixtureRequest) -> tuple[Doc, ...]:
    return render(request.param)


# --- looking things up -----------------------------------------------------------------------


def of_kind(docs: tuple[Doc, ...], kind: str, namespace: str | None = None) -> list[Doc]:
    return [
        doc
        for doc in docs
        if doc["kind"] == kind
        and (namespace is None or doc["metadata"].get("namespace") == namespace)
    ]


def one(docs: tuple[Doc, ...], kind: str, name: str, namespace: str | None = None) -> Doc:
    found = [doc for doc in of_kind(docs, kind, namespace) if doc["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name!r}, found {len(found)}"
    return found[0]


def deployments(docs: tuple[Doc, ...]) -> dict[str, Doc]:
    found = {doc["metadata"]["name"]: doc for doc in of_kind(docs, "Deployment")}
    assert set(OURS) <= set(found), f"missing Deployments: {set(OURS) - set(found)}"
    return found


def pod_spec(deployment: Doc) -> Doc:
    return deployment["spec"]["template"]["spec"]


def containers(spec: Doc) -> list[Doc]:
    found = [*spec.get("initContainers", []), *spec.get("containers", [])]
    assert found, "a pod without containers"
    return found


def container(docs: tuple[Doc, ...], name: str) -> Doc:
    return pod_spec(deployments(docs)[name])["containers"][0]


def env_entries(ctr: Doc) -> dict[str, Doc]:
    return {entry["name"]: entry for entry in ctr.get("env", [])}


def literal_env(docs: tuple[Doc, ...], ctr: Doc, namespace: str) -> dict[str, str]:
    """The container's environment, ConfigMaps resolved; a Secret's value is a placeholder."""
    env: dict[str, str] = {}
    for source in ctr.get("envFrom", []):
        ref = source["configMapRef"]["name"]
        env.update(one(docs, "ConfigMap", ref, namespace).get("data", {}))
    for name, entry in env_entries(ctr).items():
        if "value" in entry:
            env[name] = str(entry["value"])
        elif "secretKeyRef" in entry["valueFrom"]:
            env[name] = "secret-placeholder"
        elif "fieldRef" in entry["valueFrom"]:
            env[name] = f"<{entry['valueFrom']['fieldRef']['fieldPath']}>"
    return env


def template_text(docs: tuple[Doc, ...]) -> str:
    configmap = one(docs, "ConfigMap", TEMPLATE_CONFIGMAP, SYSTEM_NS)
    assert "pod.yaml" in configmap["data"], "the template ConfigMap has no pod.yaml"
    return configmap["data"]["pod.yaml"]


def sandbox_template(docs: tuple[Doc, ...]) -> Doc:
    return yaml.safe_load(template_text(docs))


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


_UNITS: Final = {
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def quantity(value: str | int | float) -> float:
    """A Kubernetes quantity (``250m``, ``512Mi``, ``"2"``) as a number."""
    found = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(value))
    assert found is not None, f"not a quantity: {value!r}"
    number, unit = found.groups()
    return float(number) * _UNITS[unit] if unit else float(number)


# --- the hardening every pod must carry --------------------------------------------------------


def hardening_problems(where: str, spec: Doc) -> list[str]:
    """What `spec` (a pod spec) lacks of skillweave's pod hardening."""
    problems: list[str] = []
    pod = spec.get("securityContext", {})
    if pod.get("runAsNonRoot") is not True:
        problems.append(f"{where}: pod securityContext.runAsNonRoot is not true")
    if pod.get("runAsUser") != 10001:
        problems.append(f"{where}: pod securityContext.runAsUser is not 10001")
    volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
    for ctr in containers(spec):
        at = f"{where}/{ctr['name']}"
        sc = ctr.get("securityContext", {})
        seccomp = sc.get("seccompProfile", pod.get("seccompProfile", {}))
        if seccomp.get("type") != "RuntimeDefault":
            problems.append(f"{at}: seccompProfile is not RuntimeDefault")
        if sc.get("runAsNonRoot", pod.get("runAsNonRoot")) is not True:
            problems.append(f"{at}: runAsNonRoot is not true")
        if sc.get("runAsUser", pod.get("runAsUser")) in {0, None}:
            problems.append(f"{at}: runs as root")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{at}: allowPrivilegeEscalation is not false")
        if sc.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{at}: readOnlyRootFilesystem is not true")
        if sc.get("privileged", False) is not False:
            problems.append(f"{at}: privileged")
        if sc.get("capabilities", {}).get("drop") != ["ALL"]:
            problems.append(f"{at}: capabilities do not drop ALL")
        if sc.get("capabilities", {}).get("add"):
            problems.append(f"{at}: adds capabilities")
        resources = ctr.get("resources", {})
        for kind in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                if resource not in resources.get(kind, {}):
                    problems.append(f"{at}: no {kind}.{resource}")
        tmp = [m for m in ctr.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
        if not tmp or "emptyDir" not in volumes.get(tmp[0]["name"], {}):
            problems.append(f"{at}: /tmp is not an emptyDir")
    return problems


# --- rendering -------------------------------------------------------------------------------


def test_kustomizations_use_current_syntax_and_no_global_namespace() -> None:
    files = sorted(K8S.rglob("kustomization.yaml"))
    assert len(files) == 3
    for path in files:
        kustomization = yaml.safe_load(path.read_text("utf-8"))
        where = path.relative_to(K8S)
        assert kustomization["apiVersion"] == "kustomize.config.k8s.io/v1beta1", where
        assert not DEPRECATED_KUSTOMIZE_FIELDS & set(kustomization), where
        # two namespaces: a global one would move resources out of the one they belong in
        assert "namespace" not in kustomization, where


def test_renders_with_an_explicit_namespace_everywhere(docs: tuple[Doc, ...]) -> None:
    assert docs
    for doc in docs:
        assert doc.get("apiVersion"), doc
        assert doc["metadata"].get("name"), doc
        if doc["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in doc["metadata"], doc["metadata"]
        else:
            assert doc["metadata"].get("namespace") in {SYSTEM_NS, SANDBOX_NS}, doc["metadata"]
    # least privilege: nothing cluster-wide
    assert not of_kind(docs, "ClusterRole")
    assert not of_kind(docs, "ClusterRoleBinding")


def test_the_fallback_loader_reads_what_kustomize_renders_for_the_base() -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH: nothing to compare the fallback loader with")

    def key(doc: Doc) -> tuple[str, str, str]:
        return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]

    fallback = sorted(_resources_of(K8S / "base"), key=key)
    assert fallback == sorted(render("base"), key=key)


# --- namespaces and workloads ------------------------------------------------------------------


def test_both_namespaces_enforce_the_restricted_pod_security_standard(
    docs: tuple[Doc, ...],
) -> None:
    for name in (SYSTEM_NS, SANDBOX_NS):
        labels = one(docs, "Namespace", name)["metadata"].get("labels", {})
        for mode in ("enforce", "audit", "warn"):
            assert labels.get(f"pod-security.kubernetes.io/{mode}") == "restricted", (name, mode)


def test_every_deployment_is_hardened(docs: tuple[Doc, ...]) -> None:
    problems = [
        problem
        for name, deployment in deployments(docs).items()
        for problem in hardening_problems(name, pod_spec(deployment))
    ]
    assert problems == []


def test_http_servers_are_probed_on_healthz(docs: tuple[Doc, ...]) -> None:
    """Ready on /healthz (503 while a dependency is waited for); alive while it serves at all,
    so that a pod waiting for Temporal or the store is not restarted in a loop."""
    for name in (MANAGER, API):
        ctr = container(docs, name)
        port_names = {port["name"] for port in ctr["ports"]}
        get = ctr.get("readinessProbe", {}).get("httpGet", {})
        assert get.get("path") == "/healthz", name
        assert get.get("port") in port_names, name
        for probe in ("startupProbe", "livenessProbe"):
            assert ctr.get(probe, {}).get("tcpSocket", {}).get("port") in port_names, (name, probe)
    worker = container(docs, WORKER)
    get = worker.get("readinessProbe", {}).get("httpGet", {})
    assert get.get("path") == "/healthz"
    assert get.get("port") == "metrics"


def test_only_the_manager_gets_a_service_account_token(docs: tuple[Doc, ...]) -> None:
    found = deployments(docs)
    accounts = {sa["metadata"]["name"]: sa for sa in of_kind(docs, "ServiceAccount", SYSTEM_NS)}
    for name in OURS:
        spec = pod_spec(found[name])
        assert spec.get("serviceAccountName") == name
        assert name in accounts
        expected = name == MANAGER
        assert spec.get("automountServiceAccountToken") is expected, name
        assert accounts[name].get("automountServiceAccountToken") is expected, name


def test_services_select_their_deployments_and_ports(docs: tuple[Doc, ...]) -> None:
    found = deployments(docs)
    services = {svc["metadata"]["name"]: svc for svc in of_kind(docs, "Service", SYSTEM_NS)}
    assert {name: services[name]["spec"]["ports"][0]["port"] for name in (MANAGER, API)} == {
        MANAGER: 8090,
        API: 8080,
    }
    # headless: the worker polls Temporal and serves only its metrics
    assert services[WORKER]["spec"].get("clusterIP") == "None"
    assert [p["name"] for p in services[WORKER]["spec"]["ports"]] == ["metrics"]
    for name, service in services.items():
        selected = [
            d
            for d in found.values()
            if matches(service["spec"]["selector"], d["spec"]["template"]["metadata"]["labels"])
        ]
        assert len(selected) == 1, f"Service {name} selects {len(selected)} Deployments"
        port_names = {
            port["name"]
            for ctr in containers(pod_spec(selected[0]))
            for port in ctr.get("ports", [])
        }
        for port in service["spec"].get("ports", []):
            assert port["targetPort"] in port_names, (name, port)


def test_every_skillweave_variable_is_a_real_setting_with_a_valid_value(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    configmap = one(docs, "ConfigMap", "skillweave-config", SYSTEM_NS)
    names = {*configmap["data"]}
    for name in OURS:
        ctr = container(docs, name)
        names |= set(env_entries(ctr))
        settings_from(literal_env(docs, ctr, SYSTEM_NS), monkeypatch)
    names |= {env["name"] for env in sandbox_template(docs)["spec"]["containers"][0]["env"]}
    assert [problem for name in sorted(names) if (problem := setting_problem(name))] == []


# --- the manager and its sandboxes -------------------------------------------------------------


def test_the_manager_runs_the_kubernetes_backend_with_the_mounted_template(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = deployments(docs)[MANAGER]
    spec = pod_spec(manager)
    ctr = spec["containers"][0]
    env = env_entries(ctr)
    settings = settings_from(literal_env(docs, ctr, SYSTEM_NS), monkeypatch)
    sandbox = settings.sandbox
    assert sandbox.backend == "kubernetes"
    assert sandbox.isolation == "none"  # what its sandbox pods run with: the pod is the boundary
    assert sandbox.host == "0.0.0.0"
    assert sandbox.port == ctr["ports"][0]["containerPort"]
    assert sandbox.kubernetes.namespace == SANDBOX_NS
    assert sandbox.pool_target <= sandbox.pool_max
    # the token and the S3 credentials come from a Secret, the replica's id from its pod name
    for name in ("SANDBOX__MANAGER_TOKEN", "STORAGE__S3_ACCESS_KEY", "STORAGE__S3_SECRET_KEY"):
        assert "secretKeyRef" in env[name]["valueFrom"], name
    manager_id = env["SANDBOX__KUBERNETES__MANAGER_ID"]["valueFrom"]["fieldRef"]
    assert manager_id["fieldPath"] == "metadata.name"
    # the template file is the ConfigMap's pod.yaml, mounted read-only
    template_file = sandbox.kubernetes.template_file
    assert template_file is not None
    mounts = [m for m in ctr["volumeMounts"] if Path(m["mountPath"]) == template_file.parent]
    assert len(mounts) == 1
    assert mounts[0].get("readOnly") is True
    volume = next(v for v in spec["volumes"] if v["name"] == mounts[0]["name"])
    assert volume["configMap"]["name"] == TEMPLATE_CONFIGMAP
    assert template_file.name == "pod.yaml"
    template_text(docs)


def test_the_worker_and_api_share_the_managers_store_and_token(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    read = {
        name: settings_from(literal_env(docs, container(docs, name), SYSTEM_NS), monkeypatch)
        for name in OURS
    }
    assert read[MANAGER].storage.backend == "s3"
    assert read[WORKER].storage == read[MANAGER].storage == read[API].storage
    assert read[WORKER].skills.dirs == read[MANAGER].skills.dirs
    secret_refs = {
        name: {
            var: entry["valueFrom"]["secretKeyRef"]
            for var, entry in env_entries(container(docs, name)).items()
            if "secretKeyRef" in entry.get("valueFrom", {})
        }
        for name in OURS
    }
    for var in ("STORAGE__S3_ACCESS_KEY", "STORAGE__S3_SECRET_KEY", "SANDBOX__MANAGER_TOKEN"):
        assert secret_refs[WORKER][var] == secret_refs[MANAGER][var], var
    # the worker calls the manager's Service; the API does not run scripts
    manager_url = read[WORKER].sandbox.manager_url
    assert manager_url is not None
    url = urlsplit(manager_url)
    host = (url.hostname or "").split(".")
    assert host[0] == MANAGER
    assert host[1:2] in ([], [SYSTEM_NS])
    assert url.port == one(docs, "Service", MANAGER, SYSTEM_NS)["spec"]["ports"][0]["port"]
    assert "SANDBOX__MANAGER_TOKEN" not in secret_refs[API]
    assert "secretKeyRef" in env_entries(container(docs, API))["API__TOKEN"]["valueFrom"]


def test_settings_read_on_both_sides_agree_and_the_worker_exports_metrics(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: the script limit is set where it is read, on the manager alone, and fits in
    the worker's script step; links name the UI, the worker serves its metrics."""
    read = {
        name: settings_from(literal_env(docs, container(docs, name), SYSTEM_NS), monkeypatch)
        for name in OURS
    }
    config = one(docs, "ConfigMap", "skillweave-config", SYSTEM_NS)["data"]
    assert "SANDBOX__TIMEOUT_SECONDS" not in config
    for name in OURS:
        setting = "SANDBOX__TIMEOUT_SECONDS" in env_entries(container(docs, name))
        assert setting == (name == MANAGER), name
    limit = read[MANAGER].sandbox.timeout_seconds
    assert limit == 60
    assert limit < read[WORKER].workflow.script_timeout_seconds
    assert "WORKFLOW__UI_URL" in config
    worker = container(docs, WORKER)
    metrics = read[WORKER].observability
    assert metrics.worker_metrics_host == "0.0.0.0"
    assert {"name": "metrics", "containerPort": metrics.worker_metrics_port} in worker["ports"]


def test_prod_names_its_own_temporal_ui(monkeypatch: pytest.MonkeyPatch) -> None:
    config = one(render("overlays/prod"), "ConfigMap", "skillweave-config", SYSTEM_NS)["data"]
    assert urlsplit(config["WORKFLOW__UI_URL"]).hostname not in ("localhost", "127.0.0.1")


def test_the_sandbox_template_is_the_built_in_one(docs: tuple[Doc, ...]) -> None:
    assert BUILT_IN_TEMPLATE.is_file(), f"{BUILT_IN_TEMPLATE} is missing"
    built_in = yaml.safe_load(BUILT_IN_TEMPLATE.read_text("utf-8"))
    assert sandbox_template(docs) == built_in


def test_the_sandbox_template_is_locked_down(docs: tuple[Doc, ...]) -> None:
    pod = sandbox_template(docs)
    assert pod["kind"] == "Pod"
    spec = pod["spec"]
    assert hardening_problems("sandbox", spec) == []
    assert spec["automountServiceAccountToken"] is False
    assert spec["enableServiceLinks"] is False
    assert spec["restartPolicy"] == "Never"
    assert isinstance(spec["activeDeadlineSeconds"], int)
    assert spec["activeDeadlineSeconds"] > 0
    ctr = spec["containers"][0]
    for kind in ("requests", "limits"):
        assert {"cpu", "memory", "ephemeral-storage"} <= set(ctr["resources"][kind]), kind
    volumes = {volume["name"]: volume for volume in spec["volumes"]}
    workspace = [m for m in ctr["volumeMounts"] if m["mountPath"] == "/workspace"]
    assert len(workspace) == 1
    assert volumes[workspace[0]["name"]]["emptyDir"]["sizeLimit"]
    assert {"name": "EXECUTOR__ISOLATION", "value": "none"} in ctr["env"]
    assert ctr["readinessProbe"]["httpGet"]["path"] == "/healthz"


def test_the_manager_may_touch_only_sandbox_pods(docs: tuple[Doc, ...]) -> None:
    roles = of_kind(docs, "Role")
    assert len(roles) == 1
    role = roles[0]
    assert role["metadata"]["namespace"] == SANDBOX_NS
    assert len(role["rules"]) == 1
    rule = role["rules"][0]
    assert rule["apiGroups"] == [""]
    assert rule["resources"] == ["pods"]
    assert sorted(rule["verbs"]) == sorted(SANDBOX_VERBS)
    assert not rule.get("resourceNames")
    bindings = of_kind(docs, "RoleBinding")
    assert len(bindings) == 1
    binding = bindings[0]
    assert binding["metadata"]["namespace"] == SANDBOX_NS
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    account = pod_spec(deployments(docs)[MANAGER])["serviceAccountName"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": SYSTEM_NS}
    ]


def _only_managers(rule: Doc, peers: str, manager_labels: Doc, port: int) -> None:
    """The rule names manager pods of the system namespace, on `port` alone."""
    assert rule["ports"] == [{"protocol": "TCP", "port": port}]
    assert rule[peers]
    for peer in rule[peers]:
        assert peer["namespaceSelector"] == {
            "matchLabels": {"kubernetes.io/metadata.name": SYSTEM_NS}
        }
        assert matches(peer["podSelector"]["matchLabels"], manager_labels)
        assert set(peer) == {"namespaceSelector", "podSelector"}


def test_sandboxes_reach_only_the_egress_gateway_and_only_the_manager_reaches_them(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    policies = of_kind(docs, "NetworkPolicy", SANDBOX_NS)
    sandbox_labels = sandbox_template(docs)["metadata"]["labels"]
    selecting = [
        p
        for p in policies
        if matches(p["spec"]["podSelector"].get("matchLabels", {}), sandbox_labels)
    ]
    assert len(selecting) == 1, "no NetworkPolicy selects the template's pods"
    for policy in policies:
        assert set(policy["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    manager = deployments(docs)[MANAGER]
    manager_labels = manager["spec"]["template"]["metadata"]["labels"]
    ctr = pod_spec(manager)["containers"][0]
    sandbox = settings_from(literal_env(docs, ctr, SYSTEM_NS), monkeypatch).sandbox
    port = sandbox.kubernetes.executor_port
    template_ports = {
        p["containerPort"] for p in sandbox_template(docs)["spec"]["containers"][0]["ports"]
    }
    assert port in template_ports
    ingress = [rule for p in policies for rule in p["spec"].get("ingress", [])]
    assert ingress, "nobody may reach the sandboxes, not even the manager"
    for rule in ingress:
        _only_managers(rule, "from", manager_labels, port)

    # The one way out: the managers' egress gateway, listening where pods can reach it and
    # telling each pod its replica's own address.
    gateway = sandbox.egress
    assert gateway.gateway_port in {p["containerPort"] for p in ctr["ports"]}
    assert gateway.gateway_host == "0.0.0.0"
    assert gateway.advertise_host == "<status.podIP>"
    egress = [rule for p in policies for rule in p["spec"].get("egress", [])]
    assert len(egress) == 1, "sandbox pods may reach the egress gateway and nothing else"
    for rule in egress:
        _only_managers(rule, "to", manager_labels, gateway.gateway_port)


def test_the_sandbox_quota_holds_every_replicas_pool(
    docs: tuple[Doc, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    quotas = of_kind(docs, "ResourceQuota", SANDBOX_NS)
    assert len(quotas) == 1
    hard = quotas[0]["spec"]["hard"]
    manager = deployments(docs)[MANAGER]
    ctr = pod_spec(manager)["containers"][0]
    pool_max = settings_from(literal_env(docs, ctr, SYSTEM_NS), monkeypatch).sandbox.pool_max
    pods = quantity(hard["pods"])
    # (replicas + 1): a rolling update runs one manager more
    assert pods >= (manager["spec"]["replicas"] + 1) * pool_max
    per_pod = sandbox_template(docs)["spec"]["containers"][0]["resources"]
    for kind in ("requests", "limits"):
        for resource in ("cpu", "memory", "ephemeral-storage"):
            key = f"{kind}.{resource}"
            if resource != "ephemeral-storage":
                assert key in hard, key
            if key in hard:
                assert quantity(hard[key]) >= pods * quantity(per_pod[kind][resource]), key


def test_the_dev_temporal_registers_skillweaves_search_attributes() -> None:
    temporal = container(render("overlays/local"), "temporal")
    args = temporal["args"]
    assert args[:2] == ["server", "start-dev"]
    registered = {args[i + 1] for i, arg in enumerate(args) if arg == "--search-attribute"}
    assert registered == {
        f"{key.name}={_SA_TYPES[key.indexed_value_type.name]}" for key in SEARCH_ATTRIBUTES
    }


def test_the_readme_explains_every_kubernetes_setting() -> None:
    readme = (DEPLOY / "README.md").read_text("utf-8")
    missing = [
        name
        for field in KubernetesSettings.model_fields
        if (name := f"SANDBOX__KUBERNETES__{field.upper()}") not in readme
    ]
    assert missing == []


# --- what the overlays change ------------------------------------------------------------------


def test_local_is_small_and_uses_local_images(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_kustomize()
    docs = render("overlays/local")
    found = deployments(docs)
    replicas = {name: found[name]["spec"]["replicas"] for name in OURS}
    assert replicas == dict.fromkeys(OURS, 1)
    settings = settings_from(literal_env(docs, container(docs, MANAGER), SYSTEM_NS), monkeypatch)
    assert (settings.sandbox.pool_target, settings.sandbox.pool_max) == (2, 8)
    for name, deployment in found.items():
        for ctr in containers(pod_spec(deployment)):
            assert ctr.get("imagePullPolicy") == "IfNotPresent", (name, ctr["name"])


def test_local_generates_every_secret_it_needs() -> None:
    needs_kustomize()
    docs = render("overlays/local")
    secrets = {s["metadata"]["name"]: s for s in of_kind(docs, "Secret", SYSTEM_NS)}
    assert secrets
    for name, deployment in deployments(docs).items():
        for ctr in containers(pod_spec(deployment)):
            for entry in ctr.get("env", []):
                ref = entry.get("valueFrom", {}).get("secretKeyRef")
                if ref is None or ref.get("optional"):
                    continue
                secret = secrets.get(ref["name"])
                assert secret is not None, (name, entry["name"], ref["name"])
                assert ref["key"] in {*secret.get("data", {}), *secret.get("stringData", {})}


def test_prod_defines_the_gvisor_runtime_class() -> None:
    classes = of_kind(render("overlays/prod"), "RuntimeClass")
    assert [(c["metadata"]["name"], c["handler"]) for c in classes] == [("gvisor", "runsc")]
    assert not of_kind(render("overlays/local"), "RuntimeClass")


def test_prod_runs_sandboxes_under_gvisor_with_more_of_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    needs_kustomize()
    prod, local = render("overlays/prod"), render("overlays/local")
    prod_settings = settings_from(
        literal_env(prod, container(prod, MANAGER), SYSTEM_NS), monkeypatch
    )
    assert prod_settings.sandbox.kubernetes.runtime_class == "gvisor"
    local_settings = settings_from(
        literal_env(local, container(local, MANAGER), SYSTEM_NS), monkeypatch
    )
    assert local_settings.sandbox.kubernetes.runtime_class is None
    assert prod_settings.sandbox.pool_target > local_settings.sandbox.pool_target
    for name in OURS:
        assert (
            deployments(prod)[name]["spec"]["replicas"]
            > deployments(local)[name]["spec"]["replicas"]
        ), name
    # the prod store and Temporal are not the local development ones
    config = one(prod, "ConfigMap", "skillweave-config", SYSTEM_NS)["data"]
    assert config["STORAGE__S3_SECURE"] == "true"
    assert config["STORAGE__S3_CREATE_BUCKET"] == "false"  # a missing bucket is a mistake there
    assert urlsplit(f"//{config['WORKFLOW__TEMPORAL_ADDRESS']}").hostname != "temporal"
    budgets = of_kind(prod, "PodDisruptionBudget", SYSTEM_NS)
    for budget in budgets:
        selector = budget["spec"]["selector"]["matchLabels"]
        assert any(
            matches(selector, d["spec"]["template"]["metadata"]["labels"])
            for d in deployments(prod).values()
        )
