"""Offline conversion of v1alpha1 DGD/DCD documents (the "services map") to v1beta1.

docs/api.md §3. Pure: documents in, documents and warnings out. Other documents (v1beta1
objects, ConfigMaps, PVCs...) pass through unchanged, in order.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from syncagent.api.component import API_VERSION, DCD_KIND, GROUP, MAIN_CONTAINER, NAME_PATTERN
from syncagent.api.conversion_input import GRAPH_SHAPES, SERVICE_SHAPES, shape_problems
from syncagent.api.graph import DGD_KIND

ALPHA_API_VERSION = f"{GROUP}/v1alpha1"
COMPONENT_TYPES = frozenset({"frontend", "worker", "prefill", "decode", "planner", "epp"})
WORKER_SUBTYPES = frozenset({"prefill", "decode"})
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"

# Service fields copied under the same name.
_SAME_NAME = (
    "replicas",
    "multinode",
    "globalDynamoNamespace",
    "modelRef",
    "minAvailable",
    "eppConfig",
    "frontendSidecar",
    "topologyConstraint",
    "runtimeVersionOverride",
    "providerOverride",
)
_TO_EXPERIMENTAL = ("checkpoint", "gpuMemoryService", "failover")
# Service fields dropped with a warning, and why.
_DROPPED = {
    "ingress": "out of scope",
    "dynamoNamespace": "deprecated",
    "serviceName": "deprecated",
    "autoscaling": "deprecated and ignored upstream",
}
# Consumed by the per-service rules (never copied as-is).
_CONSUMED = frozenset(
    {
        "componentType",
        "subComponentType",
        "scalingAdapter",
        "sharedMemory",
        "extraPodSpec",
        "extraPodMetadata",
        "labels",
        "annotations",
        "envs",
        "envFromSecret",
        "resources",
        "livenessProbe",
        "readinessProbe",
        "volumeMounts",
        *_SAME_NAME,
        *_TO_EXPERIMENTAL,
        *_DROPPED,
    }
)
_GRAPH_SAME_NAME = (
    "annotations",
    "labels",
    "backendFramework",
    "restart",
    "priorityClassName",
    "topologyConstraint",
    "experimental",
    "providerOverride",
)
_NAME_RE = re.compile(NAME_PATTERN)

Warn = Callable[[str, str], None]


class ConversionError(ValueError):
    """A document that cannot be converted; the one-line message names object and field."""


@dataclass
class Conversion:
    """The converted stream and the ``warning: <path> dropped: <why>`` lines."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    converted: int = 0


def is_alpha(doc: dict[str, Any]) -> bool:
    return doc.get("apiVersion") == ALPHA_API_VERSION and doc.get("kind") in (DGD_KIND, DCD_KIND)


def convert_documents(docs: list[dict[str, Any]]) -> Conversion:
    """Convert every v1alpha1 DGD/DCD; pass every other document through unchanged."""
    result = Conversion()

    def warn(path: str, why: str) -> None:
        result.warnings.append(f"warning: {path} dropped: {why}")

    for doc in docs:
        if not is_alpha(doc):
            result.documents.append(doc)
            continue
        if not isinstance(doc.get("metadata"), dict | None):
            raise ConversionError(f"{_ref(doc)}: metadata: must be a mapping")
        convert = convert_graph if doc["kind"] == DGD_KIND else convert_dcd
        result.documents.append(convert(doc, warn))
        result.converted += 1
    return result


def convert_graph(doc: dict[str, Any], warn: Warn) -> dict[str, Any]:
    """A v1alpha1 DynamoGraphDeployment as v1beta1."""
    spec = doc.get("spec") or {}
    if not isinstance(spec, dict):
        raise ConversionError(f"{_ref(doc)}: spec: must be a mapping")
    out = _head(doc)
    out["spec"] = _graph_spec(spec, _ref(doc), warn)
    if isinstance(doc.get("status"), dict):
        out["status"] = _status(doc["status"])
    return out


def convert_dcd(doc: dict[str, Any], warn: Warn) -> dict[str, Any]:
    """A v1alpha1 DynamoComponentDeployment as v1beta1; ``spec.name`` = ``metadata.name``."""
    spec = doc.get("spec") or {}
    if not isinstance(spec, dict):
        raise ConversionError(f"{_ref(doc)}: spec: must be a mapping")
    out = _head(doc)
    name = (doc.get("metadata") or {}).get("name") or ""
    rest = {k: v for k, v in spec.items() if k != "backendFramework"}
    component = convert_service(name, rest, path="spec", ref=_ref(doc), warn=warn)
    if "backendFramework" in spec:
        component = {"name": name, "backendFramework": spec["backendFramework"], **component}
    out["spec"] = component
    if isinstance(doc.get("status"), dict):
        out["status"] = copy.deepcopy(doc["status"])
    return out


