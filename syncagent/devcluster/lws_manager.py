"""The real LeaderWorkerSet manager (LWS + DisaggregatedSet controllers and webhooks) on loopback.

A real install runs the manager in a pod behind a Service, and its webhook configurations name
that Service. Here it runs as a host process: the configurations are upstream's own
(``config/webhook`` of the pinned module, with its kustomize patches applied), except that
``clientConfig`` is a ``url`` on 127.0.0.1 and the ``caBundle`` is our CA, which also signed the
webhook server's certificate. The manager's config file turns off what only makes sense in a
pod: internal certificate management (we supply the certificates) and leader election.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import yaml

from syncagent.devcluster import versions
from syncagent.devcluster.gomod import module_dir

WEBHOOK_DIR = "config/webhook"
# config/default/kustomization.yaml prefixes every name with "lws-", as the Helm chart does.
NAME_PREFIX = "lws-"


def config_file(*, webhook_port: int, cert_dir: Path, metrics_port: int, health_port: int) -> str:
    """The manager's ``--config`` (``config.lws.x-k8s.io/v1alpha1`` Configuration)."""
    config = {
        "apiVersion": "config.lws.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
    }
    return yaml.safe_dump(config)


def command(manager: Path, *, config: Path) -> list[str]:
    return [str(manager), f"--config={config}", "--leader-elect=false", "--zap-log-level=info"]


def webhook_configurations(version: str, *, port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """Upstream's Mutating- and ValidatingWebhookConfiguration, calling ``127.0.0.1:port``."""
    folder = module_dir(versions.LWS_MODULE, version) / WEBHOOK_DIR
    docs = [d for d in yaml.safe_load_all((folder / "manifests.yaml").read_text()) if d]
    patches = _kustomize_patches(folder)
    out = []
    for doc in docs:
        for op in patches.get((doc["kind"], doc["metadata"]["name"]), []):
            _apply_replace(doc, op)
        doc["metadata"]["name"] = NAME_PREFIX + doc["metadata"]["name"]
        for hook in doc["webhooks"]:
            service = hook["clientConfig"].pop("service")
            hook["clientConfig"] = {
                "url": f"https://127.0.0.1:{port}{service['path']}",
                "caBundle": base64.b64encode(ca_pem).decode(),
            }
        out.append(doc)
    return out


def _kustomize_patches(folder: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The JSON 6902 patches ``config/webhook/kustomization.yaml`` lists, by target."""
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in kustomization.get("patches") or []:
        target = entry["target"]
        ops = yaml.safe_load((folder / entry["path"]).read_text())
        found.setdefault((target["kind"], target["name"]), []).extend(ops)
    return found


def _apply_replace(doc: dict[str, Any], op: dict[str, Any]) -> None:
    # Upstream's patches are all "replace" of one list item (/webhooks/<i>); anything else is
    # a new shape this code must learn, so it fails loudly.
    parts = op["path"].strip("/").split("/")
    if op["op"] != "replace" or len(parts) != 2 or not parts[1].isdigit():
        raise ValueError(f"unsupported kustomize patch {op} in sigs.k8s.io/lws {WEBHOOK_DIR}")
    doc[parts[0]][int(parts[1])] = copy.deepcopy(op["value"])
