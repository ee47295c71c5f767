"""The test and laptop clusters, on loopback, built from pinned Go modules.

:class:`ControlPlane`: real etcd + kube-apiserver + kube-controller-manager (garbage collector and
namespace controllers). :class:`SimulatedCluster`: the same with every controller, the scheduler,
kwok GPU nodes and the real LeaderWorkerSet manager. Usable as a library, as pytest fixtures
(``tests/conftest.py``, ``tests/e2e/conftest.py``) and from the command line
(``syncagent dev-cluster up|down|env``).
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use (PEP 562): the CLI reads ``versions`` and ``build`` to declare the
# dev-cluster flags, and should not load the control plane's HTTP client for that.
_EXPORTS = {
    "Binaries": "syncagent.devcluster.build",
    "ensure_binaries": "syncagent.devcluster.build",
    "ControlPlane": "syncagent.devcluster.controlplane",
    "ControlPlaneError": "syncagent.devcluster.controlplane",
    "SimulatedCluster": "syncagent.devcluster.simcluster",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = ["Binaries", "ControlPlane", "ControlPlaneError", "SimulatedCluster", "ensure_binaries"]
