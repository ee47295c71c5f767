"""Pod rules taken from the upstream operator (ai-dynamo/dynamo 2a6da14c8,
deploy/operator/internal/dynamo/): planner defaults, the implicit PVC volume of a mount,
the shared-memory volume, and Grove multinode workers without args.

Expected values come from upstream's test tables where one exists (named per test) and from
upstream's code otherwise (shared_memory.go has no table of its own).
"""

from __future__ import annotations

import re

import pytest
import yaml

from syncagent.api import load_objects
from syncagent.api.conversion import convert_documents
from syncagent.programs.grove.render import render_grove_graph
from syncagent.render import (
    ComponentSource,
    Environment,
    RenderError,
    generate_dcds,
    leader_worker_templates,
    pod_template,
    render_graph,
    source_of,
    source_of_object,
)
from syncagent.render.podtemplate import volumes_for_mounts
from tests.support.graphs import typed
from tests.support.kube import main_of

SHM_VOLUME = {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
SHM_MOUNT = {"name": "shared-memory", "mountPath": "/dev/shm"}


def standalone(spec: dict, *, name: str = "d", namespace: str = "default") -> ComponentSource:
    return source_of_object(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoComponentDeployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }
    )


def component(ctype: str, **main: object) -> dict:
    return {
        "name": ctype,
        "type": ctype,
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1", **main}]}},
    }


# -- planner (component_planner.go, TestPlannerDefaults_GetBaseContainer) --------------------


