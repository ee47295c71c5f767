"""The Grove operator, played by the tests (no tests here): the cluster tier runs no Grove
controller, so :func:`simulate_grove` writes the PodCliques, PodCliqueScalingGroups and statuses
it would write for every PodCliqueSet."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import simulate_dcd_ready
from tests.support.kube import ApiFailure, Kube

PCS = "PodCliqueSet"
GROVE_AUTO = ("--capability", "grove=auto")


def grove_step(
    kube: Kube, ns: str, *, fake: FakeDsController | None = None, grove: bool = True
) -> Callable[[], None]:
    """The controllers this tier lacks, for ``eventually(step=...)``: Grove (unless ``grove`` is
    False), DCD readiness, and the fake DisaggregatedSet controller when given."""

    def step() -> None:
        if grove:
            simulate_grove(kube, ns)
        simulate_dcd_ready(kube, ns)
        if fake is not None:
            fake.sync()

    return step


def simulate_grove(kube: Kube, ns: str) -> None:
    """Status on every PCS, and ready children for each of its cliques / scaling groups."""
    for pcs in kube.list(PCS, ns):
        meta, template = pcs["metadata"], pcs["spec"]["template"]
        grouped = {n for g in template.get("podCliqueScalingGroups", []) for n in g["cliqueNames"]}
        for clique in template["cliques"]:
            if clique["name"] not in grouped:
                _child(kube, ns, "PodClique", f"{meta['name']}-0-{clique['name']}", clique)
        for group in template.get("podCliqueScalingGroups", []):
            _child(kube, ns, "PodCliqueScalingGroup", f"{meta['name']}-0-{group['name']}", group)
        status = {
            "observedGeneration": meta["generation"],
            "replicas": 1,
            "availableReplicas": 1,
            "updatedReplicas": 1,
        }
        if any((pcs.get("status") or {}).get(k) != v for k, v in status.items()):
            kube.merge(
                PCS, ns, meta["name"], {"status": status}, sub="status", manager="fake-grove"
            )


def _child(kube: Kube, ns: str, kind: str, name: str, source: dict[str, Any]) -> None:
    obj = kube.get(kind, ns, name)
    if obj is None:
        if kind == "PodClique":
            spec = {
                "roleName": source["spec"]["roleName"],
                "replicas": source["spec"]["replicas"],
                "podSpec": {"containers": [{"name": "main", "image": "x"}]},
            }
        else:
            spec = {"cliqueNames": source["cliqueNames"], "replicas": source["replicas"]}
        try:
            obj = kube.create(
                {
                    "apiVersion": "grove.io/v1alpha1",
                    "kind": kind,
                    "metadata": {"name": name, "namespace": ns},
                    "spec": spec,
                }
            )
        except ApiFailure as err:
            if err.code != 409:
                raise
            return
    replicas = obj["spec"]["replicas"]
    field = "readyReplicas" if kind == "PodClique" else "availableReplicas"
    status = {"replicas": replicas, "updatedReplicas": replicas, field: replicas}
    if any((obj.get("status") or {}).get(k) != v for k, v in status.items()):
        kube.merge(kind, ns, name, {"status": status}, sub="status", manager="fake-grove")
