"""Upstream's own CRDs in the simulated cluster while its operator runs (no tests here).

The snapshot's ``config/crd/bases`` (read from the extracted tree in the cache, never copied)
declares, for DynamoGraphDeployment, DynamoComponentDeployment, the DGD request and the scaling
adapter, ``conversion.strategy: Webhook`` to ``dynamo-system/dynamo-operator-webhook-service``
(``/convert``), with v1alpha1 served and v1beta1 stored. No such Service exists here, and the
operator registers its ``/convert`` handler only in cluster-wide mode (webhook/setup), while it
runs here restricted to the test's namespace. So each CRD is installed with
``conversion: {strategy: None}``: v1beta1 objects are served as they are stored.

v1alpha1 stays served, because the operator itself reads it: the DGD controller owns (watches)
and deletes DynamoGraphDeploymentScalingAdapters as v1alpha1, and its resource counter lists
DGDs, DCDs and adapters as v1alpha1 (metrics only). Without conversion those v1alpha1 reads get
the stored v1beta1 objects relabelled, not converted. What that leaves out: a graph with a
``scalingAdapter`` (the operator would create a v1alpha1 adapter with ``dgdRef.serviceName``,
which the v1beta1 schema rejects: it requires ``componentName``), and any client of v1alpha1.
The tests here use v1beta1 only and graphs without scaling adapters.

Each CRD's whole spec is replaced (PUT, not an apply, so nothing of our schema stays merged in),
and :func:`upstream_crds_installed` puts our ``crds/`` back afterwards and deletes the kinds only
upstream defines, so the rest of the session runs on the cluster it started with.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support.crd_swap import CRD_PATH, replace
from tests.support.kube import Kube

REPO = Path(__file__).resolve().parents[3]


def crd_folder(binary: Path) -> Path:
    """The snapshot's CRDs, in the tree the operator binary was built from."""
    return binary.parent / "src" / "deploy" / "operator" / "config" / "crd" / "bases"


def without_conversion(crd: dict[str, Any]) -> dict[str, Any]:
    """``crd`` with no conversion webhook, its versions served as upstream declares them."""
    out = copy.deepcopy(crd)
    out["spec"]["conversion"] = {"strategy": "None"}
    return out


def load(folder: Path) -> list[dict[str, Any]]:
    docs = [yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))]
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


@contextlib.contextmanager
def upstream_crds_installed(kube: Kube, folder: Path) -> Iterator[list[str]]:
    """The snapshot's CRDs (conversion stripped) for the block; ours back afterwards."""
    upstream = [without_conversion(c) for c in load(folder)]
    ours = {c["metadata"]["name"]: c for c in load(REPO / "crds")}
    for crd in upstream:
        replace(kube, crd)
    try:
        yield [c["metadata"]["name"] for c in upstream]
    finally:
        for crd in upstream:
            name = crd["metadata"]["name"]
            if name in ours:
                replace(kube, ours[name])
            else:
                kube.request("DELETE", f"{CRD_PATH}/{name}")
