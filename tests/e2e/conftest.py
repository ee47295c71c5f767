"""The e2e tier: one simulated full cluster per session (syncagent.devcluster.simcluster).

Every controller-manager controller, the scheduler, kwok GPU nodes whose pods become Running and
Ready, and the real LeaderWorkerSet manager (LWS and DisaggregatedSet controllers, webhooks).
Nothing in this tier writes a workload's status: the real controllers do. The agent runs as a
subprocess (``tests/support/agent.py``), as in the cluster tier.
"""

from __future__ import annotations

from tests.support.sim import control_plane, sim_cluster  # noqa: F401 (fixtures)
