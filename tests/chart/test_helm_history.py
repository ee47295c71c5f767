"""The chart's ownership history as an aggregated API: the port on flag, container and a Service
of its own; the APIService whose caBundle signs the serving pair the pod mounts; the agent's
rights (SubjectAccessReviews, the front proxy's ConfigMap) and the readers' (aggregated into
view); all of it switched off together (docs/ownership.md §6, docs/security.md §9)."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tests.chart.support.render import (
    Rules,
    cluster_wide_rules,
    container,
    objects,
    one,
    render,
    render_error,
)

SERVICE = "r1-syncagent-history"
APISERVICE = "v1alpha1.history.syncagent.io"
VIEW = "r1-syncagent-history-view"
SECRET = "r1-syncagent-history-tls"


def _ports(docs: list[dict[str, Any]]) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in container(docs)["ports"]}


def test_the_history_port_is_the_same_on_flag_container_and_the_apiservices_service() -> None:
    docs = render({"history": {"enabled": True, "port": 9200}})
    assert "--history-bind-address=:9200" in container(docs)["args"]
    assert _ports(docs)["history"] == 9200
    service = one(docs, "Service", SERVICE)
    assert service["spec"]["ports"] == [
        {"name": "history", "port": 443, "targetPort": "history", "protocol": "TCP"}
    ]
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    api = one(docs, "APIService", APISERVICE)["spec"]
    assert (api["group"], api["version"]) == ("history.syncagent.io", "v1alpha1")
    assert api["service"] == {"name": SERVICE, "namespace": "syncagent-system", "port": 443}
    assert "insecureSkipTLSVerify" not in api


def _mounted_secret(docs: list[dict[str, Any]]) -> str:
    mount = next(m for m in container(docs)["volumeMounts"] if m["name"] == "history-tls")
    assert f"--history-cert-dir={mount['mountPath']}" in container(docs)["args"]
    volumes = one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    return str(next(v for v in volumes if v["name"] == "history-tls")["secret"]["secretName"])


def test_the_apiservice_trusts_the_pair_the_chart_makes_for_the_services_name() -> None:
    docs = render()
    assert _mounted_secret(docs) == SECRET
    data = one(docs, "Secret", SECRET)["data"]
    ca = x509.load_pem_x509_certificate(
        base64.b64decode(one(docs, "APIService")["spec"]["caBundle"])
    )
    assert base64.b64decode(data["ca.crt"]) == ca.public_bytes(serialization.Encoding.PEM)
    cert = x509.load_pem_x509_certificate(base64.b64decode(data["tls.crt"]))
    cert.verify_directly_issued_by(ca)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{SERVICE}.syncagent-system.svc" in names.get_values_for_type(x509.DNSName)


def test_a_secret_of_the_users_needs_its_ca_bundle() -> None:
    error = render_error({"history": {"enabled": True, "port": 8082, "certSecret": "mine"}})
    assert "history.caBundle: give the base64 PEM CA" in error
    values = {"enabled": True, "port": 8082, "certSecret": "mine", "caBundle": "Q0E="}
    docs = render({"history": values})
    assert _mounted_secret(docs) == "mine"
    assert one(docs, "APIService")["spec"]["caBundle"] == "Q0E="
    assert SECRET not in {d["metadata"]["name"] for d in objects(docs, "Secret")}


def test_readers_get_the_history_through_view_and_the_agent_may_review_and_read_the_trust() -> None:
    docs = render()
    view = one(docs, "ClusterRole", VIEW)
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    reader = Rules.of(view)
    assert reader.allows("history.syncagent.io", "ownershiphistories", "get")
    assert reader.allows("history.syncagent.io", "ownershiphistories", "list")
    assert len(reader.rules) == 1
    agent = cluster_wide_rules(docs, subject="r1-syncagent")
    assert agent.allows("authorization.k8s.io", "subjectaccessreviews", "create")
    binding = one(docs, "RoleBinding", "r1-syncagent-history-auth-reader")
    assert binding["metadata"]["namespace"] == "kube-system"
    trust = one(docs, "Role", binding["roleRef"]["name"])
    assert trust["metadata"]["namespace"] == "kube-system"
    assert trust["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["extension-apiserver-authentication"],
            "verbs": ["get"],
        }
    ]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "r1-syncagent", "namespace": "syncagent-system"}
    ]
    # The service proxy is no way in any more.
    roles = [*objects(docs, "ClusterRole"), *objects(docs, "Role")]
    assert not any(
        Rules.of(r).allows("", "services/proxy", "get", name=f"{SERVICE}:history") for r in roles
    )


def test_history_off_leaves_no_flag_port_service_apiservice_or_role() -> None:
    docs = render({"history": {"enabled": False, "port": 8082}})
    assert not [a for a in container(docs)["args"] if a.startswith("--history")]
    assert "history" not in _ports(docs)
    names = {d["metadata"]["name"] for d in docs}
    assert {SERVICE, VIEW, SECRET, APISERVICE, "r1-syncagent-history-auth"} & names == set()


def test_without_rbac_the_roles_are_left_to_the_user() -> None:
    docs = render({"rbac": {"create": False}})
    assert one(docs, "APIService", APISERVICE)
    assert VIEW not in {d["metadata"]["name"] for d in objects(docs, "ClusterRole")}


def test_history_port_must_differ_from_the_others() -> None:
    for taken in ({"metrics": {"port": 8082}}, {"health": {"port": 8082}}):
        error = render_error(taken)
        assert "history.port: must differ from metrics.port and health.port" in error


def test_network_policy_lets_only_the_given_peers_reach_the_history_port() -> None:
    api_server = [{"ipBlock": {"cidr": "10.0.0.0/28"}}]
    values = {
        "networkPolicy": {
            "enabled": True,
            "apiServerPorts": [6443],
            "metricsFrom": [],
            "historyFrom": api_server,
        }
    }
    docs = render(values)
    ingress = one(docs, "NetworkPolicy")["spec"]["ingress"]
    port = _ports(docs)["history"]
    assert {"ports": [{"protocol": "TCP", "port": port}], "from": api_server} in ingress
