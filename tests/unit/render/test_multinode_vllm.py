"""vLLM multinode launch: upstream's backend_vllm_test.go tables, row by row.

Rows without annotations are upstream graphs created before operator 1.0 (their webhook
stamps every new graph), so they run with origin version 0.9.0 here: Ray, as upstream.
"""

from __future__ import annotations

import subprocess

import pytest

from syncagent.render.model import OwnerRef
from syncagent.render.multinode import GroveDeployer, LwsDeployer
from syncagent.render.multinode.shell import command_line_has_arg, quote_posix
from syncagent.render.multinode.vllm import multinode_args, update_container, update_pod_spec
from syncagent.render.multinode.waitleader import config_map_name, wait_leader_config_map
from tests.unit.support.multinode import (
    EXECUTOR,
    GROVE_LEADER,
    LEGACY,
    ORIGIN,
    container,
    env_named,
    launch,
)

TP, DP, DPL = "--tensor-parallel-size", "--data-parallel-size", "--data-parallel-size-local"
ELASTIC = "--enable-elastic-ep"
NEW = {ORIGIN: "1.0.0"}
RAY_HEAD = 'ray start --head --port=6379{ip} --block & i=0; until python3 -c "import socket; s=socket.create_connection((\'127.0.0.1\',6379),timeout=1); s.close()" 2>/dev/null; do i=$((i+1)); [ "$i" -ge 150 ] && {{ echo "ERROR: Ray head did not start within 300s" >&2; exit 1; }}; sleep 2; done && {engine}'
RAY_JOIN = 'i=0; until python3 -c "import urllib.request; urllib.request.urlopen(\'http://{leader}:9090/live\', timeout=5)" 2>/dev/null; do i=$((i+1)); [ "$i" -ge 720 ] && {{ echo "ERROR: leader /live did not become ready within 3h" >&2; exit 1; }}; echo \'waiting for leader dynamo.vllm /live to return 200...\'; sleep 15; done && ray start --address={leader}:6379 --block'
MAIN_HEAD = RAY_HEAD.replace("{ip}", ' --node-ip-address="$POD_IP"')
LEADER_HEAD = RAY_HEAD.replace("{ip}", "")
PROBES = {"livenessProbe": {}, "readinessProbe": {}, "startupProbe": {}}
MP_GROVE_LEADER = ["-m", "dynamo.vllm", TP, "16", "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", GROVE_LEADER, "--master-port", "29500", "--node-rank", "0"]  # fmt: skip
GROVE_MP_WORKER = f"exec python3 -m dynamo.vllm {TP} 16 --distributed-executor-backend mp --nnodes 2 --master-addr {GROVE_LEADER} --master-port 29500 --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless"  # fmt: skip

