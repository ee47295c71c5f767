"""The multinode launch through the renderers of every pathway: LeaderWorkerSets of DCDs,
DisaggregatedSet roles and Grove cliques.

Rows of upstream's graph_test.go (TestGenerateGrovePodCliqueSet multinode rows,
TestGeneratePodSpecForComponent_SGLang/_VLLM, TestGenerateGrovePodCliqueSet_
DoesNotResolveUnusedContainerGPUCount, TestGenerateBasePodSpec_TRTLLMSSHMountUsesSecretVolume)
and controller/dynamocomponentdeployment_controller_test.go (generateLeaderWorkerSet,
TestGenerateWorkerPodTemplateSpecDoesNotRequireGPUResource), then the rules that tie the
pathways together (docs/multinode.md).
"""

from __future__ import annotations

import copy

import pytest

from syncagent.programs.disaggregatedset.render import render_disaggregated_set, render_ds_graph
from syncagent.programs.grove.render import render_grove_graph, render_pod_clique_set
from syncagent.render import (
    ComponentSource,
    Environment,
    generate_dcds,
    graph_sources,
    leader_worker_set,
    origin_version,
    pod_template,
    render_graph,
)
from tests.support.graphs import frontend, typed, worker
from tests.support.graphs import served_graph as graph
from tests.unit.support.multinode import LEGACY, ORIGIN

