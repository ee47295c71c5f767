"""Bypass attempts on the chart's graph policy (tests/cluster/test_graph_policy.py, the parity
tier's recipe check): each edits one pod template the way one Pod Security control forbids."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from syncagent.devcluster import ControlPlane
from tests.support.graphs import component, graph
from tests.support.helm import Helm
from tests.support.kube import DCD, ApiFailure, Kube
from tests.support.polling import eventually

Template = dict[str, Any]
Change = Callable[[Template], None]


def _main(template: Template) -> dict[str, Any]:
    return template["spec"]["containers"][0]


def _context(template: Template) -> dict[str, Any]:
    return _main(template).setdefault("securityContext", {})


def _pod_context(template: Template) -> dict[str, Any]:
    return template["spec"].setdefault("securityContext", {})


def _init(template: Template, security: dict[str, Any]) -> None:
    template["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox", "securityContext": security}
    ]


def _ephemeral(template: Template, security: dict[str, Any]) -> None:
    template["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox", "securityContext": security}
    ]


# (name, change, the field the refusal names): one per Pod Security baseline control.
BASELINE: list[tuple[str, Change, str]] = [
    (
        "host-process",
        lambda t: _pod_context(t).update(windowsOptions={"hostProcess": True}),
        "securityContext.windowsOptions.hostProcess",
    ),
    (
        "host-process-container",
        lambda t: _context(t).update(windowsOptions={"hostProcess": True}),
        "securityContext.windowsOptions.hostProcess",
    ),
    ("host-network", lambda t: t["spec"].update(hostNetwork=True), "spec.hostNetwork"),
    ("host-pid", lambda t: t["spec"].update(hostPID=True), "spec.hostPID"),
    ("host-ipc", lambda t: t["spec"].update(hostIPC=True), "spec.hostIPC"),
    ("privileged", lambda t: _context(t).update(privileged=True), "securityContext.privileged"),
    ("privileged-init", lambda t: _init(t, {"privileged": True}), "securityContext.privileged"),
    (
        "privileged-ephemeral",
        lambda t: _ephemeral(t, {"privileged": True}),
        "securityContext.privileged",
    ),
    (
        "sys-admin",
        lambda t: _context(t).update(capabilities={"add": ["SYS_ADMIN"]}),
        "capabilities.add",
    ),
    (
        "sys-module-init",
        lambda t: _init(t, {"capabilities": {"add": ["CAP_SYS_MODULE"]}}),
        "capabilities.add",
    ),
    (
        "host-path",
        lambda t: t["spec"].update(volumes=[{"name": "root", "hostPath": {"path": "/"}}]),
        "volumes[*].hostPath",
    ),
    (
        "host-port",
        lambda t: _main(t).update(ports=[{"containerPort": 80, "hostPort": 80}]),
        "ports[*].hostPort",
    ),
    (
        "apparmor",
        lambda t: _pod_context(t).update(appArmorProfile={"type": "Unconfined"}),
        "securityContext.appArmorProfile",
    ),
    (
        "apparmor-annotation",
        lambda t: t.setdefault("metadata", {}).update(
            annotations={"container.apparmor.security.beta.kubernetes.io/main": "unconfined"}
        ),
        "securityContext.appArmorProfile",
    ),
    (
        "selinux-type",
        lambda t: _context(t).update(seLinuxOptions={"type": "spc_t"}),
        "securityContext.seLinuxOptions",
    ),
    (
        "selinux-user",
        lambda t: _pod_context(t).update(seLinuxOptions={"user": "system_u"}),
        "securityContext.seLinuxOptions",
    ),
    ("proc-mount", lambda t: _context(t).update(procMount="Unmasked"), "procMount"),
    (
        "seccomp",
        lambda t: _pod_context(t).update(seccompProfile={"type": "Unconfined"}),
        "securityContext.seccompProfile",
    ),
    (
        "seccomp-container",
        lambda t: _context(t).update(seccompProfile={"type": "Unconfined"}),
        "securityContext.seccompProfile",
    ),
    (
        "sysctl",
        lambda t: _pod_context(t).update(sysctls=[{"name": "kernel.msgmax", "value": "1"}]),
        "securityContext.sysctls",
    ),
]


def hardened(template: Template) -> None:
    """Make ``template`` meet the restricted level."""
    _pod_context(template).update(runAsNonRoot=True, seccompProfile={"type": "RuntimeDefault"})
    for container in template["spec"]["containers"]:
        container["securityContext"] = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }


# Restricted's own controls, each undoing one part of ``hardened``.
RESTRICTED: list[tuple[str, Change, str]] = [
    (
        "nfs",
        lambda t: t["spec"].update(volumes=[{"name": "n", "nfs": {"server": "s", "path": "/"}}]),
        "volumes[*]",
    ),
    (
        "escalation",
        lambda t: _context(t).pop("allowPrivilegeEscalation"),
        "allowPrivilegeEscalation",
    ),
    ("root", lambda t: _pod_context(t).pop("runAsNonRoot"), "securityContext.runAsNonRoot"),
    ("uid-0", lambda t: _context(t).update(runAsUser=0), "securityContext.runAsUser"),
    ("no-seccomp", lambda t: _pod_context(t).pop("seccompProfile"), "seccompProfile"),
    ("no-drop", lambda t: _context(t).pop("capabilities"), "capabilities.drop"),
    (
        "net-admin",
        lambda t: _context(t)["capabilities"].update(add=["NET_ADMIN"]),
        "capabilities.add",
    ),
]


def bad_graph(ns: str, name: str, change: Change) -> dict[str, Any]:
    doc = graph(ns, name, [component("Frontend", "frontend")])
    change(doc["spec"]["components"][0]["podTemplate"])
    return doc


def bad_component(ns: str, name: str, change: Change) -> dict[str, Any]:
    spec = {"backendFramework": "vllm", **component("Frontend", "frontend")}
    change(spec["podTemplate"])
    meta = {"name": name, "namespace": ns}
    return {"apiVersion": "nvidia.com/v1beta1", "kind": DCD, "metadata": meta, "spec": spec}


def refusal(kube: Kube, doc: dict[str, Any]) -> str | None:
    """The API server's refusal of a dry-run create of ``doc``, or None when it admits it."""
    try:
        kube.request(
            "POST", kube.path(doc["kind"], doc["metadata"]["namespace"]), doc, dryRun="All"
        )
    except ApiFailure as err:
        return str(err.body.get("message"))
    return None


@contextlib.contextmanager
def policy_release(
    control_plane: ControlPlane,
    client: Client,
    kube: Kube,
    tmp_path: Path,
    *sets: str,
    probe: Callable[[str], dict[str, Any]],
    prefix: str,
    labels: dict[str, str] | None = None,
) -> Iterator[str]:
    """A release whose graph policy covers its own namespace; yields that namespace once the
    server refuses ``probe(namespace)`` (the policy acts a moment after the install)."""
    ns = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client.create(Namespace(metadata=ObjectMeta(name=ns, labels=labels)))
    helm = Helm(control_plane, tmp_path)
    try:
        helm.install(
            ns,
            ns,
            "crds.install=false",
            f"watchNamespaces={{{ns}}}",
            "graphPolicy.enabled=true",
            *sets,
        )
        try:
            doc = probe(ns)
            eventually(lambda: refusal(kube, doc), deadline=60.0, what="the policy to act")
            yield ns
        finally:
            helm.uninstall(ns, ns)
    finally:
        client.delete(Namespace, ns)
