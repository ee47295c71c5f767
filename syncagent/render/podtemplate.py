"""The pod template of one role of a component (docs/rendering.md §2).

One function serves the Deployment (role ``main``), the LeaderWorkerSet and DisaggregatedSet
roles (``leader``/``worker``) and Grove cliques, so every pathway renders the same pods.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

from syncagent.api.component import checkpoint_of
from syncagent.render import labels as L
from syncagent.render.containers import (
    MAIN,
    PLANNER_SERVICE_ACCOUNT,
    DefaultsInput,
    add_probed_ports,
    apply_main_defaults,
    main_defaults,
    merge_env,
)
from syncagent.render.inputs import (
    AgentAccount,
    ComponentSource,
    Environment,
    Infrastructure,
    discovery_backend,
    discovery_on,
    workload_type,
)
from syncagent.render.model import RenderError
from syncagent.render.multinode import backend_of, launch_of
from syncagent.render.naming import discovery_service_account, model_hash
from syncagent.render.pullsecrets import pull_secret_refs

Role = Literal["main", "leader", "worker"]
SHARED_MEMORY = "shared-memory"
SHM_PATH = "/dev/shm"
DEFAULT_SHM = "8Gi"
_ZERO_QUANTITY = re.compile(r"\+?0*\.?0*(e[+-]?\d+)?[a-z]*", re.IGNORECASE)
# Annotations never copied into pods: ours to drop, or kubectl's copy of the whole manifest.
_DROPPED_ANNOTATIONS = (L.ORIGIN_VERSION, L.KUBECTL_LAST_APPLIED)


def pod_annotations(source: ComponentSource) -> dict[str, str]:
    """DCD annotations (lowest) -> template annotations -> base model -> checkpoint markers."""
    out = {**source.annotations, **source.template_annotations}
    if source.model:
        out[L.BASE_MODEL] = source.model
    checkpoint = checkpoint_of(source.spec)
    if checkpoint is not None:
        out[L.CHECKPOINT_CANDIDATE] = "true"
        out[L.CHECKPOINT_NAME] = checkpoint.ref
    for key in _DROPPED_ANNOTATIONS:
        out.pop(key, None)
    return out


def pod_labels(
    source: ComponentSource,
    *,
    role: Role,
    env: Environment,
    legacy_worker: bool = False,
) -> dict[str, str]:
    """The pod labels, later rows of the docs/rendering.md §2 table winning."""
    template_labels = (source.pod_template.get("metadata") or {}).get("labels") or {}
    out = {**source.labels, **template_labels}
    if source.parent_graph:
        out[L.GRAPH_NAME] = source.parent_graph
    out[L.COMPONENT_TYPE] = workload_type(source, legacy_worker=legacy_worker)
    out[L.COMPONENT] = source.component_name
    out[L.DYNAMO_NAMESPACE] = source.dynamo_namespace
    if source.type in ("prefill", "decode"):
        out[L.SUB_COMPONENT_TYPE] = source.type
    if source.model:
        out[L.BASE_MODEL_HASH] = model_hash(source.model)
    if pod_annotations(source).get(L.ENABLE_METRICS) != "false":
        out[L.METRICS_ENABLED] = "true"
    if discovery_on(source, env):
        out[L.DISCOVERY_BACKEND] = "kubernetes"
        out[L.DISCOVERY_ENABLED] = "true"
    if role == "main":
        out[L.SELECTOR] = source.name
    else:
        out.pop(L.SELECTOR, None)
        out[L.ROLE] = role
    return out


def pod_template(
    source: ComponentSource,
    *,
    role: Role,
    env: Environment,
    legacy_worker: bool = False,
    grove: bool = False,
) -> dict[str, Any]:
    """The full pod template (``{metadata, spec}``) of ``role``; raises :class:`RenderError`.

    The backend's launch rewrite (render/multinode) runs on the defaulted ``main`` container,
    then on the pod spec once shared memory is in, as upstream orders them.
    """
    spec = copy.deepcopy(dict(source.pod_template.get("spec") or {}))
    containers = list(spec.get("containers") or [])
    index = next((i for i, c in enumerate(containers) if c.get("name") == MAIN), None)
    if index is None:
        raise RenderError("main container not found in pod spec")
    backend = backend_of(source)
    launch = launch_of(source, role=role, grove=grove)
    defaults = main_defaults(
        DefaultsInput(
            component_type=source.type,
            workload_type=workload_type(source, legacy_worker=legacy_worker),
            dynamo_namespace=source.dynamo_namespace,
            parent=source.parent,
            namespace=source.namespace,
            discovery_backend=discovery_backend(source, env),
            kube_discovery_mode=source.template_annotations.get(L.KUBE_DISCOVERY_MODE, "pod"),
            worker_hash_suffix=source.worker_hash,
        )
    )
    main = apply_main_defaults(containers[index], defaults)
    _standard_env(main, env.infrastructure)
    _check_mounts(main)
    backend.update_container(main, launch)
    add_probed_ports(main, defaults)
    # Upstream checks command and args only where a LeaderWorkerSet runs the pod (its DCD
    # controller); Grove cliques take a multinode worker without args.
    if role != "main" and not grove:
        _check_lws_main(main)
    containers[index] = main
    spec["containers"] = containers
    _pod_basics(spec, source=source)
    backend.update_pod_spec(spec, main, launch)
    spec["volumes"] = volumes_for_mounts(spec.get("volumes") or [], main.get("volumeMounts") or [])
    if not spec["volumes"]:
        del spec["volumes"]
    _pod_identity(spec, source=source, env=env, grove=grove)
    _refuse_agent_account(spec, namespace=source.namespace, agent=env.agent_account)
    annotations = pod_annotations(source)
    metadata: dict[str, Any] = {
        "labels": pod_labels(source, role=role, env=env, legacy_worker=legacy_worker)
    }
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": spec}


def _standard_env(main: dict[str, Any], infrastructure: Infrastructure) -> None:
    # Upstream merges these under everything the container already says (defaults and the
    # user's own), so a variable the user sets keeps the user's value.
    standard = infrastructure.standard_env()
    if standard:
        main["env"] = merge_env(standard, main.get("env") or [])


def _check_mounts(main: dict[str, Any]) -> None:
    for mount in main.get("volumeMounts") or []:
        if not mount.get("name"):
            raise RenderError("volumeMount.name is required")
        if not mount.get("mountPath"):
            raise RenderError(f"volumeMount.mountPath is required for {mount['name']}")


def _check_lws_main(main: dict[str, Any]) -> None:
    if not main.get("command"):
        raise RenderError("container Command cannot be nil for LWS pod")
    if not main.get("args"):
        raise RenderError("container Args cannot be empty for LWS pod")


def _pod_basics(spec: dict[str, Any], *, source: ComponentSource) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 60)
    if "securityContext" not in spec:
        spec["securityContext"] = {"fsGroup": 1000}
    _shared_memory(spec, source.spec.get("sharedMemorySize"))


def _pod_identity(
    spec: dict[str, Any], *, source: ComponentSource, env: Environment, grove: bool
) -> None:
    if source.template_annotations.get(L.DISABLE_PULL_SECRET_DISCOVERY) != "true":
        images = [
            c.get("image", "") for c in [*spec.get("initContainers", []), *spec["containers"]]
        ]
        refs = pull_secret_refs(list(spec.get("imagePullSecrets") or []), images, env.pull_secrets)
        if refs:
            spec["imagePullSecrets"] = refs
    if not spec.get("serviceAccountName"):
        account = _service_account(source, env, grove=grove)
        if account:
            spec["serviceAccountName"] = account


def _refuse_agent_account(
    spec: dict[str, Any], *, namespace: str, agent: AgentAccount | None
) -> None:
    # A pod running as the agent holds its token, and with it every right the chart grants
    # the agent: whoever may write a graph in the agent's namespace must not get that.
    if agent is None or namespace != agent.namespace:
        return
    for key in ("serviceAccountName", "serviceAccount"):
        if spec.get(key) == agent.name:
            raise RenderError(
                f"spec.podTemplate.spec.{key}: {agent.name} is the ServiceAccount the agent "
                "runs as, and a pod running as it would hold the agent's token; name another "
                "ServiceAccount, or none (docs/security.md §2)"
            )


def _service_account(source: ComponentSource, env: Environment, *, grove: bool) -> str:
    # Upstream's planner pod defaults name its account before discovery is consulted, so a
    # standalone planner DCD gets it too (a graph's planner DCD already carries it).
    if source.type == "planner":
        return PLANNER_SERVICE_ACCOUNT
    if discovery_on(source, env):
        return discovery_service_account(source.parent)
    # A labelled account or "default" is the DCD controller's fallback; a Grove clique, which
    # upstream renders from the component, names none (the pod then runs as "default").
    if grove:
        return ""
    labelled = sorted(env.component_pod_service_accounts)
    return labelled[0] if labelled else "default"


def is_zero_quantity(value: object) -> bool:
    text = str(value).strip()
    return bool(text) and _ZERO_QUANTITY.fullmatch(text) is not None and "0" in text


def _shared_memory(spec: dict[str, Any], size: object) -> None:
    """The ``shared-memory`` emptyDir at /dev/shm of ``main``, replacing any user volume of that
    name and any ``main`` mount of that name or path (upstream shared_memory.go)."""
    if size is not None and is_zero_quantity(size):
        return
    volumes = [v for v in spec.get("volumes") or [] if v.get("name") != SHARED_MEMORY]
    empty_dir = {"medium": "Memory", "sizeLimit": str(size) if size else DEFAULT_SHM}
    spec["volumes"] = [*volumes, {"name": SHARED_MEMORY, "emptyDir": empty_dir}]
    for container in spec["containers"]:
        if container.get("name") != MAIN:
            continue
        mounts = [
            m
            for m in container.get("volumeMounts") or []
            if m.get("name") != SHARED_MEMORY and m.get("mountPath") != SHM_PATH
        ]
        container["volumeMounts"] = [*mounts, {"name": SHARED_MEMORY, "mountPath": SHM_PATH}]


def volumes_for_mounts(
    volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Volumes ordered as ``main`` mounts them, then the unmounted ones in their order; a mount
    with no volume of its name gets a PersistentVolumeClaim volume of that name (upstream
    ``appendMissingPVCVolumesForMounts``, the v1alpha1 ``volumeMounts`` contract)."""
    by_name = {str(v.get("name")): v for v in volumes}
    ordered: list[dict[str, Any]] = []
    seen: set[str] = set()
    for mount in mounts:
        name = str(mount.get("name") or "")
        if not name or name in seen:
            continue
        seen.add(name)
        pvc = {"name": name, "persistentVolumeClaim": {"claimName": name}}
        ordered.append(by_name.get(name) or pvc)
    return ordered + [v for v in volumes if v.get("name") not in seen]
