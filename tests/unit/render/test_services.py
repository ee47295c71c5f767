"""Component Services, model Services and discovery identity: rendering.md §4 examples."""

from __future__ import annotations

from syncagent.render import (
    Environment,
    OwnerRef,
    discovery_identity,
    generate_dcds,
    model_service,
    render_component,
    render_graph,
    source_of,
    source_of_object,
)
from syncagent.render.services import wants_component_service
from tests.support.graphs import typed


def graph(name, components, *, namespace="ns", annotations=None, **spec):
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "annotations": annotations or {},
        },
        "spec": {"components": components, **spec},
    }


def comp(name, ctype, **extra):
    container = {"name": "main", "image": "i:1", "args": ["--x"]}
    return {
        "name": name,
        "type": ctype,
        "podTemplate": {"spec": {"containers": [container]}},
        **extra,
    }


def objects(g, **kw):
    return {(o.kind, o.name): o for o in render_graph(typed(g), env=Environment(), lws=True, **kw)}


def test_example_1_frontend_service():
    out = objects(graph("x", [comp("Frontend", "frontend")]))
    svc = out[("Service", "x-frontend")]
    assert svc.manager == "syncagent/services"
    assert svc.body["spec"]["type"] == "ClusterIP"
    assert svc.body["spec"]["selector"] == {
        "nvidia.com/dynamo-component-type": "frontend",
        "nvidia.com/dynamo-namespace": "ns-x",
        "nvidia.com/dynamo-component": "Frontend",
    }
    assert svc.body["spec"]["ports"] == [
        {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}
    ]
    assert (svc.owner.kind, svc.owner.name) == ("DynamoComponentDeployment", "x-frontend")
    # upstream GenerateComponentService: the workload's labels plus the discovery labels
    workload_labels = out[("Deployment", "x-frontend")].body["metadata"]["labels"]
    assert svc.body["metadata"]["labels"] == {
        **workload_labels,
        "nvidia.com/dynamo-discovery-backend": "kubernetes",
        "nvidia.com/dynamo-discovery-enabled": "true",
    }


def test_example_2_multinode_decode_service():
    out = objects(graph("x", [comp("decode", "decode", multinode={"nodeCount": 2})]))
    svc = out[("Service", "x-decode")]
    assert svc.body["spec"]["selector"]["role"] == "leader"
    assert svc.body["spec"]["selector"]["nvidia.com/dynamo-component-type"] == "decode"
    assert svc.body["spec"]["ports"] == [
        {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}
    ]


def test_epp_port():
    out = objects(graph("x", [comp("epp", "epp")]))
    assert out[("Service", "x-epp")].body["spec"]["ports"] == [
        {
            "name": "grpc",
            "port": 9002,
            "targetPort": 9002,
            "protocol": "TCP",
            "appProtocol": "http2",
        }
    ]


def test_example_3_no_component_service_without_discovery_except_frontend():
    g = graph(
        "x",
        [comp("worker", "worker"), comp("Frontend", "frontend")],
        annotations={"nvidia.com/dynamo-discovery-backend": "etcd"},
    )
    out = objects(g)
    assert ("Service", "x-worker") not in out
    assert ("Service", "x-frontend") in out
    # and no discovery identity either
    assert not [k for k in out if k[0] in ("ServiceAccount", "Role", "RoleBinding")]
    sources = [source_of(d, graph="x") for d in generate_dcds(typed(g))]
    assert [wants_component_service(s, Environment()) for s in sources] == [False, True]


def test_service_name_is_normalized():
    out = objects(graph("llm.prod", [comp("Frontend", "frontend")]))
    assert ("Service", "llm-prod-frontend") in out
    assert ("Deployment", "llm.prod-frontend") in out


def test_example_4_model_service():
    out = objects(graph("x", [comp("decode", "decode", modelRef={"name": "Qwen/Qwen3-0.6B"})]))
    svc = out[("Service", "dynamo-model-fb68f5a6")]
    assert svc.shared
    assert svc.manager == "syncagent/services"
    assert svc.body["metadata"]["labels"] == {
        "nvidia.com/dynamo-base-model-hash": "fb68f5a6",
        "nvidia.com/managed-by": "dynamo-operator",
    }
    assert svc.body["spec"] == {
        "clusterIP": "None",
        "publishNotReadyAddresses": False,
        "selector": {"nvidia.com/dynamo-base-model-hash": "fb68f5a6"},
        "ports": [{"name": "system", "port": 9090, "targetPort": 9090, "protocol": "TCP"}],
    }


