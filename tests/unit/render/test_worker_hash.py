"""The worker hash upstream's operator recorded on a graph, rendered on the Component pathway
(docs/parity.md D1/D2). Expected values are upstream's own test tables:
``internal/dynamo/graph_test.go`` (``TestGetDCDResourceName``,
``TestGenerateSingleDCD_RollingUpdateContext``, ``TestGenerateSingleDCD_NoRollingUpdate``,
``TestGenerateComponentContext_WorkerHashSuffix``, ``TestWorkerDefaults_WorkerHashSuffixEnvVar``)
and ``internal/controller/dgd_worker_rollout_reconciler_test.go``
(``TestInitializeWorkerHashIfNeeded_PreservesLegacyAlphaHash``: a recorded v1 stays the active
suffix beside a different v2)."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.api import validate_graph
from syncagent.render import (
    Environment,
    Rendered,
    generate_dcds,
    pod_template,
    render_graph,
    source_of_object,
)
from tests.support.graphs import typed

V1 = "nvidia.com/current-worker-hash"
V2 = "nvidia.com/current-worker-hash-v2"
HASH_LABEL = "nvidia.com/dynamo-worker-hash"
SUFFIX_ENV = "DYN_NAMESPACE_WORKER_SUFFIX"


def component(name: str, ctype: str, **extra: Any) -> dict[str, Any]:
    main = {"name": "main", "image": "img:1", "command": ["python3"], "args": ["-m", "x"]}
    return {"name": name, "type": ctype, "podTemplate": {"spec": {"containers": [main]}}} | extra


def graph(
    components: list[dict[str, Any]],
    *,
    annotations: dict[str, str] | None = None,
    name: str = "my-dgd",
    backend: str = "vllm",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": "u-1"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"backendFramework": backend, "components": components},
    }


def four_types(annotations: dict[str, str] | None) -> dict[str, Any]:
    """TestGetDCDResourceName's graph."""
    return graph(
        [
            component("prefill", "prefill"),
            component("decode", "decode"),
            component("worker", "worker"),
            component("frontend", "frontend"),
        ],
        annotations=annotations,
    )


def rendered(g: dict[str, Any]) -> dict[tuple[str, str], Rendered]:
    return {(o.kind, o.name): o for o in render_graph(typed(g), env=Environment(), lws=True)}


def main_env(template: dict[str, Any]) -> list[dict[str, Any]]:
    return next(c for c in template["spec"]["containers"] if c["name"] == "main")["env"]


def env_names(template: dict[str, Any]) -> list[str]:
    return [e["name"] for e in main_env(template)]


# -- which hash a graph's names carry --------------------------------------------------------

