"""Pure parts of the simulated cluster: tool pins, kwok nodes, the LWS manager's config and
webhook configurations, and the ``dev-cluster up`` flag checks (which fail before any build)."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from syncagent.devcluster import build, kwok, lws_manager, versions
from syncagent.devcluster.gomod import GoModuleError


def test_tools_are_cached_by_name_and_version(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("SYNCAGENT_CACHE", str(tmp_path))
    manager = build.lws_manager_tool("v0.9.0")
    assert manager.path() == tmp_path / "bin" / "lws-manager-v0.9.0" / "lws-manager"
    assert manager.package == "sigs.k8s.io/lws/cmd"
    assert "GitVersion=v0.9.0" in manager.ldflags
    assert build.kwok_tool().path() == tmp_path / "bin" / f"kwok-{versions.KWOK}" / "kwok"
    helm = build.helm_tool()
    assert helm.path() == tmp_path / "bin" / f"helm-{versions.HELM}_kube-1.34" / "helm"
    assert "chartutil.k8sVersionMinor=34" in helm.ldflags


def test_no_manager_for_an_lws_version_the_proxy_does_not_serve() -> None:
    with pytest.raises(GoModuleError, match="no manager can be built"):
        build.lws_manager_tool("v0.10.0")


def test_kwok_nodes_carry_gpus_and_no_taint() -> None:
    node = kwok.node(2)
    assert node["metadata"]["name"] == "kwok-gpu-2"
    assert node["metadata"]["annotations"][kwok.NODE_ANNOTATION] == "fake"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert "taints" not in node["spec"]


def test_a_node_is_ready_once_its_not_ready_taint_is_gone() -> None:
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert kwok.node_ready(ready)
    tainted = {
        **ready,
        "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
    }
    assert not kwok.node_ready(tainted)
    assert not kwok.node_ready({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})


def test_kwok_serves_nothing_on_the_network() -> None:
    cmd = kwok.command(Path("kwok"), kubeconfig=Path("k"), config=Path("c"))
    assert not [a for a in cmd if a.startswith(("--node-port", "--server-address"))]


def test_manager_config_binds_loopback_and_turns_off_pod_only_features() -> None:
    config = yaml.safe_load(
        lws_manager.config_file(
            webhook_port=9443, cert_dir=Path("/pki/webhook"), metrics_port=1, health_port=2
        )
    )
    assert config["internalCertManagement"] == {"enable": False}
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": "/pki/webhook"}
    assert config["metrics"]["bindAddress"] == "127.0.0.1:1"
    assert config["health"]["healthProbeBindAddress"] == "127.0.0.1:2"


def _webhook_module(folder: Path) -> None:
    """A config/webhook folder shaped like upstream's (manifests, kustomization, patches)."""

    def hook(name: str, path: str) -> dict:
        return {
            "name": name,
            "clientConfig": {"service": {"name": "webhook-service", "path": path}},
            "rules": [],
        }

    folder.mkdir(parents=True)
    docs = [
        {
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "mutating-webhook-configuration"},
            "webhooks": [hook("mlws", "/mutate-lws"), hook("mpod", "/mutate-pod")],
        }
    ]
    (folder / "manifests.yaml").write_text(yaml.safe_dump_all(docs))
    patched = {**hook("mpod", "/mutate-pod"), "objectSelector": {"matchExpressions": []}}
    (folder / "mutating-patch.yaml").write_text(
        yaml.safe_dump([{"op": "replace", "path": "/webhooks/1", "value": patched}])
    )
    (folder / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "patches": [
                    {
                        "path": "mutating-patch.yaml",
                        "target": {
                            "kind": "MutatingWebhookConfiguration",
                            "name": "mutating-webhook-configuration",
                        },
                    }
                ]
            }
        )
    )


def test_webhook_configurations_call_loopback_with_our_ca(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    _webhook_module(tmp_path / lws_manager.WEBHOOK_DIR)
    monkeypatch.setattr(lws_manager, "module_dir", lambda module, version: tmp_path)
    (doc,) = lws_manager.webhook_configurations("v0.9.0", port=8443, ca_pem=b"CA")
    assert doc["metadata"]["name"] == "lws-mutating-webhook-configuration"
    lws, pod = doc["webhooks"]
    assert lws["clientConfig"] == {
        "url": "https://127.0.0.1:8443/mutate-lws",
        "caBundle": base64.b64encode(b"CA").decode(),
    }
    assert pod["clientConfig"]["url"] == "https://127.0.0.1:8443/mutate-pod"
    assert "objectSelector" in pod  # upstream's kustomize patch applied


def test_unknown_kustomize_patches_fail_loudly() -> None:
    with pytest.raises(ValueError, match="unsupported kustomize patch"):
        lws_manager._apply_replace({"webhooks": []}, {"op": "add", "path": "/webhooks/-"})


def _up(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", "dev-cluster", "up", "--name", "x", *args],
        capture_output=True,
        text=True,
        check=False,
        env={"SYNCAGENT_CACHE": str(cache), "PATH": ""},
    )


def test_up_refuses_nodes_with_bare(tmp_path) -> None:
    proc = _up("--bare", "--nodes", "2", cache=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == (
        "error: dev-cluster/x: --nodes needs the simulated cluster; drop --bare or --nodes\n"
    )


def test_up_without_bare_needs_an_lws_version_with_a_manager(tmp_path) -> None:
    proc = _up("--lws-version", "v0.10.0", cache=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: dev-cluster/x: LeaderWorkerSet v0.10.0 has no manager")
    assert "add --bare" in proc.stderr
