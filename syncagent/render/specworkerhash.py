"""Upstream's worker hash of a graph (``nvidia.com/current-worker-hash-v2``), computed.

Upstream's ``ComputeDGDWorkersSpecHash`` generates the graph's DCDs with the placeholder
``worker-hash-placeholder`` as the worker generation, keeps the workers (types ``worker``,
``prefill``, ``decode``), and hashes Go's ``json.Marshal`` of a map from component name to
``{labels, annotations, runtimeVersion, spec}``: the labels and annotations its workloads get
(``GetDCDKubeLabels``/``GetDCDKubeAnnotations``), the runtime version the main container's image
tag (or ``runtimeVersionOverride``) resolves to when 1.5.0 or later, and the DCD spec without
``replicas``, ``minAvailable``, ``scalingAdapter`` and ``runtimeVersionOverride``. The hash is
the first 8 hex digits of the SHA-256 of those bytes (docs/parity.md D1).

Go's bytes come from :mod:`syncagent.render.gojson` and the committed type table. The DCDs are
this package's own (:func:`generate_dcds`), with what syncagent deliberately leaves out of the
DCDs it writes put back as upstream's generation has it: the operator origin version the pod
template inherits from the graph (docs/rendering.md §1).
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping
from typing import Any, Final

from syncagent.api.gotypes import dcd_spec_types
from syncagent.api.graph import DynamoGraphDeployment
from syncagent.render import labels as L
from syncagent.render.containers import MAIN
from syncagent.render.dcd import generate_dcds, origin_version
from syncagent.render.gojson import go_string, marshal
from syncagent.render.model import Rendered, RenderError
from syncagent.render.workerhash import is_worker

PLACEHOLDER: Final = "worker-hash-placeholder"
_MINIMUM_HASHED_RUNTIME: Final = (1, 5, 0)
_SUB_COMPONENT_TYPE: Final = "nvidia.com/dynamo-sub-component-type"
_COMPONENT_CLASS: Final = "nvidia.com/dynamo-component-class"
_BASE_MODEL_HASH: Final = "nvidia.com/dynamo-base-model-hash"
_BASE_MODEL: Final = "nvidia.com/dynamo-base-model"
_TOPOLOGY_KEYS: Final = (
    "nvidia.com/topology-label-key",
    "nvidia.com/topology-cluster-topology-name",
)
_OBJECT_LABELS: Final = (L.COMPONENT, L.DYNAMO_NAMESPACE, L.GRAPH_NAME, L.WORKER_HASH)
_NOT_HASHED: Final = ("replicas", "minAvailable", "scalingAdapter", "runtimeVersionOverride")
_CORE: Final = r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
_IDENT: Final = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER: Final = re.compile(
    rf"{_CORE}(?:-{_IDENT}(?:\.{_IDENT})*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)


def compute_worker_hash(graph: DynamoGraphDeployment) -> str:
    """Upstream's v2 worker hash of ``graph`` as stored (raises :class:`RenderError`)."""
    templates: dict[str, str] = {}
    for dcd in generate_dcds(graph, worker_hash=PLACEHOLDER):
        spec = dcd.body["spec"]
        if not is_worker(spec.get("type")):
            continue
        name = str(
            spec.get("name") or dcd.body["metadata"].get("labels", {}).get(L.COMPONENT) or dcd.name
        )
        if name in templates:
            raise RenderError(f"duplicate generated worker DCD component name {name!r}")
        templates[name] = _template(graph, dcd, name)
    data = ",".join(f"{go_string(k)}:{v}" for k, v in sorted(templates.items()))
    return hashlib.sha256(("{" + data + "}").encode()).hexdigest()[:8]


def _template(graph: DynamoGraphDeployment, dcd: Rendered, name: str) -> str:
    spec, own = _as_upstream_generates(graph, dcd, name)
    types = dcd_spec_types()
    parts = []
    labels = _kube_labels(own, spec, name)
    if labels:
        parts.append('"labels":' + marshal(labels, _STRING_MAP, types))
    annotations = _kube_annotations(dcd, spec)
    if annotations:
        parts.append('"annotations":' + marshal(annotations, _STRING_MAP, types))
    version = hashed_runtime_version(spec)
    if version:
        parts.append('"runtimeVersion":' + go_string(version))
    hashed = {k: v for k, v in spec.items() if k not in _NOT_HASHED}
    parts.append('"spec":' + marshal(hashed, types.root_ref(), types))
    return "{" + ",".join(parts) + "}"