def test_planner_container_defaults_match_upstream_table():
    source = standalone(component("planner"), name="name", namespace="namespace")
    main = main_of(pod_template(source, role="main", env=Environment()))
    assert main["command"] == ["/bin/sh", "-c"]
    assert main["ports"] == [
        {"name": "metrics", "containerPort": 9085, "protocol": "TCP"},
        {"name": "system", "containerPort": 9090, "protocol": "TCP"},
    ]
    assert main["livenessProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 5,
        "timeoutSeconds": 4,
        "failureThreshold": 1,
    }
    assert main["readinessProbe"] == {
        "httpGet": {"path": "/health", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 4,
        "failureThreshold": 3,
    }
    assert main["startupProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }
    # Upstream's table lists the same variables (its DYN_NAMESPACE is a test input); ours are
    # sorted by name (rendering.md §2 env order).
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in main["env"]}
    assert env == {
        "DYN_NAMESPACE": "namespace-name",
        "DYN_COMPONENT": "planner",
        "DYN_PARENT_DGD_K8S_NAME": "name",
        "DYN_PARENT_DGD_K8S_NAMESPACE": "namespace",
        "POD_NAME": {"fieldRef": {"fieldPath": "metadata.name"}},
        "POD_NAMESPACE": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        "POD_UID": {"fieldRef": {"fieldPath": "metadata.uid"}},
        "DYN_DISCOVERY_BACKEND": "kubernetes",
        "PLANNER_PROMETHEUS_PORT": "9085",
        "DYN_SYSTEM_PORT": "9090",
    }


def test_planner_user_values_win_over_defaults():
    source = standalone(
        component(
            "planner",
            env=[{"name": "PLANNER_PROMETHEUS_PORT", "value": "7000"}],
            ports=[{"name": "metrics", "containerPort": 7000}],
        )
    )
    main = main_of(pod_template(source, role="main", env=Environment()))
    assert [e for e in main["env"] if e["name"] == "PLANNER_PROMETHEUS_PORT"] == [
        {"name": "PLANNER_PROMETHEUS_PORT", "value": "7000"}
    ]
    # the user's list replaces the defaults; ``system`` comes back because the planner's probes
    # name it (test_a_port_a_probe_needs_is_given_back)
    assert main["ports"] == [
        {"name": "metrics", "containerPort": 7000},
        {"name": "system", "containerPort": 9090, "protocol": "TCP"},
    ]


@pytest.mark.parametrize(
    ("ctype", "defaults", "probed"),
    [
        ("worker", ["system", "nixl"], "system"),
        ("decode", ["system", "nixl"], "system"),
        ("frontend", ["http"], "http"),
        ("planner", ["metrics", "system"], "system"),
    ],
)
def test_user_ports_replace_the_default_ports(ctype, defaults, probed):
    """Upstream ``mergeContainerByName`` (``internal/dynamo/graph.go``) merges the user's main
    container over the defaults with ``mergo.Merge(..., WithOverride)``, which replaces a list
    the user set (non-empty) instead of appending to it; with no user ports the component's
    defaults (``component_worker.go``, ``component_frontend.go``, ``component_planner.go``) stay.
    The user's list here carries the port the default probes name, so the pod is upstream's."""
    mine = [
        {"name": probed, "containerPort": 7000, "protocol": "TCP"},
        {"name": "custom", "containerPort": 7777, "protocol": "TCP"},
    ]
    main = main_of(
        pod_template(standalone(component(ctype, ports=mine)), role="main", env=Environment())
    )
    assert main["ports"] == mine
    plain = main_of(pod_template(standalone(component(ctype)), role="main", env=Environment()))
    assert [p["name"] for p in plain["ports"]] == defaults


def test_a_port_a_probe_needs_is_given_back():
    """Our design (docs/pod-rules.md, deliberate difference): a user list without the port the
    probes name gets that default port back (upstream's pod would fail its probes for ever);
    a port no probe names is not added, and the user's own probes decide."""
    mine = [{"name": "custom", "containerPort": 7777, "protocol": "TCP"}]
    main = main_of(
        pod_template(standalone(component("worker", ports=mine)), role="main", env=Environment())
    )
    assert main["ports"] == [*mine, {"name": "system", "containerPort": 9090, "protocol": "TCP"}]
    own_probes = {
        f: {"tcpSocket": {"port": "custom"}}
        for f in ("livenessProbe", "readinessProbe", "startupProbe")
    }
    spec = component("worker", ports=mine, **own_probes)
    main = main_of(pod_template(standalone(spec), role="main", env=Environment()))
    assert main["ports"] == mine


def test_a_multinode_worker_without_probes_keeps_the_user_ports_only():
    """A multinode vLLM worker loses every probe (``backend_vllm.go``), so nothing is given back
    and its pods equal upstream's."""
    mine = [{"name": "custom", "containerPort": 7777, "protocol": "TCP"}]
    spec = component("worker", ports=mine, command=["python3", "-m", "dynamo.vllm"], args=["x"])
    spec |= {"backendFramework": "vllm", "multinode": {"nodeCount": 2}}
    _, worker = leader_worker_templates(standalone(spec), env=Environment())
    assert main_of(worker)["ports"] == mine


def test_planner_service_account_upstream_table():
    """TestGenerateBasePodSpec_PlannerServiceAccount: planners get planner-serviceaccount,
    other components do not; a standalone planner DCD too (upstream's pod defaults set it)."""
    planner = pod_template(standalone(component("planner")), role="main", env=Environment())
    assert planner["spec"]["serviceAccountName"] == "planner-serviceaccount"
    worker = pod_template(standalone(component("worker")), role="main", env=Environment())
    assert worker["spec"]["serviceAccountName"] != "planner-serviceaccount"
    spec = component("planner")
    spec["podTemplate"]["spec"]["serviceAccountName"] = "mine"
    own = pod_template(standalone(spec), role="main", env=Environment())
    assert own["spec"]["serviceAccountName"] == "mine"


def _planner_graph(account: str | None) -> dict:
    planner = component("planner")
    if account:
        planner["podTemplate"]["spec"]["serviceAccountName"] = account
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": [planner]},
    }


def test_a_graph_planner_dcd_always_runs_as_planner_serviceaccount():
    """Upstream ``generateSingleDCD`` (``internal/dynamo/graph.go``) sets
    ``podTemplate.spec.serviceAccountName = PlannerServiceAccountName`` on every planner DCD a
    graph generates, over the component's own value; the DCD's pods then run as it (the
    Component and DisaggregatedSet pathways render from that DCD)."""
    graph = typed(_planner_graph("mine"))
    (dcd,) = generate_dcds(graph, env=Environment())
    assert dcd.body["spec"]["podTemplate"]["spec"]["serviceAccountName"] == (
        "planner-serviceaccount"
    )
    (workload,) = [
        o for o in render_graph(graph, env=Environment(), lws=True) if o.kind == "Deployment"
    ]
    assert workload.body["spec"]["template"]["spec"]["serviceAccountName"] == (
        "planner-serviceaccount"
    )


