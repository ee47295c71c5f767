"""What a takeover between upstream's operator and syncagent must keep (no tests here).

A graph's *family* is every object reachable from it through owner references (DCDs, their
Deployments and ReplicaSets or LeaderWorkerSets and StatefulSets, pods, Services, the discovery
ServiceAccount, Role and RoleBinding, ConfigMaps), followed by reference, never by name. For
each member the takeover must keep its uid, its controller reference and (for what makes pods)
its revision; :func:`replaced` lists every member that did not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.support.crd_swap import CRD_PATH, replace
from tests.support.kube import DCD, DGD, LWS, Kube

KINDS = (
    DCD,
    "Deployment",
    "ReplicaSet",
    LWS,
    "StatefulSet",
    "Pod",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ConfigMap",
)
REVISION = "deployment.kubernetes.io/revision"
# What upstream's operator and syncagent both render, so both write: the fields a takeover moves.
RENDERED = (DCD, "Deployment", LWS, "Service", "ServiceAccount", "Role", "RoleBinding")


@dataclass(frozen=True, slots=True)
class Member:
    """One object of a graph's family, as far as a takeover must keep it."""

    uid: str
    controller: str  # ``Kind/name/uid`` of its controller reference ("" without one)
    revision: str  # what makes its pods: a ReplicaSet's revision, a StatefulSet's, a pod's hash

    def line(self) -> str:
        return f"uid {self.uid[:8]} controller {self.controller or '-'} {self.revision}".rstrip()


def _controller(obj: dict[str, Any]) -> str:
    refs = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")]
    return ",".join(f"{r['kind']}/{r['name']}/{r['uid'][:8]}" for r in refs)


def _revision(kind: str, obj: dict[str, Any]) -> str:
    meta, status = obj["metadata"], obj.get("status") or {}
    if kind == "ReplicaSet":
        return f"rev {(meta.get('annotations') or {}).get(REVISION)}"
    if kind == "StatefulSet":
        return f"rev {status.get('currentRevision')}/{status.get('updateRevision')}"
    if kind == "Pod":
        labels = meta.get("labels") or {}
        hashes = (labels.get("pod-template-hash"), labels.get("controller-revision-hash"))
        return "hash " + "/".join(h for h in hashes if h)
    return ""


def family_objects(kube: Kube, ns: str, graph: str) -> dict[str, dict[str, Any]]:
    """``Kind/name`` -> object, for the graph and everything it owns, directly or not."""
    root = kube.get(DGD, ns, graph)
    if root is None:
        return {}
    listed = [(kind, obj) for kind in KINDS for obj in kube.list(kind, ns)]
    found = {f"{DGD}/{graph}": root}
    uids = {root["metadata"]["uid"]}
    grew = True
    while grew:
        grew = False
        for kind, obj in listed:
            key = f"{kind}/{obj['metadata']['name']}"
            owners = {r["uid"] for r in obj["metadata"].get("ownerReferences") or ()}
            if key not in found and owners & uids:
                found[key] = obj
                uids.add(obj["metadata"]["uid"])
                grew = True
    return found


def family(objects: dict[str, dict[str, Any]]) -> dict[str, Member]:
    return {
        key: Member(obj["metadata"]["uid"], _controller(obj), _revision(key.split("/")[0], obj))
        for key, obj in objects.items()
    }


def replaced(before: dict[str, Member], after: dict[str, Member]) -> list[str]:
    """Every member gone, new, or with another uid, controller or revision, one line each."""
    out = [f"gone: {k} ({m.line()})" for k, m in sorted(before.items()) if k not in after]
    out += [f"new: {k} ({m.line()})" for k, m in sorted(after.items()) if k not in before]
    out += [
        f"changed: {k} ({before[k].line()} -> {after[k].line()})"
        for k in sorted(before)
        if k in after and before[k] != after[k]
    ]
    return out


def entries(obj: dict[str, Any], manager: str) -> list[dict[str, Any]]:
    return [e for e in obj["metadata"].get("managedFields") or () if e.get("manager") == manager]


def top_fields(entry: dict[str, Any]) -> list[str]:
    """The paths an entry owns, two levels deep (``spec.template``, ``metadata.labels``...)."""
    out = []
    for top, below in (entry.get("fieldsV1") or {}).items():
        inner = [k for k in below if k != "."] if isinstance(below, dict) else []
        out += [f"{top[2:]}.{k[2:]}" for k in inner] or [top[2:]]
    return out


def left_with(objects: dict[str, dict[str, Any]], manager: str) -> dict[str, list[str]]:
    """Per rendered object, the fields ``manager``'s Update entries still own."""
    out = {}
    for key, obj in objects.items():
        if key.split("/")[0] not in (*RENDERED, DGD):
            continue
        owned = [
            f"{e.get('subresource') or 'main'}: {path}"
            for e in entries(obj, manager)
            if e.get("operation") == "Update"
            for path in top_fields(e)
        ]
        if owned:
            out[key] = owned
    return out


def metadata_of(obj: dict[str, Any]) -> dict[str, Any]:
    """What a hand-back may change besides pod templates: labels, annotations, finalizers,
    owner references and which managers hold fields."""
    meta = obj["metadata"]
    return {
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "finalizers": meta.get("finalizers") or [],
        "ownerReferences": [
            f"{r['kind']}/{r['name']}{' controller' if r.get('controller') else ''}"
            for r in meta.get("ownerReferences") or ()
        ],
        "managers": sorted(
            {
                f"{e['manager']} {e['operation']} {e.get('subresource', '')}".rstrip()
                for e in meta.get("managedFields") or ()
            }
        ),
    }


def metadata_changes(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
) -> list[str]:
    """Per object kept, each metadata key whose value changed: ``Kind/name field: old -> new``."""
    out = []
    for key in sorted(set(before) & set(after)):
        old, new = metadata_of(before[key]), metadata_of(after[key])
        for field, value in old.items():
            if isinstance(value, dict):
                for k in sorted(set(value) | set(new[field])):
                    if value.get(k) != new[field].get(k):
                        out.append(f"{key} {field}[{k}]: {value.get(k)!r} -> {new[field].get(k)!r}")
            elif value != new[field]:
                out.append(f"{key} {field}: {value} -> {new[field]}")
    return out


# Upstream's operator turns its LeaderWorkerSet support on only when the Volcano API group is
# served too (internal/features/gates.go), even when its configuration enables LWS; it lists
# and watches PodGroups then, to clean up ones of its own older releases. No Volcano scheduler
# runs here and the operator creates no PodGroup for an LWS: only the API group is needed.
PODGROUP_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.volcano.sh"},
    "spec": {
        "group": "scheduling.volcano.sh",
        "names": {"kind": "PodGroup", "listKind": "PodGroupList", "plural": "podgroups"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1beta1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


@contextlib.contextmanager
def volcano_group_served(kube: Kube) -> Iterator[None]:
    replace(kube, PODGROUP_CRD)
    try:
        yield
    finally:
        kube.request("DELETE", f"{CRD_PATH}/{PODGROUP_CRD['metadata']['name']}")
