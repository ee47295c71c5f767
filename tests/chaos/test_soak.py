"""The short soak (issue 30): graphs under churn for 3 minutes on the simulated full cluster,
the agent's gauges sampled every 10 s (``tests/chaos/support/soak.py``, the code of
``bench/soak.py``, which runs it for 30 minutes).

Asserted: asyncio tasks and open file descriptors flat (of the samples after the first third of
the run, the median of the last third is at most 3 above the highest of the first third: one
task or descriptor kept per churn operation, 2 a second, would be hundreds), RSS under 150 MB
throughout, and no missed change (every graph's objects equal its rendering once the churn
stops and the agent is idle).
"""

from __future__ import annotations

import os
import statistics

from tests.chaos.support.fleet import converged_in
from tests.chaos.support.migrations import fresh_namespace
from tests.chaos.support.soak import SERIES, SoakRun, run_soak, slope, soak_graph
from tests.support.agent import running_agent
from tests.support.polling import eventually

GRAPHS = int(os.environ.get("SYNCAGENT_CHAOS_SOAK_GRAPHS", "50"))
SECONDS = float(os.environ.get("SYNCAGENT_CHAOS_SOAK_SECONDS", "180"))
WARMUP = SECONDS / 3
RSS_LIMIT_MB = 150.0
# A connection the pool keeps open a little longer, a watch restarting: not a leak, which at 2
# operations a second would add hundreds.
SLACK = 3


def flat(run: SoakRun, name: str) -> tuple[float, float]:
    """(highest of the first third, median of the last third) of ``name`` after the warm-up."""
    values = [s.values[name] for s in run.samples if s.seconds >= WARMUP]
    third = max(1, len(values) // 3)
    return max(values[:third]), statistics.median(values[-third:])


def test_tasks_and_fds_stay_flat_and_no_change_is_missed_under_churn(control_plane, kube, figures):
    names = [f"g{i:03d}" for i in range(GRAPHS)]
    with fresh_namespace(kube) as ns:
        for name in names:
            kube.create(soak_graph(ns, name))
        # A missed change must not be rescued by a resync within the run.
        flags = ("--resync-period", "24h", "--request-timeout", "10s")
        with running_agent(control_plane.kubeconfig, *flags, namespace=ns) as agent:
            eventually(lambda: converged_in(kube, ns), deadline=600, what="Ready", interval=1.0)
            run = run_soak(kube, agent, ns, names, seconds=SECONDS, rate=2.0)
    slopes = ", ".join(f"{name} {slope(run.samples, name, after=WARMUP):+.1f}" for name in SERIES)
    ops = ", ".join(f"{k} {v}" for k, v in sorted(run.operations.items()))
    tasks, fds = flat(run, "tasks"), flat(run, "fds")
    figures.add(
        f"soak {GRAPHS} graphs, {SECONDS:.0f}s of churn ({ops}), {len(run.samples)} samples: "
        f"RSS peak {run.peak('rss_mb'):.0f} MB; tasks {tasks[0]:.0f} -> {tasks[1]:.0f}, "
        f"fds {fds[0]:.0f} -> {fds[1]:.0f} (first-third peak -> last-third median); slopes per "
        f"10 min after {WARMUP:.0f}s: {slopes}; {len(run.missed)} missed changes"
    )
    assert tasks[1] <= tasks[0] + SLACK, f"asyncio tasks grew: {tasks}"
    assert fds[1] <= fds[0] + SLACK, f"open file descriptors grew: {fds}"
    assert run.peak("rss_mb") < RSS_LIMIT_MB
    assert run.missed == []
