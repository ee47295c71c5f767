"""SGLang multinode launch: upstream's backend_sglang_test.go tables, row by row."""

from __future__ import annotations

import pytest

from syncagent.render.multinode import GroveDeployer, LwsDeployer
from syncagent.render.multinode.sglang import multinode_flags, update_container
from syncagent.render.multinode.shell import is_python_command
from tests.unit.support.multinode import ShellDeployer, SimpleDeployer, container, launch, probes

GROVE_ADDR = (
    "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-test-service-ldr-0.$(GROVE_HEADLESS_SERVICE):29500"
)

# TestSGLangBackend_PythonCommandInjection: (name, nodes, role, deployer, command, args,
# expected command, expected args)
PYTHON_COMMAND_ROWS = [
    ("single node python command no changes", 1, "main", SimpleDeployer(), ["python3"], ["-m", "dynamo.sglang"], ["python3"], ["-m", "dynamo.sglang"]),
    ("python command simple deployer - direct append", 2, "worker", SimpleDeployer(), ["python3"], ["-m", "dynamo.sglang", "--model", "llama"], ["python3"], ["-m", "dynamo.sglang", "--model", "llama", "--dist-init-addr", "leader.example.com:29500", "--nnodes", "2", "--node-rank", "1"]),
    ("python command LWS worker - direct append (kubelet expansion)", 2, "worker", LwsDeployer(), ["python3"], ["-m", "dynamo.sglang", "--model", "llama"], ["python3"], ["-m", "dynamo.sglang", "--model", "llama", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)"]),
    ("python command LWS leader - direct append", 2, "leader", LwsDeployer(), ["python3"], ["-m", "dynamo.sglang"], ["python3"], ["-m", "dynamo.sglang", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank", "0"]),
    ("python command shell deployer - shell wrapping", 2, "worker", ShellDeployer(), ["python3"], ["-m", "dynamo.sglang", "--model", "llama"], ["sh", "-c"], ["exec python3 -m dynamo.sglang --model llama --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)"]),
    ("python command leader role - always simple", 3, "leader", ShellDeployer(), ["python"], ["-m", "dynamo.sglang"], ["python"], ["-m", "dynamo.sglang", "--dist-init-addr", "$(LEADER_HOST):29500", "--nnodes", "3", "--node-rank", "0"]),
    ("python3.11 variant supported", 2, "worker", SimpleDeployer(), ["python3.11"], ["-m", "dynamo.sglang"], ["python3.11"], ["-m", "dynamo.sglang", "--dist-init-addr", "leader.example.com:29500", "--nnodes", "2", "--node-rank", "1"]),
    ("absolute path python command supported", 2, "worker", SimpleDeployer(), ["/usr/bin/python3.8"], ["-m", "dynamo.sglang", "--model", "llama"], ["/usr/bin/python3.8"], ["-m", "dynamo.sglang", "--model", "llama", "--dist-init-addr", "leader.example.com:29500", "--nnodes", "2", "--node-rank", "1"]),
    ("pyenv shims python command supported", 2, "worker", ShellDeployer(), ["/home/user/.pyenv/shims/python3.9"], ["-m", "dynamo.sglang"], ["sh", "-c"], ["exec /home/user/.pyenv/shims/python3.9 -m dynamo.sglang --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)"]),
    ("python command with module in command array - simple deployer", 2, "worker", SimpleDeployer(), ["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "8"], ["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B", "--tp-size", "8", "--dist-init-addr", "leader.example.com:29500", "--nnodes", "2", "--node-rank", "1"]),
    ("python command with module in command array - shell deployer", 2, "worker", ShellDeployer(), ["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B"], ["sh", "-c"], ["exec python3 -m dynamo.sglang --model-path Qwen/Qwen3-0.6B --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)"]),
    ("python command with no args - shell deployer", 2, "worker", ShellDeployer(), ["python3", "-m", "dynamo.sglang"], [], ["sh", "-c"], ["exec python3 -m dynamo.sglang --dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)"]),
    ("non-python command multinode unchanged", 2, "worker", ShellDeployer(), ["java"], ["-jar", "app.jar"], ["java"], ["-jar", "app.jar"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "command", "args", "want_command", "want_args"),
    [row[1:] for row in PYTHON_COMMAND_ROWS],
    ids=[row[0] for row in PYTHON_COMMAND_ROWS],
)
def test_python_command_injection(nodes, role, deployer, command, args, want_command, want_args):
    c = container(command, args)
    update_container(c, launch(nodes, role, deployer))
    assert c["command"] == want_command
    assert c.get("args", []) == want_args


# TestSGLangBackend_ShellCommandInjection: (name, nodes, role, deployer, args, expected args);
# the command is always [sh, -c] and must be kept.
SHELL_COMMAND_ROWS = [
    ("single node shell command not modified", 1, "main", GroveDeployer(), ["python -m dynamo.sglang"], ["python -m dynamo.sglang"]),
    ("multinode shell command with regex injection", 2, "leader", GroveDeployer(), ["python -m dynamo.sglang"], [f"python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 2 --node-rank 0"]),
    ("multinode shell command with complex pipeline", 2, "leader", GroveDeployer(), ["echo blah | wc -l && python -m dynamo.sglang && ls -al"], [f"echo blah | wc -l && python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 2 --node-rank 0 && ls -al"]),
    ("shell command worker with grove env vars", 3, "worker", GroveDeployer(), ["python -m dynamo.sglang"], [f"python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 3 --node-rank $((GROVE_PCLQ_POD_INDEX + 1))"]),
    ("shell command with LWS deployer", 2, "leader", LwsDeployer(), ["python -m dynamo.sglang"], ["python -m dynamo.sglang --dist-init-addr $(LWS_LEADER_ADDRESS):29500 --nnodes 2 --node-rank 0"]),
    ("shell command with pipes", 2, "leader", GroveDeployer(), ["python -m dynamo.sglang | tee /tmp/log"], [f"python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 2 --node-rank 0 | tee /tmp/log"]),
    ("shell command multiple args individual processing", 2, "leader", GroveDeployer(), ["echo start", "python -m dynamo.sglang", "echo done"], ["echo start", f"python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 2 --node-rank 0", "echo done"]),
    ("shell command no sglang modules unchanged", 2, "leader", GroveDeployer(), ["echo hello", "python -m some.other.module"], ["echo hello", "python -m some.other.module"]),
    ("shell command stops after first python injection", 2, "leader", GroveDeployer(), ["python -m dynamo.sglang", "python -m dynamo.sglang --other-flags"], [f"python -m dynamo.sglang --dist-init-addr {GROVE_ADDR} --nnodes 2 --node-rank 0", "python -m dynamo.sglang --other-flags"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "args", "want_args"),
    [row[1:] for row in SHELL_COMMAND_ROWS],
    ids=[row[0] for row in SHELL_COMMAND_ROWS],
)
def test_shell_command_injection(nodes, role, deployer, args, want_args):
    c = container(["sh", "-c"], args)
    update_container(c, launch(nodes, role, deployer))
    assert c["args"] == want_args
    assert c["command"] == ["sh", "-c"]


# TestIsPythonCommand
IS_PYTHON_ROWS = [
    ("python", True), ("python3", True), ("python2", True), ("python3.11", True),
    ("python2.7", True), ("python3.12.1", True),
    ("/usr/bin/python", True), ("/usr/bin/python3", True), ("/usr/bin/python3.8", True),
    ("/usr/bin/python2.7", True), ("/opt/python/bin/python3.11", True),
    ("/usr/local/bin/python3.12.1", True), ("/home/user/.pyenv/shims/python3.9", True),
    ("./python3", True), ("../bin/python", True), ("bin/python3.10", True),
    ("java", False), ("sh", False), ("node", False), ("python-config", False),
    ("/usr/bin/python-config", False), ("", False), ("python ", False),
    ("/usr/bin/python ", False), ("pythonx", False), ("/usr/bin/pythonx", False),
    ("/usr/bin/", False), ("python/", False), ("/usr/bin/python/", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("cmd", "expected"), IS_PYTHON_ROWS, ids=[r[0] or "<empty>" for r in IS_PYTHON_ROWS]
)
def test_is_python_command(cmd, expected):
    assert is_python_command(cmd) is expected


# TestSGLangBackend_GetMultinodeFlags: (name, nodes, role, deployer, flags, needs shell)
FLAG_ROWS = [
    ("leader role never needs shell", 2, "leader", ShellDeployer(), "--dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank 0", False),
    ("worker with simple deployer", 3, "worker", SimpleDeployer(), "--dist-init-addr leader.example.com:29500 --nnodes 3 --node-rank 1", False),
    ("worker with shell deployer", 2, "worker", ShellDeployer(), "--dist-init-addr $(LEADER_HOST):29500 --nnodes 2 --node-rank $(WORKER_INDEX)", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "role", "deployer", "flags", "needs_shell"),
    [row[1:] for row in FLAG_ROWS],
    ids=[row[0] for row in FLAG_ROWS],
)
def test_get_multinode_flags(nodes, role, deployer, flags, needs_shell):
    assert multinode_flags(launch(nodes, role, deployer)) == (flags, needs_shell)


# TestSGLangBackend_ProbeRemoval: (name, nodes, role, probes removed)
PROBE_ROWS = [
    ("single node does not remove probes", 1, "main", False),
    ("multinode leader does not remove probes", 2, "leader", False),
    ("multinode worker removes probes", 2, "worker", True),
    ("multinode main role does not remove probes", 2, "main", False),
]


@pytest.mark.parametrize(
    ("nodes", "role", "removed"), [r[1:] for r in PROBE_ROWS], ids=[r[0] for r in PROBE_ROWS]
)
def test_probe_removal(nodes, role, removed):
    c = container(args=["python -m dynamo.sglang"], **probes())
    update_container(c, launch(nodes, role, GroveDeployer()))
    for name, probe in probes().items():
        assert c.get(name) == (None if removed else probe)
