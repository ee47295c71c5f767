"""Driving a DisaggregatedSet-routed graph in the cluster tier (no tests here).

The fake DS controller and the simulated DCD workloads advance one step per poll; these helpers
are the steps, the wait for a Ready graph, and the switches the migration tests flip.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.fake_ds import FakeDsController
from tests.support.fake_workloads import DEADLINE, simulate_dcd_ready
from tests.support.graphs import ENABLE_DS, annotate
from tests.support.kube import DS, Kube, ready_reason
from tests.support.polling import eventually

READY = "all_resources_are_ready"


def ds_step(
    kube: Kube, ns: str, fake: FakeDsController, *, dcds: bool = True
) -> Callable[[], None]:
    """One poll's worth of simulated controllers: the fake DS controller, then (unless
    ``dcds`` is off) the DCDs' workloads."""

    def step() -> None:
        fake.sync()
        if dcds:
            simulate_dcd_ready(kube, ns)

    return step


def wait_ready(kube: Kube, ns: str, graph: str, fake: FakeDsController, *, what: str) -> None:
    """Poll, stepping the simulated controllers, until ``graph`` reports every resource ready."""
    eventually(
        lambda: ready_reason(kube, ns, graph) == READY,
        deadline=DEADLINE,
        step=ds_step(kube, ns, fake),
        what=what,
    )


def wait_fallen_back(kube: Kube, ns: str, graph: str, fake: FakeDsController, *, what: str) -> None:
    """Poll, stepping the simulated controllers, until ``graph``'s DisaggregatedSet is gone and
    the graph reports every resource ready (a fallback to DCDs, done)."""
    eventually(
        lambda: kube.get(DS, ns, graph) is None and ready_reason(kube, ns, graph) == READY,
        deadline=DEADLINE,
        step=ds_step(kube, ns, fake),
        what=what,
    )


def enable_ds(kube: Kube, ns: str, graph: str) -> None:
    """Annotate ``graph`` to ask for the DisaggregatedSet pathway."""
    kube.edit_graph(ns, graph, annotate({ENABLE_DS: "true"}))


def owner_uids(obj: dict[str, Any] | None) -> set[str]:
    """The UIDs of every owner reference of ``obj`` (none when it is absent)."""
    return {r["uid"] for r in ((obj or {}).get("metadata") or {}).get("ownerReferences") or ()}


def add_scaling_adapter(graph: dict[str, Any]) -> None:
    """A change for ``Kube.edit_graph``: prefill gets a scalingAdapter, so the graph is no longer
    DisaggregatedSet-eligible (the fallback to Component)."""
    for c in graph["spec"]["components"]:
        if c["name"] == "prefill":
            c["scalingAdapter"] = {}
