"""The simulated cluster itself: nodes, pods, the LWS webhooks as the API server calls them, and
the LWS controller (spec/third-party.md §1 and §2 acceptance examples marked e2e)."""

from __future__ import annotations

import pytest

from syncagent.devcluster import kwok
from tests.e2e.support.observe import DEADLINE, pod_ready, pods
from tests.support.kube import ApiFailure, Kube
from tests.support.polling import eventually

LWS_PATH = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{ns}/leaderworkersets"
DS_PATH = "/apis/disaggregatedset.x-k8s.io/v1/namespaces/{ns}/disaggregatedsets"
LWS_NAME = "leaderworkerset.sigs.k8s.io/name"


def _lws(name: str, *, size: int = 2, **spec: object) -> dict:
    template = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "main", "image": "registry.example/engine:1"}]},
    }
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name},
        "spec": {"leaderWorkerTemplate": {"size": size, "workerTemplate": template}, **spec},
    }


def test_gpu_nodes_are_ready_and_schedulable(kube, sim_cluster):
    nodes = [n for n in kube.request("GET", "/api/v1/nodes")["items"] if kwok.node_ready(n)]
    assert len(nodes) == sim_cluster.nodes == 4
    for node in nodes:
        assert node["status"]["allocatable"][kwok.GPU] == "8"
        assert node["metadata"]["annotations"][kwok.NODE_ANNOTATION] == "fake"


def test_lws_dry_run_gets_the_webhook_defaults(kube, namespace):
    """third-party.md §1 acceptance 1: the mutating webhook fills rolloutStrategy and
    networkConfig (the CRD alone leaves both absent)."""
    out = kube.request("POST", LWS_PATH.format(ns=namespace), _lws("probe"), dryRun="All")
    assert out["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0, "partition": 0},
    }
    assert out["spec"]["networkConfig"] == {"subdomainPolicy": "Shared"}
    template = out["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert "imagePullPolicy" not in template  # third-party.md §1 acceptance 4


def test_lws_validating_webhook_rejects_zero_surge_and_unavailable(kube, namespace):
    bad = _lws(
        "bad",
        rolloutStrategy={
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 0},
        },
    )
    with pytest.raises(ApiFailure) as err:
        kube.request("POST", LWS_PATH.format(ns=namespace), bad, dryRun="All")
    # an admission webhook's denial is a 403 naming the webhook
    assert err.value.code == 403
    message = err.value.body["message"]
    assert 'admission webhook "vleaderworkerset.kb.io" denied the request' in message
    assert "must not be 0 when `maxSurge` is 0" in message


def test_ds_webhook_rejects_a_partition(kube, namespace):
    """third-party.md §2 acceptance 5."""

    def role(name: str) -> dict:
        spec = _lws(name)["spec"]
        spec["rolloutStrategy"] = {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"partition": 1, "maxSurge": 1},
        }
        return {"name": name, "spec": spec}

    ds = {
        "apiVersion": "disaggregatedset.x-k8s.io/v1",
        "kind": "DisaggregatedSet",
        "metadata": {"name": "parted"},
        "spec": {"roles": [role("prefill"), role("decode")]},
    }
    with pytest.raises(ApiFailure) as err:
        kube.request("POST", DS_PATH.format(ns=namespace), ds, dryRun="All")
    message = err.value.body["message"]
    assert 'admission webhook "vdisaggregatedset.kb.io" denied the request' in message
    assert "partition is not supported by DisaggregatedSet" in message


def test_lws_groups_become_ready_with_the_pod_webhook_env(kube, namespace):
    """The real LWS controller, StatefulSet controller, scheduler and kwok take an LWS to
    Available; the pod webhook injects the multinode environment; a replicas-only change makes
    no new ControllerRevision (third-party.md §1 acceptance 5)."""
    kube.request("POST", LWS_PATH.format(ns=namespace), _lws("grp"))

    def available() -> bool:
        lws = kube.request("GET", LWS_PATH.format(ns=namespace) + "/grp")
        conditions = (lws.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Available" and c["status"] == "True" for c in conditions)

    eventually(available, deadline=DEADLINE, what="the LWS Available")
    group = pods(kube, namespace, **{LWS_NAME: "grp"})
    assert sorted(p["metadata"]["name"] for p in group) == ["grp-0", "grp-0-1"]
    assert all(pod_ready(p) and p["status"].get("podIP") for p in group)
    assert all(p["spec"]["nodeName"].startswith(kwok.NODE_PREFIX) for p in group)
    for pod in group:
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env", [])}
        assert env["LWS_LEADER_ADDRESS"] == f"grp-0.grp.{namespace}"
        assert env["LWS_GROUP_SIZE"] == "2"
        index = pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"]
        assert env["LWS_WORKER_INDEX"] == index
    revisions = _revisions(kube, namespace)
    assert len(revisions) == 1
    kube.merge("LeaderWorkerSet", namespace, "grp", {"spec": {"replicas": 2}})
    eventually(
        lambda: len([p for p in pods(kube, namespace, **{LWS_NAME: "grp"}) if pod_ready(p)]) == 4,
        deadline=DEADLINE,
        what="a second group",
    )
    assert _revisions(kube, namespace) == revisions
    assert {p["metadata"]["uid"] for p in group} <= {
        p["metadata"]["uid"] for p in pods(kube, namespace, **{LWS_NAME: "grp"})
    }


def _revisions(kube: Kube, ns: str) -> set[str]:
    """The template hashes of the LWS's own ControllerRevisions (``<lws>-<hash>-<number>``; its
    StatefulSets keep theirs too). Hashes, not revisions: the LWS controller sometimes writes a
    second revision of the same template at creation, from a cache that did not yet hold the
    first ("More than one revision exists for the given template hash; returning the latest
    revision" in its log); that is no new template."""
    listed = kube.request("GET", f"/apis/apps/v1/namespaces/{ns}/controllerrevisions")
    return {
        r["metadata"]["name"].rsplit("-", 1)[0]
        for r in listed["items"]
        if any(o["kind"] == "LeaderWorkerSet" for o in r["metadata"].get("ownerReferences", []))
    }
