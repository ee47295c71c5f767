"""What a migration writes, counted by a recording proxy between the agent and the API server
(issue 31): a cutover writes the graph's status once per state it reports, and the co-owners
of a model Service do not refuse each other's writes (docs/lifecycle.md §1 "Status writes",
docs/ownership.md §4)."""

from __future__ import annotations

from typing import Any

import orjson

from tests.cluster.support.dsgraph import (
    add_scaling_adapter,
    ds_step,
    enable_ds,
    owner_uids,
    wait_fallen_back,
    wait_ready,
)
from tests.support.agent import Agent, running_agent
from tests.support.apiproxy import ApiProxy
from tests.support.fake_ds import LWS, FakeDsController
from tests.support.fake_ds import MANAGER as FAKE_MANAGER
from tests.support.fake_workloads import DEADLINE
from tests.support.graphs import ENABLE_DS, ds_components, ds_graph
from tests.support.kube import DCD, DGD, Kube, condition, controller, names, ready_reason
from tests.support.polling import eventually
from tests.support.writecounts import (
    model_service_writes,
    repeats,
    reported,
    status_writes,
    summary,
)

G = "vllm-disagg"
MODEL = {"modelRef": {"name": "Qwen/Qwen3-0.6B"}}
MODEL_SERVICE = "dynamo-model-fb68f5a6"
ROLES = ("decode", "prefill")
# Long enough that no progress write falls due during a test: every status write then reports
# a change of state (the interval itself is the unit tier's, tests/unit/programs/test_status_progress.py).
HOLD = ("--status-progress-interval", "1h")


def _cutover_done(kube: Kube, ns: str) -> bool:
    graph = kube.get(DGD, ns, G)
    return (
        names(kube, DCD, ns) == {f"{G}-frontend"}
        and condition(graph, "WorkloadPathway").get("status") == "True"
        and ready_reason(kube, ns, G) == "all_resources_are_ready"
    )


def _rolling_out(kube: Kube, ns: str, fake: FakeDsController) -> list[dict[str, Any]]:
    """The DS's children, once both report their replicas (not ready) and the graph reports
    the new pathway waiting for them; else nothing."""
    pathway = condition(kube.get(DGD, ns, G), "WorkloadPathway")
    if (pathway.get("status"), pathway.get("reason")) != ("False", "DisaggregatedSet"):
        return []
    children = [c for ds in fake.sets() for c in fake.children(ds)]
    reported = [c for c in children if (c.get("status") or {}).get("replicas") == 1]
    return children if len(reported) == len(ROLES) == len(children) else []


def _settled(agent: Agent, before: float) -> bool:
    """A graph reconcile ended since ``before`` was counted and none is waiting."""
    metrics = agent.scrape()
    return (
        metrics.sum("syncagent_reconcile_total", controller="dgd") > before
        and metrics.sum("syncagent_workqueue_depth", queue="dgd") == 0
    )


def _progress(kube: Kube, agent: Agent, child: dict[str, Any], updated: int) -> None:
    """A rollout step as the LWS controller reports one: a count moves, nothing becomes
    ready; then wait for the graph's reconcile of it."""
    before = agent.scrape().sum("syncagent_reconcile_total", controller="dgd")
    name = child["metadata"]["name"]
    kube.merge(
        LWS,
        child["metadata"]["namespace"],
        name,
        {"status": {"updatedReplicas": updated}},
        sub="status",
        manager=FAKE_MANAGER,
    )
    eventually(lambda: _settled(agent, before), deadline=DEADLINE, what=f"the reconcile of {name}")


def test_a_cutover_writes_the_graph_status_once_per_state_it_reports(
    control_plane, kube, namespace
):
    """DCD -> DS cutover, its rollout reported step by step: the graph's status is written when
    what it reports changes (the pathway, then Ready), not at each count in between."""
    kube.create(ds_graph(namespace, G, ds_components()))
    fake = FakeDsController(kube, namespace)
    with (
        ApiProxy(control_plane) as proxy,
        running_agent(proxy.kubeconfig, *HOLD, namespace=namespace) as agent,
    ):
        wait_ready(kube, namespace, G, fake, what="the Component graph to be Ready")
        start = len(proxy.writes)
        fake.ready = False
        enable_ds(kube, namespace, G)
        children = eventually(
            lambda: _rolling_out(kube, namespace, fake),
            deadline=DEADLINE,
            step=fake.sync,
            what="the DS rolling out, reported on the graph",
        )
        for child in children:
            _progress(kube, agent, child, 0)
            _progress(kube, agent, child, 1)
        fake.ready = True
        eventually(
            lambda: _cutover_done(kube, namespace),
            deadline=DEADLINE,
            step=ds_step(kube, namespace, fake),
            what="the cutover to the DisaggregatedSet",
        )
        writes = proxy.writes[start:]
    print(f"cutover: {summary(writes, G)}")
    reports = [reported(w) for w in status_writes(writes, G)]
    assert len(reports) >= 2, reports  # the pathway change, then Ready on the new pathway
    assert not repeats(writes, G), f"status writes reporting what the one before did: {reports}"


def test_co_owners_of_a_model_service_do_not_race_during_a_fallback(control_plane, kube, namespace):
    """DS -> DCD fallback: the graph hands the model Service it controls to a new DCD and
    leaves it while both new DCDs join it, all at once. Each join costs at most one refused
    write (409); the agent's turns on the Service make it none in practice."""
    kube.create(ds_graph(namespace, G, ds_components(**MODEL), **{ENABLE_DS: "true"}))
    fake = FakeDsController(kube, namespace)
    with ApiProxy(control_plane) as proxy:
        with running_agent(proxy.kubeconfig, namespace=namespace):
            wait_ready(kube, namespace, G, fake, what="the DS graph to be Ready")
            assert controller(kube.get("Service", namespace, MODEL_SERVICE))["kind"] == DGD
            start = len(proxy.writes)
            kube.edit_graph(namespace, G, add_scaling_adapter)
            wait_fallen_back(kube, namespace, G, fake, what="the fallback to DCDs, the DS deleted")
            dcds = {kube.get(DCD, namespace, f"{G}-{c}")["metadata"]["uid"] for c in ROLES}
            eventually(
                lambda: owner_uids(kube.get("Service", namespace, MODEL_SERVICE)) == dcds,
                deadline=DEADLINE,
                what="both DCDs (and not the graph) owning the model Service",
            )
        writes = proxy.writes[start:]
    refused = [w for w in model_service_writes(writes) if w.status == 409]
    print(f"fallback: {summary(writes, G)}, {len(ROLES)} joins")
    for w in refused:
        print(f"  refused: {w.manager}: {orjson.loads(w.refusal).get('message')}")
    assert len(refused) <= len(ROLES), [(w.manager, w.refusal[:160]) for w in refused]