def test_example_5_one_model_service_per_model_same_content_from_each_owner():
    def lone(name, cname):
        return source_of_object(
            {
                "metadata": {"name": name, "namespace": "ns"},
                "spec": comp(cname, cname, modelRef={"name": "m/1"}),
            }
        )

    a = render_component(lone("x-decode", "decode"), env=Environment(), lws=True, uid="ua")
    b = render_component(lone("x-prefill", "prefill"), env=Environment(), lws=True, uid="ub")
    assert a.model_service.body == b.model_service.body
    assert a.model_service.owner == OwnerRef(
        "nvidia.com/v1beta1", "DynamoComponentDeployment", "x-decode", "ua"
    )
    assert b.model_service.owner.uid == "ub"
    # per-owner items are plain references; only the ownership manager marks a controller
    assert b.model_service.owner.item(controller=False) == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "name": "x-prefill",
        "uid": "ub",
    }


def test_graph_renders_one_model_service_per_distinct_model():
    g = graph(
        "x",
        [
            comp("decode", "decode", modelRef={"name": "m/1"}),
            comp("prefill", "prefill", modelRef={"name": "m/1"}),
            comp("other", "worker", modelRef={"name": "m/2"}),
        ],
    )
    services = [
        o
        for o in render_graph(typed(g), env=Environment(), lws=True)
        if o.name.startswith("dynamo-model-")
    ]
    assert [s.name for s in services] == [
        model_service("m/1", namespace="ns").name,
        model_service("m/2", namespace="ns").name,
    ]
    # the last DCD serving the model controls it, as one pass of upstream's DCD reconciles
    # leaves it (each makes itself the controller of the Service it syncs)
    assert services[0].owner.name == "x-prefill"


def test_example_6_discovery_identity():
    out = objects(graph("x", [comp("decode", "decode")]))
    sa = out[("ServiceAccount", "x-k8s-service-discovery")]
    role = out[("Role", "x-k8s-service-discovery-role")]
    binding = out[("RoleBinding", "x-k8s-service-discovery-binding")]
    for obj in (sa, role, binding):
        assert obj.manager == "syncagent/identity"
        assert (obj.owner.kind, obj.owner.name, obj.owner.uid) == (
            "DynamoGraphDeployment",
            "x",
            "uid-x",
        )
        assert obj.body["metadata"]["labels"] == {
            "app.kubernetes.io/managed-by": "dynamo-operator",
            "app.kubernetes.io/component": "rbac",
            "app.kubernetes.io/name": "x-k8s-service-discovery",
        }
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): r["verbs"] for r in role.body["rules"]}
    assert rules[(("",), ("endpoints", "pods"))] == ["get", "list", "watch"]
    assert rules[(("discovery.k8s.io",), ("endpointslices",))] == ["get", "list", "watch"]
    # in upstream's order (internal/discovery/resource.go): a reordered list rewrites the Role on a takeover
    assert rules[(("nvidia.com",), ("dynamoworkermetadatas",))] == [
        "create",
        "get",
        "list",
        "watch",
        "update",
        "patch",
        "delete",
    ]
    assert binding.body["subjects"] == [
        {"kind": "ServiceAccount", "name": "x-k8s-service-discovery", "namespace": "ns"}
    ]
    assert binding.body["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "x-k8s-service-discovery-role",
    }


def test_identity_name_label_is_hash_truncated():
    parent = "p" * 60
    (sa, _, _) = discovery_identity(parent, namespace="ns", owner=OwnerRef("v", "K", "n"))
    value = sa.body["metadata"]["labels"]["app.kubernetes.io/name"]
    assert len(value) == 63
    assert sa.name == parent + "-k8s-service-discovery"
    assert value.startswith("p" * 54 + "-")


def test_example_7_model_service_ignores_graph_annotations():
    x = graph("x", [comp("decode", "decode", modelRef={"name": "Qwen/Qwen3-0.6B"})])
    x["spec"]["annotations"] = {"team": "a"}
    y = graph("y", [comp("decode", "decode", modelRef={"name": "Qwen/Qwen3-0.6B"})])
    sx = objects(x)[("Service", "dynamo-model-fb68f5a6")]
    sy = objects(y)[("Service", "dynamo-model-fb68f5a6")]
    assert sx.body["metadata"]["annotations"] == {"nvidia.com/dynamo-base-model": "Qwen/Qwen3-0.6B"}
    assert sx.body == sy.body
    # the graph annotation does reach the component's own objects
    assert objects(x)[("Service", "x-decode")].body["metadata"]["annotations"]["team"] == "a"


def test_live_selector_override():
    from syncagent.render import component_service

    source = source_of_object(
        {
            "metadata": {"name": "d", "namespace": "ns"},
            "spec": comp("decode", "decode", multinode={"nodeCount": 2}),
        }
    )
    live = {"nvidia.com/selector": "d"}
    owner = OwnerRef("a", "b", "c")
    svc = component_service(source, env=Environment(), owner=owner, selector=live)
    assert svc.body["spec"]["selector"] == live
