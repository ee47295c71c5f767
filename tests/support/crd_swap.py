"""Replace a CRD of the test control plane whole, waiting until the server serves the new one."""

from __future__ import annotations

import copy
from typing import Any

from tests.support.kube import ApiFailure, Kube
from tests.support.polling import eventually

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def replace(kube: Kube, crd: dict[str, Any]) -> None:
    """Create ``crd``, or replace the live one's spec and metadata labels/annotations whole."""
    name = crd["metadata"]["name"]
    try:
        live = kube.request("GET", f"{CRD_PATH}/{name}")
    except ApiFailure as err:
        if err.code != 404:
            raise
        kube.request("POST", CRD_PATH, crd)
    else:
        body = copy.deepcopy(crd)
        body["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
        kube.request("PUT", f"{CRD_PATH}/{name}", body)
    eventually(lambda: _established(kube, name), deadline=60, what=f"CRD {name} Established")


def _established(kube: Kube, name: str) -> bool:
    crd = kube.request("GET", f"{CRD_PATH}/{name}")
    conditions = (crd.get("status") or {}).get("conditions") or []
    established = any(c["type"] == "Established" and c["status"] == "True" for c in conditions)
    # A replaced CRD is in effect once the server reports the spec's versions as stored.
    return established and all(
        v["name"] in crd["status"].get("storedVersions", []) or not v["storage"]
        for v in crd["spec"]["versions"]
    )