ENV = Environment()
GROVE_WORKER_LEADER = (
    "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE)"
)
DEFAULT_PROBES = {
    "livenessProbe": {"httpGet": {"path": "/live", "port": "system"}, "periodSeconds": 5, "timeoutSeconds": 4, "failureThreshold": 1},
    "readinessProbe": {"httpGet": {"path": "/health", "port": "system"}, "periodSeconds": 10, "timeoutSeconds": 4, "failureThreshold": 3},
    "startupProbe": {"httpGet": {"path": "/live", "port": "system"}, "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 720},
}  # fmt: skip
PROBE_NAMES = tuple(DEFAULT_PROBES)


def _main(template: dict) -> dict:
    spec = template.get("spec") or template.get("podSpec") or {}
    return next(c for c in spec["containers"] if c["name"] == "main")


def _cliques(g: dict) -> dict[str, dict]:
    body = render_pod_clique_set(typed(g), env=ENV).body
    return {c["name"]: c for c in body["spec"]["template"]["cliques"]}


def _engine(name: str, *, nodes: int, command: list[str], args: list[str], **extra) -> dict:
    c = worker(name, "worker", nodes=nodes, **extra)
    main = c["podTemplate"]["spec"]["containers"][0]
    main["command"], main["args"] = command, args
    return c


def _set_main(component: dict, **fields) -> dict:
    component["podTemplate"]["spec"]["containers"][0].update(fields)
    return component


def _grove_sglang_row() -> dict:
    w = _engine(
        "worker",
        nodes=3,
        command=["/bin/sh", "-c"],
        args=["python3 -m dynamo.sglang --custom-flag custom-value"],
        replicas=5,
    )
    _set_main(w, resources={"limits": {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "2"}})
    return graph(
        "test-dynamo-graph-deployment", components=[frontend(), w], backendFramework="sglang"
    )


def test_grove_multinode_sglang_row():
    """TestGenerateGrovePodCliqueSet "test_generate_grove_pod_gang_set_multinode sglang"."""
    cliques = _cliques(_grove_sglang_row())
    leader, wkr = _main(cliques["worker-ldr"]["spec"]), _main(cliques["worker-wkr"]["spec"])
    flags = f"--dist-init-addr {GROVE_WORKER_LEADER}:29500 --nnodes 3"
    assert leader["command"] == wkr["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        f"python3 -m dynamo.sglang {flags} --node-rank 0 --custom-flag custom-value"
    ]
    assert wkr["args"] == [
        f"python3 -m dynamo.sglang {flags} --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --custom-flag custom-value"
    ]
    assert {p: leader[p] for p in PROBE_NAMES} == DEFAULT_PROBES
    assert not set(PROBE_NAMES) & wkr.keys()
    assert cliques["worker-ldr"]["spec"]["replicas"] == 1
    assert cliques["worker-wkr"]["spec"]["replicas"] == 2


def _grove_vllm_row() -> dict:
    w = _engine(
        "worker",
        nodes=3,
        command=["python3", "-m", "dynamo.vllm"],
        args=[
            "--custom-flag",
            "custom-value",
            "--tensor-parallel-size",
            "4",
            "--pipeline-parallel-size",
            "1",
        ],
        replicas=5,
    )
    user_probes = {
        "startupProbe": {"httpGet": {"path": "/startup", "port": 8080}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
    }
    _set_main(
        w, resources={"limits": {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "2"}}, **user_probes
    )
    # upstream's row has no origin version: a graph older than its webhook's stamp
    return graph(
        "test-dynamo-graph-deployment",
        components=[frontend(), w],
        annotations=LEGACY,
        backendFramework="vllm",
    )


def test_grove_multinode_vllm_row():
    """TestGenerateGrovePodCliqueSet "test_generate_grove_pod_gang_set_multinode vllm"."""
    cliques = _cliques(_grove_vllm_row())
    leader, wkr = _main(cliques["worker-ldr"]["spec"]), _main(cliques["worker-wkr"]["spec"])
    assert leader["command"] == wkr["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        "ray start --head --port=6379 && python3 -m dynamo.vllm --custom-flag custom-value --tensor-parallel-size 4 --pipeline-parallel-size 1 --distributed-executor-backend ray"
    ]
    assert wkr["args"] == [f"ray start --address={GROVE_WORKER_LEADER}:6379 --block"]
    assert leader["readinessProbe"] == {"httpGet": {"path": "/ready", "port": 8080}}
    assert leader["livenessProbe"] == {"httpGet": {"path": "/health", "port": 8080}}
    assert leader["startupProbe"] == {"httpGet": {"path": "/startup", "port": 8080}}
    assert not set(PROBE_NAMES) & wkr.keys()  # the user's probes go too
    for main in (leader, wkr):
        assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in {e["name"] for e in main["env"]}


def _grove_source(spec: dict, *, origin: str | None = None) -> ComponentSource:
    """A component of upstream's "test-deployment" graph, named "worker" (the service name)."""
    base = {"name": "worker", "type": "worker"}
    return ComponentSource(
        name="test-deployment-worker",
        namespace="default",
        spec={**base, **spec},
        parent_graph="test-deployment",
        origin_version=origin,
    )


def _spec(*, args=None, command=None, gpus=None, backend, nodes=1) -> dict:
    main = {"name": "main", "image": "i"}
    if command is not None:
        main["command"] = command
    if args is not None:
        main["args"] = args
    if gpus is not None:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    spec = {"backendFramework": backend, "podTemplate": {"spec": {"containers": [main]}}}
    if nodes > 1:
        spec["multinode"] = {"nodeCount": nodes}
    return spec


# TestGeneratePodSpecForComponent_SGLang and _VLLM (Grove, service "worker"): (name, spec,
# role, substrings expected in command+args, substrings not expected)
POD_SPEC_ROWS = [
    ("SGLang single node worker", _spec(args=["python3 -m dynamo.sglang"], backend="sglang"), "main", ["python3", "-m", "dynamo.sglang"], ["dist-init-addr", "nnodes", "tp-size"]),
    ("SGLang multinode leader", _spec(args=["python3 -m dynamo.sglang"], backend="sglang", nodes=3), "leader", ["python3", "-m", "dynamo.sglang", "dist-init-addr", "nnodes", "node-rank"], []),
    ("SGLang multinode worker", _spec(args=["python3 -m dynamo.sglang"], backend="sglang", nodes=3), "worker", ["python3", "-m", "dynamo.sglang", "dist-init-addr", "nnodes", "node-rank"], []),
    ("SGLang with user command override", _spec(command=["custom", "command"], backend="sglang"), "main", [], []),
    ("VLLM single node worker", _spec(args=["python3", "-m", "dynamo.vllm"], backend="vllm"), "main", ["python3", "-m", "dynamo.vllm"], ["ray start"]),
    ("VLLM multinode leader", _spec(args=["python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"], gpus="2", backend="vllm", nodes=3), "leader", ["ray start --head --port=6379", "python3", "-m", "dynamo.vllm"], []),
    ("VLLM multinode worker", _spec(args=["python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"], gpus="2", backend="vllm", nodes=3), "worker", [f"ray start --address={GROVE_WORKER_LEADER}:6379 --block"], ["python3 -m dynamo.vllm"]),
    ("VLLM worker single node", _spec(args=["python3", "-m", "dynamo.vllm", "--disaggregation-mode", "prefill"], backend="vllm"), "main", ["python3", "-m", "dynamo.vllm", "--disaggregation-mode", "prefill"], ["ray start"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "role", "present", "absent"),
    [r[1:] for r in POD_SPEC_ROWS],
    ids=[r[0] for r in POD_SPEC_ROWS],
)
def test_generate_pod_spec_for_component(spec, role, present, absent):
    # upstream's graph carries no origin version: a legacy graph (Ray)
    template = pod_template(_grove_source(spec, origin="0.9.0"), role=role, env=ENV, grove=True)
    main = _main(template)
    line = " ".join([*main.get("command", []), *main.get("args", [])])
    assert all(p in line for p in present), line
    assert not any(a in line for a in absent), line


@pytest.mark.parametrize(
    ("backend", "nodes"), [("sglang", 2), ("vllm", 1)], ids=["multinode SGLang", "single-node vLLM"]
)
def test_unused_gpu_count_is_never_resolved(backend, nodes):
    """TestGenerateGrovePodCliqueSet_DoesNotResolveUnusedContainerGPUCount: GPUs requested only
    through a DRA claim are fine wherever no backend needs their count."""
    w = _engine("worker", nodes=nodes, command=["python3"], args=["-m", f"dynamo.{backend}"])
    _set_main(w, resources={"claims": [{"name": "network"}]})
    w["podTemplate"]["spec"]["resourceClaims"] = [
        {"name": "network", "resourceClaimTemplateName": "missing-network-template"}
    ]
    g = graph("dra-test", namespace="default", components=[w], backendFramework=backend)
    assert render_pod_clique_set(typed(g), env=ENV).body["spec"]["template"]["cliques"]


def test_trtllm_ssh_mount_uses_the_secret_volume():
    """TestGenerateBasePodSpec_TRTLLMSSHMountUsesSecretVolume."""
    spec = _spec(
        command=["python3"],
        args=["-m", "dynamo.trtllm", "--model-path", "/model"],
        gpus="1",
        backend="trtllm",
        nodes=2,
    )
    template = pod_template(_grove_source(spec), role="leader", env=ENV, grove=True)
    ssh = [v for v in template["spec"]["volumes"] if v["name"] == "mpi-run-ssh-secret"]
    assert ssh == [
        {
            "name": "mpi-run-ssh-secret",
            "secret": {"secretName": "mpi-run-ssh-secret", "defaultMode": 420},
        }
    ]


def _lws_dcd_source(*, origin: str | None) -> ComponentSource:
    spec = _spec(
        command=["some", "dynamo", "command"],
        args=["--tensor-parallel-size", "4", "--pipeline-parallel-size", "1"],
        gpus="1",
        backend="vllm",
        nodes=2,
    )
    return ComponentSource(
        name="test-lws-deploy",
        namespace="default",
        spec={**spec, "type": "worker", "name": "test-lws-deploy-service"},
        parent_graph="test-lws-deploy",
        origin_version=origin,
    )


def test_generate_leader_worker_set_nominal_row():
    """generateLeaderWorkerSet "nominal case": a two-node vLLM DCD of a pre-1.0 graph (Ray)."""
    lws = leader_worker_set(_lws_dcd_source(origin="0.9.0"), env=ENV).body
    templates = lws["spec"]["leaderWorkerTemplate"]
    leader, wkr = _main(templates["leaderTemplate"]), _main(templates["workerTemplate"])
    assert leader["command"] == wkr["command"] == ["/bin/sh", "-c"]
    assert leader["args"] == [
        "ray start --head --port=6379 && some dynamo command --tensor-parallel-size 4 --pipeline-parallel-size 1 --distributed-executor-backend ray"
    ]
    assert wkr["args"] == ["ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]
    assert {p: leader[p] for p in PROBE_NAMES} == DEFAULT_PROBES
    assert not set(PROBE_NAMES) & wkr.keys()


def test_worker_template_does_not_require_a_gpu_resource():
    """TestGenerateWorkerPodTemplateSpecDoesNotRequireGPUResource."""
    spec = _spec(command=["python3"], args=["-m", "dynamo.vllm"], backend="vllm")
    spec["podTemplate"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1"},
        "limits": {"cpu": "1"},
    }
    source = ComponentSource(
        name="worker-no-gpu-check",
        namespace="default",
        spec={**spec, "name": "decode", "type": "decode"},
    )
    template = pod_template(source, role="worker", env=ENV)
    assert template["metadata"]["labels"]["role"] == "worker"
    assert _main(template)["name"] == "main"


# ---- The rules that tie the pathways together (docs/multinode.md) ----


def _vllm_graph(**spec) -> dict:
    """Two multinode vLLM roles, TP 16 on 8 GPUs per node: the engine spans both nodes."""
    roles = []
    for name in ("decode", "prefill"):
        c = worker(name, name, nodes=2)
        _set_main(
            c,
            args=["--model", "m", "--tensor-parallel-size", "16"],
            resources={"limits": {"nvidia.com/gpu": "8"}},
        )
        roles.append(c)
    return graph("g", components=[frontend(), *roles], backendFramework="vllm", **spec)


def _templates(g: dict) -> dict[str, tuple[dict, dict]]:
    """(leader, worker) pod templates of "decode" on the LWS, DS and Grove pathways."""
    dcd = next(d for d in generate_dcds(typed(g), env=ENV) if d.body["spec"]["name"] == "decode")
    (source,) = graph_sources(typed(g), [dcd])
    lws = leader_worker_set(source, env=ENV).body["spec"]["leaderWorkerTemplate"]
    ds = render_disaggregated_set(typed(g), env=ENV).rendered.body["spec"]["roles"][0]
    ds_lwt = ds["spec"]["leaderWorkerTemplate"]
    cliques = _cliques(g)
    return {
        "lws": (lws["leaderTemplate"], lws["workerTemplate"]),
        "ds": (ds_lwt["leaderTemplate"], ds_lwt["workerTemplate"]),
        "grove": (
            {"spec": cliques["decode-ldr"]["spec"]["podSpec"]},
            {"spec": cliques["decode-wkr"]["spec"]["podSpec"]},
        ),
    }


MP_FLAGS = ["--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr"]


def test_every_pathway_launches_one_mp_engine_over_both_nodes():
    out = _templates(_vllm_graph())
    for pathway in ("lws", "ds"):
        leader, wkr = (_main(t) for t in out[pathway])
        tail = [*MP_FLAGS, "$(LWS_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank"]
        assert leader["args"][-len(tail) - 1 :] == [*tail, "0"], pathway
        assert wkr["args"][-len(tail) - 2 :] == [*tail, "$(LWS_WORKER_INDEX)", "--headless"]
        assert wkr["command"] == ["python3", "-m", "dynamo.vllm"]
    assert out["lws"] == out["ds"]  # one source of leader/worker templates
    grove_worker = _main(out["grove"][1])
    assert grove_worker["command"] == ["sh", "-c"]
    assert grove_worker["args"][0].endswith(
        "--master-addr $(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)"
        " --master-port 29500 --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless"
    )


def test_mp_pods_get_the_side_channel_host_and_workers_wait_for_the_leader():
    for pathway, (leader, wkr) in _templates(_vllm_graph()).items():
        for template in (leader, wkr):
            env = {e["name"]: e for e in _main(template)["env"]}
            assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"]["valueFrom"] == {
                "fieldRef": {"fieldPath": "status.podIP"}
            }, pathway
        assert "initContainers" not in leader["spec"]
        (init,) = wkr["spec"]["initContainers"]
        assert init["name"] == "wait-for-leader-mp"
        assert init["image"] == _main(wkr)["image"]
        assert wkr["spec"]["volumes"][-1] == {
            "name": "wait-leader-script",
            "configMap": {"name": "g-wait-leader-script"},
        }
        assert not set(PROBE_NAMES) & _main(wkr).keys()
        assert set(PROBE_NAMES) <= _main(leader).keys()


@pytest.mark.parametrize(
    ("graph_annotations", "component_annotations", "ray"),
    [
        ({}, {}, False),
        ({ORIGIN: "0.9.0"}, {}, True),
        ({ORIGIN: "1.2.0"}, {}, False),
        ({ORIGIN: "0.9.0"}, {ORIGIN: "1.0.0"}, False),
        ({ORIGIN: "1.2.0", "nvidia.com/vllm-distributed-executor-backend": "ray"}, {}, True),
    ],
    ids=[
        "no origin: mp",
        "pre-1.0 graph: ray",
        "1.x graph: mp",
        "component origin wins",
        "annotation wins",
    ],
)
def test_executor_follows_the_graph_origin_version(graph_annotations, component_annotations, ray):
    g = _vllm_graph()
    g["metadata"]["annotations"] = dict(graph_annotations)
    decode = g["spec"]["components"][1]
    decode["podTemplate"]["metadata"] = {"annotations": dict(component_annotations)}
    for pathway, (leader, _) in _templates(g).items():
        args = " ".join(_main(leader)["args"])
        assert args.startswith("ray start --head") is ray, pathway


def test_origin_version_precedence_follows_upstream_propagation():
    g = _vllm_graph()
    g["spec"]["annotations"] = {ORIGIN: "0.9.0"}
    assert origin_version(typed(g), "decode") == "0.9.0"
    g["metadata"]["annotations"] = {ORIGIN: "1.1.0"}
    assert origin_version(typed(g), "decode") == "1.1.0"
    g["spec"]["components"][1]["podTemplate"]["metadata"] = {"annotations": {ORIGIN: "0.8.0"}}
    assert origin_version(typed(g), "decode") == "0.8.0"
    assert origin_version(typed(g), "prefill") == "1.1.0"
    assert origin_version(typed(_vllm_graph()), "decode") is None


def test_origin_version_is_read_but_never_written():
    g = _vllm_graph()
    g["metadata"]["annotations"] = {ORIGIN: "0.9.0"}
    for rendered in [
        *render_graph(typed(g), env=ENV, lws=True),
        *render_ds_graph(typed(g), env=ENV),
        *render_grove_graph(typed(g), env=ENV),
    ]:
        assert ORIGIN not in repr(rendered.body), rendered.key


def test_standalone_dcd_without_origin_keeps_ray_as_upstream():
    # upstream's webhook stamps graphs, never DCDs: an unstamped DCD is launched with Ray
    spec = _spec(
        command=["python3", "-m", "dynamo.vllm"],
        args=["--tensor-parallel-size", "16"],
        gpus="8",
        backend="vllm",
        nodes=2,
    )
    source = ComponentSource(name="d", namespace="ns", spec={**spec, "name": "d", "type": "decode"})
    leader = _main(pod_template(source, role="leader", env=ENV))
    assert leader["args"][0].startswith("ray start --head --port=6379 && python3 -m dynamo.vllm")


@pytest.mark.parametrize(
    ("backend", "module", "worker_probes"),
    [
        ("sglang", "dynamo.sglang", {}),
        ("vllm", "dynamo.vllm", {}),
        (
            "trtllm",
            "dynamo.trtllm",
            {
                "readinessProbe": {
                    "tcpSocket": {"port": 2222},
                    "initialDelaySeconds": 20,
                    "periodSeconds": 20,
                    "timeoutSeconds": 5,
                    "failureThreshold": 10,
                }
            },
        ),
        ("", "mymodule", DEFAULT_PROBES),
    ],
    ids=["sglang", "vllm", "trtllm", "no backend"],
)
def test_worker_probes_per_backend(backend, module, worker_probes):
    """Defaults on every role (component_worker.go), then the backend's changes; with no backend
    nothing is stripped. Supersedes rendering.md §2 "for roles main/leader only"."""
    spec = _spec(
        command=["python3", "-m", module], args=["--x"], gpus="1", backend=backend, nodes=2
    )
    if not backend:
        del spec["backendFramework"]
    source = ComponentSource(
        name="g-w", namespace="ns", spec={**spec, "name": "w", "type": "worker"}, parent_graph="g"
    )
    leader = _main(pod_template(source, role="leader", env=ENV))
    wkr = _main(pod_template(source, role="worker", env=ENV))
    assert {p: wkr[p] for p in PROBE_NAMES if p in wkr} == worker_probes
    assert {p: leader[p] for p in PROBE_NAMES} == DEFAULT_PROBES


def test_trtllm_pods_mount_the_ssh_keys_before_shared_memory():
    g = graph(
        "t",
        components=[
            _engine("w", nodes=2, command=["python3", "-m", "dynamo.trtllm"], args=["--x"])
        ],
        backendFramework="trtllm",
    )
    dcd = generate_dcds(typed(g), env=ENV)[0]
    (source,) = graph_sources(typed(g), [dcd])
    lwt = leader_worker_set(source, env=ENV).body["spec"]["leaderWorkerTemplate"]
    for template in (lwt["leaderTemplate"], lwt["workerTemplate"]):
        main = _main(template)
        assert [m["mountPath"] for m in main["volumeMounts"]] == ["/ssh-pk", "/dev/shm"]
        # Volumes follow main's mounts (upstream appendMissingPVCVolumesForMounts).
        assert [v["name"] for v in template["spec"]["volumes"]] == [
            "mpi-run-ssh-secret",
            "shared-memory",
        ]
        assert {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"} in main["env"]


def test_user_and_default_variables_sorted_then_the_backend_ones_appended():
    # upstream: MergeEnvs sorts defaults and the user's list by name; the backend's launch
    # rewrite runs afterwards and appends its variables
    g = _vllm_graph()
    _set_main(g["spec"]["components"][1], env=[{"name": "ZED", "value": "1"}])
    _, wkr = _templates(g)["lws"]
    names = [e["name"] for e in _main(wkr)["env"]]
    assert names[-1] == "VLLM_NIXL_SIDE_CHANNEL_HOST"
    assert names[:-1] == sorted(names[:-1])
    assert "ZED" in names


def test_wait_leader_config_map_on_every_pathway_of_a_multinode_graph():
    g = _vllm_graph()
    for objects in (
        render_graph(typed(g), env=ENV, lws=True),
        render_ds_graph(typed(g), env=ENV),
        render_grove_graph(typed(g), env=ENV),
    ):
        maps = [o for o in objects if o.kind == "ConfigMap"]
        assert [(m.name, m.manager) for m in maps] == [
            ("g-wait-leader-script", "syncagent/wait-leader")
        ]
        assert maps[0].owner.kind == "DynamoGraphDeployment"
    single = graph("s", components=[frontend(), worker("decode", "decode", nodes=1)])
    assert not [o for o in render_graph(typed(single), env=ENV, lws=True) if o.kind == "ConfigMap"]


def test_input_graph_is_not_mutated():
    g = _vllm_graph()
    before = copy.deepcopy(g)
    _templates(g)
    assert g == before
