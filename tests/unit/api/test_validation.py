"""spec/api.md §1.4 rules and the §1 acceptance examples that validation decides."""

from __future__ import annotations

from typing import Any

import pytest

from syncagent.api import (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    component_resource_name,
    dynamo_namespace,
    problems_message,
    validate_component_deployment,
    validate_graph,
)


def comp(name: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
    }
    out.update(fields)
    return out


def graph(
    *components: dict[str, Any], name: str = "x", namespace: str = "ns", **spec: Any
) -> DynamoGraphDeployment:
    return DynamoGraphDeployment.from_dict(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"components": list(components), **spec},
        }
    )


def messages(g: DynamoGraphDeployment, **kw: Any) -> list[str]:
    return [str(p) for p in validate_graph(g, **kw)]


def test_example_1_disagg_multinode_is_valid() -> None:
    g = graph(
        comp("Frontend", type="frontend", replicas=1),
        comp("decode", type="decode", replicas=1, multinode={"nodeCount": 2}),
        comp("prefill", type="prefill", replicas=1, multinode={"nodeCount": 2}),
        name="vllm-disagg-mn",
    )
    assert validate_graph(g) == []
    assert [c.name for c in g.spec.components] == ["Frontend", "decode", "prefill"]
    assert [c.effective_replicas for c in g.spec.components] == [1, 1, 1]
    assert [c.node_count for c in g.spec.components] == [1, 2, 2]


def test_example_2_duplicate_names_case_insensitively() -> None:
    problems = validate_graph(graph(comp("Decode"), comp("decode")))
    assert [str(p) for p in problems] == [
        "spec.components: component names must be unique case-insensitively"
    ]
    assert problems[0].rule == "V3"
    assert problems[0].full().startswith("DynamoGraphDeployment/ns/x: spec.components: ")


def test_example_3_sidecar_only_has_no_main() -> None:
    g = graph(
        {"name": "a", "podTemplate": {"spec": {"containers": [{"name": "sidecar", "image": "x"}]}}}
    )
    assert messages(g) == [
        'spec.components[0].podTemplate: a container named "main" with a non-empty image is required'
    ]


def test_main_without_image_and_no_pod_template() -> None:
    g = graph(
        {"name": "a", "podTemplate": {"spec": {"containers": [{"name": "main"}]}}},
        {"name": "b"},
    )
    assert messages(g) == [
        'spec.components[0].podTemplate: a container named "main" with a non-empty image is required',
        'spec.components[1].podTemplate: a container named "main" with a non-empty image is required',
    ]


def test_example_4_uninterpreted_fields_do_not_fail_validation() -> None:
    g = graph(
        comp("Frontend", type="frontend", providerOverride={"apiVersion": "a/v1", "value": {}}),
        comp("epp", type="epp", eppConfig={"configMapRef": {"name": "c", "key": "k"}}),
    )
    assert validate_graph(g) == []


def test_example_5_parallel_restart_with_order() -> None:
    g = graph(comp("a"), restart={"id": "r1", "strategy": {"type": "Parallel", "order": ["a"]}})
    assert messages(g) == ["spec.restart.strategy.order: must not be set for Parallel restarts"]


def test_v13_sequential_order_must_list_every_component_once() -> None:
    base = [comp("a"), comp("b")]
    ok = graph(*base, restart={"id": "r", "strategy": {"order": ["b", "a"]}})
    assert validate_graph(ok) == []
    for order in (["a"], ["a", "a", "b"], ["a", "c"]):
        bad = graph(*base, restart={"id": "r", "strategy": {"type": "Sequential", "order": order}})
        assert messages(bad) == [
            "spec.restart.strategy.order: must list every component name exactly once"
        ]


def test_example_6_dynamo_namespace() -> None:
    assert dynamo_namespace("x", "ns") == "ns-x"
    assert dynamo_namespace("x", "ns", global_namespace=True) == "dynamo"
    assert dynamo_namespace("llm.prod", "ns") == "ns-llm-prod"


def test_example_7_dotted_name_with_multinode() -> None:
    g = graph(comp("decode", multinode={"nodeCount": 2}), name="llm.prod")
    assert messages(g) == [
        'spec.components[0].multinode: the DynamoGraphDeployment name must not contain "."'
    ]
    assert validate_graph(graph(comp("decode"), name="llm.prod")) == []


def test_example_8_no_components() -> None:
    problems = validate_graph(graph())
    assert problems_message(problems) == "spec.components: at least one component is required"


def test_example_9_lws_name_budget_on_the_component_pathway() -> None:
    g = graph(
        comp("decode", multinode={"nodeCount": 2}),
        comp("prefill", multinode={"nodeCount": 2}),
        name="vllm-disaggregated-multinode-prod",
        namespace="prod",
    )
    assert problems_message(validate_graph(g)) == (
        'spec.components[0].multinode: LeaderWorkerSet name "vllm-disaggregated-multinode-prod-'
        'decode-0" must be at most 41 characters; spec.components[1].multinode: LeaderWorkerSet '
        'name "vllm-disaggregated-multinode-prod-prefill-0" must be at most 41 characters'
    )
    # On the DS pathway both are roles, not DCD LeaderWorkerSets.
    assert validate_graph(g, dcd_components=()) == []
    only_decode = messages(g, dcd_components=["decode"])
    assert len(only_decode) == 1
    assert only_decode[0].startswith("spec.components[0].multinode: ")