@pytest.mark.parametrize(
    ("account", "expected"), [("mine", "mine"), (None, "planner-serviceaccount")]
)
def test_a_grove_planner_keeps_its_own_serviceaccount(account, expected):
    """Upstream renders Grove pods from the component (``GenerateGrovePodCliqueSet`` ->
    ``GenerateBasePodSpec``): ``PlannerDefaults.GetBasePodSpec`` names
    ``planner-serviceaccount``, then the user's pod spec is merged over it with
    ``mergo.WithOverride``, so a planner's own account wins and only a gap is filled
    (``TestGenerateBasePodSpec_PlannerServiceAccount`` for the gap)."""
    objects = render_grove_graph(typed(_planner_graph(account)), env=Environment())
    (pcs,) = [o for o in objects if o.kind == "PodCliqueSet"]
    (clique,) = pcs.body["spec"]["template"]["cliques"]
    assert clique["spec"]["podSpec"]["serviceAccountName"] == expected


def test_planner_service_targets_a_port_its_pods_have():
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": [component("planner")]},
    }
    objects = render_graph(typed(graph), env=Environment(), lws=True)
    (workload,) = [o for o in objects if o.kind == "Deployment"]
    (service,) = [o for o in objects if o.kind == "Service" and o.name == "g-planner"]
    port_names = {p["name"] for p in main_of(workload.body["spec"]["template"])["ports"]}
    assert [p["targetPort"] for p in service.body["spec"]["ports"]] == ["system"]
    assert "system" in port_names


# -- implicit PVC volumes (graph.go appendMissingPVCVolumesForMounts) ------------------------


def test_missing_pvc_volumes_are_added_in_mount_order():
    """TestAppendMissingPVCVolumesForMountsAddsMissingPVCs."""
    volumes = [
        {"name": "config", "configMap": {}},
        {"name": "cache", "persistentVolumeClaim": {"claimName": "cache-pvc"}},
    ]
    mounts = [{"name": "cache", "mountPath": "/cache"}, {"name": "model-cache", "mountPath": "/m"}]
    assert volumes_for_mounts(volumes, mounts) == [
        {"name": "cache", "persistentVolumeClaim": {"claimName": "cache-pvc"}},
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}},
        {"name": "config", "configMap": {}},
    ]


def test_repeated_mounts_of_one_volume_stay_one_volume():
    """TestAppendMissingPVCVolumesForMountsKeepsRepeatedVolumeMountsUnique."""
    volumes = [{"name": "shared-model", "persistentVolumeClaim": {"claimName": "model-cache-pvc"}}]
    mounts = [
        {"name": "shared-model", "mountPath": "/model-store", "subPath": "models/glm"},
        {"name": "shared-model", "mountPath": "/cache/sglang", "subPath": "cache/sglang/glm"},
    ]
    assert volumes_for_mounts(volumes, mounts) == volumes


def _alpha_graph(service: dict) -> dict:
    extra = service.setdefault("extraPodSpec", {})
    extra.setdefault("mainContainer", {})["image"] = "img:1"
    doc = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "test-deployment", "namespace": "default"},
        "spec": {"services": {"Frontend": {"componentType": "frontend", **service}}},
    }
    (converted,) = convert_documents([doc]).documents
    (converted,) = load_objects(yaml.safe_dump(converted), source="test")
    return converted.to_dict()


def _frontend_pod(service: dict) -> dict:
    graph = _alpha_graph(service)
    (dcd,) = generate_dcds(typed(graph))
    return pod_template(source_of(dcd, graph="test-deployment"), role="main", env=Environment())


