"""Helpers for the coexistence tests (no tests here): what users add with the real kubectl, and
the check that all of it survived the agent's reconciles (docs/ownership.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.kube import Kube
from tests.support.kubectl import Kubectl

LABEL = ("team", "search")  # a cost-allocation label
ANNOTATION = ("prometheus.io/scrape", "true")  # a scrape annotation
# kubectl's resource names, fully qualified so no other API group can claim them.
RESOURCES = {
    "DynamoComponentDeployment": "dynamocomponentdeployments.nvidia.com",
    "Deployment": "deployments.apps",
    "LeaderWorkerSet": "leaderworkersets.leaderworkerset.x-k8s.io",
    "Service": "services",
    "DisaggregatedSet": "disaggregatedsets.disaggregatedset.x-k8s.io",
    "PodCliqueSet": "podcliquesets.grove.io",
}
OURS = "syncagent/"


@dataclass(frozen=True)
class Target:
    kind: str
    name: str

    @property
    def resource(self) -> str:
        return f"{RESOURCES[self.kind]}/{self.name}"

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


def keeper(kube: Kube, ns: str) -> dict[str, Any]:
    """A ConfigMap users hang objects on (a backup or cost object): a non-controller owner."""
    return kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keeper", "namespace": ns}}
    )


def add_foreign_metadata(kubectl: Kubectl, targets: list[Target], owner: dict[str, Any]) -> None:
    """What a user adds by hand: ``kubectl label``, ``kubectl annotate`` and an owner reference
    appended with ``kubectl patch``."""
    for target in targets:
        kubectl.label(target.resource, "=".join(LABEL))
        kubectl.annotate(target.resource, "=".join(ANNOTATION))
        kubectl.add_owner(target.resource, owner)


def _entry(obj: dict[str, Any], manager: str) -> dict[str, Any] | None:
    for entry in obj["metadata"].get("managedFields") or ():
        if entry["manager"] == manager and entry["operation"] == "Update":
            return entry["fieldsV1"]
    return None


def check_foreign_metadata(kube: Kube, ns: str, targets: list[Target], owner_uid: str) -> None:
    """Every object still has the user's label, annotation and owner reference, each still
    owned by the kubectl manager that wrote it, and is still controlled by us."""
    for target in targets:
        obj = kube.get(target.kind, ns, target.name)
        assert obj is not None, f"{target} is gone"
        meta = obj["metadata"]
        assert meta.get("labels", {}).get(LABEL[0]) == LABEL[1], f"{target}: label lost"
        assert meta.get("annotations", {}).get(ANNOTATION[0]) == ANNOTATION[1], (
            f"{target}: annotation lost"
        )
        refs = meta.get("ownerReferences") or []
        assert owner_uid in {r["uid"] for r in refs}, f"{target}: owner reference lost"
        controllers = [r for r in refs if r.get("controller")]
        assert len(controllers) == 1, f"{target}: controllers {controllers}"
        assert controllers[0]["apiVersion"].startswith("nvidia.com/"), target
        assert _entry(obj, "kubectl-label") == {
            "f:metadata": {"f:labels": {f"f:{LABEL[0]}": {}}}
        }, f"{target}: kubectl-label's entry changed"
        annotated = _entry(obj, "kubectl-annotate") or {}
        assert f"f:{ANNOTATION[0]}" in annotated["f:metadata"]["f:annotations"], target
        patched = _entry(obj, "kubectl-patch") or {}
        assert f'k:{{"uid":"{owner_uid}"}}' in patched["f:metadata"]["f:ownerReferences"], target


def labels_of(kube: Kube, ns: str, target: Target) -> dict[str, str]:
    obj = kube.get(target.kind, ns, target.name) or {}
    return (obj.get("metadata") or {}).get("labels") or {}
