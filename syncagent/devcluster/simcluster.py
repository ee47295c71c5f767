"""A simulated full cluster on loopback: the control plane plus everything that runs workloads.

On top of :class:`ControlPlane` (etcd, kube-apiserver, our and the pinned third-party CRDs):

- ``kube-controller-manager`` with its default controllers (Deployments, ReplicaSets,
  StatefulSets, EndpointSlices, garbage collection, namespaces, ServiceAccounts and their
  tokens, node lifecycle, CSR signing…), each under its own ServiceAccount
  (``--use-service-account-credentials``) as kubeadm runs it;
- ``kube-scheduler``;
- kwok, playing the kubelet of ``nodes`` GPU nodes (pods become Running and Ready, no container
  runs);
- the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers) with its webhooks
  registered as a real install does, through webhook configurations, so LWS defaulting and
  validation apply and LWS pods get ``LWS_LEADER_ADDRESS`` / ``LWS_WORKER_INDEX``;
- with ``grove_source`` (the Grove source tarball, :mod:`grove_operator`), the real Grove operator
  (PodCliqueSet, PodClique, PodCliqueScalingGroup and PodGang controllers, kube-scheduler
  backend) with its defaulting and validating webhooks registered the same way. Without it the
  cluster serves Grove's CRDs only, and nothing acts on a PodCliqueSet.

The API server runs with the ServiceAccount admission plugin, as every real cluster does. Every
program listens on 127.0.0.1 only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx2

from syncagent.devcluster import grove_operator, kwok, lws_manager, versions
from syncagent.devcluster.build import (
    Binaries,
    ensure_helm,
    ensure_tool,
    kwok_tool,
    lws_manager_tool,
)
from syncagent.devcluster.controlplane import (
    ControlPlane,
    ControlPlaneError,
    answers_ok,
    apply,
    free_port,
    poll,
    write_kubeconfig,
)

DEFAULT_NODES = kwok.DEFAULT_NODES


def ensure_tools(
    lws_version: str = versions.DEFAULT_LWS,
    *,
    grove_source: Path | None = None,
    log: bool = True,
) -> list[Path]:
    """Build (or find) kwok and the LWS manager: what the simulated cluster adds to the binaries;
    with ``grove_source``, the Grove operator and helm (which renders its chart's webhooks)."""
    tools = [
        ensure_tool(kwok_tool(), log=log),
        ensure_tool(lws_manager_tool(lws_version), log=log),
    ]
    if grove_source is not None:
        tools += [grove_operator.ensure_grove_operator(grove_source, log=log), ensure_helm(log=log)]
    return tools


class SimulatedCluster(ControlPlane):
    """Start with ``start()`` or as a context manager, like :class:`ControlPlane`."""

    disabled_admission: tuple[str, ...] = ()

    def __init__(
        self,
        *,
        nodes: int = DEFAULT_NODES,
        lws_version: str = versions.DEFAULT_LWS,
        extra_crds: Iterable[Path] = (),
        workdir: Path | None = None,
        binaries: Binaries | None = None,
        grove_source: Path | None = None,
    ) -> None:
        if lws_version not in versions.LWS_MANAGER_VERSIONS:
            raise ValueError(
                f"lws_version {lws_version!r}: the simulated cluster runs the LWS manager, which "
                f"builds only at {', '.join(versions.LWS_MANAGER_VERSIONS)}; use the bare "
                "control plane for other versions' CRDs"
            )
        if nodes < 1:
            raise ValueError(f"nodes must be at least 1, not {nodes}")
        super().__init__(
            lws_version=lws_version, extra_crds=extra_crds, workdir=workdir, binaries=binaries
        )
        self.nodes = nodes
        self.grove_source = grove_source
        self._grove_tree: Path | None = None

    def describe(self) -> str:
        grove = (
            f"Grove operator {versions.GROVE} with webhooks"
            if self.grove_source
            else f"Grove {versions.GROVE} CRDs only (no Grove operator: no source tarball)"
        )
        return (
            f"{super().describe()}, all controllers, kube-scheduler, kwok {versions.KWOK} "
            f"({self.nodes} GPU nodes), LWS manager {self.lws_version} with webhooks, {grove}"
        )

    def crd_paths(self) -> list[Path]:
        if self.grove_source is None:
            return super().crd_paths()
        # The source's own copy, extracted fresh per cluster: its chart and operator-only CRDs.
        grove_operator.check_source(self.grove_source)
        self._grove_tree = grove_operator.extract(self.grove_source, self.workdir / "grove-src")
        extra = [self._grove_tree / p for p in grove_operator.OPERATOR_CRDS]
        return [*super().crd_paths(), *extra]

    # -- what runs workloads -----------------------------------------------------------------

    def _start_controllers(self, binaries: Binaries, http: httpx2.Client) -> None:
        kwok_binary, manager, *grove = ensure_tools(
            self.lws_version, grove_source=self.grove_source
        )
        self._start_lws_manager(manager, http)
        if grove:
            self._start_grove_operator(*grove, http=http)
        self._start_controller_manager(binaries)
        self._start_scheduler(binaries)
        self._start_kwok(kwok_binary, http)
        # Pods need their namespace's default ServiceAccount (ServiceAccount admission).
        poll(
            lambda: answers_ok(http, "/api/v1/namespaces/default/serviceaccounts/default"),
            what="the default ServiceAccount",
            log=self._log("kube-controller-manager"),
        )

    def _start_lws_manager(self, manager: Path, http: httpx2.Client) -> None:
        assert self.pki is not None
        webhook_port, health_port = free_port(), free_port()
        config = self.workdir / "lws-manager.yaml"
        config.write_text(
            lws_manager.config_file(
                webhook_port=webhook_port,
                cert_dir=self.pki.webhook_dir,
                metrics_port=free_port(),
                health_port=health_port,
            )
        )
        self._spawn(
            "lws-manager",
            lws_manager.command(manager, config=config),
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
        )
        with httpx2.Client(base_url=f"http://127.0.0.1:{health_port}", timeout=2.0) as health:
            poll(
                lambda: answers_ok(health, "/readyz"),
                what="LWS manager /readyz",
                log=self._log("lws-manager"),
            )
        for doc in lws_manager.webhook_configurations(
            self.lws_version, port=webhook_port, ca_pem=self.pki.ca_cert.read_bytes()
        ):
            apply(http, f"/apis/admissionregistration.k8s.io/v1/{_plural(doc)}", doc)
        # The API server picks webhook configurations up asynchronously; a dry run that comes
        # back defaulted proves the whole path (configuration, TLS, the manager's handler).
        poll(
            lambda: _lws_defaulted(http),
            what="the LWS defaulting webhook",
            log=self._log("lws-manager"),
        )

    def _start_grove_operator(self, binary: Path, helm: Path, *, http: httpx2.Client) -> None:
        assert self.pki is not None
        assert self._grove_tree is not None
        ports = {"webhooks": free_port(), "healthProbes": free_port(), "metrics": free_port()}
        config = self.workdir / "grove-operator.yaml"
        config.write_text(grove_operator.config_file(ports=ports, cert_dir=self.pki.webhook_dir))
        self._spawn(
            "grove-operator",
            grove_operator.command(binary, config=config),
            env=grove_operator.environment(self.kubeconfig),
        )
        health = httpx2.Client(base_url=f"http://127.0.0.1:{ports['healthProbes']}", timeout=2.0)
        with health:
            poll(
                lambda: answers_ok(health, "/readyz"),
                what="Grove operator /readyz",
                log=self._log("grove-operator"),
            )
        docs = grove_operator.chart_webhooks(self._grove_tree, helm=helm)
        ca = self.pki.ca_cert.read_bytes()
        for doc in grove_operator.on_loopback(docs, port=ports["webhooks"], ca_pem=ca):
            apply(http, f"/apis/admissionregistration.k8s.io/v1/{_plural(doc)}", doc)
        poll(
            lambda: _grove_defaulted(http),
            what="the Grove defaulting webhook",
            log=self._log("grove-operator"),
        )

    def _start_controller_manager(self, binaries: Binaries) -> None:
        assert self.pki is not None
        p = self.pki
        kubeconfig = self.workdir / "controller-manager.kubeconfig"
        write_kubeconfig(
            kubeconfig,
            server=self.server,
            ca=p.ca_cert,
            cert=p.controller_manager_cert,
            key=p.controller_manager_key,
        )
        self._spawn(
            "kube-controller-manager",
            [
                str(binaries.kube_controller_manager),
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
                "--use-service-account-credentials=true",
                f"--service-account-private-key-file={p.sa_key}",
                f"--root-ca-file={p.ca_cert}",
                f"--cluster-signing-cert-file={p.ca_cert}",
                f"--cluster-signing-key-file={p.ca_key}",
                "--concurrent-gc-syncs=20",
                # kwok renews node Leases; on a starved machine a renewal can come late, and a
                # node marked NotReady would take its pods' readiness (and endpoints) with it.
                "--node-monitor-grace-period=5m",
                "--v=1",
            ],
        )

    def _start_scheduler(self, binaries: Binaries) -> None:
        assert self.pki is not None
        kubeconfig = self.workdir / "scheduler.kubeconfig"
        write_kubeconfig(
            kubeconfig,
            server=self.server,
            ca=self.pki.ca_cert,
            cert=self.pki.scheduler_cert,
            key=self.pki.scheduler_key,
        )
        self._spawn(
            "kube-scheduler",
            [
                str(binaries.kube_scheduler),
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
                "--v=1",
            ],
        )

    def _start_kwok(self, binary: Path, http: httpx2.Client) -> None:
        config = self.workdir / "kwok.yaml"
        config.write_text(kwok.stage_config())
        home = self.workdir / "kwok-home"  # kwok also reads ~/.kwok/kwok.yaml; not the user's
        home.mkdir(exist_ok=True)
        self._spawn(
            "kwok",
            kwok.command(binary, kubeconfig=self.kubeconfig, config=config),
            env={**os.environ, "HOME": str(home)},
        )
        for index in range(self.nodes):
            _create(http, "/api/v1/nodes", kwok.node(index))
        poll(
            lambda: self._nodes_ready(http),
            what=f"{self.nodes} kwok nodes Ready and untainted",
            log=self._log("kwok"),
        )

    def _nodes_ready(self, http: httpx2.Client) -> bool:
        resp = http.get("/api/v1/nodes")
        if resp.status_code != 200:
            return False
        ready = [n for n in resp.json()["items"] if kwok.node_ready(n)]
        return len(ready) >= self.nodes


# -- helpers ---------------------------------------------------------------------------------


def _plural(doc: dict[str, Any]) -> str:
    return {
        "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
        "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    }[doc["kind"]]


def _create(http: httpx2.Client, collection: str, doc: dict[str, Any]) -> None:
    resp = http.post(collection, json=doc)
    if resp.status_code >= 300:
        raise ControlPlaneError(f"{doc['kind']}/{doc['metadata']['name']}: {resp.text[:2000]}")


def _lws_defaulted(http: httpx2.Client) -> bool:
    """A dry-run LWS without ``rolloutStrategy`` comes back with the webhook's defaults
    (the LWS mutating webhook's defaults, docs/rendering.md §3)."""
    probe = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "webhook-probe"},
        "spec": {
            "leaderWorkerTemplate": {
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "probe"}]}}
            }
        },
    }
    resp = http.post(
        "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets",
        params={"dryRun": "All"},
        json=probe,
    )
    if resp.status_code != 201:
        return False
    spec = resp.json()["spec"]
    return (spec.get("networkConfig") or {}).get("subdomainPolicy") == "Shared"


def _grove_defaulted(http: httpx2.Client) -> bool:
    """A dry-run PodCliqueSet comes back with the defaulting webhook's ``terminationDelay``."""
    resp = http.post(
        "/apis/grove.io/v1alpha1/namespaces/default/podcliquesets",
        params={"dryRun": "All"},
        json=grove_operator.defaulting_probe(),
    )
    if resp.status_code != 201:
        return False
    return "terminationDelay" in resp.json()["spec"]["template"]