@pytest.mark.parametrize(
    ("service", "pvcs", "mounts"),
    [
        pytest.param(
            {"volumeMounts": [{"name": "test-pvc", "mountPoint": "/data"}]},
            ["test-pvc"],
            [{"name": "test-pvc", "mountPath": "/data"}, SHM_MOUNT],
            id="valid volumeMounts",
        ),
        pytest.param(
            {
                "volumeMounts": [
                    {"name": "pvc1", "mountPoint": "/data1"},
                    {"name": "pvc2", "mountPoint": "/data2"},
                ]
            },
            ["pvc1", "pvc2"],
            [
                {"name": "pvc1", "mountPath": "/data1"},
                {"name": "pvc2", "mountPath": "/data2"},
                SHM_MOUNT,
            ],
            id="multiple volumeMounts",
        ),
    ],
)
def test_v1alpha1_volume_mounts_upstream_table(service, pvcs, mounts):
    """TestGenerateBasePodSpec_VolumeMounts: each mount of a v1alpha1 ``volumeMounts`` entry
    gets the PVC of its name."""
    pod = _frontend_pod(service)
    assert main_of(pod)["volumeMounts"] == mounts
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in pod["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    }
    assert claims == {name: name for name in pvcs}


def test_v1alpha1_volume_mounts_compose_with_main_and_init_mounts():
    """TestGenerateBasePodSpec_VolumeMounts, "volumeMounts compose with extra main container
    mounts": the user's mounts first, the converted one, then shared memory; the init
    container keeps its mounts; the ConfigMap volume stays."""
    pod = _frontend_pod(
        {
            "volumeMounts": [{"name": "test-pvc", "mountPoint": "/data"}],
            "extraPodSpec": {
                "initContainers": [
                    {"name": "init", "volumeMounts": [{"name": "test-pvc", "mountPath": "/data"}]}
                ],
                "volumes": [{"name": "config", "configMap": {"name": "config"}}],
                "mainContainer": {"volumeMounts": [{"name": "config", "mountPath": "/config"}]},
            },
        }
    )
    assert main_of(pod)["volumeMounts"] == [
        {"name": "config", "mountPath": "/config"},
        {"name": "test-pvc", "mountPath": "/data"},
        SHM_MOUNT,
    ]
    assert pod["spec"]["initContainers"][0]["volumeMounts"] == [
        {"name": "test-pvc", "mountPath": "/data"}
    ]
    assert pod["spec"]["volumes"] == [
        {"name": "config", "configMap": {"name": "config"}},
        {"name": "test-pvc", "persistentVolumeClaim": {"claimName": "test-pvc"}},
        SHM_VOLUME,
    ]


@pytest.mark.parametrize(
    ("mount", "message"),
    [
        ({"name": "", "mountPath": "/data"}, "volumeMount.name is required"),
        ({"name": "test-pvc", "mountPath": ""}, "volumeMount.mountPath is required for test-pvc"),
    ],
)
def test_mount_without_name_or_path_is_an_error(mount, message):
    """TestGenerateBasePodSpec_VolumeMounts, the two error rows."""
    source = standalone(component("frontend", volumeMounts=[mount]))
    with pytest.raises(RenderError, match=f"^{re.escape(message)}$"):
        pod_template(source, role="main", env=Environment())


# -- shared memory (shared_memory.go ApplySharedMemoryVolumeAndMount) ------------------------


def test_user_mount_at_dev_shm_is_replaced_by_shared_memory():
    spec = component(
        "worker",
        volumeMounts=[
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "models", "mountPath": "/models"},
        ],
    )
    spec["podTemplate"]["spec"]["volumes"] = [
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        {"name": "models", "persistentVolumeClaim": {"claimName": "m"}},
    ]
    pod = pod_template(standalone(spec), role="main", env=Environment())
    assert main_of(pod)["volumeMounts"] == [{"name": "models", "mountPath": "/models"}, SHM_MOUNT]
    # Upstream drops only the mount; the user's volume stays, after the mounted ones.
    assert pod["spec"]["volumes"] == [
        {"name": "models", "persistentVolumeClaim": {"claimName": "m"}},
        SHM_VOLUME,
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
    ]


def test_user_volume_named_shared_memory_is_replaced():
    spec = component("worker", volumeMounts=[{"name": "shared-memory", "mountPath": "/shm"}])
    spec["sharedMemorySize"] = "16Gi"
    spec["podTemplate"]["spec"]["volumes"] = [{"name": "shared-memory", "hostPath": {"path": "/x"}}]
    pod = pod_template(standalone(spec), role="main", env=Environment())
    assert main_of(pod)["volumeMounts"] == [SHM_MOUNT]
    assert pod["spec"]["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    ]


def test_zero_shared_memory_leaves_user_mounts_alone():
    spec = component("worker", volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}])
    spec["sharedMemorySize"] = "0"
    spec["podTemplate"]["spec"]["volumes"] = [{"name": "dshm", "emptyDir": {}}]
    pod = pod_template(standalone(spec), role="main", env=Environment())
    assert main_of(pod)["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert pod["spec"]["volumes"] == [{"name": "dshm", "emptyDir": {}}]


def test_sidecar_mounts_are_not_touched():
    spec = component("worker")
    spec["podTemplate"]["spec"]["containers"].append(
        {
            "name": "side",
            "image": "s:1",
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
    )
    spec["podTemplate"]["spec"]["volumes"] = [{"name": "dshm", "emptyDir": {}}]
    pod = pod_template(standalone(spec), role="main", env=Environment())
    side = next(c for c in pod["spec"]["containers"] if c["name"] == "side")
    assert side["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert pod["spec"]["volumes"] == [SHM_VOLUME, {"name": "dshm", "emptyDir": {}}]


# -- Grove multinode worker without args (golden dgd/grove) ---------------------------------


def _grove_graph() -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "grove-manifest", "namespace": "ns"},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                component("frontend"),
                {**component("decode"), "multinode": {"nodeCount": 2}},
            ],
        },
    }


