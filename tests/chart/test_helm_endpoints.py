"""The chart's side of issue 40: /metrics serves a Secret's certificate (cert-manager's, say) when
given one, and the NetworkPolicy can keep the health port to the nodes' addresses."""

from __future__ import annotations

from tests.chart.support.render import container, one, render, render_error

MOUNT = "/etc/syncagent/metrics-tls"


def test_a_cert_secret_is_mounted_optional_and_served() -> None:
    docs = render({"metrics": {"secure": True, "certSecret": "syncagent-metrics-tls"}})
    agent = container(docs)
    assert f"--metrics-cert-dir={MOUNT}" in agent["args"]
    assert {"name": "metrics-tls", "mountPath": MOUNT, "readOnly": True} in agent["volumeMounts"]
    volumes = one(docs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    (secret,) = [v["secret"] for v in volumes if v["name"] == "metrics-tls"]
    assert secret["secretName"] == "syncagent-metrics-tls"
    assert secret["optional"] is True  # self-signed until it is issued
    assert {i["key"] for i in secret["items"]} == {"tls.crt", "tls.key"}


def test_without_a_cert_secret_nothing_is_mounted() -> None:
    agent = container(render())
    assert not [a for a in agent["args"] if a.startswith("--metrics-cert-dir")]
    assert "metrics-tls" not in [m["name"] for m in agent["volumeMounts"]]


def test_a_cert_secret_name_must_be_a_secret_name() -> None:
    assert "certSecret" in render_error({"metrics": {"certSecret": "Not_A_Name"}})


def test_network_policy_can_keep_the_health_port_to_node_addresses() -> None:
    nodes = [{"ipBlock": {"cidr": "10.0.0.0/16"}}]
    values = {"networkPolicy": {"enabled": True, "healthFrom": nodes}, "health": {"port": 8081}}
    ingress = one(render(values), "NetworkPolicy")["spec"]["ingress"]
    assert {"ports": [{"protocol": "TCP", "port": 8081}], "from": nodes} in ingress


def test_network_policy_lets_any_peer_probe_by_default() -> None:
    ingress = one(render({"networkPolicy": {"enabled": True}}), "NetworkPolicy")["spec"]["ingress"]
    assert {"ports": [{"protocol": "TCP", "port": 8081}]} in ingress
