"""TensorRT-LLM multinode launch: upstream's backend_trtllm_test.go tables, row by row."""

from __future__ import annotations

import pytest

from syncagent.render.multinode import GroveDeployer, LwsDeployer
from syncagent.render.multinode.gpus import container_gpus
from syncagent.render.multinode.shell import quote_for_bash_c
from syncagent.render.multinode.trtllm import (
    leader_command,
    update_container,
    update_pod_spec,
    worker_command,
)
from tests.unit.support.multinode import container, launch

SECRET = "mpi-run-ssh-secret"
SSH = (
    "mkdir -p $HOME/.ssh && ls -la /ssh-pk/ && cp /ssh-pk/private.key $HOME/.ssh/id_rsa && "
    "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub && cp /ssh-pk/private.key.pub "
    "$HOME/.ssh/authorized_keys && chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys && "
    "chmod 644 $HOME/.ssh/id_rsa.pub && printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\n"
    "StrictHostKeyChecking no\\nPort 2222\\n' > $HOME/.ssh/config"
)
MPIRUN = 'mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe -n {n} -H {hosts} --mca pml ob1 --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" {x} bash -c \'trtllm-llmapi-launch {cmd}\''  # fmt: skip
X_COMMON = "-x CPATH -x CUDA_VISIBLE_DEVICES -x HF_DATASETS_CACHE -x HF_ENDPOINT -x HF_HOME -x HF_TOKEN -x HOME -x HUGGING_FACE_HUB_TOKEN -x LD_LIBRARY_PATH -x MODEL_PATH -x NCCL_DEBUG -x NCCL_IB_DISABLE -x NCCL_P2P_DISABLE -x PATH -x PYTHONPATH -x TENSORRT_LLM_CACHE_DIR -x TOKENIZERS_PARALLELISM -x TRANSFORMERS_CACHE -x TRITON_PTXAS_PATH -x TRTLLM_USE_UCX_KVCACHE -x USER"  # fmt: skip
X_WITH_OMPI = X_COMMON.replace("-x PATH", "-x OMPI_MCA_orte_keep_fqdn_hostnames -x PATH")
LWS_WORKER_1 = "$(echo \"$LWS_LEADER_ADDRESS\" | sed 's/\\./-1\\./')"
DNS_WAIT = 'TIMEOUT=300; START_TIME=$(date +%s); for worker in {workers}; do echo "Waiting for DNS: $worker"; until getent hosts $worker >/dev/null 2>&1; do CURRENT_TIME=$(date +%s); if [ $((CURRENT_TIME - START_TIME)) -gt $TIMEOUT ]; then echo "ERROR: Timeout waiting for DNS: $worker"; exit 1; fi; echo "DNS not ready for $worker, retrying..."; sleep 2; done; echo "\u2713 DNS resolved: $worker"; done; echo "All workers DNS ready"'  # fmt: skip
WORKER_SSHD = (
    "mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run"
    + SSH.removeprefix("mkdir -p $HOME/.ssh")
    + " && ssh-keygen -t rsa -f $HOME/.ssh/host_keys/ssh_host_rsa_key -N '' && ssh-keygen -t ecdsa -f $HOME/.ssh/host_keys/ssh_host_ecdsa_key -N '' && ssh-keygen -t ed25519 -f $HOME/.ssh/host_keys/ssh_host_ed25519_key -N '' && printf 'Port 2222\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ecdsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\nPidFile '$HOME'/.ssh/run/sshd.pid\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\nPubkeyAuthentication yes\\nAuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config && /usr/sbin/sshd -D -f $HOME/.ssh/sshd_config"
)  # fmt: skip


def grove_hosts(service: str, nodes: int) -> str:
    base = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{s}-{r}.$(GROVE_HEADLESS_SERVICE)"
    hosts = [base.format(s=service, r="ldr-0")]
    hosts += [base.format(s=service, r=f"wkr-{i}") for i in range(nodes - 1)]
    return ",".join(hosts)