def test_grove_multinode_worker_without_args_renders():
    objects = render_grove_graph(typed(_grove_graph()), env=Environment())
    services = sorted(o.name for o in objects if o.kind == "Service")
    assert services == ["grove-manifest-decode", "grove-manifest-frontend"]
    (pcs,) = [o for o in objects if o.kind == "PodCliqueSet"]
    body = pcs.body
    cliques = {c["name"]: c for c in body["spec"]["template"]["cliques"]}
    for name in ("decode-ldr", "decode-wkr"):
        main = main_of({"spec": cliques[name]["spec"]["podSpec"]})
        assert main["command"] == ["/bin/sh", "-c"]
        assert "args" not in main


def test_lws_multinode_worker_without_args_still_fails():
    """The LeaderWorkerSet check stays where upstream has it (its DCD controller)."""
    graph = _grove_graph()
    (_, decode) = generate_dcds(typed(graph))
    with pytest.raises(RenderError, match=r"^container Args cannot be empty for LWS pod$"):
        leader_worker_templates(source_of(decode, graph="grove-manifest"), env=Environment())


# -- discovery env (component_common.go getCommonContainer) ----------------------------------


def _env_names(template: dict) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in main_of(template)["env"]}


@pytest.mark.parametrize(
    ("mode", "backend", "expected"),
    [
        # TestBaseComponentDefaults_ContainerNameOnlyInContainerDiscoveryMode
        (None, "kubernetes", {"DYN_DISCOVERY_BACKEND": "kubernetes"}),
        (
            "container",
            "kubernetes",
            {
                "DYN_DISCOVERY_BACKEND": "kubernetes",
                "CONTAINER_NAME": "main",
                "DYN_KUBE_DISCOVERY_MODE": "container",
            },
        ),
        # the code: no backend variable for etcd ("unless explicitly set to etcd"), and the
        # container-mode pair does not depend on the backend
        (None, "etcd", {}),
        ("container", "etcd", {"CONTAINER_NAME": "main", "DYN_KUBE_DISCOVERY_MODE": "container"}),
        ("pod", "kubernetes", {"DYN_DISCOVERY_BACKEND": "kubernetes"}),
    ],
)
def test_discovery_env_of_every_component(mode, backend, expected):
    """Upstream ``getCommonContainer`` (``internal/dynamo/component_common.go``):
    ``DYN_DISCOVERY_BACKEND=kubernetes`` unless the backend is ``etcd``, and
    ``CONTAINER_NAME=main`` + ``DYN_KUBE_DISCOVERY_MODE=container`` when the pod template
    annotation ``nvidia.com/dynamo-kube-discovery-mode`` is ``container``."""
    annotations = {"nvidia.com/dynamo-discovery-backend": backend}
    if mode:
        annotations["nvidia.com/dynamo-kube-discovery-mode"] = mode
    names = ("DYN_DISCOVERY_BACKEND", "CONTAINER_NAME", "DYN_KUBE_DISCOVERY_MODE")
    for ctype in ("worker", "frontend", "planner", "custom"):
        spec = component(ctype)
        spec["podTemplate"]["metadata"] = {"annotations": annotations}
        env = _env_names(pod_template(standalone(spec), role="main", env=Environment()))
        assert {k: v for k, v in env.items() if k in names} == expected, ctype


def test_graph_discovery_mode_annotation_reaches_every_pod():
    """The graph's metadata annotation is copied into each component's pod template
    (``dgdPropagatedAnnotationKeys``), so a graph in container mode gets the pair on every
    component, on the Component pathway and on Grove."""
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "annotations": {"nvidia.com/dynamo-kube-discovery-mode": "container"},
        },
        "spec": {"components": [component("worker"), component("frontend")]},
    }
    deployments = [
        o for o in render_graph(typed(graph), env=Environment(), lws=True) if o.kind == "Deployment"
    ]
    (pcs,) = [
        o for o in render_grove_graph(typed(graph), env=Environment()) if o.kind == "PodCliqueSet"
    ]
    templates = [d.body["spec"]["template"] for d in deployments] + [
        {"spec": c["spec"]["podSpec"]} for c in pcs.body["spec"]["template"]["cliques"]
    ]
    assert len(templates) == 4
    for template in templates:
        env = _env_names(template)
        assert (env["CONTAINER_NAME"], env["DYN_KUBE_DISCOVERY_MODE"]) == ("main", "container")
