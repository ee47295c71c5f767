"""Watches never starve requests, at any namespace count (issue 40): with ``--namespace`` the
agent watches every kind per namespace, one connection each. Over 40 namespaces (720 watches,
far beyond the 100 connections of the one pool the agent had, which left watches unstarted,
graphs held back and Lease renewals waiting past the renew deadline) every graph converges,
the agent keeps leading with every renewal in time, and a later edit in the last namespace is
reconciled. ``SYNCAGENT_MANY_NAMESPACES`` changes the count; ``bench/many_namespaces.py`` runs
the same and waits for 30 renewals."""

from __future__ import annotations

import os
import uuid

from tests.cluster.support import many_namespaces

COUNT = int(os.environ.get("SYNCAGENT_MANY_NAMESPACES", "40"))


def test_watches_over_many_namespaces_starve_neither_graphs_nor_lease(
    control_plane, client, kube, capsys
):
    assert COUNT * many_namespaces.WATCHES_PER_NAMESPACE > 100  # beyond the old pool
    names = many_namespaces.create_namespaces(client, f"m-{uuid.uuid4().hex[:6]}", COUNT)
    try:
        figures = many_namespaces.run(control_plane.kubeconfig, kube, names)
    finally:
        many_namespaces.delete_namespaces(client, names)
    with capsys.disabled():
        print(f"\n{figures.report()}")
    gaps = figures.gaps()
    assert len(gaps) >= many_namespaces.RENEWALS - 1, figures.renewals
    assert max(gaps) < many_namespaces.RENEW_DEADLINE, figures.report()
    assert figures.watches >= COUNT * many_namespaces.WATCHES_PER_NAMESPACE, figures.report()