# TestShellQuoteForBashC
QUOTE_ROWS = [
    ("Simple flag - no quoting needed", "--model-path", "--model-path"),
    ("Simple path - no quoting needed", "/usr/bin/python3", "/usr/bin/python3"),
    ("Empty string - no quoting needed", "", ""),
    ("JSON override-engine-args (primary use case)", '{"load_format": "DUMMY", "tensor_parallel_size": 8}', '"{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"'),
    ("String with dollar sign is escaped", "$HOME/path", '"\\$HOME/path"'),
    ("String with backtick is escaped", "hello `world`", '"hello \\`world\\`"'),
    ("Backslash is escaped first to avoid double-escaping", "path\\to\\file", '"path\\\\to\\\\file"'),
    ("Single quote breaks out of outer bash -c context", "it's", "\"it'\"'\"'s\""),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "want"), [r[1:] for r in QUOTE_ROWS], ids=[r[0] for r in QUOTE_ROWS]
)
def test_shell_quote_for_bash_c(text, want):
    assert quote_for_bash_c(text) == want


def test_shell_quote_for_bash_c_in_leader_command():
    """TestShellQuoteForBashC_InLeaderCommand."""
    json_args = '{"load_format": "DUMMY", "tensor_parallel_size": 8}'
    c = container(
        ["python3", "-m", "dynamo.trtllm"],
        ["--model-path", "deepseek-ai/DeepSeek-R1", "--override-engine-args", json_args],
        resources={"requests": {"nvidia.com/gpu": "4"}},
    )
    leader_command(c, launch(2, "leader", GroveDeployer(), service="dec"), gpus=container_gpus(c))
    assert len(c["args"]) == 1
    quoted = '"{\\"load_format\\": \\"DUMMY\\", \\"tensor_parallel_size\\": 8}"'
    assert f"--override-engine-args {quoted}" in c["args"][0]
    assert "bash -c 'trtllm-llmapi-launch" in c["args"][0]


# TestTRTLLMBackend_UpdateContainer: (name, nodes, role, deployer, resources, mounts, command,
# args, env, probes after) -- the container starts as args [python3, --model, test] with
# three (empty) probes.
TCP_READY = {"tcpSocket": {"port": 2222}, "initialDelaySeconds": 20, "periodSeconds": 20, "timeoutSeconds": 5, "failureThreshold": 10}  # fmt: skip
SSH_MOUNT = {"name": SECRET, "mountPath": "/ssh-pk", "readOnly": True}
OMPI = {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"}
UPDATE_ROWS = [
    ("Single node - no changes", 1, "main", GroveDeployer(), {}, [], None, ["python3", "--model", "test"], [], ("kept", "kept", "kept")),
    ("Multinode leader with GPU resources", 3, "leader", GroveDeployer(), {"requests": {"nvidia.com/gpu": "2"}}, [SSH_MOUNT], ["/bin/sh", "-c"], [SSH + " && " + MPIRUN.format(n=6, hosts=grove_hosts("test-service", 3), x=X_WITH_OMPI, cmd="python3 --model test")], [OMPI], ("kept", "kept", "kept")),
    ("Multinode worker", 3, "worker", GroveDeployer(), {}, [SSH_MOUNT], ["/bin/sh", "-c"], [WORKER_SSHD], [OMPI], (None, TCP_READY, None)),
    ("Multinode leader with LWS deployment", 2, "leader", LwsDeployer(), {"limits": {"nvidia.com/gpu": "1"}}, [SSH_MOUNT], ["/bin/sh", "-c"], [SSH + " && " + DNS_WAIT.format(workers=LWS_WORKER_1) + " && " + MPIRUN.format(n=2, hosts="$(LWS_LEADER_ADDRESS)," + LWS_WORKER_1, x=X_WITH_OMPI, cmd="python3 --model test")], [OMPI], ("kept", "kept", "kept")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "resources", "mounts", "command", "args", "env", "probes"),
    [r[1:] for r in UPDATE_ROWS],
    ids=[r[0] for r in UPDATE_ROWS],
)
def test_update_container(nodes, role, deployer, resources, mounts, command, args, env, probes):
    c = container(args=["python3", "--model", "test"], resources=resources)
    c |= {"livenessProbe": {}, "readinessProbe": {}, "startupProbe": {}}
    update_container(c, launch(nodes, role, deployer, gpus=container_gpus(c)))
    assert c.get("volumeMounts", []) == mounts
    assert c.get("command") == command
    assert c["args"] == args
    assert c.get("env", []) == env
    for name, want in zip(("livenessProbe", "readinessProbe", "startupProbe"), probes, strict=True):
        assert c.get(name) == ({} if want == "kept" else want), name


# TestTRTLLMBackend_UpdatePodSpec: (name, nodes, role, deployer, volumes, expected count)
POD_ROWS = [
    ("Single node - no SSH volume added", 1, "main", GroveDeployer(), [], 0),
    ("Multinode leader - SSH volume added", 3, "leader", GroveDeployer(), [], 1),
    ("Multinode worker - SSH volume added", 2, "worker", LwsDeployer(), [], 1),
    (
        "Multinode with existing volumes",
        2,
        "leader",
        GroveDeployer(),
        [{"name": "existing-volume"}],
        2,
    ),
]


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "volumes", "count"),
    [r[1:] for r in POD_ROWS],
    ids=[r[0] for r in POD_ROWS],
)
def test_update_pod_spec(nodes, role, deployer, volumes, count):
    spec = {"volumes": list(volumes), "containers": [{"name": "main", "env": []}]}
    update_pod_spec(spec, spec["containers"][0], launch(nodes, role, deployer))
    assert len(spec["volumes"]) == count
    ssh = [v for v in spec["volumes"] if v["name"] == SECRET]
    if nodes > 1:
        assert ssh == [{"name": SECRET, "secret": {"secretName": SECRET, "defaultMode": 0o644}}]
    else:
        assert ssh == []


