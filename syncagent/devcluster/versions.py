"""Every third-party version the test control plane and CI build or install: the one place.

Changing a pin here changes what ``syncagent dev-cluster`` builds, which CRDs the cluster tier
installs and the cache key of the built binaries.
"""

from __future__ import annotations

KUBERNETES = "v1.36.3"
ETCD = "v3.6.8"  # the etcd release k8s.io/kubernetes v1.36.3 requires
LWS_VERSIONS = ("v0.9.0", "v0.10.0")
DEFAULT_LWS = "v0.9.0"
GROVE = "v0.1.0-alpha.11"
HELM = "v3.19.5"
# The simulated cluster (``dev-cluster up``, the e2e tier): simulated nodes and pods, and the
# real LeaderWorkerSet manager, which also runs the DisaggregatedSet controller. The module proxy
# serves sigs.k8s.io/lws only at v0.9.0 (v0.10.0 answers 403), so only v0.9.0 has a manager.
KWOK = "v0.8.0"
LWS_MANAGER_VERSIONS = ("v0.9.0",)

KUBERNETES_MODULE = "k8s.io/kubernetes"
ETCD_MODULE = "go.etcd.io/etcd/server/v3"
LWS_MODULE = "sigs.k8s.io/lws"
GROVE_MODULE = "github.com/ai-dynamo/grove/operator/api"
HELM_MODULE = "helm.sh/helm/v3"
KWOK_MODULE = "sigs.k8s.io/kwok"


def staging_version(kubernetes: str = KUBERNETES) -> str:
    """``k8s.io/api`` and the other staging modules are tagged v0.X.Y for Kubernetes v1.X.Y."""
    return "v0." + kubernetes.removeprefix("v1.")
