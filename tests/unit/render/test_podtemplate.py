"""Pod templates: rendering.md §2 acceptance examples and the defaults table."""

from __future__ import annotations

import pytest

from syncagent.render import (
    AgentAccount,
    ComponentSource,
    Environment,
    PullSecret,
    RenderError,
    deployment,
    generate_dcds,
    leader_worker_templates,
    pod_template,
    source_of,
    source_of_object,
)
from syncagent.render.pullsecrets import image_registry, registry_hosts
from tests.support.graphs import typed
from tests.support.kube import main_of

WORKER_ENV_NAMES = [
    "DYN_COMPONENT",
    "DYN_DISCOVERY_BACKEND",
    "DYN_FORWARDPASS_METRIC_PORT",
    "DYN_HEALTH_CHECK_ENABLED",
    "DYN_NAMESPACE",
    "DYN_PARENT_DGD_K8S_NAME",
    "DYN_PARENT_DGD_K8S_NAMESPACE",
    "DYN_SYSTEM_ENABLED",
    "DYN_SYSTEM_PORT",
    "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS",
    "NIXL_TELEMETRY_ENABLE",
    "NIXL_TELEMETRY_EXPORTER",
    "NIXL_TELEMETRY_PROMETHEUS_PORT",
    "POD_NAME",
    "POD_NAMESPACE",
    "POD_UID",
]
WORKER_PROBES = {
    "livenessProbe": {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 5,
        "timeoutSeconds": 4,
        "failureThreshold": 1,
    },
    "readinessProbe": {
        "httpGet": {"path": "/health", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 4,
        "failureThreshold": 3,
    },
    "startupProbe": {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    },
}


def standalone(name, spec, *, namespace="ns", labels=None, annotations=None):
    return source_of_object(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": labels or {},
                "annotations": annotations or {},
            },
            "spec": spec,
        }
    )


def worker_spec(*, args=None, **extra):
    container = {"name": "main", "image": "registry.example/dynamo-worker:test"}
    if args is not None:
        container["args"] = args
    return {
        "backendFramework": "vllm",
        "name": "decode",
        "type": "decode",
        "replicas": 2,
        "podTemplate": {"spec": {"containers": [container]}},
        **extra,
    }


