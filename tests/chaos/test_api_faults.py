"""R2 API faults: 50 graphs converge through a proxy that answers 10 % of the agent's requests
(watches included) with 429 + Retry-After, 500, a reset connection or a stall past the agent's
request timeout, with nothing lost, duplicated or orphaned, in at most twice the time of a
clean run through the same proxy. The agent retries per request (syncagent/runtime/retry.py).
"""

from __future__ import annotations

import os

import pytest

from tests.chaos.support.fleet import converge_fleet
from tests.support.apiproxy import Faults

GRAPHS = int(os.environ.get("SYNCAGENT_CHAOS_GRAPHS", "50"))


@pytest.mark.timeout(3600)
def test_fifty_graphs_converge_through_ten_percent_api_faults(control_plane, kube, figures):
    clean = converge_fleet(control_plane, kube, graphs=GRAPHS, faults=None)
    figures.add(f"R2 {clean.describe()}")
    faulty = converge_fleet(
        control_plane, kube, graphs=GRAPHS, faults=Faults(rate=0.10, stall=15.0)
    )
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