PRECEDENCE = [
    ("v2 only: a fresh graph's canonical hash", {V2: "abc12345"}, "abc12345"),
    ("v1 only: a generation recorded before v2 existed", {V1: "abc12345"}, "abc12345"),
    ("v1 stays the active suffix beside a different v2", {V1: "11aa22bb", V2: "abc12345"}, "11aa22bb"),
    ("legacy: the pre-hash generation, unsuffixed", {V1: "legacy"}, ""),
    ("no annotation: unsuffixed", None, ""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("annotations", "suffix"), [r[1:] for r in PRECEDENCE], ids=[r[0] for r in PRECEDENCE]
)
def test_dcd_names_carry_the_recorded_hash_on_workers_only(annotations, suffix):
    """TestGetDCDResourceName: workers get ``-<hash>``, a frontend never; with no hash none."""
    names = {d.body["spec"]["name"]: d.name for d in _component_dcds(four_types(annotations))}
    tail = f"-{suffix}" if suffix else ""
    assert names == {
        "prefill": f"my-dgd-prefill{tail}",
        "decode": f"my-dgd-decode{tail}",
        "worker": f"my-dgd-worker{tail}",
        "frontend": "my-dgd-frontend",
    }
    # the pathways left as they are never carry it
    assert {d.name for d in generate_dcds(typed(four_types(annotations)))} == {
        "my-dgd-prefill",
        "my-dgd-decode",
        "my-dgd-worker",
        "my-dgd-frontend",
    }


def _component_dcds(g: dict[str, Any]) -> list[Rendered]:
    objects = render_graph(typed(g), env=Environment(), lws=True)
    return [o for o in objects if o.kind == "DynamoComponentDeployment"]


def test_worker_dcd_labels_and_pod_template_carry_the_hash():
    """TestGenerateSingleDCD_RollingUpdateContext and ..DoesNotMutateParentDGD: the worker DCD
    and its pod template are labelled with the hash, the frontend's are not."""
    g = graph(
        [component("prefill", "prefill", replicas=4), component("frontend", "frontend")],
        annotations={V2: "aabb1122"},
    )
    objects = rendered(g)
    prefill = objects[("DynamoComponentDeployment", "my-dgd-prefill-aabb1122")].body
    assert prefill["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    assert prefill["spec"]["podTemplate"]["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    assert prefill["spec"]["replicas"] == 4
    frontend = objects[("DynamoComponentDeployment", "my-dgd-frontend")].body
    assert HASH_LABEL not in repr(frontend)


def test_a_users_worker_hash_label_gives_way_to_the_recorded_hash():
    """generateSingleDCD overwrites the pod template's label with the generation it names."""
    c = component("decode", "decode")
    c["podTemplate"]["metadata"] = {"labels": {HASH_LABEL: "mine"}}
    (dcd,) = _component_dcds(graph([c], annotations={V2: "aabb1122"}))
    assert dcd.body["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    assert dcd.body["spec"]["podTemplate"]["metadata"]["labels"][HASH_LABEL] == "aabb1122"


def test_deployment_service_and_owners_follow_the_suffixed_dcd():
    """Everything derived from the DCD name: the Deployment, its selector, the component
    Service and the owner references (the DCD controller names them after ``dcd.Name``)."""
    objects = rendered(graph([component("decode", "decode")], annotations={V2: "aabb1122"}))
    name = "my-dgd-decode-aabb1122"
    deployment = objects[("Deployment", name)]
    assert deployment.owner.name == name
    assert deployment.body["spec"]["selector"]["matchLabels"] == {"nvidia.com/selector": name}
    template = deployment.body["spec"]["template"]
    assert template["metadata"]["labels"]["nvidia.com/selector"] == name
    assert template["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    assert deployment.body["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    service = objects[("Service", name)]
    assert service.owner.name == name
    assert service.body["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    # the Service selects by component, not by generation: both generations' pods serve
    assert "nvidia.com/selector" not in service.body["spec"]["selector"]


def test_worker_pods_get_the_suffix_env_in_upstreams_order():
    """TestWorkerDefaults_WorkerHashSuffixEnvVar: set for a worker with a hash, in the sorted
    position every default variable takes (MergeEnvs); the frontend never gets it."""
    objects = rendered(
        graph(
            [component("decode", "decode"), component("frontend", "frontend")],
            annotations={V1: "abc123", V2: "ffff0000"},
        )
    )
    template = objects[("Deployment", "my-dgd-decode-abc123")].body["spec"]["template"]
    env = main_env(template)
    assert {"name": SUFFIX_ENV, "value": "abc123"} in env
    names = env_names(template)
    assert names == sorted(names)
    assert names[names.index(SUFFIX_ENV) - 1] == "DYN_NAMESPACE"
    # the Dynamo namespace itself stays the graph's: the runtime appends the suffix
    assert {"name": "DYN_NAMESPACE", "value": "ns-my-dgd"} in env
    frontend = objects[("Deployment", "my-dgd-frontend")].body["spec"]["template"]
    assert SUFFIX_ENV not in env_names(frontend)


def test_no_suffix_env_without_a_recorded_hash():
    objects = rendered(graph([component("decode", "decode")]))
    template = objects[("Deployment", "my-dgd-decode")].body["spec"]["template"]
    assert SUFFIX_ENV not in env_names(template)
    assert HASH_LABEL not in template["metadata"]["labels"]


def test_trtllm_leader_forwards_the_suffix_to_every_rank():
    """A TRT-LLM leader's ``mpirun`` forwards each variable of its container: with the suffix
    set, ``-x DYN_NAMESPACE_WORKER_SUFFIX`` too, in name order."""
    c = component("decode", "decode", multinode={"nodeCount": 2})
    c["podTemplate"]["spec"]["containers"][0] |= {
        "command": ["python3", "-m", "dynamo.trtllm"],
        "args": ["--model", "m"],
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    }
    objects = rendered(graph([c], annotations={V2: "aabb1122"}, backend="trtllm"))
    lws = objects[("LeaderWorkerSet", "my-dgd-decode-aabb1122-0")].body
    templates = lws["spec"]["leaderWorkerTemplate"]
    leader, worker = templates["leaderTemplate"], templates["workerTemplate"]
    (args,) = next(c for c in leader["spec"]["containers"] if c["name"] == "main")["args"]
    assert "-x DYN_NAMESPACE -x DYN_NAMESPACE_WORKER_SUFFIX -x DYN_PARENT_DGD_K8S_NAME" in args
    for template in (leader, worker):
        assert {"name": SUFFIX_ENV, "value": "aabb1122"} in main_env(template)
        assert template["metadata"]["labels"][HASH_LABEL] == "aabb1122"
    assert lws["metadata"]["labels"][HASH_LABEL] == "aabb1122"


def _vllm_multinode(annotations: dict[str, str] | None) -> dict[str, Any]:
    c = component("decode", "decode", multinode={"nodeCount": 2})
    c["podTemplate"]["spec"]["containers"][0] |= {
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "m"],
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    }
    return graph([c], annotations=annotations)


@pytest.mark.parametrize(
    ("annotations", "lws", "mp"),
    [
        # our design: an unstamped graph is new (syncagent stamps nothing): mp
        (None, "my-dgd-decode-0", True),
        # upstream served it unstamped (its worker hash recorded): upstream's old-graph Ray
        ({V2: "aabb1122"}, "my-dgd-decode-aabb1122-0", False),
        # stamped by upstream's webhook: the stamp decides, as upstream
        ({V2: "aabb1122", "nvidia.com/dynamo-operator-origin-version": "1.4.0"},
         "my-dgd-decode-aabb1122-0", True),
    ],
    ids=["unstamped new graph", "unstamped graph upstream served", "stamped graph upstream served"],
)  # fmt: skip
def test_vllm_executor_of_a_graph_upstream_served(annotations, lws, mp):
    """``shouldUseMpBackend``: with no override and no origin version, upstream's gate keeps
    Ray; a graph upstream served without the stamp must stay on it, or a takeover rolls it."""
    templates = rendered(_vllm_multinode(annotations))[("LeaderWorkerSet", lws)].body["spec"]
    leader = templates["leaderWorkerTemplate"]["leaderTemplate"]
    for template in (leader, templates["leaderWorkerTemplate"]["workerTemplate"]):
        # upstream sets it with mp only (backend_vllm.go UpdateContainer)
        assert ("VLLM_NIXL_SIDE_CHANNEL_HOST" in env_names(template)) is mp


# -- a live DCD, as the DCD reconciler renders it ---------------------------------------------


def live_dcd(ctype: str, template_labels: dict[str, str], *, owner: str | None = "g") -> dict:
    main = {"name": "main", "image": "img:1", "command": ["python3"], "args": ["-m", "x"]}
    meta: dict[str, Any] = {"name": "g-decode-1a2b3c4d", "namespace": "ns"}
    if owner:
        meta["ownerReferences"] = [
            {"kind": "DynamoGraphDeployment", "name": owner, "uid": "u", "controller": True}
        ]
    spec = {
        "name": "decode",
        "type": ctype,
        "podTemplate": {"metadata": {"labels": template_labels}, "spec": {"containers": [main]}},
    }
    return {"metadata": meta, "spec": spec}


def test_a_live_worker_dcd_keeps_rendering_its_generation():
    """A worker DCD whose pod template names a generation (upstream's, or ours from the graph's
    hash) renders that generation's pods, so one a replacement is coming up for is not rolled
    meanwhile; its runtime namespace carries the hash (``GetDCDRuntimeNamespace``)."""
    source = source_of_object(live_dcd("decode", {HASH_LABEL: "1a2b3c4d"}))
    template = pod_template(source, role="main", env=Environment())
    assert template["metadata"]["labels"][HASH_LABEL] == "1a2b3c4d"
    assert {"name": SUFFIX_ENV, "value": "1a2b3c4d"} in main_env(template)
    assert source.runtime_namespace == "ns-g-1a2b3c4d"


def test_a_standalone_worker_dcd_with_the_label_gets_the_suffix_even_legacy():
    """TestGenerateComponentContext_WorkerHashSuffix: a worker labelled with a hash (``legacy``
    included, the suffix of DCDs made before managed rolling updates) gets that suffix."""
    dcd = live_dcd("worker", {}, owner=None)
    dcd["metadata"]["labels"] = {HASH_LABEL: "legacy"}
    source = source_of_object(dcd)
    template = pod_template(source, role="main", env=Environment())
    assert {"name": SUFFIX_ENV, "value": "legacy"} in main_env(template)


def test_a_frontend_never_gets_the_suffix_even_with_the_label():
    """TestGenerateComponentContext_WorkerHashSuffix: not a worker, no suffix."""
    dcd = live_dcd("frontend", {}, owner=None)
    dcd["metadata"]["labels"] = {HASH_LABEL: "abc123"}
    source = source_of_object(dcd)
    template = pod_template(source, role="main", env=Environment())
    assert SUFFIX_ENV not in env_names(template)
    assert source.runtime_namespace == source.dynamo_namespace


# -- validation counts the suffix where it is rendered ----------------------------------------


def _rules(g: dict[str, Any], **kwargs: Any) -> list[str]:
    return [p.rule for p in validate_graph(typed(g), **kwargs)]


def test_validation_checks_the_suffixed_names_on_the_component_pathway_only():
    """A worker's names are 9 characters longer with a recorded hash: a graph whose suffixed
    names the API server would refuse (upstream's operator could not run it either) is refused
    whole (V14: a name past 63 characters; V16: a LeaderWorkerSet past 41); the Grove and
    DisaggregatedSet pathways render no suffix, so their checks do not count it."""
    long_name = graph([component("worker", "worker")], name="a" * 50, annotations={V2: "e35c42bb"})
    assert _rules(long_name) == ["V14"]
    assert _rules(long_name, dcd_components=()) == []
    assert _rules(graph([component("worker", "worker")], name="a" * 50)) == []
    multinode = component("decode", "decode", multinode={"nodeCount": 2})
    lws = graph([multinode], name="b" * 26, annotations={V1: "e35c42bb"})
    assert _rules(lws) == ["V16"]
    assert _rules(lws, dcd_components=("decode",)) == []
    assert _rules(graph([multinode], name="b" * 26, annotations={V1: "legacy"})) == []