def env_dict(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def assert_example_1_pod(template, *, parent, namespace):
    labels = template["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-component"] == "decode"
    assert labels["nvidia.com/dynamo-component-type"] == "decode"
    assert labels["nvidia.com/dynamo-sub-component-type"] == "decode"
    assert labels["nvidia.com/dynamo-discovery-backend"] == "kubernetes"
    assert labels["nvidia.com/dynamo-discovery-enabled"] == "true"
    assert labels["nvidia.com/metrics-enabled"] == "true"
    assert labels["nvidia.com/dynamo-namespace"] == f"{namespace}-{parent}"
    assert "nvidia.com/dynamo-graph-deployment-name" not in labels
    main = main_of(template)
    assert main["command"] == ["/bin/sh", "-c"]
    assert [e["name"] for e in main["env"]] == WORKER_ENV_NAMES
    env = env_dict(main)
    assert env["DYN_COMPONENT"] == "decode"
    assert env["DYN_PARENT_DGD_K8S_NAME"] == parent
    assert env["DYN_PARENT_DGD_K8S_NAMESPACE"] == namespace
    assert env["DYN_NAMESPACE"] == f"{namespace}-{parent}"
    assert env["DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"] == '["generate"]'
    assert env["POD_UID"] == {"fieldRef": {"fieldPath": "metadata.uid"}}
    assert main["ports"] == [
        {"name": "system", "containerPort": 9090, "protocol": "TCP"},
        {"name": "nixl", "containerPort": 19090, "protocol": "TCP"},
    ]
    assert main["volumeMounts"] == [{"name": "shared-memory", "mountPath": "/dev/shm"}]
    spec = template["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["terminationGracePeriodSeconds"] == 60
    assert spec["securityContext"] == {"fsGroup": 1000}
    assert spec["serviceAccountName"] == f"{parent}-k8s-service-discovery"
    assert spec["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
    ]


def test_example_1_standalone_deployment_manifest():
    source = standalone("deployment-manifest", worker_spec())
    template = pod_template(source, role="main", env=Environment())
    assert_example_1_pod(template, parent="deployment-manifest", namespace="ns")
    assert template["metadata"]["labels"]["nvidia.com/selector"] == "deployment-manifest"
    main = main_of(template)
    for field, probe in WORKER_PROBES.items():
        assert main[field] == probe


def test_example_2_lws_manifest_leader_and_worker():
    source = standalone(
        "lws-manifest",
        worker_spec(args=["--model", "test/model"]) | {"multinode": {"nodeCount": 2}},
    )
    leader, worker = leader_worker_templates(source, env=Environment())
    for template, role in ((leader, "leader"), (worker, "worker")):
        assert_example_1_pod(template, parent="lws-manifest", namespace="ns")
        labels = template["metadata"]["labels"]
        assert labels["role"] == role
        assert "nvidia.com/selector" not in labels
        assert main_of(template)["args"] == ["--model", "test/model"]
    for field, probe in WORKER_PROBES.items():
        assert main_of(leader)[field] == probe
        assert field not in main_of(worker)


def test_example_3_no_shared_memory_for_zero():
    for zero in ("0", "0Gi", 0):
        template = pod_template(
            standalone("d", worker_spec(sharedMemorySize=zero)), role="main", env=Environment()
        )
        assert "volumes" not in template["spec"] or not any(
            v["name"] == "shared-memory" for v in template["spec"]["volumes"]
        )
        assert "volumeMounts" not in main_of(template)


def test_shared_memory_size_is_used():
    template = pod_template(
        standalone("d", worker_spec(sharedMemorySize="16Gi")), role="main", env=Environment()
    )
    assert template["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "16Gi"


def test_example_4_user_security_context_kept_without_fs_group():
    spec = worker_spec()
    spec["podTemplate"]["spec"]["securityContext"] = {"runAsUser": 1000}
    template = pod_template(standalone("d", spec), role="main", env=Environment())
    assert template["spec"]["securityContext"] == {"runAsUser": 1000}


def graph_with(components, *, annotations=None):
    return {
        "metadata": {"name": "x", "namespace": "ns", "annotations": annotations or {}},
        "spec": {"components": components},
    }


def test_example_5_etcd_discovery_from_graph_annotation():
    g = graph_with(
        [{"name": "decode", "type": "decode", "podTemplate": worker_spec()["podTemplate"]}],
        annotations={"nvidia.com/dynamo-discovery-backend": "etcd"},
    )
    (dcd,) = generate_dcds(typed(g))
    template = pod_template(source_of(dcd, graph="x"), role="main", env=Environment())
    labels = template["metadata"]["labels"]
    assert "nvidia.com/dynamo-discovery-backend" not in labels
    assert "nvidia.com/dynamo-discovery-enabled" not in labels
    # upstream sets DYN_DISCOVERY_BACKEND only for Kubernetes discovery (docs/pod-rules.md)
    assert "DYN_DISCOVERY_BACKEND" not in env_dict(main_of(template))
    assert template["spec"]["serviceAccountName"] == "default"


def test_etcd_discovery_from_agent_config_and_labelled_service_account():
    env = Environment(discovery_backend="etcd", component_pod_service_accounts=("zz", "aa"))
    template = pod_template(standalone("d", worker_spec()), role="main", env=env)
    assert template["spec"]["serviceAccountName"] == "aa"
    assert "DYN_DISCOVERY_BACKEND" not in env_dict(main_of(template))


def test_user_service_account_wins():
    spec = worker_spec()
    spec["podTemplate"]["spec"]["serviceAccountName"] = "mine"
    template = pod_template(standalone("d", spec), role="main", env=Environment())
    assert template["spec"]["serviceAccountName"] == "mine"


AGENT = AgentAccount("ns", "syncagent")


@pytest.mark.parametrize("key", ["serviceAccountName", "serviceAccount"])
def test_a_pod_naming_the_agents_service_account_is_refused(key: str) -> None:
    spec = worker_spec()
    spec["podTemplate"]["spec"][key] = "syncagent"
    with pytest.raises(RenderError, match=rf"^spec.podTemplate.spec.{key}: syncagent is the "):
        pod_template(standalone("d", spec), role="main", env=Environment(agent_account=AGENT))


def test_the_agents_account_is_refused_when_the_agent_picks_it_too() -> None:
    # Labelled nvidia.com/dynamo-component-pod by someone: the agent's fallback would pick it.
    env = Environment(
        discovery_backend="etcd", component_pod_service_accounts=("syncagent",), agent_account=AGENT
    )
    with pytest.raises(RenderError, match="the ServiceAccount the agent runs as"):
        pod_template(standalone("d", worker_spec()), role="main", env=env)


def test_the_agents_account_name_in_another_namespace_is_another_account() -> None:
    spec = worker_spec()
    spec["podTemplate"]["spec"]["serviceAccountName"] = "syncagent"
    env = Environment(agent_account=AgentAccount("elsewhere", "syncagent"))
    template = pod_template(standalone("d", spec), role="main", env=env)
    assert template["spec"]["serviceAccountName"] == "syncagent"


def test_example_6_multinode_without_args_fails():
    spec = worker_spec() | {"type": "prefill", "multinode": {"nodeCount": 2}}
    with pytest.raises(RenderError, match=r"^container Args cannot be empty for LWS pod$"):
        leader_worker_templates(standalone("p", spec), env=Environment())


def test_lws_main_container_missing_or_no_command():
    spec = worker_spec(args=["a"]) | {"multinode": {"nodeCount": 2}}
    spec["podTemplate"]["spec"]["containers"][0]["name"] = "other"
    with pytest.raises(RenderError, match=r"^main container not found in pod spec$"):
        leader_worker_templates(standalone("p", spec), env=Environment())
    # planner has no default args, so a multinode planner without args fails too
    planner = worker_spec() | {"type": "planner", "multinode": {"nodeCount": 2}}
    with pytest.raises(RenderError, match="Args cannot be empty"):
        leader_worker_templates(standalone("p", planner), env=Environment())


def test_example_7_model_ref_label_and_annotation():
    template = pod_template(
        standalone("d", worker_spec(modelRef={"name": "test/model"})),
        role="main",
        env=Environment(),
    )
    assert template["metadata"]["labels"]["nvidia.com/dynamo-base-model-hash"] == "bbae3530"
    assert template["metadata"]["annotations"]["nvidia.com/dynamo-base-model"] == "test/model"


def test_example_8_live_metadata_ignored_for_graph_controlled_dcd():
    g = graph_with(
        [{"name": "decode", "type": "decode", "podTemplate": worker_spec()["podTemplate"]}]
    )
    g["spec"] |= {"labels": {"tier": "gold"}, "annotations": {"owner": "team-a"}}
    (dcd,) = generate_dcds(typed(g))
    live = dcd.create_manifest()
    live["metadata"]["labels"]["team"] = "ops"
    live["metadata"].setdefault("annotations", {})["note"] = "a"
    from_live = source_of_object(live)
    rendered = deployment(source_of(dcd, graph="x"), env=Environment())
    again = deployment(from_live, env=Environment())
    assert again.body == rendered.body
    assert again.body["metadata"]["labels"]["tier"] == "gold"
    assert again.body["metadata"]["annotations"]["owner"] == "team-a"
    for meta in (again.body["metadata"], again.body["spec"]["template"]["metadata"]):
        assert "team" not in meta["labels"]
        assert "note" not in meta["annotations"]
    # a standalone DCD's own live metadata does reach its pods
    lone = standalone("x-decode", worker_spec(), labels={"team": "ops"}, annotations={"note": "a"})
    template = pod_template(lone, role="main", env=Environment())
    assert template["metadata"]["labels"]["team"] == "ops"
    assert template["metadata"]["annotations"]["note"] == "a"


def test_frontend_defaults():
    source = standalone(
        "fe",
        {
            "name": "Frontend",
            "type": "frontend",
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "fe:1"}]}},
        },
    )
    template = pod_template(source, role="main", env=Environment())
    main = main_of(template)
    assert main["command"] == ["python3"]
    assert main["args"] == ["-m", "dynamo.frontend"]
    env = env_dict(main)
    assert env["DYNAMO_PORT"] == "8000"
    assert env["DYN_HTTP_PORT"] == "8000"
    assert env["DYN_NAMESPACE_PREFIX"] == "ns-fe"
    assert main["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert main["livenessProbe"] == {
        "httpGet": {"path": "/live", "port": "http"},
        "initialDelaySeconds": 15,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "failureThreshold": 3,
    }
    assert main["readinessProbe"]["timeoutSeconds"] == 3
    assert "startupProbe" not in main
    assert "nvidia.com/dynamo-sub-component-type" not in template["metadata"]["labels"]
    names = [e["name"] for e in main["env"]]
    assert names == sorted(names)