def _as_upstream_generates(
    graph: DynamoGraphDeployment, dcd: Rendered, name: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The worker DCD's spec and labels as upstream's ``generateSingleDCD`` has them."""
    spec = copy.deepcopy(dcd.body["spec"])
    own = dict(dcd.body["metadata"].get("labels") or {})
    metadata = spec.setdefault("podTemplate", {}).setdefault("metadata", {})
    origin = origin_version(graph, name)
    if origin is not None:
        # Upstream's pod template inherits the graph's stamp; syncagent's DCDs leave it out.
        metadata.setdefault("annotations", {})[L.ORIGIN_VERSION] = origin
    if any(c.type == "epp" for c in graph.spec.components):
        # Upstream marks the workers of a graph with an endpoint picker (HasEPPComponent).
        own[_COMPONENT_CLASS] = "worker"
        metadata.setdefault("labels", {})[_COMPONENT_CLASS] = "worker"
    return spec, own


_STRING_MAP: Final = {"kind": "map", "key": {"kind": "string"}, "elem": {"kind": "string"}}


def _pod_metadata(spec: Mapping[str, Any], key: str) -> dict[str, str]:
    return dict(((spec.get("podTemplate") or {}).get("metadata") or {}).get(key) or {})


def _kube_labels(own: Mapping[str, str], spec: Mapping[str, Any], name: str) -> dict[str, str]:
    """Upstream ``GetDCDKubeLabels`` of a DCD it just generated (``own``: its labels)."""
    labels = {**own, **_pod_metadata(spec, "labels")}
    model = (spec.get("modelRef") or {}).get("name") or ""
    if model:
        labels[_BASE_MODEL_HASH] = hashlib.sha256(model.encode()).hexdigest()[:8]
    if spec.get("type") in ("prefill", "decode"):
        # Upstream reads it through the v1alpha1 shape, where these are workers of a sub-type.
        labels[_SUB_COMPONENT_TYPE] = spec["type"]
    labels[L.COMPONENT] = name
    if own.get(L.DYNAMO_NAMESPACE):
        labels[L.DYNAMO_NAMESPACE] = own[L.DYNAMO_NAMESPACE]
    for key in (*_OBJECT_LABELS, _COMPONENT_CLASS):
        if own.get(key):
            labels[key] = own[key]
    return labels


def _kube_annotations(dcd: Rendered, spec: Mapping[str, Any]) -> dict[str, str]:
    """Upstream ``GetDCDKubeAnnotations`` of a DCD it just generated."""
    annotations = _pod_metadata(spec, "annotations")
    model = (spec.get("modelRef") or {}).get("name") or ""
    if model:
        annotations[_BASE_MODEL] = model
    for key in (L.ORIGIN_VERSION, *_TOPOLOGY_KEYS):
        annotations.pop(key, None)
    own = dcd.body["metadata"].get("annotations") or {}
    annotations.update({k: own[k] for k in _TOPOLOGY_KEYS if own.get(k)})
    return annotations


def hashed_runtime_version(spec: Mapping[str, Any]) -> str:
    """Upstream ``resolvedRuntimeVersionForHash``: the override, else the main container's image
    tag, as ``major.minor.patch`` when it is a semantic version of 1.5.0 or later; else ``""``."""
    override = str(spec.get("runtimeVersionOverride") or "")
    if override:
        match = _SEMVER.fullmatch(override)
    else:
        match = _SEMVER.fullmatch(
            _image_tag(_main_image(spec)).strip().removeprefix("v").removeprefix("V")
        )
    if match is None:
        return ""
    version = tuple(int(part) for part in match.groups()[:3])
    return ".".join(map(str, version)) if version >= _MINIMUM_HASHED_RUNTIME else ""


def _main_image(spec: Mapping[str, Any]) -> str:
    containers = ((spec.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
    main = next((c for c in containers if c.get("name") == MAIN), {})
    return str(main.get("image") or "")


def _image_tag(image: str) -> str:
    ref = image.strip().split("@", 1)[0]
    slash, colon = ref.rfind("/"), ref.rfind(":")
    return ref[colon + 1 :] if colon > slash else ""
