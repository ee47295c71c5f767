"""Secure metrics (issue 27): the agent, running with the chart's ServiceAccount (whose install
has metrics.secure on, the default), serves /metrics over HTTPS only to a bearer token the API
server accepts and authorizes for ``get /metrics``; the probes are on their own plain port and
serve nothing else."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import orjson
from lightkube.generic_resource import create_global_resource

from tests.cluster.support.chart_identity import chart_token
from tests.cluster.support.secure_metrics import scrape
from tests.support.agent import Agent, running_agent
from tests.support.polling import eventually

ClusterRoleBinding = create_global_resource(
    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings"
)


def probe_port(agent: Agent) -> int:
    for line in agent.logs().splitlines():
        if '"msg":"serving probes"' in line:
            return int(orjson.loads(line)["address"].rsplit(":", 1)[1])
    raise AssertionError("the agent logged no probe port")


def test_metrics_need_a_token_the_api_server_authorizes(control_plane, client, namespace, tmp_path):
    with chart_token(control_plane, client, [namespace], tmp_path) as (config, release):
        reader = f"{release}-scraper"
        nobody = f"{release}-nobody"
        scraper = control_plane.token_for(namespace=release, service_account=reader)
        stranger = control_plane.token_for(namespace=release, service_account=nobody)
        binding: dict[str, Any] = {
            "metadata": {"name": reader},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"{release}-syncagent-metrics-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": reader, "namespace": release}],
        }
        client.create(ClusterRoleBinding.from_dict(binding))
        try:
            with running_agent(
                config,
                "--metrics-secure",
                "--health-probe-bind-address",
                "127.0.0.1:0",
                namespace=namespace,
            ) as agent:
                url = f"https://127.0.0.1:{agent.port}/metrics"
                status, body = eventually(
                    lambda: (r := scrape(url, scraper))[0] == 200 and r,
                    deadline=30,
                    what="an authorized scrape",
                )
                assert "syncagent_reconcile_total" in body or "# TYPE syncagent_" in body
                assert scrape(url)[0] == 401
                assert scrape(url, "not-a-token")[0] == 401
                status, body = scrape(url, stranger)
                assert status == 403, body
                assert f"system:serviceaccount:{release}:{nobody}" in body
                # Plain HTTP on the secure port gets nothing.
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{agent.port}/metrics", timeout=10)
                    plain = "answered"
                except (urllib.error.URLError, ConnectionError, OSError) as err:
                    plain = type(err).__name__
                assert plain != "answered"
                # The probes: their own port, plain, no token, nothing else there.
                probes = f"http://127.0.0.1:{probe_port(agent)}"
                with urllib.request.urlopen(f"{probes}/healthz", timeout=10) as r:
                    assert r.status == 200
                try:
                    urllib.request.urlopen(f"{probes}/metrics", timeout=10)
                    metrics_on_probes = 200
                except urllib.error.HTTPError as err:
                    metrics_on_probes = err.code
                assert metrics_on_probes == 404
                assert agent.proc.poll() is None
        finally:
            client.delete(ClusterRoleBinding, reader)