def _head(doc: dict[str, Any]) -> dict[str, Any]:
    head: dict[str, Any] = {"apiVersion": API_VERSION, "kind": doc["kind"]}
    if "metadata" in doc:
        head["metadata"] = copy.deepcopy(doc["metadata"])
    return head


def _graph_spec(spec: dict[str, Any], ref: str, warn: Warn) -> dict[str, Any]:
    services = spec.get("services") or {}
    if not isinstance(services, dict):
        raise ConversionError(f"{ref}: spec.services: must be a map of service name to service")
    _require_shapes(spec, GRAPH_SHAPES, at="spec", ref=ref)
    out: dict[str, Any] = {}
    for key in _GRAPH_SAME_NAME:
        if key in spec:
            out[key] = copy.deepcopy(spec[key])
    if "envs" in spec:
        out["env"] = copy.deepcopy(spec["envs"])
    for i, pvc in enumerate(spec.get("pvcs") or []):
        if isinstance(pvc, dict) and pvc.get("create"):
            warn(f"spec.pvcs[{i}]", "PVC creation is not supported")
    known = {*_GRAPH_SAME_NAME, "envs", "pvcs", "services"}
    for key, value in spec.items():
        if key not in known:
            out[key] = copy.deepcopy(value)  # kept, like any upstream field we do not interpret
    out["components"] = [
        convert_service(key, services[key], path=f"spec.services.{key}", ref=ref, warn=warn)
        for key in sorted(services)
    ]
    return out


