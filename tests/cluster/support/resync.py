"""A full resync of the agent's graphs, counted on its /metrics (no tests here)."""

from __future__ import annotations

from tests.support.agent import Agent, Metrics
from tests.support.polling import eventually


def resync_window(agent: Agent, *, graphs: int, deadline: float) -> tuple[float, float]:
    """Scrape until every graph was reconciled again; returns (writes, requests) meanwhile."""
    before = agent.scrape()
    start = before.sum("syncagent_reconcile_total", controller="dgd")
    after = eventually(
        lambda: (
            (m := agent.scrape()).sum("syncagent_reconcile_total", controller="dgd")
            >= start + graphs
            and m
        ),
        deadline=deadline,
        what="a full resync",
    )
    return after.writes() - before.writes(), reconcile_requests(after) - reconcile_requests(before)


def reconcile_requests(m: Metrics) -> float:
    """Requests a reconcile makes (gets, dry runs, writes): not watches, lists, discovery
    refreshes (resource ""), Lease renewals or Events."""
    return m.requests(
        verbs=("get", "patch", "create", "update", "delete"), exclude=("", "leases", "events")
    )
