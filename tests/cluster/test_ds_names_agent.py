"""Generated names within 63 characters under both LWS naming schemes, and the role limit
(issue 6 acceptance 3)."""

from __future__ import annotations

import pytest

from tests.support.agent import running_agent
from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE
from tests.support.graphs import ENABLE_DS, ENABLE_GROVE, component, ds_graph
from tests.support.kube import DCD, DGD, DS, LWS, Kube, condition, names, ready_reason
from tests.support.polling import eventually

LONG = "a" * 20 + "-" + "b" * 34  # 55 characters
# worker StatefulSet revision label: <lws>-<group index <= 2147483647>-<hash <= 10>
WORST_SUFFIX = "-2147483647-0123456789"


def _long_graph(ns: str) -> dict:
    roles = [
        component("prefill", "prefill", nodes=2, globalDynamoNamespace=True),
        component("decode", "decode", nodes=2, globalDynamoNamespace=True),
    ]
    return ds_graph(ns, LONG, roles, **{ENABLE_DS: "true"})


def _check_names(control_plane, kube: Kube, namespace, *, v010: bool) -> None:
    kube.create(_long_graph(namespace))
    fake = FakeDsController(kube, namespace, v010=v010)
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: ready_reason(kube, namespace, LONG) == "all_resources_are_ready",
            deadline=DEADLINE,
            step=fake.sync,
            what="the long-named graph to be Ready",
        )
        children = names(kube, LWS, namespace)
        assert len(children) == 2
        ds = kube.get(DS, namespace, next(iter(kube.list(DS, namespace)))["metadata"]["name"])
        assert len(ds["metadata"]["name"]) <= 18
        for child in children:
            assert child.startswith(ds["metadata"]["name"] + ("-0-" if v010 else "-"))
            assert len(child) <= 41
            assert len(child + "-prv") <= 63
            assert len(child + WORST_SUFFIX) <= 63
        graph = kube.get(DGD, namespace, LONG)
        assert len(graph["metadata"]["name"]) == 55


def test_long_graph_names_fit_v09(control_plane, kube, namespace):
    _check_names(control_plane, kube, namespace, v010=False)


@pytest.mark.lws("v0.10.0")
def test_long_graph_names_fit_v010(control_plane, kube, namespace):
    assert control_plane.lws_version == "v0.10.0"
    _check_names(control_plane, kube, namespace, v010=True)


def test_eleven_roles_fail_eligibility_and_nothing_is_deleted(control_plane, kube, namespace):
    roles = [component(f"p{i}", "prefill", nodes=2) for i in range(11)]
    kube.create(ds_graph(namespace, "eleven", roles, **{ENABLE_GROVE: "false"}))
    with running_agent(control_plane.kubeconfig, namespace=namespace):
        eventually(
            lambda: len(names(kube, DCD, namespace)) == 11, deadline=DEADLINE, what="11 DCDs"
        )
        uids = {d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)}
        kube.edit_graph(
            namespace,
            "eleven",
            lambda g: g["metadata"]["annotations"].update({ENABLE_DS: "true"}),
        )

        def fell_back() -> bool:
            cond = condition(kube.get(DGD, namespace, "eleven"), "DisaggregatedSetEligible")
            return (cond.get("reason"), cond.get("message")) == (
                "FallbackToComponentProgram",
                "DisaggregatedSet supports at most 10 roles",
            )

        eventually(fell_back, deadline=DEADLINE, what="the 10-role reason")
        assert kube.list(DS, namespace) == []
        after = {d["metadata"]["name"]: d["metadata"]["uid"] for d in kube.list(DCD, namespace)}
        assert after == uids