def _status(status: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(status)
    if "services" in out:
        out["components"] = out.pop("services")
    rolling = out.get("rollingUpdate")
    if isinstance(rolling, dict) and "updatedServices" in rolling:
        rolling["updatedComponents"] = rolling.pop("updatedServices")
    return out


def convert_service(name: str, service: Any, *, path: str, ref: str, warn: Warn) -> dict[str, Any]:
    """One v1alpha1 service (or DCD spec) as a v1beta1 component."""
    if not isinstance(service, dict):
        raise ConversionError(f"{ref}: {path}: must be a mapping")
    if path.startswith("spec.services.") and not (len(name) <= 63 and _NAME_RE.match(name)):
        raise ConversionError(
            f"{ref}: {path}: service name {name!r} must be 1-63 characters matching "
            f"{NAME_PATTERN}; rename the service"
        )
    _require_shapes(service, SERVICE_SHAPES, at=path, ref=ref)
    comp: dict[str, Any] = {"name": name}
    ctype = _component_type(service, path, warn)
    if ctype:
        comp["type"] = ctype
    for key in _SAME_NAME:
        if key in service:
            comp[key] = copy.deepcopy(service[key])
    scaling = service.get("scalingAdapter")
    if isinstance(scaling, dict) and scaling.get("enabled"):
        comp["scalingAdapter"] = {}
    shm = _shared_memory(service.get("sharedMemory"))
    if shm is not None:
        comp["sharedMemorySize"] = shm
    experimental = {k: copy.deepcopy(service[k]) for k in _TO_EXPERIMENTAL if k in service}
    if experimental:
        comp["experimental"] = experimental
    cache = _compilation_cache(service.get("volumeMounts"))
    if cache:
        comp["compilationCache"] = cache
    for key, why in _DROPPED.items():
        if key in service:
            warn(f"{path}.{key}", why)
    for key, value in service.items():
        if key not in _CONSUMED and key != "name":
            comp[key] = copy.deepcopy(value)
    template = _pod_template(service)
    if template:
        comp["podTemplate"] = template
    return comp


def _require_shapes(fields: dict[str, Any], shapes: dict[str, str], *, at: str, ref: str) -> None:
    problems = list(shape_problems(fields, shapes, at=at))
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConversionError(
            f"{ref}: {problems[0]}{more}; cannot convert it faithfully: fix the v1alpha1 input"
        )


def _component_type(service: dict[str, Any], path: str, warn: Warn) -> str | None:
    ctype = service.get("componentType")
    sub = service.get("subComponentType")
    if ctype == "worker" and sub in WORKER_SUBTYPES:
        return str(sub)
    if sub is not None:
        why = (
            "only a worker's prefill or decode subComponentType maps to a type"
            if ctype == "worker"
            else "subComponentType applies only to workers"
        )
        warn(f"{path}.subComponentType", why)
    if ctype is None:
        return None
    if ctype in COMPONENT_TYPES:
        return str(ctype)
    warn(f"{path}.componentType", f'"{ctype}" is not a v1beta1 component type')
    return None


def _shared_memory(shm: Any) -> str | None:
    if not isinstance(shm, dict):
        return None
    if shm.get("disabled"):
        return "0"
    size = shm.get("size")
    return str(size) if size not in (None, "") else None


def _compilation_cache(mounts: Any) -> dict[str, Any] | None:
    for mount in mounts or []:
        if isinstance(mount, dict) and mount.get("useAsCompilationCache"):
            cache = {"pvcName": mount.get("name")}
            if mount.get("mountPoint"):
                cache["mountPath"] = mount["mountPoint"]
            return cache
    return None


def _pod_template(service: dict[str, Any]) -> dict[str, Any]:
    extra_spec = copy.deepcopy(service.get("extraPodSpec") or {})
    main_src = extra_spec.pop("mainContainer", None) or {}
    pod_spec: dict[str, Any] = extra_spec
    main = _main_container(service, copy.deepcopy(main_src))
    mounts = [m for m in service.get("volumeMounts") or [] if isinstance(m, dict)]
    if mounts:
        volumes = list(pod_spec.get("volumes") or [])
        have = {v.get("name") for v in volumes}
        for m in mounts:
            if m.get("name") not in have:
                volumes.append(
                    {"name": m.get("name"), "persistentVolumeClaim": {"claimName": m.get("name")}}
                )
                have.add(m.get("name"))
        pod_spec["volumes"] = volumes
    if main is not None:
        others = [c for c in pod_spec.get("containers") or [] if c.get("name") != MAIN_CONTAINER]
        pod_spec = {"containers": [main, *others], **pod_spec}
        pod_spec["containers"] = [main, *others]
    template: dict[str, Any] = {}
    metadata = _pod_metadata(service)
    if metadata:
        template["metadata"] = metadata
    if pod_spec:
        template["spec"] = pod_spec
    return template


def _pod_metadata(service: dict[str, Any]) -> dict[str, Any]:
    extra = service.get("extraPodMetadata") or {}
    out: dict[str, Any] = {}
    for key in ("labels", "annotations"):
        merged = {**(service.get(key) or {}), **(extra.get(key) or {})}
        if merged:
            out[key] = merged
    return out


def _main_container(service: dict[str, Any], main: dict[str, Any]) -> dict[str, Any] | None:
    contributes = main or any(
        service.get(k)
        for k in (
            "envs",
            "envFromSecret",
            "resources",
            "livenessProbe",
            "readinessProbe",
            "volumeMounts",
        )
    )
    if not contributes:
        return None
    main = {"name": MAIN_CONTAINER, **{k: v for k, v in main.items() if k != "name"}}
    env = _merge_env(service.get("envs") or [], main.get("env") or [])
    if env:
        main["env"] = env
    if service.get("envFromSecret"):
        main["envFrom"] = [
            *(main.get("envFrom") or []),
            {"secretRef": {"name": service["envFromSecret"]}},
        ]
    resources = _resources(service.get("resources") or {}, main.get("resources") or {})
    if resources:
        main["resources"] = resources
    for probe in ("livenessProbe", "readinessProbe"):
        if service.get(probe) and probe not in main:
            main[probe] = copy.deepcopy(service[probe])
    mounts = [
        {"name": m.get("name"), "mountPath": m.get("mountPoint")}
        for m in service.get("volumeMounts") or []
        if isinstance(m, dict)
    ]
    if mounts:
        have = {m.get("mountPath") for m in main.get("volumeMounts") or []}
        main["volumeMounts"] = [
            *(main.get("volumeMounts") or []),
            *(m for m in mounts if m["mountPath"] not in have),
        ]
    return main


def _merge_env(envs: list[Any], main_env: list[Any]) -> list[Any]:
    """Service ``envs`` first; ``mainContainer.env`` wins on a name clash."""
    main_names = {e.get("name") for e in main_env if isinstance(e, dict)}
    kept = [
        copy.deepcopy(e) for e in envs if not isinstance(e, dict) or e["name"] not in main_names
    ]
    return [*kept, *main_env]


def _resources(alpha: dict[str, Any], main: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for block in ("requests", "limits"):
        converted = _resource_block(alpha.get(block) or {})
        merged = {**converted, **(main.get(block) or {})}
        if merged:
            out[block] = merged
    claims = main.get("claims") or alpha.get("claims")
    if claims:
        out["claims"] = copy.deepcopy(claims)
    for key, value in main.items():
        if key not in out and key not in ("requests", "limits", "claims"):
            out[key] = value
    return out


def _resource_block(block: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("cpu", "memory"):
        if block.get(key) not in (None, ""):
            out[key] = block[key]
    if block.get("gpu") not in (None, ""):
        out[block.get("gpuType") or DEFAULT_GPU_RESOURCE] = block["gpu"]
    for key, value in (block.get("custom") or {}).items():
        out[key] = value
    return out


def _ref(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    return f"{doc.get('kind')}/{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