# TestVLLMBackend_UpdateContainer: (name, nodes, role, annotations, deployer, container, gpus,
# expected args or None (= args unchanged), probes: "removed" | "kept" | None, DP master env)
UPDATE_CONTAINER_ROWS = [
    ("single node does not modify args", 1, "main", {}, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm"]), 0, None, None, False),
    ("multinode leader uses ray (no annotations = legacy)", 3, "leader", LEGACY, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", TP, "8"]), 4, [f"ray start --head --port=6379 && python3 -m dynamo.vllm --model test {TP} 8 --distributed-executor-backend ray"], "removed", False),
    ("multinode leader uses ray with JSON args (no annotations = legacy)", 3, "leader", LEGACY, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", TP, "8", "--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}']), 4, [f'ray start --head --port=6379 && python3 -m dynamo.vllm --model test {TP} 8 --kv-transfer-config "{{\\"kv_connector\\": \\"NixlConnector\\", \\"kv_role\\": \\"kv_both\\"}}" --distributed-executor-backend ray'], "removed", False),
    ("multinode worker uses ray (no annotations = legacy)", 3, "worker", LEGACY, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", "--model", "test", TP, "8"]), 4, [f"ray start --address={GROVE_LEADER}:6379 --block"], "removed", False),
    ("multinode worker with LWS deployment type (no annotations = legacy ray)", 2, "worker", LEGACY, LwsDeployer(), container(args=["python3", "-m", "dynamo.vllm", TP, "8"]), 4, ["ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"], "removed", False),
    ("multinode leader with no initial args", 2, "leader", LEGACY, GroveDeployer(), container(args=[]), 0, None, None, False),
    ("multinode main role (non-leader/worker) does not modify args", 3, "main", LEGACY, GroveDeployer(), container(args=["python3", "-m", "dynamo.frontend"]), 0, None, None, False),
    ("multinode leader uses mp (origin version >= threshold)", 2, "leader", NEW, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, MP_GROVE_LEADER, "removed", False),
    ("multinode worker uses mp (origin version >= threshold) Grove", 2, "worker", NEW, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, [GROVE_MP_WORKER], "removed", False),
    ("multinode leader uses ray (explicit override despite new version)", 2, "leader", {**NEW, EXECUTOR: "ray"}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", TP, "8"]), 4, [f"ray start --head --port=6379 && python3 -m dynamo.vllm --model test {TP} 8 --distributed-executor-backend ray"], "removed", False),
    ("multinode leader uses mp (explicit override on legacy DGD)", 2, "leader", {EXECUTOR: "mp"}, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, MP_GROVE_LEADER, "removed", False),
    ("single node elastic EP gets a ray head", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "--data-parallel-backend", "ray", ELASTIC], **PROBES), 4, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --model test --data-parallel-backend ray {ELASTIC}")], "kept", True),
    ("single node elastic EP gets a ray head with the inline backend flag", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "--data-parallel-backend=ray", ELASTIC], **PROBES), 4, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --model test --data-parallel-backend=ray {ELASTIC}")], "kept", True),
    ("single node elastic EP gets a ray head with the -dpb short alias", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "-dpb", "ray", ELASTIC], **PROBES), 4, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --model test -dpb ray {ELASTIC}")], "kept", True),
    ("single node elastic EP gets a ray head with the inline -dpb alias", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "-dpb=ray", ELASTIC], **PROBES), 4, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --model test -dpb=ray {ELASTIC}")], "kept", True),
    ("single node elastic EP detects flags placed in Command", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm", "--data-parallel-backend", "ray", ELASTIC], **PROBES), 4, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --data-parallel-backend ray {ELASTIC}")], "kept", True),
    ("single node elastic EP with no Command preserves the ENTRYPOINT invocation", 1, "main", {}, GroveDeployer(), container(args=["--model", "test", "--data-parallel-backend", "ray", ELASTIC]), 4, None, None, False),
    ("single node without elastic EP keeps its plain command", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "--data-parallel-backend", "ray"]), 4, None, None, False),
    ("single node elastic EP without the ray backend is left alone", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", ELASTIC]), 2, None, None, False),
    ("single node elastic EP on a non-ray backend is left alone", 1, "main", {}, GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "--data-parallel-backend", "mp", ELASTIC]), 2, None, None, False),
    ("multinode leader uses GPU count resolved from DRA", 2, "leader", {EXECUTOR: "mp"}, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "2"]), 1, ["-m", "dynamo.vllm", TP, "2", "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", GROVE_LEADER, "--master-port", "29500", "--node-rank", "0"], "removed", False),
    ("multinode worker computes data parallel ranks from DRA GPU count", 2, "worker", LEGACY, GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", DP, "2"]), 1, [f"exec python3 -m dynamo.vllm {DP} 2 --data-parallel-hybrid-lb --data-parallel-size-local 1 --data-parallel-start-rank $(( 1 * $((GROVE_PCLQ_POD_INDEX + 1)) )) --data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445"], "removed", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "annotations", "deployer", "c", "gpus", "want", "probes", "dp_master"),
    [row[1:] for row in UPDATE_CONTAINER_ROWS],
    ids=[row[0] for row in UPDATE_CONTAINER_ROWS],
)
def test_update_container(nodes, role, annotations, deployer, c, gpus, want, probes, dp_master):
    before = list(c.get("args") or [])
    update_container(c, launch(nodes, role, deployer, gpus=gpus, annotations=annotations))
    assert list(c.get("args") or []) == (before if want is None else want)
    if probes == "removed":
        assert not {"livenessProbe", "readinessProbe", "startupProbe"} & c.keys()
    if probes == "kept":
        assert all(c[p] == {} for p in ("livenessProbe", "readinessProbe", "startupProbe"))
    for name in ("VLLM_DP_MASTER_IP", "POD_IP"):
        entry = env_named(c, name)
        if dp_master:
            assert entry == {"name": name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        else:
            assert entry is None


# TestVLLMBackend_ShellCommandInjection: (name, nodes, role, deployer, args, gpus, expected)
DP8 = f"python3 -m dynamo.vllm {DP} 8"
DP_FLAGS = "--data-parallel-hybrid-lb --data-parallel-size-local 4 --data-parallel-start-rank 0 --data-parallel-address {leader} --data-parallel-rpc-port 13445"  # fmt: skip
SHELL_ROWS = [
    ("single node shell command not modified", 1, "main", GroveDeployer(), ["python3 -m dynamo.vllm"], 0, ["python3 -m dynamo.vllm"]),
    ("multinode shell command with regex injection", 2, "leader", GroveDeployer(), [DP8], 4, [f"python3 -m dynamo.vllm {DP_FLAGS.format(leader=GROVE_LEADER)} {DP} 8"]),
    ("multinode shell command with complex pipeline", 2, "leader", GroveDeployer(), [f"echo blah | wc -l && {DP8} && ls -al"], 4, [f"echo blah | wc -l && python3 -m dynamo.vllm {DP_FLAGS.format(leader=GROVE_LEADER)} {DP} 8 && ls -al"]),
    ("shell command with LWS deployer", 2, "leader", LwsDeployer(), [DP8], 4, [f"python3 -m dynamo.vllm {DP_FLAGS.format(leader='$(LWS_LEADER_ADDRESS)')} {DP} 8"]),
    ("shell command with pipes", 2, "leader", GroveDeployer(), [f"{DP8} | tee /tmp/log"], 4, [f"python3 -m dynamo.vllm {DP_FLAGS.format(leader=GROVE_LEADER)} {DP} 8 | tee /tmp/log"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "args", "gpus", "want"),
    [row[1:] for row in SHELL_ROWS],
    ids=[row[0] for row in SHELL_ROWS],
)
def test_shell_command_injection(nodes, role, deployer, args, gpus, want):
    c = container(["sh", "-c"], args)
    update_container(c, launch(nodes, role, deployer, gpus=gpus, annotations=LEGACY))
    assert c["args"] == want
    assert c["command"] == ["sh", "-c"]


# TestUpdateVLLMMultinodeArgs (two nodes): (name, role, deployer, container, gpus, annotations,
# expected args or None (= unchanged))
ARGS_ROWS = [
    ("leader uses ray (nil annotations = legacy)", "leader", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, LEGACY, [f"ray start --head --port=6379 && python3 -m dynamo.vllm {TP} 16 --distributed-executor-backend ray"]),
    ("leader uses mp (origin version >= threshold)", "leader", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, NEW, MP_GROVE_LEADER),
    ("worker uses mp (origin version >= threshold) Grove", "worker", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, NEW, [GROVE_MP_WORKER]),
    ("worker uses mp (origin version >= threshold) LWS", "worker", LwsDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, NEW, ["-m", "dynamo.vllm", TP, "16", "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank", "$(LWS_WORKER_INDEX)", "--headless"]),
    ("leader uses mp (origin version >= threshold) LWS", "leader", LwsDeployer(), container(["python3"], ["-m", "dynamo.vllm", TP, "16"]), 8, NEW, ["-m", "dynamo.vllm", TP, "16", "--distributed-executor-backend", "mp", "--nnodes", "2", "--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank", "0"]),
    ("leader with data parallel launch LWS", "leader", LwsDeployer(), container(["python3"], ["-m", "dynamo.vllm", DP, "16"]), 8, LEGACY, ["-m", "dynamo.vllm", DP, "16", "--data-parallel-hybrid-lb", DPL, "8", "--data-parallel-start-rank", "0", "--data-parallel-address", "$(LWS_LEADER_ADDRESS)", "--data-parallel-rpc-port", "13445"]),
    ("leader prepends distributed data parallel flags (annotations don't affect DP path)", "leader", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", DP, "16"]), 8, LEGACY, ["-m", "dynamo.vllm", DP, "16", "--data-parallel-hybrid-lb", DPL, "8", "--data-parallel-start-rank", "0", "--data-parallel-address", GROVE_LEADER, "--data-parallel-rpc-port", "13445"]),
    ("leader with empty args does not modify", "leader", GroveDeployer(), container(args=[]), 0, LEGACY, None),
    ("worker with ray distributed launch Grove (nil annotations)", "worker", GroveDeployer(), container(args=["python3", "-m", "dynamo.vllm", TP, "16"]), 8, LEGACY, [f"ray start --address={GROVE_LEADER}:6379 --block"]),
    ("worker with data parallel launch Grove", "worker", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", DP, "16"]), 8, LEGACY, [f"exec python3 -m dynamo.vllm {DP} 16 --data-parallel-hybrid-lb {DPL} 8 --data-parallel-start-rank $(( 8 * $((GROVE_PCLQ_POD_INDEX + 1)) )) --data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445"]),
    ("worker with data parallel launch Grove, tp > 1", "worker", GroveDeployer(), container(["python3"], ["-m", "dynamo.vllm", DP, "8", TP, "2"]), 8, LEGACY, [f"exec python3 -m dynamo.vllm {DP} 8 {TP} 2 --data-parallel-hybrid-lb {DPL} 4 --data-parallel-start-rank $(( 4 * $((GROVE_PCLQ_POD_INDEX + 1)) )) --data-parallel-address {GROVE_LEADER} --data-parallel-rpc-port 13445"]),
    ("worker with ray distributed launch LWS (nil annotations)", "worker", LwsDeployer(), container(args=["python3", "-m", "dynamo.vllm", TP, "16"]), 8, LEGACY, ["ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]),
    ("main role does not modify args", "main", GroveDeployer(), container(args=["python3", "-m", "dynamo.frontend"]), 0, LEGACY, None),
    ("elastic EP leader Grove: ray head start + vllm serve", "leader", GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", DP, "4", "--data-parallel-backend", "ray", ELASTIC]), 2, LEGACY, [LEADER_HEAD.format(engine=f"python3 -m dynamo.vllm --model test {DP} 4 --data-parallel-backend ray {ELASTIC}")]),
    ("elastic EP worker Grove: health-gate then ray join", "worker", GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", DP, "4", "--data-parallel-backend", "ray", ELASTIC]), 2, LEGACY, [RAY_JOIN.format(leader=GROVE_LEADER)]),
    ("elastic EP leader Grove: user-specified --data-parallel-size-local preserved", "leader", GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", DP, "4", "--data-parallel-backend", "ray", ELASTIC, DPL, "2"]), 2, LEGACY, [LEADER_HEAD.format(engine=f"python3 -m dynamo.vllm --model test {DP} 4 --data-parallel-backend ray {ELASTIC} {DPL} 2")]),
    ("elastic EP worker LWS: health-gate then ray join", "worker", LwsDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", DP, "4", "--data-parallel-backend", "ray", ELASTIC]), 2, LEGACY, [RAY_JOIN.format(leader="$(LWS_LEADER_ADDRESS)")]),
    ("elastic EP main: takes the leader arm", "main", GroveDeployer(), container(["python3", "-m", "dynamo.vllm"], ["--model", "test", "--data-parallel-backend", "ray", ELASTIC]), 2, LEGACY, [MAIN_HEAD.format(engine=f"exec python3 -m dynamo.vllm --model test --data-parallel-backend ray {ELASTIC}")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("role", "deployer", "c", "gpus", "annotations", "want"),
    [row[1:] for row in ARGS_ROWS],
    ids=[row[0] for row in ARGS_ROWS],
)
def test_update_vllm_multinode_args(role, deployer, c, gpus, annotations, want):
    before = list(c.get("args") or [])
    multinode_args(c, launch(2, role, deployer, annotations=annotations), gpus=gpus)
    assert list(c.get("args") or []) == (before if want is None else want)


def _mp_pod(image: str) -> dict:
    main = container(["python3"], ["-m", "dynamo.vllm", TP, "16", "--distributed-executor-backend", "mp"], name="main", image=image)  # fmt: skip
    return {"containers": [main]}


def _dp_pod(image: str) -> dict:
    args = ["-m", "dynamo.vllm", TP, "1", DP, "16", "--data-parallel-hybrid-lb", DPL, "8"]
    return {"containers": [container(["python3"], args, name="main", image=image)]}


def _with_init(pod: dict) -> dict:
    return {**pod, "initContainers": [{"name": "existing-init", "image": "busybox"}]}


GROVE_SHELL_HOST = (
    "${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-test-service-ldr-0.${GROVE_HEADLESS_SERVICE}"
)
# TestVLLMBackend_UpdatePodSpec (parent graph "test-dgd"): (name, nodes, role, annotations,
# deployer, pod spec, expected init image or None (= no init container), expected leader host)
POD_SPEC_ROWS = [
    ("mp worker with Grove deployer injects init container", 2, "worker", {}, GroveDeployer(), _mp_pod("vllm:latest"), "vllm:latest", GROVE_SHELL_HOST),
    ("mp worker with LWS deployer injects init container", 2, "worker", {}, LwsDeployer(), _mp_pod("vllm:v2"), "vllm:v2", "${LWS_LEADER_ADDRESS}"),
    ("mp worker with executor flag in command injects init container", 2, "worker", {}, GroveDeployer(), {"containers": [container(["python3", "-m", "dynamo.vllm", TP, "16", "--distributed-executor-backend", "mp"], name="main", image="vllm:command")]}, "vllm:command", GROVE_SHELL_HOST),
    ("mp worker with shell-form command injects init container", 2, "worker", {}, GroveDeployer(), {"containers": [container(["sh", "-c", f"exec python3 -m dynamo.vllm {TP} 16 --distributed-executor-backend    mp"], name="main", image="vllm:shell-command")]}, "vllm:shell-command", GROVE_SHELL_HOST),
    ("mp leader does not inject init container", 2, "leader", {}, GroveDeployer(), _mp_pod("vllm:latest"), None, None),
    ("data parallel worker with mp origin does not inject init container", 2, "worker", NEW, LwsDeployer(), _dp_pod("vllm:dp"), None, None),
    ("non-mp worker command does not inject init container", 2, "worker", {}, GroveDeployer(), {"containers": [container(["/bin/sh", "-c"], ["ray start --address=leader:6379 --block"], name="main", image="vllm:latest")]}, None, None),
    ("single node does not inject init container", 1, "main", NEW, GroveDeployer(), {"containers": [{"name": "main", "image": "vllm:latest"}]}, None, None),
    ("mp worker preserves existing init containers", 2, "worker", {}, GroveDeployer(), _with_init(_mp_pod("vllm:latest")), "vllm:latest", GROVE_SHELL_HOST),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "annotations", "deployer", "pod", "image", "host"),
    [row[1:] for row in POD_SPEC_ROWS],
    ids=[row[0] for row in POD_SPEC_ROWS],
)
def test_update_pod_spec(nodes, role, annotations, deployer, pod, image, host):
    inits, volumes = list(pod.get("initContainers") or []), list(pod.get("volumes") or [])
    the_launch = launch(nodes, role, deployer, annotations=annotations, parent="test-dgd")
    update_pod_spec(pod, pod["containers"][0], the_launch)
    if image is None:
        assert pod.get("initContainers", []) == inits
        assert pod.get("volumes", []) == volumes
        return
    assert pod["initContainers"][:-1] == inits
    assert pod["volumes"][:-1] == volumes
    line = f'export LEADER_HOST="{host}" LEADER_PORT="29500" && exec python3 /scripts/wait-for-leader.py'
    assert pod["initContainers"][-1] == {
        "name": "wait-for-leader-mp",
        "image": image,
        "command": ["sh", "-c", line],
        "volumeMounts": [{"name": "wait-leader-script", "mountPath": "/scripts", "readOnly": True}],
    }
    assert pod["volumes"][-1] == {
        "name": "wait-leader-script",
        "configMap": {"name": "test-dgd-wait-leader-script"},
    }


def test_generate_wait_leader_config_map():
    """TestGenerateWaitLeaderConfigMap and TestGetWaitLeaderConfigMapName."""
    owner = OwnerRef("nvidia.com/v1beta1", "DynamoGraphDeployment", "my-dgd", "u")
    body = wait_leader_config_map("my-dgd", namespace="my-ns", owner=owner).body
    assert (body["apiVersion"], body["kind"]) == ("v1", "ConfigMap")
    assert body["metadata"]["name"] == "my-dgd-wait-leader-script"
    assert body["metadata"]["namespace"] == "my-ns"
    assert body["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "my-dgd"
    script = body["data"]["wait-for-leader.py"]
    for needle in (
        'os.environ["LEADER_HOST"]',
        'os.environ["LEADER_PORT"]',
        "leader_pod_is_healthy",
        "kubernetes.default.svc",
        "fieldSelector=status.podIP=",
        "deletionTimestamp",
        "socket.create_connection",
        "time.sleep(5)",
    ):
        assert needle in script
    assert config_map_name("foo") == "foo-wait-leader-script"


def test_wait_for_leader_script_waits_for_the_leader_port(tmp_path):
    """The script itself, run by a real Python: without a service account (no API access) it
    falls back to TCP alone, as upstream's, and exits once the leader port accepts."""
    import socket
    import sys

    body = wait_leader_config_map("g", namespace="ns", owner=OwnerRef("v1", "X", "g")).body
    script = tmp_path / "wait-for-leader.py"
    script.write_text(body["data"]["wait-for-leader.py"])
    with socket.create_server(("127.0.0.1", 0)) as leader:
        env = {"LEADER_HOST": "127.0.0.1", "LEADER_PORT": str(leader.getsockname()[1])}
        done = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    assert "checking TCP only" in done.stdout


# TestShouldUseMpBackend. Upstream's nil/empty rows are graphs older than the origin stamp;
# for a standalone DCD (never stamped) our rule is upstream's exactly, so graph_owned=False.
MP_ROWS = [
    ("nil annotations = legacy = ray (delegates to feature gate)", {}, False),
    ("empty annotations = legacy = ray (delegates to feature gate)", {}, False),
    ("explicit override mp takes priority over version", {ORIGIN: "0.1.0", EXECUTOR: "mp"}, True),
    ("explicit override ray takes priority over version", {ORIGIN: "1.0.0", EXECUTOR: "ray"}, False),
    ("explicit override mp (no origin version)", {EXECUTOR: "mp"}, True),
    ("explicit override with invalid value falls through to feature gate", {ORIGIN: "1.0.0", EXECUTOR: "invalid"}, True),
    ("explicit override case insensitive MP", {EXECUTOR: "MP"}, True),
    ("explicit override case insensitive Ray", {ORIGIN: "1.0.0", EXECUTOR: "RAY"}, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("annotations", "want"), [r[1:] for r in MP_ROWS], ids=[r[0] for r in MP_ROWS]
)
def test_should_use_mp_backend(annotations, want):
    from syncagent.render.multinode.executor import uses_mp

    assert uses_mp(annotations, graph_owned=False) is want


def test_graph_without_origin_version_uses_mp():
    # Our design: we stamp no origin version, so an unstamped graph is a new graph.
    from syncagent.render.multinode.executor import uses_mp

    assert uses_mp({}, graph_owned=True) is True
    assert uses_mp(LEGACY, graph_owned=True) is False
    assert uses_mp({EXECUTOR: "ray"}, graph_owned=True) is False


def test_no_inter_pod_gms_means_no_gms_load_path():
    """TestVLLMBackend_UpdateContainer_NoInterPodGMS."""
    c = container(["python3"], ["-m", "dynamo.vllm"])
    update_container(c, launch(1, "main", GroveDeployer()))
    assert not command_line_has_arg(c["command"], c["args"], "--load-format", "gms")
    assert env_named(c, "DYN_VLLM_GMS_SHADOW_MODE") is None


def test_posix_quoting_round_trips_through_a_real_shell():
    """TestShellQuotePOSIX_ArgvRoundTrip: /bin/sh re-splits the quoted line into the same argv."""
    tokens = [
        "python3", "-m", "dynamo.vllm", "--model", "test", "--data-parallel-backend=ray",
        "-dpb=ray", ELASTIC, "--chat-template={{ 'it''s' }}", "", "a b\tc", "line1\nline2",
        "semi;pipe|amp&", "d$ollar$(whoami)", "back\\slash", "glob*?[x]",
    ]  # fmt: skip
    script = "set -- " + " ".join(quote_posix(t) for t in tokens)
    script += '; for a in "$@"; do printf \'%s\\000\' "$a"; done'
    out = subprocess.run(["/bin/sh", "-c", script], capture_output=True, check=True).stdout
    assert out.decode().split("\x00")[:-1] == tokens
