"""TensorRT-LLM on several nodes: one ``mpirun`` on the leader over SSH to ``sshd`` workers.

Every pod mounts the MPI SSH key Secret at ``/ssh-pk`` and keeps FQDN host names for Open MPI.
The leader writes its SSH config, waits for the workers' DNS names where the deployer needs
it (LWS), then runs ``mpirun -n <nodes x GPUs> -H <hosts>`` forwarding the container's
environment; a worker runs ``sshd`` on 2222 and is ready when that port accepts connections.
Its liveness and startup probes go; the leader keeps its probes.
"""

from __future__ import annotations

from typing import Any

from syncagent.render.multinode.launch import Launch, add_env, drop_probes
from syncagent.render.multinode.shell import is_python_command, quote_for_bash_c

SSH_PORT = 2222
SSH_MOUNT = "/ssh-pk"
SECRET_MODE = 0o644
# Forwarded to every rank besides the container's own variables.
FORWARDED_ENV = frozenset(
    {
        "CPATH",
        "CUDA_VISIBLE_DEVICES",
        "MODEL_PATH",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_ENDPOINT",
        "TOKENIZERS_PARALLELISM",
        "NCCL_DEBUG",
        "NCCL_IB_DISABLE",
        "NCCL_P2P_DISABLE",
        "TENSORRT_LLM_CACHE_DIR",
        "HF_HOME",
        "TRANSFORMERS_CACHE",
        "HF_DATASETS_CACHE",
        "PATH",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "HOME",
        "USER",
        "TRITON_PTXAS_PATH",
        "TRTLLM_USE_UCX_KVCACHE",
    }
)
_CLIENT_SSH = [
    "ls -la /ssh-pk/",
    "cp /ssh-pk/private.key $HOME/.ssh/id_rsa",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub",
    "cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys",
    "chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys",
    "chmod 644 $HOME/.ssh/id_rsa.pub",
    # $HOME, not ~: the image may set HOME while /etc/passwd says /root.
    f"printf 'Host *\\nIdentityFile '$HOME'/.ssh/id_rsa\\nStrictHostKeyChecking no\\nPort {SSH_PORT}\\n'"
    " > $HOME/.ssh/config",
]
_SSHD = [
    *(
        f"ssh-keygen -t {kind} -f $HOME/.ssh/host_keys/ssh_host_{kind}_key -N ''"
        for kind in ("rsa", "ecdsa", "ed25519")
    ),
    f"printf 'Port {SSH_PORT}\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_rsa_key\\n"
    "HostKey '$HOME'/.ssh/host_keys/ssh_host_ecdsa_key\\nHostKey '$HOME'/.ssh/host_keys/ssh_host_ed25519_key\\n"
    "PidFile '$HOME'/.ssh/run/sshd.pid\\nStrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\n"
    "PubkeyAuthentication yes\\nAuthorizedKeysFile '$HOME'/.ssh/authorized_keys\\n' > $HOME/.ssh/sshd_config",
    "/usr/sbin/sshd -D -f $HOME/.ssh/sshd_config",
]
WORKER_READINESS = {
    "tcpSocket": {"port": SSH_PORT},
    "initialDelaySeconds": 20,
    "periodSeconds": 20,
    "timeoutSeconds": 5,
    "failureThreshold": 10,
}


def update_container(container: dict[str, Any], launch: Launch) -> None:
    if not launch.multinode:
        return
    if launch.role == "worker":
        drop_probes(container, "livenessProbe", "startupProbe")
        container["readinessProbe"] = dict(WORKER_READINESS, tcpSocket={"port": SSH_PORT})
    mounts = list(container.get("volumeMounts") or [])
    if all(m.get("mountPath") != SSH_MOUNT for m in mounts):
        mounts.append({"name": launch.ssh_secret, "mountPath": SSH_MOUNT, "readOnly": True})
    container["volumeMounts"] = mounts
    add_env(container, {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"})
    if launch.role == "leader":
        leader_command(container, launch, gpus=launch.gpus())
    elif launch.role == "worker":
        worker_command(container)


def update_pod_spec(spec: dict[str, Any], main: dict[str, Any], launch: Launch) -> None:
    if not launch.multinode:
        return
    volumes = list(spec.get("volumes") or [])
    if all(v.get("name") != launch.ssh_secret for v in volumes):
        secret = {"secretName": launch.ssh_secret, "defaultMode": SECRET_MODE}
        volumes.append({"name": launch.ssh_secret, "secret": secret})
    spec["volumes"] = volumes


def leader_command(container: dict[str, Any], launch: Launch, *, gpus: int) -> None:
    hosts = launch.deployer.host_names(launch.service, launch.nodes)
    forwarded = sorted(FORWARDED_ENV | {e["name"] for e in container.get("env") or []})
    mpirun = (
        'mpirun $([ "$(id -u)" = "0" ] && echo --allow-run-as-root) --oversubscribe'
        f" -n {launch.nodes * gpus} -H {','.join(hosts)} --mca pml ob1"
        f' --mca plm_rsh_args "-p {SSH_PORT} -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa"'
        f" {' '.join(f'-x {name}' for name in forwarded)}"
        f" bash -c 'trtllm-llmapi-launch {_original_command(container)}'"
    )
    steps = ["mkdir -p $HOME/.ssh", *_CLIENT_SSH]
    if launch.deployer.needs_dns_wait():
        steps.append(_dns_wait(hosts[1:]))
    container["command"] = ["/bin/sh", "-c"]
    container["args"] = [" && ".join([*steps, mpirun])]


def worker_command(container: dict[str, Any]) -> None:
    steps = ["mkdir -p $HOME/.ssh $HOME/.ssh/host_keys $HOME/.ssh/run", *_CLIENT_SSH, *_SSHD]
    container["command"] = ["/bin/sh", "-c"]
    container["args"] = [" && ".join(steps)]


def _original_command(container: dict[str, Any]) -> str:
    command = list(container.get("command") or [])
    args = list(container.get("args") or [])
    if command and is_python_command(command[0]):
        return " ".join(quote_for_bash_c(t) for t in [*command, *args])
    return " ".join(args or command)


def _dns_wait(workers: list[str]) -> str:
    return (
        f"TIMEOUT=300; START_TIME=$(date +%s); for worker in {' '.join(workers)}; do "
        'echo "Waiting for DNS: $worker"; until getent hosts $worker >/dev/null 2>&1; do '
        "CURRENT_TIME=$(date +%s); if [ $((CURRENT_TIME - START_TIME)) -gt $TIMEOUT ]; then "
        'echo "ERROR: Timeout waiting for DNS: $worker"; exit 1; fi; '
        'echo "DNS not ready for $worker, retrying..."; sleep 2; done; '
        'echo "\u2713 DNS resolved: $worker"; done; echo "All workers DNS ready"'
    )
