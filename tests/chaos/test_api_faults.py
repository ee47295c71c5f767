"""R2 API faults: 50 graphs converge through a proxy that answers 10 % of the agent's requests
(watches included) with 429 + Retry-After, 500, a reset connection or a stall past the agent's
request timeout, with nothing lost, duplicated or orphaned, in at most twice the time of a
clean run through a proxy of its own. The agent retries per request (syncagent/runtime/retry.py).

The two fleets converge at the same time, each with its own agent, namespace and proxy: a ratio
of two wall times taken one after the other measured whatever else the machine did in between
(beside the cluster tier, a faulted run after a quiet clean one took 2.42x, then 1.37x).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.chaos.support.fleet import FleetRun, converge_fleet
from tests.chaos.support.proxy import Faults
from tests.support.kube import Kube

GRAPHS = int(os.environ.get("SYNCAGENT_CHAOS_GRAPHS", "50"))


def _side_by_side(plane, kube: Kube, *faults: Faults | None) -> list[FleetRun]:
    def one(f: Faults | None) -> FleetRun:
        own = kube.separate()
        try:
            return converge_fleet(plane, own, graphs=GRAPHS, faults=f)
        finally:
            own.http.close()

    with ThreadPoolExecutor(max_workers=len(faults)) as pool:
        return list(pool.map(one, faults))


@pytest.mark.timeout(3600)
def test_fifty_graphs_converge_through_ten_percent_api_faults(control_plane, kube, figures):
    clean, faulty = _side_by_side(control_plane, kube, None, Faults(rate=0.10, stall=15.0))
    figures.add(f"R2 {clean.describe()}")
    figures.add(f"R2 {faulty.describe()}")
    figures.add(
        f"R2 time with faults / clean: {faulty.seconds:.1f}s / {clean.seconds:.1f}s = "
        f"{faulty.seconds / clean.seconds:.2f} (target <= 2)"
    )
    for run in (clean, faulty):
        inv = run.inventory
        assert inv is not None
        assert (inv.lost, inv.extra, inv.orphaned) == ([], [], []), inv.summary()
    assert sum(faulty.injected.values()) > 0, "the proxy injected no fault"
    assert faulty.seconds <= 2 * clean.seconds, (
        f"with faults {faulty.seconds:.1f}s, clean {clean.seconds:.1f}s: more than twice"
    )
