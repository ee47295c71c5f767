"""The test control plane: real etcd + kube-apiserver + kube-controller-manager on loopback.

Usable as a library (:class:`ControlPlane`), as pytest fixtures (``tests/conftest.py``) and from
the command line (``syncagent dev-cluster up|down|env``).
"""

from syncagent.devcluster.build import Binaries, ensure_binaries
from syncagent.devcluster.controlplane import ControlPlane, ControlPlaneError

__all__ = ["Binaries", "ControlPlane", "ControlPlaneError", "ensure_binaries"]
