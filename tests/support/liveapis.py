"""Optional APIs that come and go while the agent runs (no tests here).

:class:`BareControlPlane` is a control plane that serves only our own CRDs (DGD, DCD,
checkpoints): no LeaderWorkerSet, DisaggregatedSet or Grove. :func:`install` and :func:`remove`
then add and delete the real pinned LWS + DS CRDs (``syncagent.devcluster.crds``), waiting until
the server serves them, or no longer does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import yaml

from syncagent.devcluster import ControlPlane, crds, versions
from tests.support.kube import ApiFailure, Kube
from tests.support.polling import eventually

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
DEADLINE = 60.0


class BareControlPlane(ControlPlane):
    """Serves only ``extra_crds``: the optional APIs are the test's to install."""

    def crd_paths(self) -> list[Path]:
        return list(self.extra_crds)


def lws_and_ds() -> list[dict[str, Any]]:
    """The pinned LeaderWorkerSet and DisaggregatedSet CRDs (the default LWS version)."""
    docs = []
    for path in crds.lws_crds(versions.DEFAULT_LWS):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def install(kube: Kube, docs: list[dict[str, Any]]) -> None:
    """Apply the CRDs; return once each is Established and its objects can be listed."""
    for doc in docs:
        eventually(
            lambda d=doc: _apply(kube, d),
            deadline=DEADLINE,
            what=f"CRD {doc['metadata']['name']} applied",
        )
    for doc in docs:
        eventually(
            lambda d=doc: _established(kube, d) and kube.request("GET", _list_path(d)),
            deadline=DEADLINE,
            what=f"CRD {doc['metadata']['name']} served",
        )


def remove(kube: Kube, docs: list[dict[str, Any]]) -> None:
    """Delete the CRDs (their objects go with them); return once the server serves none."""
    for doc in docs:
        eventually(
            lambda d=doc: _delete(kube, f"{CRDS}/{d['metadata']['name']}"),
            deadline=DEADLINE,
            what=f"CRD {doc['metadata']['name']} deleted",
        )
    for doc in docs:
        eventually(
            lambda d=doc: (
                _gone(kube, f"{CRDS}/{d['metadata']['name']}") and _gone(kube, _list_path(d))
            ),
            deadline=DEADLINE,
            what=f"CRD {doc['metadata']['name']} gone",
        )


def _apply(kube: Kube, crd: dict[str, Any]) -> bool:
    """One server-side apply; a timeout (a loaded machine) is "not yet": applying is idempotent."""
    try:
        kube.request(
            "PATCH",
            f"{CRDS}/{crd['metadata']['name']}",
            crd,
            content_type="application/apply-patch+yaml",
            fieldManager="syncagent-tests",
            force="true",
        )
    except httpx2.TimeoutException:
        return False
    return True


def _delete(kube: Kube, path: str) -> bool:
    try:
        kube.request("DELETE", path)
    except ApiFailure as err:
        if err.code != 404:
            raise
    except httpx2.TimeoutException:
        return False  # sent or not: the next try finds it deleting, or gone (404)
    return True


def _established(kube: Kube, crd: dict[str, Any]) -> bool:
    live = kube.request("GET", f"{CRDS}/{crd['metadata']['name']}")
    conditions = (live.get("status") or {}).get("conditions") or ()
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _gone(kube: Kube, path: str) -> bool:
    # An unserved group answers "404 page not found" as plain text, not a Status.
    return kube.http.get(path).status_code == 404


def _list_path(crd: dict[str, Any]) -> str:
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    return f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"