# TestTRTLLMBackend_hostNamesList
HOST_ROWS = [
    ("Grove deployment with 3 nodes", 3, GroveDeployer(), "test-service", grove_hosts("test-service", 3).split(",")),
    ("LWS deployment with 2 nodes", 2, LwsDeployer(), "test-service", ["$(LWS_LEADER_ADDRESS)", LWS_WORKER_1]),
    ("Grove deployment with 5 nodes", 5, GroveDeployer(), "worker", grove_hosts("worker", 5).split(",")),
    ("LWS deployment with 4 nodes", 4, LwsDeployer(), "worker", ["$(LWS_LEADER_ADDRESS)", *(LWS_WORKER_1.replace("-1", f"-{i}") for i in (1, 2, 3))]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "deployer", "service", "want"),
    [r[1:] for r in HOST_ROWS],
    ids=[r[0] for r in HOST_ROWS],
)
def test_host_names(nodes, deployer, service, want):
    assert deployer.host_names(service, nodes) == want


# TestTRTLLMBackend_addSSHVolumeMount
MOUNT_ROWS = [
    ("Add SSH volume mount to empty container", [], [SSH_MOUNT]),
    ("Add SSH volume mount to container with existing mounts", [{"name": "existing-mount", "mountPath": "/existing"}], [{"name": "existing-mount", "mountPath": "/existing"}, SSH_MOUNT]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("mounts", "want"), [r[1:] for r in MOUNT_ROWS], ids=[r[0] for r in MOUNT_ROWS]
)
def test_add_ssh_volume_mount(mounts, want):
    c = container(["python3", "-m", "dynamo.trtllm"], [], volumeMounts=list(mounts))
    update_container(c, launch(2, "main", GroveDeployer()))
    assert c["volumeMounts"] == want


# TestTRTLLMBackend_setupLeaderContainer: (name, nodes, deployer, service, resources, args,
# command, extra env, hosts, GPUs x nodes, forwarded -x list, original command)
CUSTOM_ENV = [
    {"name": "CUDA_VISIBLE_DEVICES", "value": "0,1"},
    {"name": "CUSTOM_VAR", "value": "test_value"},
    {"name": "PATH", "value": "/custom/path"},
]
LEADER_ROWS = [
    ("Leader with args and GPU resources", 3, GroveDeployer(), "test-service", {"requests": {"nvidia.com/gpu": "2"}}, ["python3", "--model", "test"], [], [], grove_hosts("test-service", 3), 6, X_COMMON, "python3 --model test"),
    ("Leader with command and no GPU resources", 2, LwsDeployer(), "worker", {}, [], ["python", "-m", "worker"], [], "$(LWS_LEADER_ADDRESS)," + LWS_WORKER_1, 0, X_COMMON, "python -m worker"),
    ("Leader with both command and args (shell command - args take precedence)", 2, GroveDeployer(), "test", {"limits": {"nvidia.com/gpu": "1"}}, ["launch", "--config", "test.yaml"], ["sh", "-c"], [], grove_hosts("test", 2), 2, X_COMMON, "launch --config test.yaml"),
    ("Leader with python command and args (combined)", 2, GroveDeployer(), "test", {"limits": {"nvidia.com/gpu": "1"}}, ["-m", "dynamo.trtllm", "--model-path", "test"], ["python3"], [], grove_hosts("test", 2), 2, X_COMMON, "python3 -m dynamo.trtllm --model-path test"),
    ("Leader with python module command and separate args", 2, GroveDeployer(), "test", {"limits": {"nvidia.com/gpu": "1"}}, ["--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--disaggregation-mode", "prefill"], ["python3", "-m", "dynamo.trtllm"], [], grove_hosts("test", 2), 2, X_COMMON, "python3 -m dynamo.trtllm --model-path Qwen/Qwen3-0.6B --served-model-name Qwen/Qwen3-0.6B --disaggregation-mode prefill"),
    ("Leader with absolute path python command", 2, GroveDeployer(), "test", {"limits": {"nvidia.com/gpu": "1"}}, ["-m", "dynamo.trtllm", "--model-path", "test"], ["/usr/bin/python3.8"], [], grove_hosts("test", 2), 2, X_COMMON, "/usr/bin/python3.8 -m dynamo.trtllm --model-path test"),
    ("Leader with all environment variables forwarded", 2, GroveDeployer(), "test", {"requests": {"nvidia.com/gpu": "1"}}, ["serve", "--model", "test"], [], [], grove_hosts("test", 2), 2, X_COMMON, "serve --model test"),
    ("Leader with overlapping environment variables (deduplication test)", 2, GroveDeployer(), "test", {"requests": {"nvidia.com/gpu": "1"}}, ["serve", "--model", "test"], [], CUSTOM_ENV, grove_hosts("test", 2), 2, X_COMMON.replace("-x HF_DATASETS_CACHE", "-x CUSTOM_VAR -x HF_DATASETS_CACHE"), "serve --model test"),
]  # fmt: skip


@pytest.mark.parametrize(
    (
        "nodes",
        "deployer",
        "service",
        "resources",
        "args",
        "command",
        "env",
        "hosts",
        "n",
        "x",
        "cmd",
    ),
    [r[1:] for r in LEADER_ROWS],
    ids=[r[0] for r in LEADER_ROWS],
)
def test_setup_leader_container(nodes, deployer, service, resources, args, command, env, hosts, n, x, cmd):  # fmt: skip
    c = container(command, args, resources=resources, env=list(env))
    leader_command(c, launch(nodes, "leader", deployer, service=service), gpus=container_gpus(c))
    assert c["command"] == ["/bin/sh", "-c"]
    steps = [SSH]
    if isinstance(deployer, LwsDeployer):  # upstream's LWS rows wait for the workers' DNS
        steps.append(DNS_WAIT.format(workers=" ".join(hosts.split(",")[1:])))
    steps.append(MPIRUN.format(n=n, hosts=hosts, x=x, cmd=cmd))
    assert c["args"] == [" && ".join(steps)]


# TestTRTLLMBackend_setupWorkerContainer
WORKER_ROWS = [
    ("Worker setup with initial args", ["some", "args"], []),
    ("Worker setup with initial command", [], ["original", "command"]),
]


@pytest.mark.parametrize(
    ("args", "command"), [r[1:] for r in WORKER_ROWS], ids=[r[0] for r in WORKER_ROWS]
)
def test_setup_worker_container(args, command):
    c = container(command, args)
    worker_command(c)
    assert c["command"] == ["/bin/sh", "-c"]
    assert c["args"] == [WORKER_SSHD]
