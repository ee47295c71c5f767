"""One stuck scope never stops the rest (issue 27): a scope is a namespace and a kind. The agent
watches two namespaces; one of them cannot be listed (its RoleBinding deleted under the chart's identity, or one CRD's list
failing behind a fault proxy). The other namespace's graphs converge, readiness names the stuck
watch, ``syncagent_watch_unsynced`` counts it, nothing of the stuck namespace is written, and
once the watch can list again the held-back graph converges too. Within one namespace, a kind
only some graphs read (PodCliques: Grove graphs) holds back only those graphs."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace
from lightkube.resources.rbac_authorization_v1 import RoleBinding

from tests.cluster.support.chart_identity import chart_token
from tests.cluster.support.grove import GROVE_AUTO, PCS
from tests.support.agent import Agent, running_agent
from tests.support.graphs import ENABLE_GROVE, component, graph
from tests.support.httpfaults import HttpFaultProxy
from tests.support.kube import Kube
from tests.support.polling import eventually

DEADLINE = 60.0


def readyz(agent: Agent) -> tuple[int, str]:
    url = f"http://127.0.0.1:{agent.port}/readyz"
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def deployed(kube: Kube, ns: str, name: str) -> bool:
    return kube.get("Deployment", ns, f"{name}-frontend") is not None


def unsynced(agent: Agent, ns: str) -> float:
    samples = agent.scrape().samples
    return sum(
        v
        for (n, labels), v in samples.items()
        if n == "syncagent_watch_unsynced" and dict(labels)["watch"].endswith(f" in {ns}")
    )


def held_back_then_recovered(
    agent: Agent, kube: Kube, *, healthy: str, stuck: str, stuck_watch: str, repair: Any
) -> None:
    eventually(lambda: deployed(kube, healthy, "fine"), deadline=DEADLINE, what="the healthy scope")
    status, body = readyz(agent)
    assert status == 503, body
    assert "[-]caches: " in body, body
    assert f"{stuck_watch} in {stuck}" in body, body
    assert f"in {healthy}" not in body, body
    assert unsynced(agent, stuck) >= 1
    assert unsynced(agent, healthy) == 0
    assert agent.proc.poll() is None
    # Held back: the stuck namespace's graph got nothing, not even its DCD.
    assert not deployed(kube, stuck, "held")
    assert kube.get("DynamoComponentDeployment", stuck, "held-frontend") is None
    repair()
    eventually(
        lambda: deployed(kube, stuck, "held"), deadline=DEADLINE, what="the stuck scope to recover"
    )
    eventually(lambda: agent.ready(), deadline=DEADLINE, what="readiness once every watch synced")
    assert unsynced(agent, stuck) == 0


@pytest.fixture
def second_namespace(client: Client, namespace: str) -> Iterator[str]:
    name = f"b{namespace[1:]}"  # neither name contains the other
    client.create(Namespace(metadata=ObjectMeta(name=name, labels={"syncagent-test": "true"})))
    yield name
    client.delete(Namespace, name)


def test_a_namespace_whose_rolebinding_is_gone_holds_back_only_its_graphs(
    control_plane, client, kube, namespace, second_namespace, tmp_path
):
    healthy, stuck = namespace, second_namespace
    with chart_token(control_plane, client, [healthy, stuck], tmp_path) as (config, release):
        # The chart binds its roles in each watched namespace: all of them go, as when the
        # namespace is deleted and created again without the chart's bindings.
        bindings = [
            b
            for b in client.list(RoleBinding, namespace=stuck)
            if b.metadata.labels and b.metadata.labels.get("app.kubernetes.io/instance") == release
        ]
        assert bindings
        for binding in bindings:
            client.delete(RoleBinding, binding.metadata.name, namespace=stuck)
        kube.create(graph(healthy, "fine", [component("frontend", "frontend")]))
        kube.create(graph(stuck, "held", [component("frontend", "frontend")]))

        def recreate() -> None:
            for binding in bindings:
                meta = binding.metadata
                binding.metadata = ObjectMeta(name=meta.name, namespace=stuck, labels=meta.labels)
                client.create(binding)

        with running_agent(config, "--namespace", stuck, namespace=healthy) as agent:
            held_back_then_recovered(
                agent,
                kube,
                healthy=healthy,
                stuck=stuck,
                stuck_watch="v1 secrets",
                repair=recreate,
            )


def test_a_crd_whose_list_fails_in_one_namespace_holds_back_only_its_graphs(
    control_plane, kube, namespace, second_namespace
):
    healthy, stuck = namespace, second_namespace
    kube.create(graph(healthy, "fine", [component("frontend", "frontend")]))
    kube.create(graph(stuck, "held", [component("frontend", "frontend")]))
    with HttpFaultProxy(control_plane) as proxy:
        proxy.fail("GET", rf"/namespaces/{stuck}/dynamocomponentdeployments\b", 500)
        config = proxy.kubeconfig()
        try:
            with running_agent(config, "--namespace", stuck, namespace=healthy) as agent:
                held_back_then_recovered(
                    agent,
                    kube,
                    healthy=healthy,
                    stuck=stuck,
                    stuck_watch="nvidia.com/v1beta1 dynamocomponentdeployments",
                    repair=proxy.release,
                )
        finally:
            config.unlink(missing_ok=True)


def test_a_kind_whose_list_fails_holds_back_only_the_graphs_that_read_it(
    control_plane, kube, namespace
):
    """PodCliques are read only by graphs routed to Grove: a broken PodClique list holds back a
    Grove graph and not a Component graph of the same namespace (the scope is namespace and
    kind); the Grove graph gets its PodCliqueSet once the list works again."""
    frontend = [component("frontend", "frontend")]
    kube.create(graph(namespace, "fine", frontend, **{ENABLE_GROVE: "false"}))
    kube.create(graph(namespace, "held", frontend, **{ENABLE_GROVE: "true"}))
    with HttpFaultProxy(control_plane) as proxy:
        proxy.fail("GET", rf"/namespaces/{namespace}/podcliques\b", 500)
        config = proxy.kubeconfig()
        try:
            with running_agent(config, *GROVE_AUTO, namespace=namespace) as agent:
                eventually(
                    lambda: deployed(kube, namespace, "fine"),
                    deadline=DEADLINE,
                    what="the Component graph, which reads no PodClique",
                )
                status, body = readyz(agent)
                assert status == 503, body
                assert f"grove.io/v1alpha1 podcliques in {namespace}" in body, body
                assert kube.get(PCS, namespace, "held") is None
                proxy.release()
                eventually(
                    lambda: kube.get(PCS, namespace, "held"),
                    deadline=DEADLINE,
                    what="the Grove graph's PodCliqueSet once PodCliques list again",
                )
                eventually(agent.ready, deadline=DEADLINE, what="readiness once every watch synced")
        finally:
            config.unlink(missing_ok=True)