def test_user_values_win_and_env_is_sorted_by_name():
    spec = worker_spec()
    spec["podTemplate"]["spec"]["containers"][0] |= {
        "command": ["python3", "-m", "dynamo.vllm"],
        "env": [{"name": "Z", "value": "1"}, {"name": "DYN_SYSTEM_PORT", "value": "9999"}],
        "ports": [{"name": "system", "containerPort": 9999}],
        "livenessProbe": {"exec": {"command": ["true"]}},
    }
    main = main_of(pod_template(standalone("d", spec), role="main", env=Environment()))
    assert main["command"] == ["python3", "-m", "dynamo.vllm"]
    names = [e["name"] for e in main["env"]]
    assert names == sorted(names)
    assert names[-1] == "Z"
    assert env_dict(main)["DYN_SYSTEM_PORT"] == "9999"
    assert [e["name"] for e in main["env"]].count("DYN_SYSTEM_PORT") == 1
    # the user's list replaces the default ports (docs/pod-rules.md)
    assert main["ports"] == [{"name": "system", "containerPort": 9999}]
    assert main["livenessProbe"] == {"exec": {"command": ["true"]}}


def test_untyped_components_get_only_common_defaults():
    spec = {
        "name": "p",
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "p:1"}]}},
    }
    template = pod_template(standalone("p", spec), role="main", env=Environment())
    main = main_of(template)
    assert main["command"] == ["/bin/sh", "-c"]
    assert "ports" not in main
    assert "livenessProbe" not in main
    assert {e["name"] for e in main["env"]} == {
        "DYN_NAMESPACE",
        "DYN_COMPONENT",
        "DYN_PARENT_DGD_K8S_NAME",
        "DYN_PARENT_DGD_K8S_NAMESPACE",
        "DYN_DISCOVERY_BACKEND",
        "POD_NAME",
        "POD_NAMESPACE",
        "POD_UID",
    }
    assert template["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "default"
    assert env_dict(main)["DYN_COMPONENT"] == "default"


def test_metrics_label_off_when_annotation_false():
    spec = worker_spec()
    spec["podTemplate"]["metadata"] = {"annotations": {"nvidia.com/enable-metrics": "false"}}
    template = pod_template(standalone("d", spec), role="main", env=Environment())
    assert "nvidia.com/metrics-enabled" not in template["metadata"]["labels"]


def test_origin_version_annotation_removed():
    spec = worker_spec()
    spec["podTemplate"]["metadata"] = {
        "annotations": {"nvidia.com/dynamo-operator-origin-version": "1.4"}
    }
    template = pod_template(standalone("d", spec), role="main", env=Environment())
    assert "nvidia.com/dynamo-operator-origin-version" not in template["metadata"].get(
        "annotations", {}
    )


def test_legacy_worker_selector_keeps_worker_type():
    source = standalone("d", worker_spec())
    template = pod_template(source, role="main", env=Environment(), legacy_worker=True)
    labels = template["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-component-type"] == "worker"
    assert labels["nvidia.com/dynamo-sub-component-type"] == "decode"
    assert env_dict(main_of(template))["DYN_COMPONENT"] == "worker"


def test_is_legacy_worker():
    from syncagent.render import is_legacy_worker

    old = {"nvidia.com/dynamo-component-type": "worker"}
    assert is_legacy_worker("decode", [{}, old])
    assert is_legacy_worker("decode", [old | {"nvidia.com/dynamo-sub-component-type": "decode"}])
    assert not is_legacy_worker(
        "decode", [old | {"nvidia.com/dynamo-sub-component-type": "prefill"}]
    )
    assert not is_legacy_worker("worker", [old])
    assert not is_legacy_worker("prefill", [{"nvidia.com/dynamo-component-type": "prefill"}])


def test_image_pull_secret_discovery():
    spec = worker_spec()
    containers = spec["podTemplate"]["spec"]["containers"]
    containers.append({"name": "side", "image": "busybox:1"})
    spec["podTemplate"]["spec"]["imagePullSecrets"] = [{"name": "user"}]
    env = Environment(
        pull_secrets=(
            PullSecret("zeta", frozenset({"registry.example"})),
            PullSecret("alpha", frozenset({"docker.io"})),
            PullSecret("user", frozenset({"registry.example"})),
            PullSecret("other", frozenset({"ghcr.io"})),
        )
    )
    template = pod_template(standalone("d", spec), role="main", env=env)
    assert template["spec"]["imagePullSecrets"] == [
        {"name": "user"},
        {"name": "alpha"},
        {"name": "zeta"},
    ]
    spec["podTemplate"]["metadata"] = {
        "annotations": {"nvidia.com/disable-image-pull-secret-discovery": "true"}
    }
    template = pod_template(standalone("d", spec), role="main", env=env)
    assert template["spec"]["imagePullSecrets"] == [{"name": "user"}]


def test_registry_parsing():
    assert image_registry("busybox") == "docker.io"
    assert image_registry("library/busybox:1") == "docker.io"
    assert image_registry("nvcr.io/nvidia/x:1") == "nvcr.io"
    assert image_registry("localhost:5000/x") == "localhost:5000"
    assert registry_hosts({"https://index.docker.io/v1/": {}, "NVCR.io": {}}) == {
        "docker.io",
        "nvcr.io",
    }


def test_single_node_vllm_has_no_side_channel_host_on_any_pathway():
    # upstream sets it only for multinode mp launches (backend_vllm.go UpdateContainer)
    source = standalone("d", worker_spec())
    for grove in (False, True):
        env = env_dict(main_of(pod_template(source, role="main", env=Environment(), grove=grove)))
        assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in env


def test_input_spec_not_mutated():
    spec = worker_spec()
    before = repr(spec)
    pod_template(
        ComponentSource(name="d", namespace="ns", spec=spec), role="main", env=Environment()
    )
    assert repr(spec) == before
