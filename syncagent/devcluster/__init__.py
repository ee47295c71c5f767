"""The test and laptop clusters, on loopback, built from pinned Go modules.

:class:`ControlPlane`: real etcd + kube-apiserver + kube-controller-manager (garbage collector and
namespace controllers). :class:`SimulatedCluster`: the same with every controller, the scheduler,
kwok GPU nodes and the real LeaderWorkerSet manager. Usable as a library, as pytest fixtures
(``tests/conftest.py``, ``tests/e2e/conftest.py``) and from the command line
(``syncagent dev-cluster up|down|env``).
"""

from syncagent.devcluster.build import Binaries, ensure_binaries
from syncagent.devcluster.controlplane import ControlPlane, ControlPlaneError
from syncagent.devcluster.simcluster import SimulatedCluster

__all__ = ["Binaries", "ControlPlane", "ControlPlaneError", "SimulatedCluster", "ensure_binaries"]