def test_example_10_dynamo_namespace_length() -> None:
    ns = "team-inference-production-us-east-1a"
    g = graph(
        comp("frontend"), comp("decode"), name="llama-70b-disaggregated-serving", namespace=ns
    )
    dyn = f"{ns}-llama-70b-disaggregated-serving"
    assert len(dyn) == 68
    assert messages(g) == [
        f'spec.components[0]: Dynamo namespace "{dyn}" must be at most 63 characters',
        f'spec.components[1]: Dynamo namespace "{dyn}" must be at most 63 characters',
    ]
    fixed = graph(
        comp("frontend", globalDynamoNamespace=True),
        comp("decode", globalDynamoNamespace=True),
        name="llama-70b-disaggregated-serving",
        namespace=ns,
    )
    assert validate_graph(fixed) == []


def test_v1_at_most_25_components() -> None:
    assert validate_graph(graph(*(comp(f"c{i}") for i in range(25)))) == []
    assert messages(graph(*(comp(f"c{i}") for i in range(26)))) == [
        "spec.components: at most 25 components are allowed"
    ]


@pytest.mark.parametrize("name", ["-a", "a-", "a_b", "a.b", "", "x" * 64])
def test_v2_component_name(name: str) -> None:
    assert messages(graph(comp(name))) == [
        "spec.components[0].name: must be 1-63 characters matching "
        "^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"
    ]


def test_v4_at_most_one_epp() -> None:
    assert messages(graph(comp("a", type="epp"), comp("b", type="epp"))) == [
        "spec.components: at most one component may have type epp"
    ]


def test_v6_sidecar_needs_an_image() -> None:
    g = graph(
        {
            "name": "a",
            "podTemplate": {
                "spec": {"containers": [{"name": "main", "image": "m"}, {"name": "log"}]}
            },
        }
    )
    assert messages(g) == [
        'spec.components[0].podTemplate.spec.containers[1].image: required for container "log"'
    ]


def test_v7_replicas_and_node_count() -> None:
    g = graph(comp("a", replicas=-1), comp("b", multinode={"nodeCount": 1}))
    assert messages(g) == [
        "spec.components[0].replicas: must be >= 0",
        "spec.components[1].multinode.nodeCount: must be >= 2",
    ]


@pytest.mark.parametrize(
    ("size", "ok"),
    [
        ("8Gi", True),
        ("0", True),
        (0, True),
        ("1e3", True),
        ("-1Gi", False),
        ("lots", False),
        (-5, False),
    ],
)
def test_v8_shared_memory_size(size: object, ok: bool) -> None:
    found = messages(graph(comp("a", sharedMemorySize=size)))
    assert found == (
        [] if ok else ["spec.components[0].sharedMemorySize: must be a non-negative quantity"]
    )


def test_v9_model_ref_name() -> None:
    assert messages(graph(comp("a", modelRef={"name": ""}))) == [
        "spec.components[0].modelRef.name: required"
    ]


def test_v10_v11_checkpoint() -> None:
    g = graph(
        comp("a", experimental={"checkpoint": {"enabled": True}}),
        comp("b", experimental={"checkpoint": {"enabled": True, "checkpointRef": "c", "job": {}}}),
        comp("c", experimental={"checkpoint": {"enabled": False}}),
    )
    assert messages(g) == [
        "spec.components[0].experimental.checkpoint.checkpointRef: required when checkpoint is "
        "enabled; automatic checkpoint creation is not supported",
        "spec.components[1].experimental.checkpoint: checkpoint.job cannot be set when "
        "checkpointRef is specified",
    ]


def test_v14_generated_name() -> None:
    long_graph = "g" * 50
    g = graph(comp("a" * 13), name=long_graph, namespace="n")
    generated = component_resource_name(long_graph, "a" * 13)
    assert len(generated) == 64
    assert messages(g, dcd_components=()) == [
        f'spec.components[0]: generated resource name "{generated}" must be a DNS-1035 label of at '
        "most 63 characters"
    ]
    # A DNS-1035 label starts with a letter.
    assert messages(graph(comp("a"), name="1x"))[0].startswith(
        'spec.components[0]: generated resource name "1x-a"'
    )
    assert component_resource_name("My.Graph", "Decode") == "my-graph-decode"


def test_problems_are_ordered_graph_components_restart() -> None:
    g = graph(
        comp("a", replicas=-1),
        comp("A"),
        restart={"id": "r", "strategy": {"type": "Parallel", "order": ["a"]}},
    )
    assert [p.rule for p in validate_graph(g)] == ["V3", "V7", "V12"]


def test_namespace_default_and_override() -> None:
    g = DynamoGraphDeployment.from_dict(
        {"metadata": {"name": "x"}, "spec": {"components": [comp("a", replicas=-1)]}}
    )
    assert validate_graph(g)[0].object_ref == "DynamoGraphDeployment/default/x"
    assert validate_graph(g, namespace="prod")[0].object_ref == "DynamoGraphDeployment/prod/x"


def test_dcd_rules_use_spec_paths() -> None:
    dcd = DynamoComponentDeployment.from_dict(
        {
            "metadata": {"name": "a-very-long-graph-name-for-testing-decode", "namespace": "ns"},
            "spec": {"replicas": -2, "multinode": {"nodeCount": 2}},
        }
    )
    assert [str(p) for p in validate_component_deployment(dcd)] == [
        'spec.podTemplate: a container named "main" with a non-empty image is required',
        "spec.replicas: must be >= 0",
        'spec.multinode: LeaderWorkerSet name "a-very-long-graph-name-for-testing-decode-0" must '
        "be at most 41 characters",
    ]
    assert (
        validate_component_deployment(dcd)[0]
        .full()
        .startswith(
            "DynamoComponentDeployment/ns/a-very-long-graph-name-for-testing-decode: spec.podTemplate"
        )
    )
