"""The Grove PodCliqueSet (grove.md §1 acceptance examples) and its readiness (§2)."""

from __future__ import annotations

import json

import pytest

from syncagent.programs.grove.pcs_readiness import GroveChild, pcs_readiness
from syncagent.programs.grove.render import (
    clique_set_change,
    fnv32a,
    live_template_replicas,
    name_length_problems,
    pcs_name,
    render_pod_clique_set,
)
from syncagent.programs.grove.startup import live_fixed
from syncagent.render import Environment, RenderError
from tests.support.graphs import frontend, typed, typed_components, worker
from tests.support.graphs import served_graph as graph

ENV = Environment()


def _grove_manifest() -> dict:
    return graph(
        "grove-manifest",
        components=[frontend("frontend"), worker("decode", "decode")],
        backendFramework="vllm",
    )


def _cliques(body: dict) -> dict[str, dict]:
    return {c["name"]: c for c in body["spec"]["template"]["cliques"]}


def test_1_shape_of_grove_manifest() -> None:
    body = render_pod_clique_set(typed(_grove_manifest()), env=ENV).body
    assert body["metadata"]["name"] == "grove-manifest"
    assert body["metadata"]["labels"] == {
        "nvidia.com/dynamo-graph-deployment-name": "grove-manifest"
    }
    spec = body["spec"]
    assert spec["replicas"] == 1
    assert "updateStrategy" not in spec
    template = spec["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
    assert template["headlessServiceConfig"] == {"publishNotReadyAddresses": True}
    assert template["terminationDelay"] == "15m0s"
    cliques = _cliques(body)
    assert list(cliques) == ["frontend", "decode-ldr", "decode-wkr"]
    for name, clique in cliques.items():
        assert clique["spec"]["replicas"] == 1
        assert clique["spec"]["minAvailable"] == 1
        assert clique["spec"]["roleName"] == name
        assert clique["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "grove-manifest"
        assert clique["annotations"]["nvidia.com/dynamo-discovery-backend"] == "kubernetes"
        assert "startsAfter" not in clique["spec"]
    assert cliques["frontend"]["labels"]["nvidia.com/selector"] == "grove-manifest-frontend"
    assert cliques["decode-ldr"]["labels"]["nvidia.com/selector"] == "grove-manifest-decode"
    assert cliques["decode-ldr"]["labels"]["role"] == "leader"
    assert cliques["decode-wkr"]["labels"]["role"] == "worker"
    assert template["podCliqueScalingGroups"] == [
        {
            "name": "decode",
            "cliqueNames": ["decode-ldr", "decode-wkr"],
            "replicas": 1,
            "minAvailable": 1,
        }
    ]
    env = cliques["decode-ldr"]["spec"]["podSpec"]["containers"][0]["env"]
    side = next(e for e in env if e["name"] == "VLLM_NIXL_SIDE_CHANNEL_HOST")
    assert side["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    text = json.dumps(body)
    for absent in (
        "nvidia.com/dynamo-worker-hash",
        "DYN_NAMESPACE_WORKER_SUFFIX",
        "nvidia.com/dynamo-operator-origin-version",
    ):
        assert absent not in text


def test_2_long_name_is_truncated_with_fnv_suffix() -> None:
    name = "a-very-long-dynamo-graph-deployment-name-for-grove"
    assert len(name) == 50
    comps = [frontend("frontend"), worker("decode", "decode")]
    assert pcs_name(name, typed_components(comps)) == "a-very-long-dynamo-graph-b594"
    assert f"{fnv32a(name) & 0xFFFF:04x}" == "b594"


def test_combined_name_length_is_refused_as_upstream_admission_does() -> None:
    """Upstream's table "rendered Grove resource name length accepts boundary / rejects
    overflow" (``webhook/validation/dynamographdeployment_validation_envtest_test.go``, rule
    ``dgdComponentResourceNameLength``): graph ``test-graph-`` + 50 x, a frontend and a
    single-node worker ``w`` + 36 x is accepted, one more character is refused with its words.
    """
    name = "test-graph-" + "x" * 50
    boundary = "w" + "x" * 36
    too_long = boundary + "x"
    ok = [frontend("frontend"), worker(boundary, "worker", nodes=1)]
    assert name_length_problems(name, typed_components(ok)) == []
    bad = [frontend("frontend"), worker(too_long, "worker", nodes=1)]
    assert name_length_problems(name, typed_components(bad)) == [
        f"spec.components[1].name: combined resource name length 46 exceeds the 45-character "
        f"pod-name limit (PCS name + component name); shorten DynamoGraphDeployment name "
        f'"{name}" or component name "{too_long}"'
    ]


def test_combined_name_length_of_a_multinode_component() -> None:
    """The scaling-group form of the same rule: PCS + PCSG + longest clique ``<c>-ldr``
    (``LongestPodCliqueNameForDGDComponent``); 17 + 21 leaves a budget of 7, raised to the
    minimum 8, so 46. The PodCliqueSet is not rendered."""
    component = "d" * 17
    comps = [worker(component, "decode")]
    [problem] = name_length_problems("my-graph", typed_components(comps))
    assert problem.startswith(
        "spec.components[0].name: combined resource name length 46 exceeds the 45-character "
        f'pod-name limit (PCS name + PCSG name + longest PodClique name "{component}-ldr")'
    )
    with pytest.raises(RenderError, match="combined resource name length 46"):
        render_pod_clique_set(typed(graph("my-graph-name", components=comps)), env=ENV)


def test_3_dots_are_normalised() -> None:
    assert pcs_name("llm.prod", typed_components([frontend("frontend")])) == "llm-prod"


def test_4_multinode_replicas_and_min_available() -> None:
    """A multinode clique's ``minAvailable`` is its replicas: upstream ``buildCliqueForRole``
    (``internal/dynamo/graph.go``: ``if p.isMultinode && !p.isInterPodFailover { minAvailable =
    p.r.Replicas }``); its table ``TestGenerateGrovePodCliqueSet`` / "multinode sglang" has
    ``worker-ldr`` {replicas 1, minAvailable 1} and, for ``nodeCount: 3``, ``worker-wkr``
    {replicas 2, minAvailable 2}. The scaling group keeps the component's ``minAvailable``.
    (grove.md example 4 says 1 for both cliques; upstream wins, spec/README.)"""
    g = graph(
        "g",
        components=[worker("decode", "decode", nodes=4, replicas=2, minAvailable=2)],
    )
    body = render_pod_clique_set(typed(g), env=ENV).body
    cliques = _cliques(body)
    assert cliques["decode-ldr"]["spec"]["replicas"] == 1
    assert cliques["decode-wkr"]["spec"]["replicas"] == 3
    assert cliques["decode-ldr"]["spec"]["minAvailable"] == 1
    assert cliques["decode-wkr"]["spec"]["minAvailable"] == 3
    three = graph("g", components=[worker("worker", "worker", nodes=3, replicas=5)])
    cliques = _cliques(render_pod_clique_set(typed(three), env=ENV).body)
    assert (
        cliques["worker-wkr"]["spec"]["replicas"],
        cliques["worker-wkr"]["spec"]["minAvailable"],
    ) == (2, 2)
    group = body["spec"]["template"]["podCliqueScalingGroups"][0]
    assert (group["replicas"], group["minAvailable"]) == (2, 2)


def _engine(name: str, module: str) -> dict:
    # upstream refuses a command line that names another backend than backendFramework
    component = worker(name, "prefill")
    component["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", module]
    return component


def test_5_trtllm_starts_leader_after_workers() -> None:
    g = graph("g", components=[_engine("prefill", "dynamo.trtllm")], backendFramework="trtllm")
    body = render_pod_clique_set(typed(g), env=ENV).body
    assert body["spec"]["template"]["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    cliques = _cliques(body)
    assert cliques["prefill-ldr"]["spec"]["startsAfter"] == ["prefill-wkr"]
    assert "startsAfter" not in cliques["prefill-wkr"]["spec"]


@pytest.mark.parametrize("backend", ["sglang", "vllm"])
def test_sglang_and_vllm_start_in_any_order(backend: str) -> None:
    """Upstream ``applyCliqueStartupDependencies`` (``internal/dynamo/graph.go``) orders cliques
    only when ``backendFramework == trtllm && numberOfNodes > 1`` (or inter-pod GMS); its table
    ``TestGenerateGrovePodCliqueSet`` ("multinode sglang", "multinode vllm") expects
    ``CliqueStartupTypeAnyOrder`` and no ``startsAfter`` (grove.md's table says Explicit for
    SGLang; upstream wins, spec/README)."""
    g = graph("g", components=[_engine("prefill", f"dynamo.{backend}")], backendFramework=backend)
    body = render_pod_clique_set(typed(g), env=ENV).body
    assert body["spec"]["template"]["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
    assert all("startsAfter" not in c["spec"] for c in _cliques(body).values())


def test_order_is_per_component_backend() -> None:
    """The backend is each component's own (upstream ``getBackendFrameworkFromComponent``,
    called per component): a TRT-LLM multinode component is ordered, a single-node one is not,
    and one ordered component makes the whole PodCliqueSet Explicit."""
    g = graph(
        "g",
        components=[
            _engine("prefill", "dynamo.trtllm"),
            {**_engine("decode", "dynamo.trtllm"), "multinode": None},
        ],
        backendFramework="trtllm",
    )
    body = render_pod_clique_set(typed(g), env=ENV).body
    assert body["spec"]["template"]["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    cliques = _cliques(body)
    assert cliques["prefill-ldr"]["spec"]["startsAfter"] == ["prefill-wkr"]
    assert [n for n, c in cliques.items() if "startsAfter" in c["spec"]] == ["prefill-ldr"]


def test_7_live_template_replicas_are_echoed() -> None:
    first = render_pod_clique_set(typed(_grove_manifest()), env=ENV).body
    g = _grove_manifest()
    g["spec"]["components"][1]["replicas"] = 3
    g["spec"]["labels"] = {"env": "prod"}
    again = render_pod_clique_set(
        typed(g), env=ENV, live_replicas=live_template_replicas(first)
    ).body
    assert again["spec"]["template"]["podCliqueScalingGroups"][0]["replicas"] == 1
    assert again["metadata"]["labels"]["env"] == "prod"
    fresh = render_pod_clique_set(typed(g), env=ENV).body
    assert fresh["spec"]["template"]["podCliqueScalingGroups"][0]["replicas"] == 3


def test_update_strategy_annotation() -> None:
    g = _grove_manifest()
    g["metadata"]["annotations"] = {"nvidia.com/grove-update-strategy": "OnDelete"}
    assert render_pod_clique_set(typed(g), env=ENV).body["spec"]["updateStrategy"] == {
        "type": "OnDelete"
    }
    g["metadata"]["annotations"] = {"nvidia.com/grove-update-strategy": "Bogus"}
    assert "updateStrategy" not in render_pod_clique_set(typed(g), env=ENV).body["spec"]


def test_clique_set_change_messages() -> None:
    live = render_pod_clique_set(typed(_grove_manifest()), env=ENV).body
    added = _grove_manifest()
    added["spec"]["components"].append({**frontend("planner"), "type": "planner"})
    message = clique_set_change(render_pod_clique_set(typed(added), env=ENV), live)
    assert message == (
        "PodCliqueSet grove-manifest: the set of cliques cannot change (added: planner, removed: "
        "none); delete and recreate the graph to change it"
    )
    renamed = _grove_manifest()
    renamed["spec"]["components"][1]["name"] = "gen"
    message = clique_set_change(render_pod_clique_set(typed(renamed), env=ENV), live)
    assert message == (
        "PodCliqueSet grove-manifest: the set of cliques cannot change (added: gen-ldr,gen-wkr, "
        "removed: decode-ldr,decode-wkr); delete and recreate the graph to change it"
    )
    assert clique_set_change(render_pod_clique_set(typed(_grove_manifest()), env=ENV), live) is None
    assert clique_set_change(render_pod_clique_set(typed(_grove_manifest()), env=ENV), None) is None


def _pcs(*, ended: bool = True) -> dict:
    status = {
        "observedGeneration": 2,
        "availableReplicas": 1,
        "updatedReplicas": 1,
        "updateProgress": {"updateStartedAt": "x"},
    }
    if ended:
        status["updateProgress"]["updateEndedAt"] = "y"
    return {
        "metadata": {"name": "grove-manifest", "generation": 2},
        "spec": {"replicas": 1},
        "status": status,
    }


FRONT = GroveChild("frontend", "PodClique", "grove-manifest-0-frontend", 1)
DECODE = GroveChild("decode", "PodCliqueScalingGroup", "grove-manifest-0-decode", 1)


def _children(*, decode: dict | None) -> list:
    return [(FRONT, {"metadata": {}, "status": {"readyReplicas": 1}}), (DECODE, decode)]


def test_readiness_examples() -> None:
    ok = {"metadata": {}, "status": {"availableReplicas": 1}}
    assert pcs_readiness(_pcs(), _children(decode=ok)).ready
    assert not pcs_readiness(_pcs(ended=False), _children(decode=ok)).ready
    assert not pcs_readiness(_pcs(), _children(decode=None)).ready
    zero = {"metadata": {}, "status": {"availableReplicas": 0}}
    assert not pcs_readiness(_pcs(), _children(decode=zero)).ready
    behind = _pcs()
    behind["metadata"]["generation"] = 3
    assert not pcs_readiness(behind, _children(decode=ok)).ready


def test_cliques_carry_no_base_model_annotation() -> None:
    """Upstream's clique annotations are ``generateAnnotations`` (``internal/dynamo/graph.go``):
    the graph's ``spec.annotations`` and the pod template's; the base model annotation is added
    only to a DCD's workload and pods (``GetDCDKubeAnnotations``, ``AddBaseModelAnnotation``).
    The base model hash label stays (``generateLabels`` -> ``AddBaseModelLabel``)."""
    model = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
    g = graph("g", components=[worker("decode", "decode", nodes=1, **model)])
    (clique,) = _cliques(render_pod_clique_set(typed(g), env=ENV).body).values()
    assert "nvidia.com/dynamo-base-model" not in clique.get("annotations", {})
    assert clique["labels"]["nvidia.com/dynamo-base-model-hash"]
    own = worker("decode", "decode", nodes=1, **model)
    own["podTemplate"]["metadata"] = {"annotations": {"nvidia.com/dynamo-base-model": "mine"}}
    (clique,) = _cliques(
        render_pod_clique_set(typed(graph("g", components=[own])), env=ENV).body
    ).values()
    assert clique["annotations"]["nvidia.com/dynamo-base-model"] == "mine"


def _with_fixed(body: dict, *, startup: str, minimum: dict, after: dict) -> dict:
    live = json.loads(json.dumps(body))
    live["spec"]["template"]["cliqueStartupType"] = startup
    for clique in live["spec"]["template"]["cliques"]:
        spec = clique["spec"]
        spec.pop("startsAfter", None)
        if clique["name"] in minimum:
            spec["minAvailable"] = minimum[clique["name"]]
        if clique["name"] in after:
            spec["startsAfter"] = after[clique["name"]]
    return live


def test_values_grove_fixed_at_creation_are_kept_from_the_live_pcs() -> None:
    """Grove refuses a change of ``cliqueStartupType``, ``startsAfter`` and a clique's
    ``minAvailable`` (spec/grove.md §1): whatever a live PodCliqueSet holds (upstream's
    operator's or an earlier syncagent's) is applied again, for multinode cliques; a
    single-node clique's ``minAvailable`` is the component's field and follows the graph."""
    g = graph(
        "g",
        components=[
            worker("fe", "worker", nodes=1, minAvailable=1),
            worker("decode", "decode", nodes=3),
        ],
    )
    fresh = render_pod_clique_set(typed(g), env=ENV).body
    live = _with_fixed(
        fresh,
        startup="CliqueStartupTypeExplicit",
        minimum={"decode-ldr": 1, "decode-wkr": 7, "fe": 5},
        after={"decode-wkr": ["decode-ldr"]},
    )
    again = render_pod_clique_set(typed(g), env=ENV, fixed=live_fixed(live)).body
    template = again["spec"]["template"]
    assert template["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    cliques = _cliques(again)
    assert cliques["decode-wkr"]["spec"]["startsAfter"] == ["decode-ldr"]
    assert list(cliques["decode-wkr"]["spec"])[-1] == "podSpec"
    assert "startsAfter" not in cliques["decode-ldr"]["spec"]
    assert cliques["decode-wkr"]["spec"]["minAvailable"] == 7
    assert cliques["fe"]["spec"]["minAvailable"] == 1
    assert live_fixed(None) is None


def _grove_objects(g: dict, env: Environment = ENV) -> dict[tuple[str, str], dict]:
    from syncagent.programs.grove.render import render_grove_graph

    return {(o.kind, o.name): o.body for o in render_grove_graph(typed(g), env=env)}


def test_cliques_name_no_fallback_service_account() -> None:
    # upstream's "default" (or a labelled account) is its DCD controller's fallback
    # (dynamocomponentdeployment_renderer.go); Grove cliques come from the component and name
    # none, unless Kubernetes discovery names its account (graph.go GenerateBasePodSpec)
    etcd = graph("g", components=[frontend("frontend")])
    (clique,) = _cliques(
        render_pod_clique_set(typed(etcd), env=Environment(discovery_backend="etcd")).body
    ).values()
    assert "serviceAccountName" not in clique["spec"]["podSpec"]
    (clique,) = _cliques(render_pod_clique_set(typed(etcd), env=ENV).body).values()
    assert clique["spec"]["podSpec"]["serviceAccountName"] == "g-k8s-service-discovery"


def test_cliques_carry_the_graphs_effective_discovery_backend() -> None:
    # GenerateGrovePodCliqueSet stamps GetDiscoveryBackend(config, graph annotations) on every
    # component's pod template, over the component's own annotation
    own = frontend("frontend")
    own["podTemplate"]["metadata"] = {"annotations": {"nvidia.com/dynamo-discovery-backend": "x"}}
    g = graph("g", components=[own], annotations={"nvidia.com/dynamo-discovery-backend": "etcd"})
    (clique,) = _cliques(render_pod_clique_set(typed(g), env=ENV).body).values()
    assert clique["annotations"]["nvidia.com/dynamo-discovery-backend"] == "etcd"
    plain = graph("g", components=[frontend("frontend")])
    env = Environment(discovery_backend="etcd")
    (clique,) = _cliques(render_pod_clique_set(typed(plain), env=env).body).values()
    assert clique["annotations"]["nvidia.com/dynamo-discovery-backend"] == "etcd"


def test_grove_component_service_metadata_is_upstreams() -> None:
    # GetDGDComponentResourceAnnotations: the graph's spec.annotations, then the component's
    # own; labels as on the other pathways but no sub-type or model hash (docs/parity.md D8)
    decode = worker("decode", "decode", nodes=1, modelRef={"name": "m/1"})
    decode["podTemplate"]["metadata"] = {"annotations": {"mine": "1"}}
    g = graph(
        "g", components=[decode], annotations={"nvidia.com/dynamo-kube-discovery-mode": "pod"}
    )
    g["spec"]["annotations"] = {"team": "a"}
    service = _grove_objects(g)[("Service", "g-decode")]
    assert service["metadata"]["annotations"] == {"team": "a", "mine": "1"}
    labels = service["metadata"]["labels"]
    assert "nvidia.com/dynamo-sub-component-type" not in labels
    assert "nvidia.com/dynamo-base-model-hash" not in labels
    assert labels["nvidia.com/dynamo-component"] == "decode"


def test_discovery_label_value_keeps_a_cut_ending_in_a_dash() -> None:
    # getK8sDiscoveryLabelValue: name[:54] + "-" + hash, nothing stripped
    from syncagent.render.naming import hash8, label_value_with_hash

    name = "very-long-inference-graph-name-for-production-traffic-a-k8s-service-discovery"
    assert name[:54].endswith("-")
    assert label_value_with_hash(name) == f"{name[:54]}-{hash8(name)}"
    assert label_value_with_hash("short") == "short"
