"""The chart's ownership history: the port on flag, container and a Service of its own, the
reader ClusterRole that opens exactly that Service's proxy, and all of it switched off together
(docs/ownership.md §6, docs/security.md)."""

from __future__ import annotations

from typing import Any

from syncagent.cli.blame import AGENT_SERVICE
from syncagent.cli.commands.blame_history import _service
from tests.chart.support.render import (
    Rules,
    container,
    objects,
    one,
    render,
    render_error,
)

SERVICE = "r1-syncagent-history"
READER = "r1-syncagent-history-reader"


def _ports(docs: list[dict[str, Any]]) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in container(docs)["ports"]}


def test_history_port_is_the_same_on_flag_container_and_its_service() -> None:
    docs = render({"history": {"enabled": True, "port": 9200}})
    assert "--history-bind-address=:9200" in container(docs)["args"]
    assert _ports(docs)["history"] == 9200
    service = one(docs, "Service", SERVICE)
    assert service["spec"]["ports"] == [
        {"name": "history", "port": 9200, "targetPort": "history", "protocol": "TCP"}
    ]
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()


def test_the_reader_role_opens_the_history_service_proxy_and_nothing_else() -> None:
    docs = render()
    reader = Rules.of(one(docs, "ClusterRole", READER))
    # RBAC names a proxy request NAME:PORT, the port as the URL gives it (name or number).
    for port in ("history", "8082"):
        assert reader.allows("", "services/proxy", "get", name=f"{SERVICE}:{port}")
        assert not reader.allows("", "services/proxy", "create", name=f"{SERVICE}:{port}")
    assert not reader.allows("", "services/proxy", "get", name="r1-syncagent-metrics:metrics")
    assert not reader.allows("", "services", "get", name=SERVICE)
    assert len(reader.rules) == 1
    # For people to bind: nothing binds it to the agent.
    bindings = [*objects(docs, "ClusterRoleBinding"), *objects(docs, "RoleBinding")]
    assert READER not in {b["roleRef"]["name"] for b in bindings}


def test_history_off_leaves_no_flag_port_service_or_role() -> None:
    docs = render({"history": {"enabled": False, "port": 8082}})
    assert not [a for a in container(docs)["args"] if a.startswith("--history")]
    assert "history" not in _ports(docs)
    names = {d["metadata"]["name"] for d in docs}
    assert {SERVICE, READER} & names == set()


def test_without_rbac_the_reader_role_is_left_to_the_user() -> None:
    docs = render({"rbac": {"create": False}})
    assert one(docs, "Service", SERVICE)
    assert READER not in {d["metadata"]["name"] for d in objects(docs, "ClusterRole")}


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


def test_the_readmes_install_serves_the_history_where_blame_looks_by_default() -> None:
    # README: `helm install syncagent helm/syncagent -n syncagent-system`, then
    # `syncagent blame … --history` with no --agent-service.
    docs = render(release="syncagent", namespace="syncagent-system")
    namespace, name, port = _service(AGENT_SERVICE)
    service = one(docs, "Service", name)
    assert service["metadata"]["namespace"] == namespace
    assert [p["name"] for p in service["spec"]["ports"]] == [port]
